"""The `chatter` command-line client run as a process against live chatterd servers."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading
from pathlib import Path

import pytest

from conftest import Certs, serve_args
from contract import error_reason
from processes import ChatterdProcess, free_port, make_certificate

# Exit statuses documented in `chatter --help`.
EXIT_USAGE, EXIT_TLS, EXIT_CONNECTION, EXIT_HTTP, EXIT_MALFORMED = 64, 65, 66, 67, 68
IOS_GEODATA = '[42.2936,-83.7166,"North","walking"]'


@pytest.fixture
def chatter(chatter_bin, tmp_path):
    """chatter(*args, cwd=, env=, text=) -> CompletedProcess; runs in an empty directory with no CHATTER_* variables,
    so neither a ./chatterd.crt nor the caller's environment changes the outcome unless a test says so.
    With text=False, stdout and stderr are the bytes chatter wrote."""

    def run(*args, cwd: Path | None = None, env: dict | None = None, text: bool = True) -> subprocess.CompletedProcess:
        clean = {k: v for k, v in os.environ.items() if not k.startswith("CHATTER_")}
        clean.update(env or {})
        return subprocess.run([chatter_bin, *map(str, args)], capture_output=True, text=text, timeout=60,
                              cwd=cwd or tmp_path, env=clean)

    return run


def tls_url(endpoint, host: str = "localhost") -> str:
    return f"https://{host}:{endpoint.port}"


def succeeded(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 0, f"exit {result.returncode}: {result.stderr}"
    assert result.stderr == "", result.stderr
    return result.stdout


def failed(result: subprocess.CompletedProcess, status: int) -> str:
    """The error line, after checking the exit status and that nothing went to stdout."""
    assert result.returncode == status, f"exit {result.returncode}, wanted {status}: {result.stderr}"
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("chatter: "), result.stderr
    return lines[0]


def one_shot_server(answer: bytes) -> int:
    """A plain TCP server that reads one request head, sends `answer` and closes; returns its port."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve():
        with listener:
            listener.settimeout(30)
            conn, _ = listener.accept()
            with conn:
                received = b""
                while b"\r\n\r\n" not in received:
                    chunk = conn.recv(4096)
                    if not chunk:
                        return
                    received += chunk
                conn.sendall(answer)

    threading.Thread(target=serve, daemon=True).start()
    return listener.getsockname()[1]


# --- post, then get in every format ---------------------------------------------------------------

def test_post_then_get_in_every_format(chatter, tls_server, certs, token):
    server = ["--server", tls_url(tls_server), "--cacert", certs.cert]
    located, plain = f"located {token}", f"plain {token}"
    assert succeeded(chatter("post", *server, "--name", "alice", "--message", located, "--lat", "42.2936",
                             "--lon", "-83.7166", "--facing", "North", "--speed", "walking")) == ""
    assert succeeded(chatter("post", *server, "--name", "bob", "--message", plain)) == ""

    # json: the server's rows, re-emitted unchanged.
    maps = json.loads(succeeded(chatter("get", "--maps", "--format", "json", *server)))
    assert maps == tls_server.get("/getmaps").json()
    [row] = [r for r in maps if r[1] == located]
    assert row[0] == "alice" and row[4] == IOS_GEODATA, "geodata is built exactly as the iOS app builds it"
    [row] = [r for r in maps if r[1] == plain]
    assert row[4] is None, "no location options: geodata null"
    chatts = json.loads(succeeded(chatter("get", "--format", "json", *server)))
    assert chatts == tls_server.get("/getchatts").json() and all(len(r) == 4 for r in chatts)

    # table: a header and aligned columns.
    lines = succeeded(chatter("get", "--maps", *server)).splitlines()
    assert lines[0].split() == ["TIME", "(UTC)", "NAME", "MESSAGE", "LAT", "LON", "FACING", "SPEED"]
    [line] = [x for x in lines if located in x]
    assert line.split()[-4:] == ["42.2936", "-83.7166", "North", "walking"]
    assert line.index("alice") == lines[0].index("NAME") and line.index(located) == lines[0].index("MESSAGE")
    assert [x for x in lines if plain in x][0].split()[-4:] == ["-"] * 4

    # geojson: only located chatts, [longitude, latitude].
    collection = json.loads(succeeded(chatter("get", "--format", "geojson", *server)))
    assert collection["type"] == "FeatureCollection"
    [feature] = [f for f in collection["features"] if f["properties"]["message"] == located]
    assert feature["type"] == "Feature"
    assert feature["geometry"] == {"type": "Point", "coordinates": [-83.7166, 42.2936]}
    assert feature["properties"] == {"name": "alice", "message": located, "id": row_id(maps, located),
                                     "timestamp": row_time(maps, located), "facing": "North", "speed": "walking"}
    assert not [f for f in collection["features"] if f["properties"]["message"] == plain]


