"""Shared by test_streams.py and test_streams_lifecycle.py: positions, posts, a psql session held open, and the
checks every stream event gets (its bytes are the feed's row for that chatt)."""

from __future__ import annotations

import json
import re
import select
import subprocess
import time

from pgsupport import psql
from processes import wait_until
from sse import Event, feed_rows_by_id
from wire import Conn, Endpoint, build_request

GEODATA = '[42.2936,-83.7166,"North","walking"]'
FEEDS = {"maps": "/getmaps", "chatts": "/getchatts"}
STREAMS = {"maps": "/getmaps/stream", "chatts": "/getchatts/stream"}


def kind_of(path: str) -> str:
    return "maps" if path.startswith("/getmaps") else "chatts"


# A position of the store's change log (migrations/0006 and 0007): `tick.token` for a whole tick, `tick.token.seq` within one.
POSITION = re.compile(r"^[0-9]{1,18}\.[0-9a-f]{1,16}(\.[0-9]{1,18})?$")
WHOLE_TICK = 2**63 - 1


def parse_position(text: str) -> tuple[int, int, int]:
    """(tick, token, seq), seq the largest for a whole tick."""
    assert POSITION.match(text), text
    parts = text.split(".")
    return int(parts[0]), int(parts[1], 16), int(parts[2]) if len(parts) == 3 else WHOLE_TICK


def store_position(url: str) -> str:
    """The store's newest tick, made now if anything is new (`chatts_tick()`, as any writer may call it), whole."""
    return psql(url, "SELECT tick || '.' || to_hex(token) FROM chatts_tick();").strip()


def log_ids(url: str, after: str) -> list[str]:
    """The ids the store's change log gives the events after position `after` (chatts posted and removed), in its
    order: tick by tick, by seq within a tick. What every stream resuming from `after` must send, once the store has
    ticked."""
    tick, _, seq = parse_position(after)
    rows = psql(url, """SELECT t.tick || '.' || to_hex(t.token) || '.' || e.seq FROM chatts_ticks t
                        JOIN (SELECT xid, seq FROM chatts UNION ALL SELECT xid, seq FROM chatts_removals) e
                          ON e.xid = ANY (t.xids)
                        WHERE (t.tick, e.seq) > (:'tick'::bigint, :'seq'::bigint) ORDER BY t.tick, e.seq;""",
                {"tick": str(tick), "seq": str(seq)})
    return rows.split()


def settled_position(endpoint: Endpoint, url: str, timeout: float = 5.0) -> str:
    """`Feed-Position` of `endpoint`'s /getmaps once it is the store's newest tick (another process's or psql's
    commits are seen within a notice), checked against /getchatts too."""
    def agreed():
        response = endpoint.get("/getmaps")
        assert response.status == 200, response
        return response.header("Feed-Position") == store_position(url) and response.header("Feed-Position")
    position = wait_until(agreed, timeout)
    assert position, f"/getmaps says {endpoint.get('/getmaps').header('Feed-Position')}, the store {store_position(url)}"
    assert endpoint.get("/getchatts").header("Feed-Position") == position
    return position


def post(endpoint: Endpoint, message: str, geodata: bool = True, name: str = "streamer") -> None:
    body = {"name": name, "message": message}
    if geodata:
        body["geodata"] = GEODATA
    response = endpoint.post_json("/postmaps" if geodata else "/postchatt", body)
    assert response.status == 200 and response.json() == {}, response


def post_many(endpoint: Endpoint, messages: list[str]) -> None:
    """Posts on one kept-alive HTTP/1.1 connection (fast), each acknowledged before the next."""
    with endpoint.connect() as conn:
        for message in messages:
            body = json.dumps({"name": "bulk", "message": message, "geodata": GEODATA}).encode()
            conn.send(build_request("POST", "/postmaps", body, [("Content-Type", "application/json")]))
            response = conn.read_response()
            assert response.status == 200, response


def messages(events: list[Event]) -> list[str]:
    return [event.row[1] for event in events]


def check_events_are_feed_rows(events: list[Event], endpoint: Endpoint, kind: str) -> None:
    """Each event is `id:` and a position, one `data:` line with the feed's row for that chatt byte for byte, and
    the blank line; nothing else."""
    wanted = {event.row[2] for event in events}
    rows: dict[str, bytes] = {}

    def all_shown():
        response = endpoint.get(FEEDS[kind])
        assert response.status == 200, response
        rows.update(feed_rows_by_id(response.body))
        return wanted <= set(rows)
    assert wait_until(all_shown, 5), f"{kind} feed lacks {wanted - set(rows)}"
    for event in events:
        assert event.event is None and event.id is not None, event
        parse_position(event.id)
        row = rows[event.row[2]]
        assert event.raw == b"id: " + event.id.encode() + b"\ndata: " + row + b"\n\n", (event.raw, row)
        assert len(event.row) == (5 if kind == "maps" else 4), event.row


class PsqlSession:
    """One psql session kept open: statements run as they are sent, so a transaction can stay open across steps."""

    def __init__(self, url: str):
        self.popen = subprocess.Popen(
            ["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", url], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)

    def run(self, sql: str, timeout: float = 10.0) -> list[str]:
        """Runs `sql` and returns its output lines, once psql has done it."""
        assert self.popen.stdin and self.popen.stdout
        self.popen.stdin.write(sql + "\n\\echo __done__\n")
        self.popen.stdin.flush()
        lines, deadline = [], time.monotonic() + timeout
        while True:
            ready, _, _ = select.select([self.popen.stdout], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, f"psql did not finish {sql!r} within {timeout}s: {lines}"
            line = self.popen.stdout.readline()
            assert line, f"psql ended during {sql!r}: {lines}"
            if line.strip() == "__done__":
                return lines
            lines.append(line.rstrip("\n"))

    def close(self) -> None:
        if self.popen.stdin:
            self.popen.stdin.close()
        self.popen.wait(10)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
