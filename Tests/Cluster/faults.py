"""The faults, each injected while the client host's load runs: what is cut, for how long, and how the
cluster is seen to recover. Each returns the checker's Window: cut, heal, and when things settled."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Callable

from checker import Window
from services import Services, wait_until

CUT_SECONDS = 20.0
SETTLE_SECONDS = 8.0


@dataclass
class Fault:
    name: str
    describe: str
    inject: Callable[["Run"], tuple[float, float]]


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

    def healthy(self) -> bool:
        return bool(self.services.synchronous_pair()) and all(
            self.services.ready(host, self.cafile) for host in ("app1", "app2"))

    def wait_healthy(self, timeout: float = 120) -> None:
        wait_until(self.healthy, timeout, "a synchronous pair and both chatterd hosts ready", interval=1)


def cut_for(run: Run, host: str, peers: list[str] | None, seconds: float = CUT_SECONDS) -> tuple[float, float]:
    run.net.partition(host, peers)
    cut = time.monotonic()
    time.sleep(seconds)
    run.net.heal(host)
    return cut, time.monotonic()


def app_cut_from_database(run: Run) -> tuple[float, float]:
    wall = time.time()
    window = cut_for(run, "app1", ["db1", "db2", "pgb"])
    if (seconds := run.seconds_until_logged("chatterd-app1", "change_listener_down", wall)) is not None:
        run.say(f"  app1's change listener gave its session up {seconds:.1f} s after the cut")
    return window


def primary_isolated(run: Run) -> tuple[float, float]:
    old = run.services.leader()
    new = "db2" if old == "db1" else "db1"
    run.net.partition(old, None)
    cut = time.monotonic()
    wait_until(lambda: run.services.leader() == new, 90, f"Patroni to promote {new}", interval=0.5)
    run.say(f"  {new} promoted {time.monotonic() - cut:.1f} s after {old} was cut off")
    # Behind its partition the old primary must stop taking writes once its leader key is gone.
    wait_until(lambda: run.services.is_read_only_or_down(old), 60, f"{old} to step down", interval=0.5)
    run.say(f"  {old} stepped down {time.monotonic() - cut:.1f} s after the cut")
    time.sleep(3)
    run.net.heal(old)
    return cut, time.monotonic()


def app_cut_from_balancer(run: Run) -> tuple[float, float]:
    return cut_for(run, "app1", ["lb"])


def standby_cut_from_primary(run: Run) -> tuple[float, float]:
    leader, standby = run.services.synchronous_pair()
    return cut_for(run, standby, [leader])


def pgbouncer_restarted(run: Run) -> tuple[float, float]:
    run.net.link("pgb", up=False)
    cut = time.monotonic()
    run.services.kill_pgbouncer()
    time.sleep(5)
    run.net.link("pgb", up=True)
    run.services.start_pgbouncer()
    return cut, time.monotonic()


FAULTS = [
    Fault("app-db-cut", "one chatterd host silently cut from the database tier for 20 s", app_cut_from_database),
    Fault("primary-isolated", "the primary's host silently cut from everything until Patroni promotes the "
          "standby and the old primary steps down", primary_isolated),
    Fault("app-lb-cut", "one chatterd host silently cut from HAProxy for 20 s", app_cut_from_balancer),
    Fault("standby-cut", "the synchronous standby silently cut from the primary for 20 s", standby_cut_from_primary),
    Fault("pgbouncer-restart", "PgBouncer's host down (link and process) for 5 s, then PgBouncer started again",
          pgbouncer_restarted),
]


def inject(run: Run, fault: Fault) -> Window:
    run.say(f"fault {fault.name}: {fault.describe}")
    cut, heal = fault.inject(run)
    run.say(f"  healed after {heal - cut:.1f} s")
    run.wait_healthy()
    time.sleep(SETTLE_SECONDS)
    return Window(fault.name, cut, heal, time.monotonic())