def row_id(rows, message):
    return next(r[2] for r in rows if r[1] == message)


def row_time(rows, message):
    return next(r[3] for r in rows if r[1] == message)


def test_geojson_puts_longitude_first(chatter, tls_server, certs, token):
    server = ["--server", tls_url(tls_server), "--cacert", certs.cert]
    succeeded(chatter("post", *server, "--name", "eve", "--message", token, "--lat", "-33.75", "--lon", "151.125"))
    collection = json.loads(succeeded(chatter("get", "--format", "geojson", *server)))
    [feature] = [f for f in collection["features"] if f["properties"]["message"] == token]
    # 151.125 cannot be a latitude: the order is unambiguous.
    assert feature["geometry"]["coordinates"] == [151.125, -33.75]
    assert feature["properties"]["facing"] == "unknown" and feature["properties"]["speed"] == "unknown"


def test_table_shortens_long_messages(chatter, tls_server, certs, token):
    server = ["--server", tls_url(tls_server), "--cacert", certs.cert]
    message = token + " " + "x" * 200
    succeeded(chatter("post", *server, "--name", "long", "--message", message))
    [line] = [x for x in succeeded(chatter("get", *server)).splitlines() if token in x]
    assert message not in line and line.endswith("…") and len(line) < 120


def test_plain_http_url(chatter, plain_server, token):
    server = ["--server", f"http://127.0.0.1:{plain_server.port}"]
    succeeded(chatter("post", *server, "--name", "plain", "--message", token))
    rows = json.loads(succeeded(chatter("get", "--format", "json", *server)))
    assert [r[0] for r in rows if r[1] == token] == ["plain"]


# --- defaults and environment ---------------------------------------------------------------------

def test_chatterd_crt_in_the_working_directory_is_the_default_ca(chatter, tls_server, certs, tmp_path):
    workdir = tmp_path / "with-cert"
    workdir.mkdir()
    shutil.copy(certs.cert, workdir / "chatterd.crt")
    succeeded(chatter("get", "--server", tls_url(tls_server), cwd=workdir))
    # Without it, the system's CAs are used, and they do not know the test certificate.
    assert "not trusted" in failed(chatter("get", "--server", tls_url(tls_server)), EXIT_TLS)


def test_environment_variables_and_flags_winning_over_them(chatter, tls_server, certs):
    env = {"CHATTER_SERVER": tls_url(tls_server, "127.0.0.1"), "CHATTER_CACERT": str(certs.cert)}
    succeeded(chatter("get", env=env))
    closed = {**env, "CHATTER_SERVER": f"https://127.0.0.1:{free_port()}"}
    succeeded(chatter("get", "--server", tls_url(tls_server), env=closed))
    failed(chatter("get", env=closed), EXIT_CONNECTION)


# --- failures and their exit statuses -------------------------------------------------------------

