"""The soak's count of answers (soak.py): by status, which of them broke the contract, the posts acknowledged, and
the HTTP/2 streams the server refused unprocessed. Shared by the load's threads under one lock."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

TRIMMED = "404 (since a chatt the trimming writer moved away)"


@dataclass
class Tally:
    """Answers by kind, plus what violated the contract."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    statuses: dict = field(default_factory=dict)
    violations: list = field(default_factory=list)
    acknowledged: list = field(default_factory=list)
    requests: int = 0
    http2_requests: int = 0
    # HTTP/2 streams the server refused unprocessed (after its GOAWAY, or REFUSED_STREAM), and the posts among them.
    refused_streams: int = 0
    refused_posts: list = field(default_factory=list)

    def record(self, what: str, status, response=None, http2: bool = False) -> None:
        with self.lock:
            self.requests += 1
            self.http2_requests += http2
            self.statuses[status] = self.statuses.get(status, 0) + 1
            if status == 503 and response is not None and not response.getheader("Retry-After"):
                self.violations.append(f"{what}: 503 without Retry-After")
            elif status not in (200, 304, 503, TRIMMED):
                self.violations.append(f"{what}: {status}")

    def count(self, status) -> int:
        with self.lock:
            return self.statuses.get(status, 0)
