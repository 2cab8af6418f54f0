"""Every `serve` flag can come from a CHATTERD_* variable; a flag on the command line wins; bad values stop the
server at start-up with a message naming the variable."""

from __future__ import annotations

import os
import subprocess

from processes import ChatterdProcess, free_port, wait_healthy
from telemetry import parse_line
from wire import Endpoint


def clean_environment(**variables: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("CHATTERD_") and k != "DATABASE_URL"}
    return {**base, **variables}


def test_a_server_configured_only_by_its_environment(env, database_url):
    port = free_port()
    environment = clean_environment(
        CHATTERD_HOST="127.0.0.1", CHATTERD_PORT=str(port), CHATTERD_PLAIN_HTTP="yes",
        CHATTERD_DATABASE_URL=database_url, CHATTERD_MIGRATIONS=str(env.migrations), CHATTERD_LOG_FORMAT="json",
        CHATTERD_POOL_SIZE="3", CHATTERD_MAX_BODY_BYTES="100")
    process = ChatterdProcess(env.binary, ["serve"], environment)
    try:
        process.wait_listening()
        server = Endpoint("127.0.0.1", port, None, process)
        wait_healthy(server)
        assert server.post_json("/postchatt", {"name": "e", "message": "x" * 200}).status == 413
        metrics = server.get("/metrics").body.decode()
        assert "chatterd_db_pool_connections 3\n" in metrics
        listening = next(parse_line(line, "json") for line in process.lines if '"event":"listening"' in line)
        assert listening["port"] == port and listening["tls"] is False
    finally:
        assert process.stop() == 0, process.log()


def test_flags_win_over_variables(env, database_url):
    port, unused = free_port(), free_port()
    environment = clean_environment(CHATTERD_PORT=str(unused), CHATTERD_LOG_FORMAT="json", CHATTERD_PLAIN_HTTP="1",
                                    DATABASE_URL=database_url)
    args = ["serve", "--host", "127.0.0.1", "--port", str(port), "--log-format", "logfmt",
            "--migrations", str(env.migrations)]
    process = ChatterdProcess(env.binary, args, environment)
    try:
        process.wait_listening()
        wait_healthy(Endpoint("127.0.0.1", port, None, process))
        assert any(line.startswith("time=") and "event=listening" in line and f"port={port}" in line
                   for line in process.lines), process.log()
    finally:
        assert process.stop() == 0, process.log()


def test_an_invalid_variable_stops_the_server_naming_it(env):
    for variable, value in [("CHATTERD_REUSE_PORT", "maybe"), ("CHATTERD_PORT", "eighty"),
                            ("CHATTERD_LOG_LEVEL", "verbose")]:
        done = subprocess.run([env.binary, "serve"], env=clean_environment(**{variable: value}),
                              capture_output=True, text=True, timeout=30)
        assert done.returncode == 64, (variable, done.stderr)
        assert variable in done.stderr and value in done.stderr, done.stderr


def test_help_lists_the_variables(env):
    done = subprocess.run([env.binary, "--help"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0
    for variable in ("CHATTERD_PORT", "CHATTERD_REUSE_PORT", "CHATTERD_LOG_FORMAT", "CHATTERD_LOG_LEVEL",
                     "CHATTERD_DATABASE_URL", "CHATTERD_KEEPALIVE_TIMEOUT"):
        assert variable in done.stdout
