"""Headless Chromium (Debian's `chromium`, which scripts/test installs) driven over the DevTools protocol.

The protocol runs over a pipe (`--remote-debugging-pipe`: Chromium reads commands on its fd 3 and writes answers and
events on fd 4, each a JSON message ended by NUL), so no debugging port is opened that another local process could
connect to, and nothing beyond the standard library is needed (no websocket client).

Chromium is kept off the internet: every host name resolves to nothing (`--host-resolver-rules`) but 127.0.0.1, and
the background services that would phone home are off. Tests check what was fetched in `Page.responses()`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from processes import wait_until

OFFLINE_RULES = "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"


def chromium_binary() -> str:
    path = shutil.which("chromium")
    if not path:
        pytest.fail("chromium is not installed (apt-get install chromium; scripts/test installs it)")
    return path


class DevToolsError(AssertionError):
    pass


class Browser:
    """One headless Chromium; `open_page()` gives a tab to drive. Use as a context manager."""

    def __init__(self, *, ignore_certificate_errors: bool = False, timeout: float = 30.0):
        self.timeout = timeout
        self.profile = Path(tempfile.mkdtemp(prefix="chatterd-chromium-"))
        self.log_path = self.profile / "chromium.log"
        args = [
            chromium_binary(), "--headless", "--remote-debugging-pipe", f"--user-data-dir={self.profile / 'profile'}",
            f"--host-resolver-rules={OFFLINE_RULES}", "--no-first-run", "--no-default-browser-check",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-default-apps", "--disable-extensions", "--disable-domain-reliability", "--no-pings",
            "--disable-client-side-phishing-detection", "--disable-breakpad", "--disable-gpu",
            "--disable-dev-shm-usage", "--mute-audio", "--password-store=basic", "--window-size=1024,768",
        ]
        if ignore_certificate_errors:
            args.append("--ignore-certificate-errors")
        if os.geteuid() == 0:
            args.append("--no-sandbox")  # Chromium refuses to run as root with its sandbox
        commands_read, self._commands = os.pipe()
        self._answers, answers_write = os.pipe()
        env = dict(os.environ, CDP_IN=str(commands_read), CDP_OUT=str(answers_write))
        with open(self.log_path, "wb") as log:
            # bash puts the two pipe ends on fds 3 and 4, where --remote-debugging-pipe expects them (dash cannot:
            # it takes only one-digit fds in a redirection, and under pytest the pipes' are larger).
            self.process = subprocess.Popen(
                ["bash", "-c", 'exec "$@" 3<&"$CDP_IN" 4>&"$CDP_OUT"', "bash", *args], env=env,
                pass_fds=(commands_read, answers_write), stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        os.close(commands_read)
        os.close(answers_write)
        self._next_id = 0
        self._lock = threading.Condition()
        self._answered: dict[int, dict] = {}
        self.events: list[dict] = []
        self._closed = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _read(self) -> None:
        buffered = b""
        while True:
            try:
                data = os.read(self._answers, 1 << 16)
            except OSError:
                data = b""
            if not data:
                with self._lock:
                    self._closed = True
                    self._lock.notify_all()
                return
            buffered += data
            *messages, buffered = buffered.split(b"\0")
            with self._lock:
                for raw in messages:
                    message = json.loads(raw)
                    if "id" in message:
                        self._answered[message["id"]] = message
                    else:
                        self.events.append(message)
                self._lock.notify_all()

    def send(self, method: str, params: dict | None = None, session: str | None = None,
             timeout: float | None = None) -> dict:
        """Sends one command and returns its result; raises DevToolsError on an error answer or no answer."""
        with self._lock:
            self._next_id += 1
            ident = self._next_id
        message = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        try:
            os.write(self._commands, json.dumps(message).encode() + b"\0")
        except OSError as error:
            raise DevToolsError(f"cannot send {method} ({error}): chromium exited with {self.process.poll()};"
                                f" its log:\n{self.log()}") from None
        deadline = time.monotonic() + (timeout or self.timeout)
        with self._lock:
            while ident not in self._answered:
                left = deadline - time.monotonic()
                if self._closed or left <= 0:
                    raise DevToolsError(f"no answer to {method} ({'closed' if self._closed else 'timed out'});"
                                        f" chromium log:\n{self.log()}")
                self._lock.wait(left)
            answer = self._answered.pop(ident)
        if "error" in answer:
            raise DevToolsError(f"{method}: {answer['error']}")
        return answer.get("result", {})

    def open_page(self) -> "Page":
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        return Page(self, session)

    def events_of(self, session: str, method: str) -> list[dict]:
        with self._lock:
            return [e["params"] for e in self.events if e.get("sessionId") == session and e["method"] == method]

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.send("Browser.close", timeout=5)
            except DevToolsError:
                pass
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        os.close(self._commands)
        self._reader.join(timeout=5)
        os.close(self._answers)
        shutil.rmtree(self.profile, ignore_errors=True)


class Page:
    """One tab, attached with a flat session: its console, exceptions and network traffic are recorded."""

    def __init__(self, browser: Browser, session: str):
        self.browser = browser
        self.session = session
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.send(f"{domain}.enable")

    def send(self, method: str, params: dict | None = None, **kw) -> dict:
        return self.browser.send(method, params, session=self.session, **kw)

    def navigate(self, url: str, timeout: float = 30.0) -> None:
        """Loads `url` and waits for its load event (scripts run, though what they fetch may still be coming)."""
        loads = len(self.browser.events_of(self.session, "Page.loadEventFired"))
        answer = self.send("Page.navigate", {"url": url})
        if answer.get("errorText"):
            raise DevToolsError(f"navigating to {url}: {answer['errorText']}")
        if not self.wait_for(lambda: len(self.browser.events_of(self.session, "Page.loadEventFired")) > loads,
                             timeout):
            raise DevToolsError(f"{url} did not finish loading in {timeout} s")

    def wait_for(self, predicate, timeout: float, interval: float = 0.05):
        """Polls `predicate` until it is truthy; its last value (falsy after `timeout`)."""
        return wait_until(predicate, timeout, interval)

    def evaluate(self, expression: str):
        """The value of a JavaScript expression (promises awaited); raises DevToolsError if it throws."""
        answer = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True})
        if "exceptionDetails" in answer:
            raise DevToolsError(f"{expression}: {answer['exceptionDetails']}")
        return answer["result"].get("value")

    def click(self, x: float, y: float) -> None:
        """A real left click at page coordinates (pressed and released)."""
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1})

    def drag(self, start: tuple[float, float], end: tuple[float, float], steps: int = 10) -> None:
        """A real drag with the left button, from `start` to `end` in `steps` moves."""
        (x0, y0), (x1, y1) = start, end
        self.send("Input.dispatchMouseEvent", {"type": "mousePressed", "x": x0, "y": y0, "button": "left",
                                               "buttons": 1, "clickCount": 1})
        for step in range(1, steps + 1):
            x, y = x0 + (x1 - x0) * step / steps, y0 + (y1 - y0) * step / steps
            self.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y, "button": "left",
                                                   "buttons": 1})
        self.send("Input.dispatchMouseEvent", {"type": "mouseReleased", "x": x1, "y": y1, "button": "left",
                                               "buttons": 0, "clickCount": 1})

    def responses(self) -> list[str]:
        """The URLs of every response the page received, in order."""
        return [e["response"]["url"] for e in self.browser.events_of(self.session, "Network.responseReceived")]

    def failed_requests(self) -> list[tuple[str, str]]:
        """(URL, error text) of every request that got no response."""
        urls = {e["requestId"]: e["request"]["url"]
                for e in self.browser.events_of(self.session, "Network.requestWillBeSent")}
        return [(urls.get(e["requestId"], "?"), e.get("errorText", ""))
                for e in self.browser.events_of(self.session, "Network.loadingFailed")]

    def problems(self) -> list[str]:
        """Uncaught exceptions, console errors and browser log errors (Content-Security-Policy violations among
        them), as text. Failed loads are left to `failed_requests()` and `responses()`."""
        found = [f"exception: {e['exceptionDetails']}"
                 for e in self.browser.events_of(self.session, "Runtime.exceptionThrown")]
        found += [f"console.{e['type']}: {e.get('args')}"
                  for e in self.browser.events_of(self.session, "Runtime.consoleAPICalled")
                  if e["type"] in ("error", "assert")]
        found += [f"log {e['entry'].get('source')}: {e['entry'].get('text')} {e['entry'].get('url', '')}"
                  for e in self.browser.events_of(self.session, "Log.entryAdded")
                  if e["entry"].get("level") == "error" and e["entry"].get("source") != "network"]
        return found
