#!/usr/bin/env python3
"""The cluster stage: chatterd across a real (namespaced) network, with the HA stack users deploy, under
faults and a steady load, judged by checker.py. See Tests/Cluster/README.md.

Exit status: 0 when the checker found nothing wrong, 1 when it did or the cluster failed, 77 when this
machine cannot make network namespaces (not root), which scripts/test counts as skipped."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import checker
from faults import FAULTS, Run, inject
from netns import Network, namespaces_supported
from services import CHATTERD_PORT, Services, wait_until

SKIP = 77
HOSTS = {"etcd": "198.18.0.10", "db1": "198.18.0.21", "db2": "198.18.0.22", "pgb": "198.18.0.30",
         "app1": "198.18.0.41", "app2": "198.18.0.42", "lb": "198.18.0.50", "client": "198.18.0.60"}
BASELINE_SECONDS = 5.0


def say(text: str) -> None:
    print(f"[cluster {time.strftime('%H:%M:%S')}] {text}", flush=True)


def make_certificate(directory: Path) -> tuple[Path, Path]:
    """A throwaway certificate for every address a client or HAProxy checks, and localhost."""
    cert, key = directory / "chatterd.crt", directory / "chatterd.key"
    names = ",".join(["DNS:localhost"] + [f"IP:{HOSTS[h]}" for h in ("app1", "app2", "lb")])
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-days", "2", "-nodes", "-subj", "/CN=localhost", "-addext", f"subjectAltName={names}",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    os.chmod(key, 0o600)
    return cert, key


def start_cluster(services: Services, cert: Path, key: Path) -> None:
    say("etcd")
    services.start_etcd()
    say("Patroni and PostgreSQL 15 on db1, then db2 as its synchronous standby")
    services.start_patroni("db1")
    wait_until(lambda: services.leader() == "db1", 90, "db1 to lead", interval=0.5)
    services.create_database("db1")
    services.start_patroni("db2")
    wait_until(services.synchronous_pair, 120, "db2 to stream synchronously", interval=1)
    say("HAProxy and PgBouncer")
    services.start_haproxy(cert)
    services.start_pgbouncer()
    say("chatterd on app1 and app2")
    for host in ("app1", "app2"):
        services.start_chatterd(host, cert, key)
    for host in ("app1", "app2"):
        wait_until(lambda: services.ready(host, cert), 60, f"chatterd on {host} to be ready")
    # HAProxy takes a host in after two good checks a second apart.
    wait_until(lambda: services.balanced(cert), 30, "HAProxy to send requests to chatterd")
    time.sleep(2)


def final_state(services: Services) -> tuple[list[str], Counter]:
    """The feed's order on the primary, and the standby's messages once it has replayed everything."""
    leader, standby = services.synchronous_pair()
    order = services.psql(leader, "SELECT message FROM chatts ORDER BY time, seq", "chatterd").splitlines()
    wait_until(lambda: services.psql(standby, "SELECT count(*) FROM chatts", "chatterd").strip() == str(len(order)),
               30, "the standby to replay every chatt")
    on_standby = Counter(services.psql(standby, "SELECT message FROM chatts", "chatterd").splitlines())
    return order, on_standby


def report(verdict: checker.Verdict, path: Path) -> str:
    lines = ["| fault | acknowledged | lost | duplicated | indeterminate | unavailable (s) | slowest non-200 (s) "
             "| converged (s) |", "|---|---|---|---|---|---|---|---|"]
    for f in verdict.faults:
        converged = "never" if f.converged is None else f"{f.converged:.1f}"
        lines.append(f"| {f.name} | {f.acknowledged} | {f.lost} | {f.duplicated} | {f.indeterminate} "
                     f"| {f.unavailable:.1f} | {f.slowest_refusal:.1f} | {converged} |")
    lines.append("")
    lines.append(f"{verdict.acknowledged} posts acknowledged, {verdict.stored} chatts stored; "
                 f"convergence bound {checker.CONVERGENCE_BOUND:.0f} s")
    lines.append(f"{verdict.reads} whole-feed reads; {verdict.reads_with_late_rows} lacked rows that committed late "
                 f"among their newest (at most {verdict.most_late_rows} in one read)")
    lines += [f"PROBLEM: {p}" for p in verdict.problems] or ["checker: nothing lost, duplicated or out of order"]
    text = "\n".join(lines) + "\n"
    path.write_text(text)
    return text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chatterd", required=True, help="the chatterd binary")
    parser.add_argument("--repo", default=str(Path(__file__).resolve().parents[2]))
    parser.add_argument("--results", default=None, help="directory for logs and the report (default: a temporary one)")
    parser.add_argument("--faults", default=",".join(f.name for f in FAULTS), help="comma-separated fault names")
    args = parser.parse_args()

    if reason := namespaces_supported():
        say(f"SKIPPED: {reason}")
        return SKIP
    chosen = [f for f in FAULTS if f.name in args.faults.split(",")]
    results = Path(args.results or tempfile.mkdtemp(prefix="chatterd-cluster-"))
    results.mkdir(parents=True, exist_ok=True)
    os.chmod(results, 0o755)
    logs = results / "logs"
    logs.mkdir(exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="chatterd-cluster-work-"))
    os.chmod(work, 0o755)
    network = Network(f"chc{os.getpid()}", HOSTS, logs)
    # SIGTERM (scripts/test's time limit, CI) must reach the teardown below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    say(f"results and logs in {results}")
    try:
        network.create()
        services = Services(network, work, Path(args.repo), args.chatterd)
        cert, key = make_certificate(work)
        start_cluster(services, cert, key)
        run = Run(services, cert, say)
        outcomes = results / "outcomes.jsonl"
        hosts = [f"--host={h}={HOSTS[h]}:{CHATTERD_PORT}" for h in ("app1", "app2")]
        load = network.spawn("client", "load", sys.executable, str(Path(__file__).with_name("load.py")),
                             f"--lb={HOSTS['lb']}:443", *hosts, f"--cafile={cert}", f"--out={outcomes}",
                             f"--run=r{os.getpid()}")
        say(f"load running; {BASELINE_SECONDS:.0f} s of baseline")
        time.sleep(BASELINE_SECONDS)
        windows = [inject(run, fault) for fault in chosen]
        (results / "windows.json").write_text(json.dumps([vars(w) for w in windows]))
        network.stop(load, timeout=20)
        order, on_standby = final_state(services)
        records = [json.loads(line) for line in outcomes.read_text().splitlines()]
        verdict = checker.check(records, windows, order, on_standby)
        print(report(verdict, results / "report.md"), flush=True)
        return 1 if verdict.problems else 0
    except Exception as error:  # the teardown below must run, and the stage must fail with a reason
        say(f"FAILED: {type(error).__name__}: {error}")
        return 1
    finally:
        say("tearing down")
        network.teardown()
        subprocess.run(["rm", "-rf", "--", str(work)], check=False)


if __name__ == "__main__":
    sys.exit(main())
