"""The faults, each injected while the client host's load runs: what is cut, for how long, what shows it took
effect, and how the cluster is seen to recover. Each returns the checker's Window: cut, heal, when things
settled, the evidence that the fault took effect, and HAProxy's new sessions per chatterd server after the heal."""

from __future__ import annotations

import re
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Callable

from checker import Window
from services import Services, wait_until

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "Clients"))
import procfs  # noqa: E402 (Tests/Clients)

CUT_SECONDS = 20.0
SETTLE_SECONDS = 8.0


@dataclass
class Fault:
    name: str
    describe: str
    inject: Callable[["Run"], tuple[float, float, list[str]]]
    must_serve: bool = False  # the cluster keeps acknowledging posts and answering reads while it lasts
    affected: str | None = None  # a chatterd host whose failed direct reads during the cut count as evidence
    writes_down: bool = False  # every post goes through what is down from the cut to the heal


class Run:
    """What a fault acts on, and a log of what happened, for the report."""

    def __init__(self, services: Services, cafile, say: Callable[[str], None]):
        self.services = services
        self.net = services.net
        self.cafile = cafile
        self.say = say

    def seconds_until_logged(self, log: str, event: str, since_wall: float) -> float | None:
        """Seconds from `since_wall` (time.time()) to the first `event` line after it in logs/LOG.log."""
        for line in (self.net.logs / f"{log}.log").read_text(errors="replace").splitlines():
            found = re.match(r"time=(\S+) level=\w+ event=(\w+)", line)
            if found and found.group(2) == event:
                at = datetime.fromisoformat(found.group(1).replace("Z", "+00:00")).timestamp()
                if at >= since_wall:
                    return at - since_wall
        return None

    def log_size(self, log: str) -> int:
        path = self.net.logs / f"{log}.log"
        return path.stat().st_size if path.exists() else 0

    def log_since(self, log: str, offset: int) -> list[str]:
        """The lines logs/LOG.log gained after it was `offset` bytes long."""
        with open(self.net.logs / f"{log}.log", "rb") as file:
            file.seek(offset)
            return file.read().decode(errors="replace").splitlines()

    def healthy(self) -> bool:
        return bool(self.services.synchronous_pair()) and all(
            self.services.ready(host, self.cafile) for host in ("app1", "app2")) and all(
            self.services.etcd_healthy(member) for member in self.services.ETCD_MEMBERS)

    def wait_healthy(self, timeout: float = 120) -> None:
        wait_until(self.healthy, timeout, "a synchronous pair, three healthy etcd members and both chatterd hosts "
                   "ready", interval=1)

    def note(self, evidence: list[str], text: str) -> None:
        evidence.append(text)
        self.say(f"  {text}")


def hold(run: Run, cut: float, seconds: float, probe: Callable[[float], str | None], evidence: list[str]) -> None:
    """Waits until `seconds` after `cut`, calling `probe(seconds since the cut)` until it first reports
    something, which goes into `evidence`."""
    while (elapsed := time.monotonic() - cut) < seconds:
        if (found := probe(elapsed)) is not None:
            run.note(evidence, found)
            break
        time.sleep(0.5)
    time.sleep(max(0.0, seconds - (time.monotonic() - cut)))


def cut_for(run: Run, host: str, peers: list[str] | None, probe: Callable[[float], str | None],
            seconds: float = CUT_SECONDS) -> tuple[float, float, list[str]]:
    evidence: list[str] = []
    run.net.partition(host, peers)
    cut = time.monotonic()
    hold(run, cut, seconds, probe, evidence)
    run.net.heal(host)
    return cut, time.monotonic(), evidence


def app_cut_from_database(run: Run) -> tuple[float, float, list[str]]:
    wall = time.time()

    def not_ready(elapsed: float) -> str | None:
        code = run.services.readyz("app1", run.cafile)
        if code == "200":
            return None
        answer = "nothing within 2 s" if code in ("", "000") else code
        return f"app1's /readyz answered {answer} {elapsed:.1f} s after the cut"

    cut, heal, evidence = cut_for(run, "app1", ["db1", "db2", "pgb"], not_ready)
    if (seconds := run.seconds_until_logged("chatterd-app1", "change_listener_down", wall)) is not None:
        run.note(evidence, f"app1's change listener gave its session up {seconds:.1f} s after the cut")
    return cut, heal, evidence


