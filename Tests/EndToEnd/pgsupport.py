"""PostgreSQL helpers: psql queries, throwaway databases and a cluster a test controls."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit


def psql(url: str, sql: str, variables: dict[str, str] | None = None, timeout: float = 30.0) -> str:
    """Runs `sql` (a script; psql variables like :'v' allowed) and returns unaligned tuples-only output."""
    args = ["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", url]
    for name, value in (variables or {}).items():
        args += ["-v", f"{name}={value}"]
    done = subprocess.run(args, input=sql, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"psql failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def with_database(url: str, name: str) -> str:
    """`url` pointing at database `name` (keeps host/port/user query parameters)."""
    parts = urlsplit(url)
    query = "&".join(p for p in parts.query.split("&") if p and not p.startswith("dbname="))
    return f"{parts.scheme}://{parts.netloc}/{name}" + (f"?{query}" if query else "")


@contextmanager
def migrated_database(admin_url: str, binary: str, migrations, prefix: str, seed_sql: str = "",
                      seed_timeout: float = 30.0):
    """A new database named `prefix` and a random suffix, migrated by `chatterd migrate` and seeded with
    `seed_sql` (in at most `seed_timeout` seconds); yields its URL and drops it afterwards."""
    name = prefix + uuid.uuid4().hex[:10]
    psql(admin_url, f"CREATE DATABASE {name};")
    url = with_database(admin_url, name)
    try:
        done = subprocess.run([binary, "migrate", "--database-url", url, "--migrations", str(migrations)],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        if seed_sql:
            psql(url, seed_sql, timeout=seed_timeout)
        yield url
    finally:
        psql(admin_url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE);")


def count_chatts(url: str) -> int:
    return int(psql(url, "SELECT count(*) FROM chatts;").strip())


def count_message(url: str, message: str) -> int:
    return int(psql(url, "SELECT count(*) FROM chatts WHERE message = :'m';", {"m": message}).strip())


def message_counts(url: str, prefix: str) -> dict[str, int]:
    """message -> number of rows, for messages starting with `prefix` (no '%' or '_' in it)."""
    out = psql(url, "SELECT message, count(*) FROM chatts WHERE message LIKE :'p' GROUP BY message;",
               {"p": prefix + "%"})
    counts = {}
    for line in out.splitlines():
        if line:
            message, _, count = line.rpartition("|")
            counts[message] = int(count)
    return counts


def _pg_bindir() -> Path | None:
    for candidate in ("/usr/lib/postgresql/15/bin",):
        if Path(candidate, "pg_ctl").exists():
            return Path(candidate)
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).parent
    try:
        out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, check=True).stdout
        if Path(out.strip(), "pg_ctl").exists():
            return Path(out.strip())
    except (OSError, subprocess.CalledProcessError):
        pass
    return None


class Cluster:
    """A throwaway PostgreSQL cluster on a Unix socket, owned by the test that made it.

    With `listen` (e.g. "127.0.0.1") it also takes TCP connections on `port`; `settings` are extra server
    settings given on the command line at every start. With `standby_of`, the data directory is a
    `pg_basebackup -R` copy of that running cluster instead of a new one, so it starts as its hot standby."""

    def __init__(self, port: int, listen: str = "", settings: dict[str, str] | None = None,
                 standby_of: "Cluster | None" = None):
        bindir = _pg_bindir()
        if bindir is None or not (bindir / "initdb").exists():
            raise FileNotFoundError("initdb/pg_ctl not found")
        self.bindir = bindir
        self.port = port
        self.listen = listen
        self.settings = dict(settings or {})
        self.dir = Path(tempfile.mkdtemp(prefix="e2e-pg-"))
        self.as_root = os.geteuid() == 0
        if self.as_root:
            shutil.chown(self.dir, "postgres")
        if standby_of is None:
            self._run("initdb", "-D", str(self.dir / "data"), "-A", "trust", "-U", "postgres")
        else:
            # -R writes standby.signal and primary_conninfo; -X stream copies the WAL the backup needs.
            source = f"host={standby_of.dir} port={standby_of.port} user=postgres"
            self._run("pg_basebackup", "-D", str(self.dir / "data"), "-R", "-X", "stream", "-c", "fast",
                      "-d", source, timeout=120)

    @property
    def url(self) -> str:
        return f"postgresql:///postgres?host={self.dir}&port={self.port}&user=postgres"

    def tcp_url(self, database: str = "postgres") -> str:
        """A URL over TCP (needs `listen`)."""
        return f"postgresql://postgres@{self.listen}:{self.port}/{database}"

    def _run(self, tool: str, *args: str, timeout: float = 60.0) -> subprocess.CompletedProcess:
        command = [str(self.bindir / tool), *args]
        if self.as_root:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise RuntimeError(f"{tool} failed: {done.stdout}\n{done.stderr}\n{self.server_log()}")
        return done

    def server_log(self) -> str:
        try:
            return (self.dir / "log").read_text()[-3000:]
        except OSError:
            return ""

    def start(self) -> None:
        options = f"-k {self.dir} -p {self.port} -c listen_addresses='{self.listen}'"
        for name, value in self.settings.items():
            options += f" -c {name}={value}"
        self._run("pg_ctl", "-D", str(self.dir / "data"), "-o", options, "-l", str(self.dir / "log"),
                  "-w", "start")

    def promote(self) -> None:
        """Ends recovery: the standby becomes a primary (waits until it accepts writes)."""
        self._run("pg_ctl", "-D", str(self.dir / "data"), "-w", "-t", "60", "promote")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.dir / "data"), "-m", mode, "-w", "stop")

    def is_running(self) -> bool:
        command = [str(self.bindir / "pg_ctl"), "-D", str(self.dir / "data"), "status"]
        if self.as_root:
            command = ["runuser", "-u", "postgres", "--", *command]
        return subprocess.run(command, capture_output=True).returncode == 0

    def destroy(self) -> None:
        if self.is_running():
            try:
                self.stop("immediate")
            except RuntimeError:
                pass
        shutil.rmtree(self.dir, ignore_errors=True)


def wait_for_cluster(url: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            psql(url, "SELECT 1;", timeout=5)
            return
        except (RuntimeError, subprocess.TimeoutExpired):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
