"""curl as a second real HTTP/2 client (Debian's curl is built with nghttp2): over TLS with ALPN and with prior
knowledge on the plain listener, the same bytes as HTTP/1.1, several streams on one connection, no
connection-specific field."""

from __future__ import annotations

import gzip
import json
import subprocess

import pytest

from h2wire import CONNECTION_SPECIFIC
from pgsupport import count_message

# After the body: the protocol version, the connections opened and the status, on a line of their own.
WRITE_OUT = "\\n%{http_version} %{num_connects} %{http_code}\\n"


@pytest.fixture(scope="module")
def curl_http2():
    version = subprocess.run(["curl", "--version"], capture_output=True, text=True, check=True).stdout
    assert "HTTP2" in version.split("Features:")[-1], f"curl without HTTP/2:\n{version}"


def curl(endpoint, certs, *args, path="/getmaps", head=False):
    """Runs curl against `endpoint` (TLS with ALPN h2, or h2c with prior knowledge) and returns what it printed:
    for each transfer its head, its body and the WRITE_OUT line. `head`: a HEAD request (curl -I)."""
    if endpoint.tls:
        base = [f"https://localhost:{endpoint.port}", "--http2", "--cacert", str(certs.cert),
                "--resolve", f"localhost:{endpoint.port}:127.0.0.1"]
    else:
        base = [f"http://127.0.0.1:{endpoint.port}", "--http2-prior-knowledge"]
    url, options = base[0], base[1:]
    urls = [url + p for p in (path if isinstance(path, list) else [path])]
    dump = ["-I"] if head else ["-D", "-"]  # -I prints the head itself
    done = subprocess.run(["curl", "-sS", "--max-time", "20", *dump, "-w", WRITE_OUT, *options, *args, *urls],
                          capture_output=True, timeout=30)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout


def split(output: bytes) -> tuple[list[tuple[str, str]], bytes, tuple[str, str, str]]:
    """One transfer's output: its header fields, its body and the write-out line."""
    head, _, rest = output.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    assert lines[0].startswith("HTTP/2 "), lines[0]
    fields = [tuple(part.strip() for part in line.split(":", 1)) for line in lines[1:]]
    body, _, _ = rest.rpartition(b"\n")
    body, _, stats = body.rpartition(b"\n")
    version, connects, status = stats.decode().split()
    assert status == lines[0].split()[1]
    return fields, body, (version, connects, status)


@pytest.mark.parametrize("name", ["h2", "h2c"])
def test_curl_gets_the_feed_over_http2_with_http11s_bytes(request, curl_http2, big_feed, certs, name):
    endpoint = getattr(big_feed, name)
    fields, body, (version, _, status) = split(curl(endpoint, certs))
    assert (version, status) == ("2", "200")
    assert body == big_feed.plain.get("/getmaps").body and len(body) > 65_535
    names = {name.lower() for name, _ in fields}
    assert not names & CONNECTION_SPECIFIC, fields
    assert {"content-length", "content-type", "date", "etag", "vary"} <= names


def test_curl_gzip_head_and_304_over_http2(curl_http2, big_feed, certs):
    plain = big_feed.plain.get("/getmaps")
    fields, body, (_, _, status) = split(curl(big_feed.h2, certs, "-H", "Accept-Encoding: gzip"))
    assert status == "200" and dict(fields)["content-encoding"] == "gzip"
    assert gzip.decompress(body) == plain.body
    fields, body, (_, _, status) = split(curl(big_feed.h2, certs, head=True))
    assert status == "200" and body == b"" and dict(fields)["content-length"] == str(len(plain.body))
    etag = plain.header("ETag")
    fields, body, (_, _, status) = split(curl(big_feed.h2, certs, "-H", f"If-None-Match: {etag}"))
    assert (status, body, dict(fields)["etag"]) == ("304", b"", etag)


@pytest.mark.parametrize("name", ["h2", "h2c"])
def test_curl_posts_over_http2_and_the_200_means_committed(request, curl_http2, certs, database_url, token, name):
    endpoint = request.getfixturevalue(f"{name}_server")
    payload = json.dumps({"name": "curl", "message": token, "geodata": '[42.29,-83.71,"North","walking"]'})
    fields, body, (version, _, status) = split(curl(endpoint, certs, "-H", "Content-Type: application/json",
                                                    "--data-binary", payload, path="/postmaps"))
    assert (version, status, body) == ("2", "200", b"{}")
    assert count_message(database_url, token) == 1


def test_curl_multiplexes_several_transfers_on_one_connection(curl_http2, h2_server, certs):
    paths = ["/healthz", "/", "/getchatts", "/nope", "/readyz"]
    output = curl(h2_server, certs, "--parallel", path=paths)
    # Each transfer prints its head, its body and its write-out line; count and check those lines.
    stats = [line.split() for line in output.decode("latin-1").split("\n") if line.startswith("2 ")]
    assert len(stats) == len(paths), output
    assert sorted(status for _, _, status in stats) == sorted(["200", "200", "200", "404", "200"])
    assert sum(int(connects) for _, connects, _ in stats) == 1, f"more than one connection: {stats}"
