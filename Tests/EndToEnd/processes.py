"""Starting and stopping chatterd, making test certificates, and picking free ports."""

from __future__ import annotations

import os
import signal
import socket
import ssl
import subprocess
import threading
import time
from pathlib import Path

import procfs
from wire import Endpoint, build_request


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def make_certificate(directory: Path, name: str = "chatterd") -> tuple[Path, Path]:
    """A throwaway self-signed P-256 certificate for localhost/127.0.0.1; key mode 0600."""
    cert, key = directory / f"{name}.crt", directory / f"{name}.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-days", "30",
         "-nodes", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
         "-addext", "extendedKeyUsage=serverAuth", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True)
    os.chmod(key, 0o600)
    return cert, key


def make_expired_certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate valid only in January 2020 (`openssl ca` can back-date; `req` cannot)."""
    work = directory / "expired-ca"
    work.mkdir()
    key, csr, cert = work / "key.pem", work / "req.csr", directory / "expired.crt"
    (work / "index.txt").touch()
    (work / "serial").write_text("01\n")
    (work / "ca.cnf").write_text(
        f"[ca]\ndefault_ca = d\n[d]\ndatabase = {work}/index.txt\nserial = {work}/serial\n"
        f"new_certs_dir = {work}\ndefault_md = sha256\npolicy = p\n[p]\ncommonName = supplied\n")
    subprocess.run(["openssl", "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-subj", "/CN=localhost", "-keyout", str(key), "-out", str(csr)], check=True, capture_output=True)
    subprocess.run(["openssl", "ca", "-batch", "-config", str(work / "ca.cnf"), "-selfsign", "-keyfile", str(key),
                    "-in", str(csr), "-startdate", "20200101000000Z", "-enddate", "20200201000000Z",
                    "-out", str(cert)], check=True, capture_output=True)
    os.chmod(key, 0o600)
    return cert, key


def client_context(cafile: Path) -> ssl.SSLContext:
    """A client context trusting only the test certificate."""
    ctx = ssl.create_default_context(cafile=str(cafile))
    ctx.check_hostname = True
    return ctx


class ChatterdProcess:
    """One running `chatterd serve`, with its stderr collected for diagnostics."""

    def __init__(self, binary: str, args: list[str], env: dict | None = None):
        self.args = [binary, *args]
        self.lines: list[str] = []
        self.listening = threading.Event()
        self.popen = subprocess.Popen(
            self.args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            env=env or os.environ.copy())
        self.reader = threading.Thread(target=self._read_log, daemon=True)
        self.reader.start()

    def _read_log(self) -> None:
        assert self.popen.stdout is not None
        for raw in self.popen.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self.lines.append(line)
            if "event=listening" in line or '"event":"listening"' in line:
                self.listening.set()

    @property
    def pid(self) -> int:
        return self.popen.pid

    def log(self, last: int = 60) -> str:
        return "\n".join(self.lines[-last:])

    def wait_listening(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not self.listening.wait(0.05):
            if self.popen.poll() is not None:
                self.reader.join(2)
                raise RuntimeError(f"chatterd exited with {self.popen.returncode} before listening:\n{self.log()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"chatterd did not log event=listening within {timeout}s:\n{self.log()}")

    def alive(self) -> bool:
        return self.popen.poll() is None

    def signal(self, sig: int = signal.SIGTERM) -> None:
        if self.alive():
            self.popen.send_signal(sig)

    def wait(self, timeout: float) -> int | None:
        """Exit status, or None if still running after `timeout`."""
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM and wait; SIGKILL if it does not exit. Returns the SIGTERM exit status (None if killed)."""
        if not self.alive():
            return self.popen.returncode
        self.signal(signal.SIGTERM)
        status = self.wait(timeout)
        if status is None:
            self.popen.kill()
            self.popen.wait(5)
        self.reader.join(2)
        return status

    def fd_count(self) -> int:
        return procfs.fd_count(self.pid)

    def cpu_seconds(self) -> float:
        """User + system CPU time consumed so far."""
        return procfs.cpu_seconds(self.pid)


def wait_healthy(endpoint: Endpoint, timeout: float = 20.0) -> None:
    """Poll GET /healthz until it answers 200."""
    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        try:
            with endpoint.connect(timeout=2) as conn:
                conn.send(build_request("GET", "/healthz"))
                response = conn.read_response(timeout=2)
                if response.status == 200:
                    return
                last = response
        except (OSError, AssertionError) as error:
            last = error
        time.sleep(0.05)
    raise RuntimeError(f"/healthz not healthy within {timeout}s: {last!r}")


def wait_until(predicate, timeout: float, interval: float = 0.05):
    """Poll `predicate` until truthy; returns its value, or the last falsy value after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)
