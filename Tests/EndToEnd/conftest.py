"""Session fixtures for the end-to-end suite: a fresh database, a test certificate, and two running
chatterd servers (TLS and --plain-http) on it, plus a factory for extra servers with custom flags.

Needs CHATTERD_BIN, CHATTERD_TEST_DATABASE_URL and CHATTERD_REPO; without them everything skips.
The client tests also need CHATTER_BIN (the `chatter` binary) and fail without it.
"""

from __future__ import annotations

import os
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

# The clients and probes shared with Tests/Cluster and bench/lib (Tests/Clients/README.md).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "Clients"))

from pgsupport import psql, with_database  # noqa: E402
from h2wire import H2Endpoint, over_h2  # noqa: E402
from processes import ChatterdProcess, client_context, free_port, make_certificate, wait_healthy  # noqa: E402
from wire import Endpoint  # noqa: E402

REQUIRED = ("CHATTERD_BIN", "CHATTERD_TEST_DATABASE_URL", "CHATTERD_REPO")


def pytest_collection_modifyitems(config, items):
    missing = [name for name in REQUIRED if not os.environ.get(name)]
    if not missing:
        return
    marker = pytest.mark.skip(reason=f"end-to-end suite needs {', '.join(missing)} in the environment")
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(marker)


@dataclass
class Env:
    binary: str
    admin_url: str
    repo: Path

    @property
    def migrations(self) -> Path:
        return self.repo / "migrations"


@dataclass
class Certs:
    directory: Path
    cert: Path
    key: Path


@pytest.fixture(scope="session")
def env() -> Env:
    return Env(os.environ["CHATTERD_BIN"], os.environ["CHATTERD_TEST_DATABASE_URL"],
               Path(os.environ["CHATTERD_REPO"]))


@pytest.fixture(scope="session")
def chatter_bin() -> str:
    """The `chatter` client binary; a missing one fails its tests rather than skipping them."""
    path = os.environ.get("CHATTER_BIN")
    if not path:
        pytest.fail("CHATTER_BIN is not set: the client tests need the chatter binary (scripts/test sets it)")
    if not os.access(path, os.X_OK):
        pytest.fail(f"CHATTER_BIN={path} is not an executable file")
    return path


@pytest.fixture(scope="session")
def database_url(env):
    """A fresh database with a random name; dropped at the end of the session."""
    name = "e2e_" + uuid.uuid4().hex[:12]
    psql(env.admin_url, f"CREATE DATABASE {name};")
    yield with_database(env.admin_url, name)
    psql(env.admin_url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE);")


@pytest.fixture(scope="session")
def certs(tmp_path_factory) -> Certs:
    directory = tmp_path_factory.mktemp("tls")
    cert, key = make_certificate(directory)
    return Certs(directory, cert, key)


@pytest.fixture(scope="session")
def tls_context(certs):
    return client_context(certs.cert)


def serve_args(env: Env, port: int, database_url: str, certs: Certs | None, flags) -> list[str]:
    args = ["serve", "--host", "127.0.0.1", "--port", str(port), "--database-url", database_url,
            "--migrations", str(env.migrations)]
    args += ["--cert", str(certs.cert), "--key", str(certs.key)] if certs else ["--plain-http"]
    return args + [str(flag) for flag in flags]


def launch(env: Env, database_url: str, certs: Certs | None, tls_context, flags=()) -> Endpoint:
    """Starts chatterd on a free port and waits until /healthz answers."""
    port = free_port()
    process = ChatterdProcess(env.binary, serve_args(env, port, database_url, certs, flags))
    endpoint = Endpoint("127.0.0.1", port, tls_context if certs else None, process)
    try:
        process.wait_listening()
        wait_healthy(endpoint)
    except Exception:
        process.stop(timeout=5)
        raise
    return endpoint


_session_servers: list[Endpoint] = []


def _stop_and_check(endpoint: Endpoint) -> None:
    process: ChatterdProcess = endpoint.process
    assert process.alive(), f"chatterd died during the session:\n{process.log()}"
    status = process.stop(timeout=15)
    assert status == 0, f"chatterd exited with {status} after SIGTERM:\n{process.log()}"


@pytest.fixture(scope="session")
def plain_server(env, database_url, tls_context):
    endpoint = launch(env, database_url, None, None)
    _session_servers.append(endpoint)
    yield endpoint
    _stop_and_check(endpoint)


