"""TLS versions, ALPN, failed handshakes, and refusing bad certificate/key files."""

from __future__ import annotations

import os
import shutil
import socket
import ssl
import subprocess
import time
import warnings

import pytest

from conftest import Certs, serve_args
from h2wire import over_h2
from processes import ChatterdProcess, free_port, make_certificate, make_expired_certificate, wait_until
from wire import Conn, build_request


def context_for(cafile, version: ssl.TLSVersion | None = None, alpn: list[str] | None = None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(cafile))
    if version is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            ctx.minimum_version = ctx.maximum_version = version
    if alpn:
        ctx.set_alpn_protocols(alpn)
    return ctx


def client_hello(ctx: ssl.SSLContext) -> bytes:
    """The ClientHello bytes `ctx` would send (raises SSLError if it can offer no protocol)."""
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(incoming, outgoing, server_hostname="localhost")
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()


@pytest.mark.parametrize("version, name", [(ssl.TLSVersion.TLSv1_2, "TLSv1.2"), (ssl.TLSVersion.TLSv1_3, "TLSv1.3")],
                         ids=["tls1.2", "tls1.3"])
def test_modern_tls_versions_are_accepted(tls_server, certs, version, name):
    with tls_server.connect(context=context_for(certs.cert, version)) as conn:
        assert conn.sock.version() == name
        conn.send(build_request("GET", "/healthz"))
        assert conn.read_response().status == 200


def test_tls11_is_refused(tls_server, certs):
    ctx = context_for(certs.cert, ssl.TLSVersion.TLSv1_1)
    ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
    try:
        hello = client_hello(ctx)
    except ssl.SSLError as error:
        pytest.skip(f"local OpenSSL cannot offer TLS 1.1: {error}")
    if len(hello) < 11 or hello[9:11] != b"\x03\x02":
        pytest.skip("local OpenSSL does not offer TLS 1.1 in its ClientHello")
    with pytest.raises((ssl.SSLError, ConnectionResetError)):
        with tls_server.connect(context=ctx):
            pass
    assert tls_server.get("/healthz").status == 200


@pytest.mark.parametrize("cipher, accepted", [("ECDHE-ECDSA-AES128-GCM-SHA256", True),
                                               ("ECDHE-ECDSA-CHACHA20-POLY1305", True),
                                               ("ECDHE-ECDSA-AES128-SHA", False),
                                               ("ECDHE-ECDSA-AES256-SHA384", False)])
def test_tls12_offers_only_aead_forward_secret_ciphers(tls_server, certs, cipher, accepted):
    ctx = context_for(certs.cert, ssl.TLSVersion.TLSv1_2)
    ctx.set_ciphers(cipher)
    if accepted:
        with tls_server.connect(context=ctx) as conn:
            assert conn.sock.cipher()[0] == cipher
    else:
        with pytest.raises((ssl.SSLError, ConnectionResetError)):
            tls_server.connect(context=ctx).close()


