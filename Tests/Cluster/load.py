"""Steady load from the client host, run inside its namespace: posters post unique chatts through the load
balancer (a new connection every RECONNECT_EVERY posts, as phones come and go) and then read the feed from one
chatterd host, alternating (read-your-writes); one reader per host reads the whole feed a few times a second, and
a prober reads it through the balancer on a new connection each time, so HAProxy picks a server afresh. Every
request's outcome is one JSON line in --out, with CLOCK_MONOTONIC times (shared by every namespace), until
SIGTERM. Each answer's X-Request-Id prefix (`srv`) names the chatterd process that made it.

Feeds are recorded as their length, a hash chain over their messages (`chain`), and their rows per poster
(`have`: for each `run-poster`, the highest sequence number and the numbers below it that are absent): the
checker can tell exactly which rows a read had, and whether they were in the final order, without keeping every
read whole.

A remover takes chatts down as a moderator would, one every REMOVE_INTERVAL seconds (so removals fall inside every
fault): `DELETE /chatts/<id>` with the run's bearer token (--admin-token-file), through the balancer or directly to
a chatterd host, of a chatt acknowledged earlier whose id a read has shown; a removal that got no answer (503, a
timeout, a broken connection) is asked again up to RETRIES times, which may get 404 if the first one committed;
and now and then a chatt it removed already is asked again, which must get 404. Twice a run (SQL_SLOTS) the
removal is `DELETE FROM chatts WHERE id = ...` in psql on the primary instead. Each attempt is a line of the
outcome file too, with a reason of its own (`run-rm-N`), which chatts_removals keeps: the checker tells from it
which attempt committed.

Before the first post, the live feed's subscribers (subscribers.py) take their starting positions from the empty
feed; they follow /getchatts/stream until every post is answered and the last events have reached them."""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import signal
import ssl
import subprocess
import threading
import time

import subscribers
from client import MODERATOR, REQUEST_TIMEOUT, Client, Recorder, server_of

RECONNECT_EVERY = 20
PROBE_INTERVAL = 0.5
REMOVE_INTERVAL = 1.5
# The remover's routes, in turn: mostly through the balancer, sometimes straight to a chatterd host.
REMOVE_ROUTES = ("lb", "app1", "lb", "app2")
RETRIES = 2  # a removal without an answer is asked again this many times
AGAIN_EVERY = 10  # every tenth slot asks again for a chatt removed already (404 expected)
SQL_SLOTS = (3, 75)  # from these slots on, the next first removal is a DELETE in psql on the primary
SQL_TIMEOUT = 15.0


class Ledger:
    """What the remover may take down: the posts acknowledged so far, in order, and each chatt's id as the reads
    showed it."""

    def __init__(self):
        self.lock = threading.Lock()
        self.acknowledged: list[str] = []
        self.ids: dict[str, str] = {}

    def acknowledge(self, message: str) -> None:
        with self.lock:
            self.acknowledged.append(message)

    def learn(self, rows: list) -> None:
        with self.lock:
            self.ids.update((row[1], row[2]) for row in rows)

    def removable(self, taken: set[str]) -> list[tuple[str, str]]:
        """(message, id) of the acknowledged posts whose id is known and that were not taken yet, oldest first."""
        with self.lock:
            return [(m, self.ids[m]) for m in self.acknowledged if m in self.ids and m not in taken]


def chain(messages, digest: bytes = b"") -> str:
    """The hash chain over `messages`: each link hashes the previous one and the next message."""
    for message in messages:
        digest = hashlib.sha256(digest + message.encode() + b"\n").digest()
    return digest.hex()


def feed_record(messages: list[str]) -> dict:
    """A read's rows, exactly and compactly: `run-poster-seq` messages as each poster's highest seq and the
    seqs below it that are absent; anything else whole in `other`."""
    seqs: dict[str, set[int]] = {}
    other = []
    for message in messages:
        stem, _, seq = message.rpartition("-")
        if stem and seq.isdigit():
            seqs.setdefault(stem, set()).add(int(seq))
        else:
            other.append(message)
    have = {stem: [max(present), sorted(set(range(max(present) + 1)) - present)] for stem, present in seqs.items()}
    return {"n": len(messages), "chain": chain(messages), "have": have, "other": other, "newest": messages[-3:]}