@pytest.fixture(scope="session")
def tls_server(env, database_url, certs, tls_context, plain_server):
    # Started after plain_server so the two never run migrations at the same moment.
    endpoint = launch(env, database_url, certs, tls_context)
    _session_servers.append(endpoint)
    yield endpoint
    _stop_and_check(endpoint)


@pytest.fixture(scope="session")
def h2_server(tls_server, certs) -> H2Endpoint:
    """The TLS server, spoken to in HTTP/2 (ALPN h2)."""
    return over_h2(tls_server, certs.cert)


@pytest.fixture(scope="session")
def h2c_server(plain_server) -> H2Endpoint:
    """The plain-HTTP server, spoken to in HTTP/2 with prior knowledge (h2c)."""
    return over_h2(plain_server)


@pytest.fixture(params=["plain", "tls", "h2"])
def server(request):
    """Each API test runs over plain HTTP/1.1, HTTP/1.1 over TLS and HTTP/2 over TLS. Only the request-level
    API (request, get, post_json) is common to the three; tests of HTTP/1.1 connections use http1_server."""
    return request.getfixturevalue(f"{request.param}_server")


@pytest.fixture(params=["plain", "tls"])
def http1_server(request):
    """HTTP/1.1 over plain HTTP and over TLS, for tests that write the bytes of a connection themselves."""
    return request.getfixturevalue(f"{request.param}_server")


@pytest.fixture(params=["plain", "h2"])
def protocol_server(request):
    """Once per protocol: HTTP/1.1 (plain) and HTTP/2 (TLS), for the cases the transport does not change."""
    return request.getfixturevalue(f"{request.param}_server")


@pytest.fixture(autouse=True)
def _session_servers_survive():
    """Fails the test during which a shared server died, so the culprit is named."""
    yield
    for endpoint in _session_servers:
        process: ChatterdProcess = endpoint.process
        assert process.alive(), f"shared chatterd died (status {process.popen.returncode}):\n{process.log()}"


@pytest.fixture
def start_server(env, database_url, certs, tls_context):
    """Factory: start_server(*flags, tls=False, h2=False, url=None) -> Endpoint; stopped after the test.
    With h2 the endpoint speaks HTTP/2: over TLS (ALPN h2) when tls, else h2c with prior knowledge."""
    started: list[Endpoint] = []

    def start(*flags, tls: bool = False, h2: bool = False, url: str | None = None) -> Endpoint:
        endpoint = launch(env, url or database_url, certs if tls else None, tls_context, flags)
        started.append(endpoint)
        return over_h2(endpoint, certs.cert) if h2 else endpoint

    yield start
    for endpoint in started:
        endpoint.process.stop(timeout=15)


@dataclass
class BigFeed:
    """Servers on a database whose /getmaps body is larger than HTTP/2's 64 KiB initial window."""

    url: str
    plain: Endpoint
    tls: Endpoint
    h2: H2Endpoint
    h2c: H2Endpoint


BIG_FEED_ROWS = 1500  # about 150 KB of /getmaps


@pytest.fixture(scope="session")
def big_feed(env, certs, tls_context) -> BigFeed:
    name = "e2e_big_" + uuid.uuid4().hex[:10]
    psql(env.admin_url, f"CREATE DATABASE {name};")
    url = with_database(env.admin_url, name)
    plain = launch(env, url, None, None)
    tls = launch(env, url, certs, tls_context)
    psql(url, "INSERT INTO chatts (name, message, geodata) SELECT 'user' || i, 'a long enough message, number ' || i,"
              " format('[%s,%s,\"North\",\"walking\"]', 42 + i / 10000.0, -83 - i / 10000.0)"
              f" FROM generate_series(1, {BIG_FEED_ROWS}) AS i;")
    _session_servers.extend([plain, tls])
    yield BigFeed(url, plain, tls, over_h2(tls, certs.cert), over_h2(plain))
    for endpoint in (plain, tls):
        _session_servers.remove(endpoint)
        _stop_and_check(endpoint)
    psql(env.admin_url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE);")


@pytest.fixture
def token() -> str:
    """A unique marker to put in messages, so a test finds exactly its own rows."""
    return "e2e-" + uuid.uuid4().hex


@pytest.fixture
def fresh_database(env):
    """Factory: fresh_database() -> URL of a new empty database; all are dropped after the test."""
    names: list[str] = []

    def make() -> str:
        name = "e2e_fresh_" + uuid.uuid4().hex[:10]
        psql(env.admin_url, f"CREATE DATABASE {name};")
        names.append(name)
        return with_database(env.admin_url, name)

    yield make
    for name in names:
        psql(env.admin_url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE);")