def test_untrusted_certificate_is_a_tls_failure(chatter, tls_server, tmp_path):
    other, _ = make_certificate(tmp_path, "other")
    line = failed(chatter("get", "--server", tls_url(tls_server), "--cacert", other), EXIT_TLS)
    assert "not trusted" in line and str(other) in line
    line = failed(chatter("get", "--server", tls_url(tls_server), "--cacert", tmp_path / "missing.crt"), EXIT_TLS)
    assert "cannot read CA file" in line


def test_certificate_for_another_host_is_a_tls_failure(chatter, env, database_url, tmp_path):
    cert, key = tmp_path / "elsewhere.crt", tmp_path / "elsewhere.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-days", "2",
                    "-nodes", "-subj", "/CN=elsewhere.test", "-addext", "subjectAltName=DNS:elsewhere.test",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    os.chmod(key, 0o600)
    port = free_port()
    process = ChatterdProcess(env.binary, serve_args(env, port, database_url, Certs(tmp_path, cert, key), ()))
    try:
        process.wait_listening()
        line = failed(chatter("get", "--server", f"https://localhost:{port}", "--cacert", cert), EXIT_TLS)
        assert "hostname mismatch" in line
        line = failed(chatter("get", "--server", f"https://127.0.0.1:{port}", "--cacert", cert), EXIT_TLS)
        assert "IP address mismatch" in line
    finally:
        process.stop(timeout=15)


def test_closed_port_is_a_connection_failure(chatter, certs):
    port = free_port()
    line = failed(chatter("get", "--server", f"https://127.0.0.1:{port}", "--cacert", certs.cert), EXIT_CONNECTION)
    assert f"cannot connect to 127.0.0.1:{port}" in line and "refused" in line


def test_wrong_scheme_is_named(chatter, tls_server, plain_server, certs):
    line = failed(chatter("get", "--server", f"http://localhost:{tls_server.port}"), EXIT_CONNECTION)
    assert "https://" in line
    line = failed(chatter("get", "--server", tls_url(plain_server), "--cacert", certs.cert), EXIT_TLS)
    assert "did not answer in TLS" in line


def test_http_error_prints_the_servers_reason(chatter, tls_server, certs, token):
    name = "n" * 33
    reason = error_reason(tls_server.post_json("/postmaps", {"name": name, "message": "direct " + token}))
    line = failed(chatter("post", "--server", tls_url(tls_server), "--cacert", certs.cert, "--name", name,
                          "--message", token), EXIT_HTTP)
    assert line == f"chatter: server answered 400: {reason}"
    assert not [r for r in tls_server.get("/getmaps").json() if token in r[1]]


@pytest.mark.parametrize("args, message", [
    (["post", "--name", "n", "--message", "m", "--lat", "42"], "--lat and --lon go together"),
    (["post", "--name", "n", "--message", "m", "--lat", "95", "--lon", "0"], "--lat must be within"),
    (["get", "--format", "kml"], "--format must be table, json or geojson"),
    (["get", "--nope"], "unknown option --nope"),
    (["get", "--server", "localhost:8443"], "bad server URL"),
    ([], "missing command"),
], ids=["lat-alone", "lat-range", "format", "option", "url", "no-command"])
def test_usage_errors(chatter, certs, args, message):
    line = failed(chatter(*args, "--cacert", certs.cert) if args else chatter(), EXIT_USAGE)
    assert message in line


