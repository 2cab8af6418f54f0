"""Posting chatts from background threads while a test breaks the database, recording every outcome."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from contract import error_reason
from wire import Response

BOUND = 10.0  # no request may take longer than this, outage or not


@dataclass
class Outcome:
    message: str
    status: object  # an HTTP status, or the text of the exception the request raised
    retry_after: str | None
    started: float  # time.monotonic()
    finished: float

    @property
    def seconds(self) -> float:
        return self.finished - self.started


@dataclass
class PostStream:
    """Posts chatts with unique messages `<prefix>-<n>` to `server`, one after another, until stopped."""

    server: object
    prefix: str
    pause: float = 0.01
    outcomes: list[Outcome] = field(default_factory=list)
    stop_event: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None

    def start(self) -> "PostStream":
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stop_event.set()
        if self.thread:
            self.thread.join(BOUND + 10)

    def _run(self) -> None:
        index = 0
        while not self.stop_event.is_set():
            message = f"{self.prefix}-{index:05d}"
            index += 1
            started = time.monotonic()
            retry_after = None
            try:
                response = self.server.post_json("/postmaps", {"name": "stream", "message": message},
                                                 timeout=BOUND + 5)
                status, retry_after = response.status, response.header("Retry-After")
            except Exception as error:  # a hang or a dropped connection is a finding, not a crash of the test
                status = repr(error)
            self.outcomes.append(Outcome(message, status, retry_after, started, time.monotonic()))
            time.sleep(self.pause)

    def count(self, status) -> int:
        return sum(1 for outcome in list(self.outcomes) if outcome.status == status)

    def acknowledged(self) -> list[str]:
        return [outcome.message for outcome in self.outcomes if outcome.status == 200]

    def odd(self) -> list[Outcome]:
        """Outcomes API.md does not allow here: not 200 or 503, a 503 without Retry-After, or too slow."""
        return [o for o in self.outcomes
                if o.status not in (200, 503) or (o.status == 503 and not o.retry_after) or o.seconds >= BOUND]


def assert_unavailable(response: Response) -> None:
    """503 with a valid Retry-After and a reason that gives nothing of the database away."""
    assert response.status == 503, response
    retry_after = response.header("Retry-After") or ""
    assert retry_after.isdigit() or retry_after.endswith("GMT"), f"503 without a valid Retry-After: {retry_after!r}"
    reason = error_reason(response)
    leaks = ("/tmp", ".s.pgsql", "postgres", "sqlstate", "select ", "insert ", "libpq", "socket", "pgbouncer")
    assert not any(leak in reason.lower() for leak in leaks), f"503 reason leaks internals: {reason!r}"
