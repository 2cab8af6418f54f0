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

Before the first post, the live feed's subscribers (subscribers.py) take their starting positions from the empty
feed; they follow /getchatts/stream until every post is answered and the last events have reached them."""

from __future__ import annotations

import argparse
import hashlib
import json
import signal
import ssl
import threading
import time

import subscribers
from client import REQUEST_TIMEOUT, Client, Recorder, server_of

RECONNECT_EVERY = 20
PROBE_INTERVAL = 0.5


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


def read_feed(client: Client) -> tuple[object, list[str] | None, dict]:
    status, headers, body = client.request("GET", "/getchatts")
    if status != 200:
        return status, None, headers
    try:
        return status, [row[1] for row in json.loads(body)], headers
    except (ValueError, IndexError, TypeError):
        return "malformed", None, headers


def record_read(recorder: Recorder, client: Client, host: str, who: str, **extra) -> None:
    started = time.monotonic()
    status, messages, headers = read_feed(client)
    record = {"op": "read", "host": host, "who": who, "t0": started, "t1": time.monotonic(), "status": status,
              "srv": server_of(headers), "age": headers.get("age"), **extra}
    if messages is not None:
        record.update(feed_record(messages))
    recorder.write(**record)


def poster(index: int, args, context, hosts, recorder: Recorder, stop: threading.Event) -> None:
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
            which = sequence % len(readers)
            record_read(recorder, readers[which], names[which], f"poster{index}", after=message)
        sequence += 1
        stop.wait(max(0.0, interval - (time.monotonic() - started)))


def reader(name: str, address: str, args, context, recorder: Recorder, stop: threading.Event) -> None:
    client = Client(address, context)
    while not stop.is_set():
        started = time.monotonic()
        record_read(recorder, client, name, f"reader-{name}")
        stop.wait(max(0.0, args.read_interval - (time.monotonic() - started)))


def prober(args, context, recorder: Recorder, stop: threading.Event) -> None:
    """Reads through the balancer on a new connection each time: which server HAProxy sends new clients to."""
    client = Client(args.lb, context)
    while not stop.is_set():
        started = time.monotonic()
        client.close()
        record_read(recorder, client, "lb", "prober")
        stop.wait(max(0.0, PROBE_INTERVAL - (time.monotonic() - started)))


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
    args = parser.parse_args()
    hosts = dict(entry.split("=", 1) for entry in args.host)
    context = ssl.create_default_context(cafile=args.cafile)
    context.set_alpn_protocols(["http/1.1"])
    recorder, stop, stop_streams = Recorder(args.out), threading.Event(), threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    followers = subscribers.start(args.lb, hosts, context, recorder)
    following = [threading.Thread(target=follower.run, args=(stop_streams,)) for follower in followers]
    for thread in following:
        thread.start()

    threads = [threading.Thread(target=poster, args=(i, args, context, hosts, recorder, stop))
               for i in range(args.posters)]
    threads += [threading.Thread(target=reader, args=(name, address, args, context, recorder, stop))
                for name, address in hosts.items()]
    threads.append(threading.Thread(target=prober, args=(args, context, recorder, stop)))
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
