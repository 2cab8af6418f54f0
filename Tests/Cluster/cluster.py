#!/usr/bin/env python3
"""The cluster stage: chatterd across a real (namespaced) network, with the HA stack users deploy, under
faults and a steady load, judged by checker.py. See Tests/Cluster/README.md.

Exit status: 0 when the checker found nothing wrong, 1 when it did or the cluster failed, 77 when this
machine cannot make network namespaces (not root), which scripts/test counts as skipped."""

from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import checker
from client import MODERATOR
from faults import FAULTS, Run, inject
from netns import Network, namespaces_supported
from services import CHATTERD_PORT, Services, wait_until
from subscriber_checks import StoredChatt, StoredRemoval

SKIP = 77
HOSTS = {"etcd1": "198.18.0.11", "etcd2": "198.18.0.12", "etcd3": "198.18.0.13",
         "db1": "198.18.0.21", "db2": "198.18.0.22", "pgb": "198.18.0.30",
         "app1": "198.18.0.41", "app2": "198.18.0.42", "lb": "198.18.0.50", "client": "198.18.0.60"}
BASELINE_SECONDS = 5.0
PER_RUN_FILES = ("outcomes.jsonl", "windows.json", "final.json", "report.md", "logs")


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


def make_admin_tokens(directory: Path) -> Path:
    """The moderators' token file for --admin-token-file: the remover's name and a random token, made for this run
    only, readable by its owner (root, as chatterd and the load run) only."""
    path = directory / "admin-tokens"
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as file:
        file.write(f"{MODERATOR}:{secrets.token_urlsafe(32)}\n")
    return path


def start_cluster(services: Services, cert: Path, key: Path, admin_tokens: Path) -> None:
    say("etcd, three members")
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
        services.start_chatterd(host, cert, key, admin_tokens)
    for host in ("app1", "app2"):
        wait_until(lambda: services.ready(host, cert), 60, f"chatterd on {host} to be ready")
    # HAProxy takes a host in after two good checks a second apart.
    wait_until(lambda: services.balanced(cert), 30, "HAProxy to send requests to chatterd")
    time.sleep(2)


# Each chatt in feed order, with the tick of the change log whose transactions include its own (migrations/0006).
FINAL_CHATTS = """SELECT c.id, c.seq, t.tick, to_hex(t.token), c.message FROM chatts c
    LEFT JOIN chatts_ticks t ON c.xid = ANY (t.xids) ORDER BY c.time, c.seq"""
# Each removal (migrations/0007), in the feed order of the chatts it removed: the removal's own sequence number and
# the tick whose transactions include its own (where the log gives its `event: delete`), the removed chatt's
# sequence number, who and why, and how many surviving chatts stood before it in feed order.
FINAL_REMOVALS = """SELECT coalesce(json_agg(json_build_object('id', r.id, 'seq', r.seq, 'chatt_seq', r.chatt_seq,
        'tick', t.tick, 'token', to_hex(t.token), 'removed_by', r.removed_by, 'reason', r.reason,
        'after', (SELECT count(*) FROM chatts c WHERE (c.time, c.seq) < (r.chatt_time, r.chatt_seq)))
        ORDER BY r.chatt_time, r.chatt_seq), '[]')
    FROM chatts_removals r LEFT JOIN chatts_ticks t ON r.xid = ANY (t.xids)"""
COUNTS = "SELECT (SELECT count(*) FROM chatts) || ' ' || (SELECT count(*) FROM chatts_removals)"