def primary_isolated(run: Run) -> tuple[float, float, list[str]]:
    evidence: list[str] = []
    old = run.services.leader()
    new = "db2" if old == "db1" else "db1"
    run.net.partition(old, None)
    cut = time.monotonic()
    wait_until(lambda: run.services.leader() == new, 90, f"Patroni to promote {new}", interval=0.5)
    run.note(evidence, f"Patroni's leader changed from {old} to {new} {time.monotonic() - cut:.1f} s after {old} "
             "was cut off")
    # Behind its partition the old primary must stop taking writes once its leader key is gone.
    refusal = wait_until(lambda: run.services.write_refusal(old), 60, f"{old} to step down", interval=0.5)
    run.note(evidence, f"{old} took no writes {time.monotonic() - cut:.1f} s after the cut: {refusal}")
    time.sleep(3)
    run.net.heal(old)
    return cut, time.monotonic(), evidence


def app_cut_from_balancer(run: Run) -> tuple[float, float, list[str]]:
    def marked_down(elapsed: float) -> str | None:
        try:
            row = run.services.haproxy_servers().get(("chatterd", "app1"), {})
        except OSError:
            return None
        if not row.get("status", "").startswith("DOWN"):
            return None
        return (f"HAProxy marked app1 {row['status']} in backend chatterd {elapsed:.1f} s after the cut "
                f"(last check: {row.get('check_status')})")

    return cut_for(run, "app1", ["lb"], marked_down)


def standby_cut_from_primary(run: Run) -> tuple[float, float, list[str]]:
    leader, standby = run.services.synchronous_pair()

    def replication(host: str) -> dict[str, str]:
        rows = run.services.psql(host, "SELECT application_name, state, sync_state FROM pg_stat_replication",
                                 timeout=5)
        return {row.split("|")[0]: row for row in rows.splitlines() if row}

    def sync_state_changed(elapsed: float) -> str | None:
        try:
            row = replication(leader).get(standby)
        except Exception:  # the primary's own socket: an error here is not evidence
            return None
        if row and row.endswith("|sync"):
            return None
        shown = f"shows {row}" if row else f"no longer lists {standby}"
        return f"{leader}'s pg_stat_replication {shown} {elapsed:.1f} s after {standby} was cut from it"

    return cut_for(run, standby, [leader], sync_state_changed)


def pgbouncer_restarted(run: Run) -> tuple[float, float, list[str]]:
    """PgBouncer's host down and its process killed; the heal is when the link comes back, and PgBouncer is
    started again right after. The evidence is its own: the old process gone and a new one logging its start
    (the checker adds chatterd's posts failing while it was down and acknowledged again after)."""
    evidence: list[str] = []
    services = run.services
    old = services.pgbouncer_starts()[-1]
    at_kill = run.log_size("pgbouncer")
    run.net.link("pgb", up=False)
    cut = time.monotonic()
    services.kill_pgbouncer()
    wait_until(lambda: not running(old), 5, f"PgBouncer's process {old} to end")
    run.note(evidence, f"PgBouncer's process {old} ended {time.monotonic() - cut:.1f} s after the cut")
    time.sleep(max(0.0, 5 - (time.monotonic() - cut)))
    heal = time.monotonic()
    run.net.link("pgb", up=True)
    services.start_pgbouncer()
    new = wait_until(lambda: [pid for pid in services.pgbouncer_starts(at_kill) if pid != old and running(pid)],
                     10, "a new PgBouncer process to log its start")[-1]
    run.note(evidence, f"a new PgBouncer process, {new}, logged `process up` {time.monotonic() - heal:.1f} s after "
             "the link came back")
    return cut, heal, evidence


def running(pid: int) -> bool:
    """Whether process `pid` runs (exists and is no zombie): this machine's processes share one process id space."""
    try:
        return procfs.state(pid) != "Z"
    except FileNotFoundError:
        return False