def read_feed(client: Client, ledger: Ledger | None = None) -> tuple[object, list[str] | None, dict]:
    status, headers, body = client.request("GET", "/getchatts")
    if status != 200:
        return status, None, headers
    try:
        rows = json.loads(body)
        messages = [row[1] for row in rows]
        if ledger is not None:
            ledger.learn(rows)
        return status, messages, headers
    except (ValueError, IndexError, TypeError):
        return "malformed", None, headers


def record_read(recorder: Recorder, client: Client, host: str, who: str, ledger: Ledger | None = None,
                **extra) -> None:
    started = time.monotonic()
    status, messages, headers = read_feed(client, ledger)
    record = {"op": "read", "host": host, "who": who, "t0": started, "t1": time.monotonic(), "status": status,
              "srv": server_of(headers), "age": headers.get("age"), **extra}
    if messages is not None:
        record.update(feed_record(messages))
    recorder.write(**record)


def poster(index: int, args, context, hosts, recorder: Recorder, ledger: Ledger, stop: threading.Event) -> None:
    balancer = Client(args.lb, context)
    readers = [Client(address, context) for address in hosts.values()]
    names = list(hosts)
    interval = args.posters / args.rate
    sequence = 0
    while not stop.is_set():
        started = time.monotonic()
        if sequence % RECONNECT_EVERY == 0:
            balancer.close()
        message = f"{args.run}-{index}-{sequence}"
        body = json.dumps({"name": "cluster", "message": message}).encode()
        status, headers, _ = balancer.request("POST", "/postchatt", body)
        recorder.write(op="post", msg=message, t0=started, t1=time.monotonic(), status=status,
                       srv=server_of(headers))
        if status == 200:
            ledger.acknowledge(message)
            which = sequence % len(readers)
            record_read(recorder, readers[which], names[which], f"poster{index}", ledger, after=message)
        sequence += 1
        stop.wait(max(0.0, interval - (time.monotonic() - started)))


def reader(name: str, address: str, args, context, recorder: Recorder, ledger: Ledger,
           stop: threading.Event) -> None:
    client = Client(address, context)
    while not stop.is_set():
        started = time.monotonic()
        record_read(recorder, client, name, f"reader-{name}", ledger)
        stop.wait(max(0.0, args.read_interval - (time.monotonic() - started)))


def prober(args, context, recorder: Recorder, stop: threading.Event) -> None:
    """Reads through the balancer on a new connection each time: which server HAProxy sends new clients to."""
    client = Client(args.lb, context)
    while not stop.is_set():
        started = time.monotonic()
        client.close()
        record_read(recorder, client, "lb", "prober")
        stop.wait(max(0.0, PROBE_INTERVAL - (time.monotonic() - started)))


def remove_by_http(client: Client, token: str, chatt: str, reason: str) -> tuple[object, dict]:
    body = json.dumps({"reason": reason}).encode()
    status, headers, _ = client.request("DELETE", f"/chatts/{chatt}", body, {"Authorization": f"Bearer {token}"})
    return status, headers


def remove_by_sql(database: str, chatt: str) -> tuple[object, str | None]:
    """`DELETE FROM chatts WHERE id = ...` in psql, as the superuser, on whichever host takes writes: ("DELETE 1"
    or "DELETE 0", None), or (a failure, what psql said)."""
    conninfo = (f"host={database} port=5432 dbname=chatterd user=postgres target_session_attrs=read-write "
                "connect_timeout=3 application_name=cluster-remover")
    try:
        result = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", conninfo, "-c",
                                 f"DELETE FROM chatts WHERE id = '{chatt}' RETURNING id"],
                                capture_output=True, text=True, timeout=SQL_TIMEOUT)
    except subprocess.TimeoutExpired:
        return "timeout", None
    if result.returncode != 0:
        return f"error:psql {result.returncode}", result.stderr.strip()[-300:]
    return f"DELETE {len(result.stdout.split())}", None


