"""How soon a chatt posted through one chatterd is in another's /getmaps: two plain-HTTP processes on a fresh
database; POSTS times, post through the first and read the second at once (kept-alive connections), then
again until the chatt is there. Prints how often the very next read missed it, and the delay percentiles.

Usage: python3 bench/feedcost/visibility.py CHATTERD_BINARY ADMIN_URL POSTS
"""

import http.client
import json
import os
import sys
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path[:0] = [os.path.join(ROOT, "Tests", "EndToEnd"), os.path.join(ROOT, "Tests", "Clients")]

from pgsupport import psql, with_database  # noqa: E402
from processes import ChatterdProcess, free_port, wait_healthy  # noqa: E402
from wire import Endpoint  # noqa: E402


def main(binary: str, admin: str, posts: int) -> None:
    name = "visibility_" + uuid.uuid4().hex[:8]
    psql(admin, f"CREATE DATABASE {name};")
    url = with_database(admin, name)
    processes = []
    try:
        ports = []
        for _ in range(2):
            port = free_port()
            process = ChatterdProcess(binary, ["serve", "--host", "127.0.0.1", "--port", str(port), "--plain-http",
                                               "--database-url", url, "--migrations", os.path.join(ROOT, "migrations")])
            processes.append(process)
            process.wait_listening()
            wait_healthy(Endpoint("127.0.0.1", port, None, process))
            ports.append(port)
        time.sleep(1)  # both listening
        writer, reader = (http.client.HTTPConnection("127.0.0.1", port) for port in ports)

        def feed() -> bytes:
            reader.request("GET", "/getmaps")
            return reader.getresponse().read()

        feed()
        misses, delays = 0, []
        for index in range(posts):
            message = f"visible-{index}-{uuid.uuid4().hex[:6]}"
            writer.request("POST", "/postchatt", body=json.dumps({"name": "v", "message": message}))
            writer.getresponse().read()
            started = time.monotonic()
            if message.encode() not in feed():
                misses += 1
                while message.encode() not in feed():
                    pass
            delays.append((time.monotonic() - started) * 1000)
        delays.sort()
        print(f"next read missed {misses} of {posts}; delay ms p50 {delays[posts // 2]:.2f} "
              f"p90 {delays[posts * 9 // 10]:.2f} p99 {delays[posts * 99 // 100]:.2f} max {delays[-1]:.2f}")
    finally:
        for process in processes:
            process.stop(5)
        psql(admin, f"DROP DATABASE IF EXISTS {name} WITH (FORCE);")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