@pytest.mark.parametrize("answer, message", [
    (b"HTTP/1.1 200 OK\r\nContent-Length: 14\r\nConnection: close\r\n\r\n{\"not\":\"rows\"}", "not a JSON array"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 19\r\n\r\n[[\"a\",\"b\",\"c\",\"d\"]]", "not an array of 5 elements"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n[[\"a\"", "closed 5 bytes before the end"),
    (b"SSH-2.0-OpenSSH_9.2\r\n\r\n", "not an HTTP/1.x response"),
], ids=["object", "short-rows", "truncated", "not-http"])
def test_malformed_responses(chatter, answer, message):
    port = one_shot_server(answer)
    line = failed(chatter("get", "--maps", "--format", "json", "--server", f"http://127.0.0.1:{port}"),
                  EXIT_MALFORMED)
    assert message in line


def test_help_and_version(chatter):
    text = succeeded(chatter("--help"))
    for status in (EXIT_USAGE, EXIT_TLS, EXIT_CONNECTION, EXIT_HTTP, EXIT_MALFORMED):
        assert f"\n  {status}  " in text
    assert "CHATTER_SERVER" in text and "CHATTER_CACERT" in text
    assert succeeded(chatter("--version")).startswith("chatter ")


# --- a hostile server or poster cannot drive the terminal -----------------------------------------

# What must never reach a terminal raw: C0 (but the newline chatter ends lines with), DEL and C1 controls,
# the bidi controls, the line and paragraph separators, and invisible format characters.
FORBIDDEN = ({chr(c) for c in range(0x20)} - {"\n"}) | {"\x7f"} | {chr(c) for c in range(0x80, 0xA0)} | {
    "\u061c", "\u200e", "\u200f", *map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A)),
    "\u2028", "\u2029", "\u200b", "\u2060", "\ufeff", "\u00ad"}
# Clear the screen, retitle the window, ring the bell, CSI as one C1 code, NEL, a right-to-left override
# that disguises a file name, an isolate, a separator, and text that only looks like one of chatter's escapes.
HOSTILE = "\x1b[2J\x1b]0;owned\x07|\x9b31m|\x85|\u202egnp.exe|\u2066x\u2069|\u2028|\u200f|\\u{1B}"


def terminal_safe(stream: bytes) -> str:
    """The stream as text, after checking it is UTF-8 and holds nothing FORBIDDEN."""
    text = stream.decode("utf-8")  # strict: invalid UTF-8 raises
    assert not FORBIDDEN & set(text), sorted(f"U+{ord(c):04X}" for c in FORBIDDEN & set(text))
    return text


def rows_answer(rows) -> bytes:
    # ensure_ascii=False sends C1 and bidi characters raw, as UTF-8; JSON itself requires C0 to be escaped.
    body = json.dumps(rows, ensure_ascii=False).encode()
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)


def test_hostile_rows_are_escaped_in_every_format(chatter):
    geodata = json.dumps([42.5, -83.25, HOSTILE[:12], "\u202e\x9b"], ensure_ascii=False)
    rows = [[HOSTILE, HOSTILE, "id\x1b", "2026-03-25T08:11:59.123456Z", geodata]]

    def get(rows, *args) -> str:
        port = one_shot_server(rows_answer(rows))
        result = chatter("get", "--maps", *args, "--server", f"http://127.0.0.1:{port}", text=False)
        assert result.returncode == 0 and result.stderr == b"", result.stderr
        return terminal_safe(result.stdout)

    assert json.loads(get(rows, "--format", "json")) == rows, "the JSON decodes to exactly the server's strings"

    collection = json.loads(get(rows, "--format", "geojson"))
    properties = collection["features"][0]["properties"]
    assert properties == {"name": HOSTILE, "message": HOSTILE, "id": "id\x1b", "timestamp": rows[0][3],
                          "facing": HOSTILE[:12], "speed": "\u202e\x9b"}

    # The table cuts long cells, so each piece of HOSTILE gets a row of its own.
    pieces = HOSTILE.split("|")
    table = get([["n", piece, "id", "t", geodata] for piece in pieces])
    shown = [r"\u{1B}[2J\u{1B}]0;owned\u{07}", r"\u{9B}31m", r"\u{85}", r"\u{202E}gnp.exe", r"\u{2066}x\u{2069}",
             r"\u{2028}", r"\u{200F}", r"\\u{1B}"]
    lines = table.splitlines()[1:]
    assert [line.split()[2] for line in lines] == shown, "each escaped; a literal backslash doubled"
    assert all(line.split()[-2:] == [r"\u{1B}[2J…", r"\u{202E}…"] for line in lines), "facing, speed: whole escapes"


def http_answer(status_line: bytes, *fields: bytes, body: bytes = b"") -> bytes:
    return b"".join(line + b"\r\n" for line in (status_line, *fields, b"Content-Length: %d" % len(body), b"")) + body


@pytest.mark.parametrize("answer, status, shown", [
    # The reason phrase: ESC and BEL, a bidi override in UTF-8, and bytes that are not UTF-8 at all (0x9B
    # alone is CSI to a terminal that reads 8-bit controls).
    (http_answer(b"HTTP/1.1 503 \x1b]0;owned\x07 \xe2\x80\xae \x9b2J\xff"), EXIT_HTTP,
     "server answered 503: \\u{1B}]0;owned\\u{07} \\u{202E} \ufffd2J\ufffd"),
    (http_answer(b"HTTP/1.1 4\x1b[ Bad"), EXIT_MALFORMED, "malformed response: bad status code 4\\u{1B}["),
    (http_answer(b"HTTP/1.1 200 OK", "Content-Encoding: gz\u009b2J\u202eip".encode()), EXIT_MALFORMED,
     "body encoded as gz\\u{9B}2J\\u{202E}ip, which chatter did not ask for"),
    (http_answer(b"HTTP/1.1 301 Moved", "Location: https://evil/\u2066\u0085".encode()), EXIT_HTTP,
     "(redirected to https://evil/\\u{2066}\\u{85})"),
    (http_answer(b"HTTP/1.1 400 Bad Request", body=rb'{"error":"\u001b[31mred\u0007\u202e\u009b\n!"}'), EXIT_HTTP,
     "server answered 400: \\u{1B}[31mred\\u{07}\\u{202E}\\u{9B}\\u{0A}!"),
], ids=["reason-phrase", "status-code", "content-encoding", "location", "error-reason"])
def test_hostile_error_lines_are_escaped(chatter, answer, status, shown):
    port = one_shot_server(answer)
    result = chatter("get", "--server", f"http://127.0.0.1:{port}", text=False)
    assert result.returncode == status and result.stdout == b"", result.stderr
    line = terminal_safe(result.stderr)
    assert line.count("\n") == 1 and line.startswith("chatter: ") and shown in line, line


def test_hostile_chatt_through_chatterd(chatter, tls_server, certs, token):
    server = ["--server", tls_url(tls_server), "--cacert", certs.cert]
    name, message, facing, speed = "\x1b\x9b\u202e", f"{token}\u202e{HOSTILE}", "\u2066N", "\x85s"
    succeeded(chatter("post", *server, "--name", name, "--message", message, "--lat", "1.5", "--lon", "2.5",
                      "--facing", facing, "--speed", speed))
    assert [r[0] for r in tls_server.get("/getmaps").json() if r[1] == message] == [name], "stored as sent"

    def get(*args) -> str:
        result = chatter("get", *args, *server, text=False)
        assert result.returncode == 0 and result.stderr == b"", result.stderr
        return terminal_safe(result.stdout)

    [row] = [r for r in json.loads(get("--maps", "--format", "json")) if r[1] == message]
    assert row[0] == name and json.loads(row[4])[2:] == [facing, speed]
    [feature] = [f for f in json.loads(get("--format", "geojson"))["features"]
                 if f["properties"]["message"] == message]
    assert feature["properties"]["name"] == name and feature["properties"]["speed"] == speed
    [line] = [x for x in get("--maps").splitlines() if token in x]
    # The message is cut after the override: the next escape would not fit whole.
    assert line.split()[2:] == [r"\u{1B}\u{9B}\u{202E}", token + r"\u{202E}…", "1.5", "2.5", r"\u{2066}N", r"\u{85}s"]


# --- ./chatterd.crt vouches only for its own server -----------------------------------------------

def openssl(*args) -> None:
    subprocess.run(["openssl", *map(str, args)], check=True, capture_output=True)


def make_ca_and_leaf(directory: Path, leaf_names: str) -> tuple[Path, Path, Path]:
    """A CA with no names of its own (no subjectAltName, no nameConstraints) and a leaf it signed for
    `leaf_names`; returns (CA certificate, leaf certificate, leaf key). Keys stay in `directory`."""
    ca, ca_key = directory / "ca.crt", directory / "ca.key"
    leaf, leaf_key, request, extensions = (directory / n for n in ("leaf.crt", "leaf.key", "leaf.csr", "leaf.ext"))
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
            "-subj", "/CN=chatter e2e CA", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign", "-keyout", ca_key, "-out", ca)
    openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=leaf",
            "-keyout", leaf_key, "-out", request)
    extensions.write_text(f"subjectAltName={leaf_names}\nextendedKeyUsage=serverAuth\n")
    openssl("x509", "-req", "-in", request, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-days", "2",
            "-extfile", extensions, "-out", leaf)
    os.chmod(leaf_key, 0o600)
    return ca, leaf, leaf_key