def final_state(services: Services) -> dict:
    """final.json: the primary's chatts in feed order (id, seq, tick, token, message), its removals (FINAL_REMOVALS),
    and the standby's messages and removed ids, once it has replayed everything."""
    leader, standby = services.synchronous_pair()
    rows = [line.split("|", 4) for line in services.psql(leader, FINAL_CHATTS, "chatterd").splitlines()]
    removals = json.loads(services.psql(leader, FINAL_REMOVALS, "chatterd"))
    counts = f"{len(rows)} {len(removals)}"
    wait_until(lambda: services.psql(standby, COUNTS, "chatterd").strip() == counts,
               30, "the standby to replay every chatt and removal")
    on_standby = Counter(services.psql(standby, "SELECT message FROM chatts", "chatterd").splitlines())
    removed_on_standby = services.psql(standby, "SELECT id FROM chatts_removals", "chatterd").split()
    return {"chatts": rows, "removals": removals, "standby": on_standby, "standby_removals": removed_on_standby}


def stored_chatts(rows: list[list[str]]) -> list[StoredChatt]:
    return [StoredChatt(id=chatt, msg=message, seq=int(seq), tick=int(tick) if tick else None,
                        token=token or None) for chatt, seq, tick, token, message in rows]


def stored_removals(rows: list[dict]) -> list[StoredRemoval]:
    return [StoredRemoval(id=row["id"], seq=row["seq"], chatt_seq=row["chatt_seq"], after=row["after"],
                          tick=row["tick"], token=row["token"], removed_by=row["removed_by"], reason=row["reason"])
            for row in rows]