def test_stalled_handshake_is_closed_at_the_handshake_deadline(start_server, certs):
    server = start_server("--handshake-timeout", "1", tls=True)
    hello = client_hello(context_for(certs.cert))
    with socket.create_connection((server.host, server.port), timeout=10) as sock:
        sock.sendall(hello[: len(hello) // 2])
        started = time.monotonic()
        _drain(sock)
        elapsed = time.monotonic() - started
    assert elapsed < 4, f"half a ClientHello kept the connection for {elapsed:.1f}s"


ALPN_CHOICES = {  # what the client offers -> what the server picks (RFC 7301; RFC 9113 §3.2)
    "h2-and-http11": (["h2", "http/1.1"], "h2"),
    "http11-first-still-h2": (["http/1.1", "h2"], "h2"),
    "h2-only": (["h2"], "h2"),
    "http11-only": (["http/1.1"], "http/1.1"),
    "others-and-http11": (["spdy/3.1", "http/1.1"], "http/1.1"),
}


@pytest.mark.parametrize("offered, chosen", ALPN_CHOICES.values(), ids=ALPN_CHOICES.keys())
def test_alpn_prefers_h2_and_keeps_http11(tls_server, certs, offered, chosen):
    endpoint = over_h2(tls_server, certs.cert)
    ctx = context_for(certs.cert, alpn=offered)
    if chosen == "h2":
        with endpoint.connect(context=ctx) as conn:
            assert conn.sock.selected_alpn_protocol() == "h2"
            assert conn.get("/healthz").status == 200
    else:
        with tls_server.connect(context=ctx) as conn:
            assert conn.sock.selected_alpn_protocol() == "http/1.1"
            conn.send(build_request("GET", "/healthz"))
            response = conn.read_response()
            assert response.status == 200 and response.version == "HTTP/1.1"


def test_no_alpn_is_http11(tls_server, certs):
    with tls_server.connect(context=context_for(certs.cert)) as conn:
        assert conn.sock.selected_alpn_protocol() is None
        conn.send(build_request("GET", "/healthz"))
        assert conn.read_response().status == 200


def test_alpn_without_h2_or_http11_is_refused(tls_server, certs):
    # A fatal no_application_protocol alert (RFC 7301 §3.2); the server goes on.
    with pytest.raises((ssl.SSLError, ConnectionResetError)):
        tls_server.connect(context=context_for(certs.cert, alpn=["spdy/3.1", "h3"])).close()
    assert tls_server.get("/healthz").status == 200


def test_h2_is_served_over_tls_12_too(tls_server, certs):
    # RFC 9113 §9.2: TLS 1.2 or later, with an AEAD cipher suite (all that chatterd offers).
    endpoint = over_h2(tls_server, certs.cert)
    with endpoint.connect(context=context_for(certs.cert, ssl.TLSVersion.TLSv1_2, alpn=["h2"])) as conn:
        assert conn.sock.version() == "TLSv1.2"
        assert conn.get("/healthz").status == 200


def test_tls_server_uses_the_configured_certificate(tls_server, certs):
    with tls_server.connect() as conn:
        der = conn.sock.getpeercert(binary_form=True)
    assert der == ssl.PEM_cert_to_DER_cert(certs.cert.read_text())


def _garbage(server) -> None:
    with socket.create_connection((server.host, server.port), timeout=5) as sock:
        sock.sendall(b"\x16\x03\x01\x00\x30" + os.urandom(48))
        _drain(sock)


def _hello_then_close(server, hello: bytes, reset: bool) -> None:
    conn = Conn(socket.create_connection((server.host, server.port), timeout=5))
    conn.send(hello)
    conn.abort() if reset else conn.close()


def _connect_then_close(server) -> None:
    socket.create_connection((server.host, server.port), timeout=5).close()


def _drain(sock: socket.socket) -> None:
    try:
        while sock.recv(4096):
            pass
    except OSError:
        pass


def test_failed_handshakes_leak_no_file_descriptors(start_server, certs):
    server = start_server("--handshake-timeout", "2", tls=True)
    process: ChatterdProcess = server.process
    assert server.get("/healthz").status == 200
    baseline = process.fd_count()
    hello = client_hello(context_for(certs.cert))
    for index in range(200):
        kind = index % 4
        if kind == 0:
            _garbage(server)
        elif kind == 3:
            _connect_then_close(server)
        else:
            _hello_then_close(server, hello, reset=(kind == 2))
    assert server.get("/healthz").status == 200
    settled = wait_until(lambda: process.fd_count() <= baseline + 3, 10)
    assert settled, f"fds: baseline {baseline}, now {process.fd_count()}"
    assert process.alive()


STARTUP_FAILURES = ["missing-cert", "garbage-cert", "expired-cert", "missing-key", "mismatched-key",
                    "encrypted-key", "key-mode-0644", "key-mode-0640"]


@pytest.mark.parametrize("case", STARTUP_FAILURES)
def test_bad_certificate_or_key_refuses_to_start(env, database_url, certs, tmp_path, case):
    cert, key = tmp_path / "c.crt", tmp_path / "c.key"
    shutil.copy(certs.cert, cert)
    shutil.copy(certs.key, key)
    os.chmod(key, 0o600)
    culprit = key
    if case == "missing-cert":
        cert.unlink()
        culprit = cert
    elif case == "garbage-cert":
        cert.write_text("-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n")
        culprit = cert
    elif case == "expired-cert":
        expired_cert, expired_key = make_expired_certificate(tmp_path)
        shutil.copy(expired_cert, cert)
        shutil.copy(expired_key, key)
        culprit = cert
    elif case == "missing-key":
        key.unlink()
    elif case == "encrypted-key":
        subprocess.run(["openssl", "pkey", "-in", str(certs.key), "-aes256", "-passout", "pass:secret",
                        "-out", str(key)], check=True, capture_output=True)
    elif case == "mismatched-key":
        _, other_key = make_certificate(tmp_path, "other")
        shutil.copy(other_key, key)
    elif case.startswith("key-mode-"):
        os.chmod(key, int(case.rsplit("-", 1)[1], 8))
    port = free_port()
    process = ChatterdProcess(env.binary, serve_args(env, port, database_url, Certs(tmp_path, cert, key), []))
    status = process.wait(15)
    if status is None:
        process.stop(5)
        pytest.fail(f"chatterd started despite {case}:\n{process.log()}")
    process.reader.join(2)
    output = process.log()
    assert status != 0, output
    assert str(culprit) in output, f"message does not name {culprit}:\n{output}"
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


def test_slow_tls_handshakes_do_not_stall_other_clients(tls_server, certs):
    hello = client_hello(context_for(certs.cert))
    slow = [socket.create_connection((tls_server.host, tls_server.port), timeout=5) for _ in range(50)]
    try:
        worst = 0.0
        for step in range(10):
            for sock in slow:
                try:
                    sock.sendall(hello[step:step + 1])
                except OSError:
                    pass
            started = time.monotonic()
            assert tls_server.get("/healthz", timeout=5).status == 200
            worst = max(worst, time.monotonic() - started)
            time.sleep(0.1)
        assert worst < 2.0, f"a TLS request took {worst:.2f}s while 50 handshakes trickled in"
    finally:
        for sock in slow:
            sock.close()


def test_plain_http_on_the_tls_port_is_closed(tls_server):
    with socket.create_connection((tls_server.host, tls_server.port), timeout=10) as sock:
        sock.sendall(build_request("GET", "/healthz"))
        received = b""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(4096)
            except ConnectionResetError:
                break
            if not chunk:
                break
            received += chunk
        else:
            pytest.fail("TLS port kept a plain-HTTP connection open")
    assert b" 200 " not in received.split(b"\r\n")[0], received
    assert tls_server.get("/healthz").status == 200