def remover(args, context, hosts, recorder: Recorder, ledger: Ledger, stop: threading.Event) -> None:
    """One removal attempt every REMOVE_INTERVAL seconds (see the module's docstring)."""
    token = next(line.split(":", 1)[1] for line in open(args.admin_token_file).read().splitlines()
                 if line.startswith(MODERATOR + ":"))
    clients = {"lb": Client(args.lb, context), **{name: Client(address, context) for name, address in hosts.items()}}
    taken: set[str] = set()  # chatts asked for once
    removed: list[tuple[str, str]] = []  # chatts whose removal was acknowledged
    retry: tuple[str, str, str, int] | None = None  # (message, id, "http" or "sql", tries so far)
    sql_due = list(SQL_SLOTS)
    slot, route = 0, 0
    while not stop.is_set():
        started = time.monotonic()
        if retry is not None:
            message, chatt, kind, tries = retry
            why = "retry"
        elif (slot + 1) % AGAIN_EVERY == 0 and removed:
            (message, chatt), kind, tries, why = random.choice(removed), "http", 0, "again"
        else:
            candidates = ledger.removable(taken)
            if not candidates:
                stop.wait(REMOVE_INTERVAL)
                continue
            # The newest as often as any other: some chatts are removed a moment after their post, others
            # minutes after.
            message, chatt = candidates[-1] if random.random() < 0.5 else random.choice(candidates)
            kind, tries, why = "http", 0, "first"
            if sql_due and slot + 1 >= sql_due[0]:
                kind = "sql"
                sql_due.pop(0)
            taken.add(message)
        slot += 1
        reason = f"{args.run}-rm-{slot}"
        record = {"op": "remove", "msg": message, "chatt": chatt, "why": why, "reason": reason}
        begun = time.monotonic()
        if kind == "sql":
            status, said = remove_by_sql(args.database, chatt)
            record.update(via="sql", reason=None, status=status, **({"said": said} if said else {}))
        else:
            via = REMOVE_ROUTES[route % len(REMOVE_ROUTES)]
            route += 1
            status, headers = remove_by_http(clients[via], token, chatt, reason)
            record.update(via=via, status=status, srv=server_of(headers))
        recorder.write(t0=begun, t1=time.monotonic(), **record)
        answered = status in ("DELETE 1", "DELETE 0") or (isinstance(status, int) and status < 500)
        if status in (200, "DELETE 1"):
            removed.append((message, chatt))
        retry = None if answered or why == "again" or tries >= RETRIES else (message, chatt, kind, tries + 1)
        stop.wait(max(0.0, REMOVE_INTERVAL - (time.monotonic() - started)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lb", required=True, help="load balancer IP:PORT")
    parser.add_argument("--host", action="append", required=True, help="NAME=IP:PORT of a chatterd host")
    parser.add_argument("--cafile", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--run", required=True, help="prefix of every message")
    parser.add_argument("--posters", type=int, default=3)
    parser.add_argument("--rate", type=float, default=12.0, help="posts per second, all posters together")
    parser.add_argument("--read-interval", type=float, default=0.25)
    parser.add_argument("--admin-token-file", required=True, help="name:token lines; the remover's is MODERATOR's")
    parser.add_argument("--database", required=True, help="the database hosts for psql, comma-separated")
    args = parser.parse_args()
    hosts = dict(entry.split("=", 1) for entry in args.host)
    context = ssl.create_default_context(cafile=args.cafile)
    context.set_alpn_protocols(["http/1.1"])
    recorder, ledger, stop, stop_streams = Recorder(args.out), Ledger(), threading.Event(), threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    followers = subscribers.start(args.lb, hosts, context, recorder)
    following = [threading.Thread(target=follower.run, args=(stop_streams,)) for follower in followers]
    for thread in following:
        thread.start()

    threads = [threading.Thread(target=poster, args=(i, args, context, hosts, recorder, ledger, stop))
               for i in range(args.posters)]
    threads += [threading.Thread(target=reader, args=(name, address, args, context, recorder, ledger, stop))
                for name, address in hosts.items()]
    threads.append(threading.Thread(target=prober, args=(args, context, recorder, stop)))
    threads.append(threading.Thread(target=remover, args=(args, context, hosts, recorder, ledger, stop)))
    for thread in threads:
        thread.start()
    while not stop.is_set():
        stop.wait(1)
    for thread in threads:
        thread.join(REQUEST_TIMEOUT + 5)
    subscribers.drain(followers)
    stop_streams.set()
    for thread in following:
        thread.join(5)


if __name__ == "__main__":
    main()
