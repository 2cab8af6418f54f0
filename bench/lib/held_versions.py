#!/usr/bin/env python3
"""What a slow reader still sending an older feed version costs chatterd: READERS clients each ask for /getmaps
(alternately identity and gzip, as phones do) after one more post, and then read nothing, so each holds the
version it was answered from while the server keeps it queued. Prints one line, "before_kb after_kb readers":
chatterd's resident set after warm reads of both forms, and with every reader holding its version.

Usage: held_versions.py BASE_URL PID [READERS]   (BASE_URL: chatterd's plain-HTTP listener, http://host:port)
"""

import http.client
import json
import os
import socket
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Tests", "Clients"))
from procfs import rss_kb  # noqa: E402 (Tests/Clients)


def exchange(host, port, method, path, body=None, headers=None):
    """One request on a connection of its own; the body is read whole and must come with 200."""
    connection = http.client.HTTPConnection(host, port, timeout=60)
    connection.request(method, path, body=body, headers=headers or {})
    response = connection.getresponse()
    response.read()
    connection.close()
    if response.status != 200:
        raise RuntimeError(f"{method} {path}: {response.status}")


def read_feed(host, port, gzip):
    exchange(host, port, "GET", "/getmaps", headers={"Accept-Encoding": "gzip"} if gzip else {})


def post(host, port, serial):
    body = json.dumps({"name": "held", "message": f"held version {serial}", "geodata": None})
    exchange(host, port, "POST", "/postmaps", body=body, headers={"Content-Type": "application/json"})


def stalled_reader(host, port, gzip):
    """A client that asks for the feed and reads nothing: the server keeps the rest of the body queued."""
    reader = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # A small receive window before connecting, so that little of the body leaves the server's queue.
    reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    reader.connect((host, port))
    encoding = "Accept-Encoding: gzip\r\n" if gzip else ""
    reader.sendall(f"GET /getmaps HTTP/1.1\r\nHost: {host}\r\n{encoding}\r\n".encode())
    return reader


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__.strip().splitlines()[-1])
    url = urllib.parse.urlsplit(sys.argv[1])
    pid = int(sys.argv[2])
    readers = int(sys.argv[3]) if len(sys.argv) == 4 else 8
    host, port = url.hostname, url.port
    for _ in range(2):
        read_feed(host, port, gzip=False)
        read_feed(host, port, gzip=True)
    time.sleep(1)
    before = rss_kb(pid)
    held = []
    for serial in range(readers):
        post(host, port, serial)
        held.append(stalled_reader(host, port, gzip=serial % 2 == 1))
        # Let the server answer it (and make the gzip form) before the next post moves the feed on.
        time.sleep(0.5)
    time.sleep(1)
    after = rss_kb(pid)
    for reader in held:
        reader.close()
    print(before, after, readers)


if __name__ == "__main__":
    main()
