"""What the load's threads share (load.py, subscribers.py): one keep-alive HTTPS connection, the outcome file, and
which chatterd process answered; and the name of the remover's token (checker.py finds its removals by it)."""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import threading

REQUEST_TIMEOUT = 10.0
# The moderator's name in the run's --admin-token-file: chatts_removals.removed_by of the remover's removals.
MODERATOR = "cluster-remover"


def server_of(headers: dict) -> str | None:
    """The chatterd process that answered: the random prefix of the request id it made."""
    request_id = headers.get("x-request-id")
    return request_id.split("-", 1)[0] if request_id else None


class Client:
    """One keep-alive HTTPS connection, opened again after any failure."""

    def __init__(self, address: str, context: ssl.SSLContext):
        self.host, port = address.rsplit(":", 1)
        self.port = int(port)
        self.context = context
        self.connection: http.client.HTTPSConnection | None = None

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: dict[str, str] | None = None) -> tuple[object, dict, bytes]:
        """(status or failure name, headers, body)."""
        if self.connection is None:
            self.connection = http.client.HTTPSConnection(self.host, self.port, context=self.context,
                                                          timeout=REQUEST_TIMEOUT)
        sent = {"Content-Type": "application/json; charset=utf-8"} if body is not None else {}
        try:
            self.connection.request(method, path, body=body, headers={**sent, **(headers or {})})
            response = self.connection.getresponse()
            payload = response.read()
            if response.getheader("Connection", "").lower() == "close":
                self.close()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, payload
        except (socket.timeout, TimeoutError):
            self.close()
            return "timeout", {}, b""
        except (OSError, http.client.HTTPException) as error:
            self.close()
            return f"error:{type(error).__name__}", {}, b""

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


class Recorder:
    """outcomes.jsonl: one JSON line per outcome, written whole by any thread."""

    def __init__(self, path: str):
        self.file = open(path, "w", buffering=1)
        self.lock = threading.Lock()

    def write(self, **record) -> None:
        line = json.dumps(record, separators=(",", ":"))
        with self.lock:
            self.file.write(line + "\n")
