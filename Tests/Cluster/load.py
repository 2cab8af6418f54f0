"""Steady load from the client host, run inside its namespace: posters post unique chatts through the load
balancer and then read the feed from one chatterd host, alternating (read-your-writes), and one reader per
host reads the whole feed a few times a second. Every request's outcome is one JSON line in --out, with
CLOCK_MONOTONIC times (shared by every namespace), until SIGTERM.

Feeds are recorded as their length, a hash chain over their messages (`chain`), and their newest TAIL_ROWS
messages with the chain of the rows before them (`head`, `head_chain`, `tail`): the checker can tell whether a
read is a prefix of the final order, or one but for rows that committed late among the newest, without keeping
every read whole."""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import signal
import socket
import ssl
import threading
import time

REQUEST_TIMEOUT = 10.0
TAIL_ROWS = 50


def chain(messages, digest: bytes = b"") -> str:
    """The hash chain over `messages`: each link hashes the previous one and the next message."""
    return chain_bytes(messages, digest).hex()


def chain_bytes(messages, digest: bytes = b"") -> bytes:
    for message in messages:
        digest = hashlib.sha256(digest + message.encode() + b"\n").digest()
    return digest


def feed_record(messages: list[str]) -> dict:
    head = max(0, len(messages) - TAIL_ROWS)
    head_digest = chain_bytes(messages[:head])
    return {"n": len(messages), "chain": chain(messages[head:], head_digest), "head": head,
            "head_chain": head_digest.hex(), "tail": messages[head:]}


class Client:
    """One keep-alive HTTPS connection, opened again after any failure."""

    def __init__(self, address: str, context: ssl.SSLContext):
        self.host, port = address.rsplit(":", 1)
        self.port = int(port)
        self.context = context
        self.connection: http.client.HTTPSConnection | None = None

    def request(self, method: str, path: str, body: bytes | None = None) -> tuple[object, dict, bytes]:
        """(status or failure name, headers, body)."""
        if self.connection is None:
            self.connection = http.client.HTTPSConnection(self.host, self.port, context=self.context,
                                                          timeout=REQUEST_TIMEOUT)
        headers = {"Content-Type": "application/json; charset=utf-8"} if body is not None else {}
        try:
            self.connection.request(method, path, body=body, headers=headers)
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
    def __init__(self, path: str):
        self.file = open(path, "a", buffering=1)
        self.lock = threading.Lock()

    def write(self, **record) -> None:
        line = json.dumps(record, separators=(",", ":"))
        with self.lock:
            self.file.write(line + "\n")


def read_feed(client: Client) -> tuple[object, list[str] | None, dict]:
    status, headers, body = client.request("GET", "/getchatts")
    if status != 200:
        return status, None, headers
    try:
        return status, [row[1] for row in json.loads(body)], headers
    except (ValueError, IndexError, TypeError):
        return "malformed", None, headers


def poster(index: int, args, context, hosts, recorder: Recorder, stop: threading.Event) -> None:
    balancer = Client(args.lb, context)
    readers = [Client(address, context) for address in hosts.values()]
    names = list(hosts)
    interval = args.posters / args.rate
    sequence = 0
    while not stop.is_set():
        started = time.monotonic()
        message = f"{args.run}-{index}-{sequence}"
        body = json.dumps({"name": "cluster", "message": message}).encode()
        status, _, _ = balancer.request("POST", "/postchatt", body)
        recorder.write(op="post", msg=message, t0=started, t1=time.monotonic(), status=status)
        if status == 200:
            which = sequence % len(readers)
            t0 = time.monotonic()
            read_status, messages, headers = read_feed(readers[which])
            recorder.write(op="ryw", msg=message, host=names[which], t0=t0, t1=time.monotonic(),
                           status=read_status, seen=None if messages is None else message in messages,
                           age=headers.get("age"))
        sequence += 1
        stop.wait(max(0.0, interval - (time.monotonic() - started)))


def reader(name: str, address: str, args, context, recorder: Recorder, stop: threading.Event) -> None:
    client = Client(address, context)
    while not stop.is_set():
        started = time.monotonic()
        status, messages, headers = read_feed(client)
        record = {"op": "read", "host": name, "t0": started, "t1": time.monotonic(), "status": status,
                  "age": headers.get("age")}
        if messages is not None:
            record.update(feed_record(messages))
        recorder.write(**record)
        stop.wait(max(0.0, args.read_interval - (time.monotonic() - started)))


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
    recorder, stop = Recorder(args.out), threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    threads = [threading.Thread(target=poster, args=(i, args, context, hosts, recorder, stop))
               for i in range(args.posters)]
    threads += [threading.Thread(target=reader, args=(name, address, args, context, recorder, stop))
                for name, address in hosts.items()]
    for thread in threads:
        thread.start()
    while not stop.is_set():
        stop.wait(1)
    for thread in threads:
        thread.join(REQUEST_TIMEOUT + 5)


if __name__ == "__main__":
    main()
