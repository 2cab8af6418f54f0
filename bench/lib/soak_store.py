"""The soak's PostgreSQL (soak.py): its restarts, as an operator or a crash would make them, and the queries: the
archive the trimming writer fills, which holds the store near KEEP_ROWS chatts (chatterd's memory follows the feed's
size, so a store that grew for the whole run would hide a leak behind its growth), and the copies of each post."""

from __future__ import annotations

import os
import re
import subprocess
import time

KEEP_ROWS = 1000
TRIM_SECONDS = 5


class Database:
    """Restarts the throwaway cluster as an operator or a crash would."""

    def __init__(self, args):
        self.args = args
        self.restarts: list[tuple[float, str, float]] = []  # (offset, mode, seconds down)

    def restart(self, offset: float) -> None:
        mode = "fast" if len(self.restarts) % 2 == 0 else "immediate"
        command = [os.path.join(self.args.pg_bindir, "pg_ctl"), "-D", self.args.pgdata, "-m", mode, "-w",
                   "-t", "60", "-l", self.args.pg_log, "restart"]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        started = time.monotonic()
        subprocess.run(command, check=True, capture_output=True, timeout=90, cwd="/")
        self.restarts.append((offset, mode, time.monotonic() - started))


ARCHIVE_SQL = "CREATE TABLE IF NOT EXISTS soak_archive (id uuid, message text)"
TRIM_SQL = f"""WITH moved AS (
    DELETE FROM chatts WHERE seq <= (SELECT max(seq) - {KEEP_ROWS} FROM chatts) RETURNING id, message)
    INSERT INTO soak_archive SELECT id, message FROM moved"""


def psql(args, sql: str, check: bool = True) -> str:
    try:
        done = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-d",
                               args.database_url, "-c", sql], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        if check:
            raise
        return ""
    if check and done.returncode != 0:
        raise RuntimeError(f"psql failed: {done.stderr.strip()}")
    return done.stdout


def archived(args, chatt_id: str | None) -> bool:
    """Whether the trimming writer moved the chatt with this id away (ids come from the server: no quoting issue)."""
    if not chatt_id or not re.fullmatch(r"[0-9a-f-]{36}", chatt_id):
        return False
    return psql(args, f"SELECT count(*) FROM soak_archive WHERE id = '{chatt_id}'", check=False).strip() == "1"


def stored_counts(args) -> dict[str, int]:
    """message -> copies, in the store and in the archive together."""
    out = psql(args, f"SELECT message, count(*) FROM (SELECT message FROM chatts UNION ALL "
                     f"SELECT message FROM soak_archive) AS m WHERE message LIKE '{args.prefix}-%' GROUP BY 1")
    counts = {}
    for line in out.splitlines():
        if line:
            message, count = line.rsplit("\t", 1)
            counts[message] = int(count)
    return counts
