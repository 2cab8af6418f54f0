"""Seeds chatterd with N chatts over one keep-alive plain-HTTP connection: seed.py HOST PORT N."""
import http.client
import json
import socket
import sys
import time


def main() -> int:
    host, port, rows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    conn = http.client.HTTPConnection(host, port, timeout=30)
    conn.connect()
    # http.client writes headers and body separately; without NODELAY, Nagle's algorithm and the
    # server's delayed ACK would add ~40 ms to every request.
    conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    headers = {"Content-Type": "application/json; charset=utf-8"}
    started = time.monotonic()
    for i in range(rows):
        # Spread the points over a small area, as phones in one town would be.
        geodata = json.dumps([42.0 + (i % 100) / 1000, -83.0 - (i % 37) / 1000, "North", "walking"])
        body = json.dumps({"name": f"user{i % 50}", "message": f"seed chatt {i}", "geodata": geodata})
        conn.request("POST", "/postmaps", body=body, headers=headers)
        response = conn.getresponse()
        answer = response.read()
        if response.status != 200:
            print(f"seed: POST {i} got {response.status} {answer[:200]!r}", file=sys.stderr)
            return 1
    print(f"seeded {rows} chatts in {time.monotonic() - started:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
