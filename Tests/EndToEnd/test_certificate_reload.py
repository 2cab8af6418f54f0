"""SIGHUP reloads the certificate and key: new handshakes get the new pair, open connections keep theirs, a pair
that cannot be loaded is refused with an error line and the old one stays, and /metrics shows the serving
certificate's expiry (with a warning in the log within 30 days of it)."""

from __future__ import annotations

import hashlib
import shutil
import signal
import socket
import ssl
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest

from conftest import Certs, launch
from processes import make_certificate, make_expired_certificate, wait_until
from telemetry import log_records, metric, parse_exposition
from wire import build_request


def fingerprint(endpoint) -> str:
    """The SHA-256 of the certificate a new TLS connection is given."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with socket.create_connection((endpoint.host, endpoint.port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname="localhost") as tls:
            return hashlib.sha256(tls.getpeercert(binary_form=True)).hexdigest()


def file_fingerprint(cert: Path) -> str:
    der = subprocess.run(["openssl", "x509", "-in", str(cert), "-outform", "DER"], check=True,
                         capture_output=True).stdout
    return hashlib.sha256(der).hexdigest()


def not_after(cert: Path) -> int:
    text = subprocess.run(["openssl", "x509", "-in", str(cert), "-noout", "-enddate"], check=True,
                          capture_output=True, text=True).stdout.strip().split("=", 1)[1]
    return int(datetime.strptime(text, "%b %d %H:%M:%S %Y %Z").replace(tzinfo=timezone.utc).timestamp())


def expiry_gauge(endpoint) -> float | None:
    body = endpoint.get("/metrics").body.decode()
    return metric(parse_exposition(body)[1], "chatterd_tls_certificate_expiry_timestamp_seconds")


def events(server, event: str) -> list[dict]:
    return [record for record in log_records(server.process, "logfmt") if record.get("event") == event]


def reload_and_wait(server, event: str) -> dict | None:
    """Sends SIGHUP; the next `event` record it causes, or None if none comes within 10 s."""
    before = len(events(server, event))
    server.process.signal(signal.SIGHUP)

    def new_record():
        records = events(server, event)
        return records[before] if len(records) > before else None
    return wait_until(new_record, timeout=10)


@pytest.fixture
def own_pair(tmp_path):
    """A server started on a pair of its own, so a test may overwrite the files."""
    cert, key = make_certificate(tmp_path, "served")
    return Certs(tmp_path, cert, key)


@pytest.fixture
def reloadable(env, database_url, own_pair):
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    endpoint = launch(env, database_url, own_pair, context)
    yield endpoint
    endpoint.process.stop(timeout=15)


def test_sighup_serves_the_new_pair_to_new_connections_and_open_ones_keep_theirs(reloadable, own_pair, tmp_path):
    first = fingerprint(reloadable)
    assert first == file_fingerprint(own_pair.cert)
    held = reloadable.connect()
    replacement = tmp_path / "next"
    replacement.mkdir()
    cert, key = make_certificate(replacement, "next")
    shutil.copy(cert, own_pair.cert)
    shutil.copy(key, own_pair.key)
    record = reload_and_wait(reloadable, "certificate_reloaded")
    assert record is not None, reloadable.process.log()
    assert fingerprint(reloadable) == file_fingerprint(cert) != first
    held.send(build_request("GET", "/healthz"))
    assert held.read_response().status == 200, "the connection opened before the reload still works"
    held.close()
    assert expiry_gauge(reloadable) == not_after(cert)


@pytest.mark.parametrize("breakage", ["mismatched key", "expired certificate", "missing certificate"])
def test_a_pair_that_cannot_be_loaded_is_refused_and_the_old_one_stays(reloadable, own_pair, tmp_path, breakage):
    served = fingerprint(reloadable)
    gauge = expiry_gauge(reloadable)
    other = tmp_path / "other"
    other.mkdir()
    if breakage == "mismatched key":
        _, key = make_certificate(other, "other")
        shutil.copy(key, own_pair.key)
    elif breakage == "expired certificate":
        expired, key = make_expired_certificate(other)
        shutil.copy(expired, own_pair.cert)
        shutil.copy(key, own_pair.key)
    else:
        own_pair.cert.unlink()
    record = reload_and_wait(reloadable, "certificate_reload_failed")
    assert record is not None and record["level"] == "error", reloadable.process.log()
    assert "cause" in record and record["action"] == "kept the old pair"
    assert fingerprint(reloadable) == served
    assert expiry_gauge(reloadable) == gauge
    assert reloadable.get("/healthz").status == 200


def test_a_certificate_near_expiry_is_warned_about_and_its_expiry_is_a_gauge(reloadable, own_pair):
    # The fixture's certificate is valid for 30 days: inside the warning window from the start.
    warning = wait_until(lambda: next(iter(events(reloadable, "certificate_expiring")), None), timeout=10)
    assert warning is not None and warning["level"] == "warn", reloadable.process.log()
    assert int(warning["days_left"]) in (29, 30)
    assert expiry_gauge(reloadable) == not_after(own_pair.cert)


def test_plain_http_has_nothing_to_reload(start_server):
    server = start_server()
    record = reload_and_wait(server, "reload_skipped")
    assert record is not None, server.process.log()
    assert expiry_gauge(server) is None
    assert server.get("/healthz").status == 200