def etcd_member_cut(run: Run) -> tuple[float, float, list[str]]:
    services = run.services
    patroni_leader = services.leader()
    raft_leader = services.etcd_leader()
    member = services.etcd_member_used_by(patroni_leader) if patroni_leader else None
    member = member or raft_leader or "etcd1"
    others = tuple(m for m in services.ETCD_MEMBERS if m != member)
    run.say(f"  cutting {member} (Patroni's leader {patroni_leader} talks to it; the raft leader is {raft_leader})")
    patroni_log = f"patroni-{patroni_leader}"
    at_cut = run.log_size(patroni_log)

    def unreachable(elapsed: float) -> str | None:
        if services.etcd_healthy(member, asked_from=others[0], timeout=1):
            return None
        leader_now = services.etcd_leader(among=others)
        if leader_now is None or leader_now == member:
            return None  # the rest has not got a leader of its own yet
        return (f"{member} stopped answering {others[0]} {elapsed:.1f} s after the cut; {' and '.join(others)} "
                f"follow {leader_now} (before: {raft_leader})")

    evidence: list[str] = []
    run.net.partition(member, None)
    cut = time.monotonic()
    hold(run, cut, CUT_SECONDS, unreachable, evidence)
    by_url = {f"http://{services.ip(m)}:2379": m for m in services.ETCD_MEMBERS}
    for line in run.log_since(patroni_log, at_cut):
        if found := re.search(r"Selected new etcd server (\S+)", line):
            run.note(evidence, f"Patroni on {patroni_leader} moved to {by_url.get(found.group(1), found.group(1))} "
                     f"during the cut (its log: {line[11:23]} {found.group(0)})")
    at_heal = {m: run.log_size(m) for m in others}
    run.net.heal(member)
    heal = time.monotonic()
    # A member cut off keeps calling elections, so it comes back with a higher term; etcd 3.4 runs without
    # --pre-vote by default, and that term makes the leader step down. Seen here, not failed: the checker's
    # must-serve rule holds until the window settled, so any outage it causes is judged there.
    time.sleep(3)
    lost = sorted({m for m in others for line in run.log_since(m, at_heal[m]) if "lost leader" in line})
    if lost:
        run.note(evidence, f"after the heal {' and '.join(lost)} lost their raft leader and held an election "
                 f"({member} came back with a higher term; etcd 3.4 runs without --pre-vote)")
    if (now := services.leader()) != patroni_leader:
        run.note(evidence, f"Patroni's leader changed from {patroni_leader} to {now} during the etcd cut")
    return cut, heal, evidence


FAULTS = [
    Fault("app-db-cut", "one chatterd host silently cut from the database tier for 20 s", app_cut_from_database,
          affected="app1"),
    Fault("primary-isolated", "the primary's host silently cut from everything until Patroni promotes the "
          "standby and the old primary steps down", primary_isolated),
    Fault("app-lb-cut", "one chatterd host silently cut from HAProxy for 20 s", app_cut_from_balancer),
    Fault("standby-cut", "the synchronous standby silently cut from the primary for 20 s", standby_cut_from_primary),
    Fault("pgbouncer-restart", "PgBouncer's host down (link and process) for 5 s, then PgBouncer started again",
          pgbouncer_restarted, writes_down=True),
    Fault("etcd-member-cut", "one etcd member (the one Patroni's leader talks to) silently cut from everything "
          "for 20 s, while the cluster keeps serving", etcd_member_cut, must_serve=True),
]


def inject(run: Run, fault: Fault) -> Window:
    run.say(f"fault {fault.name}: {fault.describe}")
    cut, heal, evidence = fault.inject(run)
    run.say(f"  healed after {heal - cut:.1f} s")
    before = sessions(run)
    run.wait_healthy()
    time.sleep(SETTLE_SECONDS)
    after = sessions(run)
    counted = None if before is None or after is None else {
        host: after.get(host, 0) - before.get(host, 0) for host in ("app1", "app2")}
    run.say(f"  settled; HAProxy sessions since the heal: {counted}")
    return Window(fault.name, cut, heal, time.monotonic(), evidence, counted, fault.must_serve, fault.affected,
                  fault.writes_down)


def sessions(run: Run) -> dict[str, int] | None:
    try:
        return run.services.haproxy_sessions()
    except OSError as error:
        run.say(f"  HAProxy's stats socket: {error}")
        return None