def report(verdict: checker.Verdict, path: Path) -> str:
    lines = ["| fault | acknowledged | lost | duplicated | indeterminate | removals (200 of tried; during the cut) "
             "| unavailable (s) | slowest non-200 (s) | converged (s) | through HAProxy after the heal (200s) "
             "| HAProxy sessions after the heal |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for f in verdict.faults:
        converged = "never" if f.converged is None else f"{f.converged:.1f}"
        after = ", ".join(f"{host} {count}" for host, count in sorted(f.after_heal.items())) or "none"
        sessions = "unknown" if f.lb_sessions is None else ", ".join(
            f"{host} +{count}" for host, count in sorted(f.lb_sessions.items()))
        lines.append(f"| {f.name} | {f.acknowledged} | {f.lost} | {f.duplicated} | {f.indeterminate} "
                     f"| {f.removed} of {f.removals}; {f.removals_during} | {f.unavailable:.1f} "
                     f"| {f.slowest_refusal:.1f} | {converged} | {after} | {sessions} |")
    lines += ["", "Evidence that each fault took effect:"]
    for f in verdict.faults:
        lines.append(f"- {f.name}: " + ("; ".join(f.evidence) if f.evidence else "NONE"))
        if f.read_gap is not None:
            lines.append(f"  (must keep serving: from the cut until it settled, longest time without an acknowledged "
                         f"post {f.unavailable:.1f} s, without a successful read from a host {f.read_gap:.1f} s; "
                         f"at most {checker.SERVING_GAP:.0f} s)")
    lines += ["", "Checked:"] + [f"- {text}" for text in checker.CHECKS]
    lines += ["", f"{verdict.acknowledged} posts acknowledged, {verdict.stored} chatts stored; "
              f"{verdict.reads} successful whole-feed reads ({verdict.reads_through_lb} through HAProxy on new "
              f"connections), {verdict.membership_checked} held to membership",
              f"{verdict.reads_lacking_in_flight} reads lacked rows of posts still in flight when they began "
              f"(allowed: a feed is in transaction-start order; at most {verdict.most_lacking} in one read)"]
    lines += [f"removals: {text}" for text in verdict.removals]
    lines += ["subscribers (each from the empty store on; connections through app1, app2 or HAProxy):"]
    lines += [f"- {summary}" for summary in verdict.subscribers]
    shown = verdict.other_process[:checker.SHOWN]
    more = len(verdict.other_process) - len(shown)
    lines += [f"resumed on the other chatterd process {len(verdict.other_process)} times: " + "; ".join(shown)
              + (f"; and {more} more" if more else "")]
    lines += [f"PROBLEM: {p}" for p in verdict.problems] or ["checker: every check above passed"]
    text = "\n".join(lines) + "\n"
    path.write_text(text)
    return text


def recheck(results: Path) -> int:
    """The checker on a run's outcomes.jsonl, windows.json and final.json; the report to report.md."""
    records = [json.loads(line) for line in (results / "outcomes.jsonl").read_text().splitlines()]
    windows = [checker.Window(**window) for window in json.loads((results / "windows.json").read_text())]
    final = json.loads((results / "final.json").read_text())
    verdict = checker.check(records, windows, stored_chatts(final["chatts"]), Counter(final["standby"]),
                            removals=stored_removals(final.get("removals", [])),
                            standby_removals=final.get("standby_removals"))
    print(report(verdict, results / "report.md"), flush=True)
    return 1 if verdict.problems else 0


def prepare_results(results: Path) -> Path:
    """The results directory, without anything an earlier run left there that could be judged or read as this
    run's (its outcomes, windows, report and logs); other files stay."""
    results.mkdir(parents=True, exist_ok=True)
    os.chmod(results, 0o755)
    for name in PER_RUN_FILES:
        subprocess.run(["rm", "-rf", "--", str(results / name)], check=True)
    (results / "logs").mkdir()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chatterd", help="the chatterd binary")
    parser.add_argument("--recheck", metavar="DIR", help="judge an earlier run's results again (no cluster, no root)")
    parser.add_argument("--repo", default=str(Path(__file__).resolve().parents[2]))
    parser.add_argument("--results", default=None, help="directory for logs and the report (default: a temporary one)")
    parser.add_argument("--faults", default=",".join(f.name for f in FAULTS), help="comma-separated fault names")
    args = parser.parse_args()

    if args.recheck:
        return recheck(Path(args.recheck))
    if not args.chatterd:
        parser.error("--chatterd is required")
    names = [name.strip() for name in args.faults.split(",") if name.strip()]
    known = {f.name: f for f in FAULTS}
    if unknown := [name for name in names if name not in known]:
        parser.error(f"unknown fault {', '.join(unknown)}; the faults are {', '.join(known)}")
    if not names:
        parser.error("no fault given: the subscribers must resume across a fault, so a run without one cannot pass")
    chosen = [known[name] for name in names]
    if reason := namespaces_supported():
        say(f"SKIPPED: {reason}")
        return SKIP
    results = prepare_results(Path(args.results or tempfile.mkdtemp(prefix="chatterd-cluster-")))
    logs = results / "logs"
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
        admin_tokens = make_admin_tokens(work)
        start_cluster(services, cert, key, admin_tokens)
        run = Run(services, cert, say)
        outcomes = results / "outcomes.jsonl"
        hosts = [f"--host={h}={HOSTS[h]}:{CHATTERD_PORT}" for h in ("app1", "app2")]
        load = network.spawn("client", "load", sys.executable, str(Path(__file__).with_name("load.py")),
                             f"--lb={HOSTS['lb']}:443", *hosts, f"--cafile={cert}", f"--out={outcomes}",
                             f"--run=r{os.getpid()}", f"--admin-token-file={admin_tokens}",
                             f"--database={HOSTS['db1']},{HOSTS['db2']}")
        say(f"load running; {BASELINE_SECONDS:.0f} s of baseline")
        time.sleep(BASELINE_SECONDS)
        windows = [inject(run, fault) for fault in chosen]
        (results / "windows.json").write_text(json.dumps([vars(w) for w in windows]))
        # The posters' last requests may take REQUEST_TIMEOUT, then the subscribers drain (at most 30 s).
        network.stop(load, timeout=60)
        (results / "final.json").write_text(json.dumps(final_state(services)))
        return recheck(results)
    except Exception as error:  # the teardown below must run, and the stage must fail with a reason
        say(f"FAILED: {type(error).__name__}: {error}")
        return 1
    finally:
        say("tearing down")
        network.teardown()
        subprocess.run(["rm", "-rf", "--", str(work)], check=False)


if __name__ == "__main__":
    sys.exit(main())