@pytest.fixture
def serve_at(env, database_url):
    """serve_at(host, cert, key) -> port: a TLS chatterd listening on `host` (any loopback address),
    stopped after the test."""
    started: list[ChatterdProcess] = []

    def start(host: str, cert: Path, key: Path) -> int:
        port = free_port()
        args = serve_args(env, port, database_url, Certs(cert.parent, cert, key), ())
        args[args.index("--host") + 1] = host
        process = ChatterdProcess(env.binary, args)
        started.append(process)
        process.wait_listening()
        return port

    yield start
    for process in started:
        process.stop(timeout=15)


def test_chatterd_crt_is_trusted_only_for_its_own_server(chatter, serve_at, tmp_path):
    # 127.0.0.2 reaches this machine too, but it is neither localhost nor one of the CA's names; the leaf
    # is valid for it, so only chatter's choice of anchor decides.
    ca, leaf, key = make_ca_and_leaf(tmp_path, "DNS:localhost,IP:127.0.0.1,IP:127.0.0.2")
    workdir = tmp_path / "run"
    workdir.mkdir()
    shutil.copy(ca, workdir / "chatterd.crt")
    local, other = serve_at("127.0.0.1", leaf, key), serve_at("127.0.0.2", leaf, key)

    succeeded(chatter("get", "--server", f"https://localhost:{local}", cwd=workdir))
    succeeded(chatter("get", "--server", f"https://127.0.0.1:{local}", cwd=workdir))
    line = failed(chatter("get", "--server", f"https://127.0.0.2:{other}", cwd=workdir), EXIT_TLS)
    assert "not trusted" in line and "system's trusted CAs" in line and "--cacert ./chatterd.crt" in line
    # Named with --cacert (or CHATTER_CACERT), the same file is trusted for any host.
    succeeded(chatter("get", "--server", f"https://127.0.0.2:{other}", "--cacert", "chatterd.crt", cwd=workdir))
    succeeded(chatter("get", "--server", f"https://127.0.0.2:{other}", cwd=workdir,
                      env={"CHATTER_CACERT": str(workdir / "chatterd.crt")}))


def test_chatterd_crt_is_trusted_for_the_names_in_it(chatter, serve_at, tmp_path):
    cert, key = tmp_path / "own.crt", tmp_path / "own.key"
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:127.0.0.2",
            "-addext", "extendedKeyUsage=serverAuth", "-keyout", key, "-out", cert)
    os.chmod(key, 0o600)
    workdir = tmp_path / "run"
    workdir.mkdir()
    shutil.copy(cert, workdir / "chatterd.crt")
    port = serve_at("127.0.0.2", cert, key)
    succeeded(chatter("get", "--server", f"https://127.0.0.2:{port}", cwd=workdir))
