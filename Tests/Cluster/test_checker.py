"""The checker must find what it exists to find: made-up histories, one for each rule it must fail (a lost, a
duplicated, a refused but stored post; a read out of order, one that shrinks, one lacking an acknowledged post;
a run or a phase without acknowledged posts or successful reads; a fault without evidence; a post acknowledged
while PgBouncer was down; no traffic through HAProxy to a host after a heal; a must-serve fault with a gap; a host
that never converges; removals answered 200 that the store does not record, 404s nothing explains, removals no
attempt made, a read showing a chatt after its removal's 200; a live feed that never came up, a run without faults,
and subscribers that miss, repeat, reorder, misplace or are reset, that keep a removed chatt, miss a delete, get one
twice, before its chatt or for a chatt not removed, or never resume across a fault or on the other process), and
healthy ones it must pass. The subscribers' client runs against a made-up stream server.

Run by scripts/test with pytest, or alone: python3 Tests/Cluster/test_checker.py"""

from __future__ import annotations

import json
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from checker import Window, check  # noqa: E402
from client import MODERATOR, Recorder  # noqa: E402
from load import feed_record  # noqa: E402
from subscriber_checks import StoredChatt, StoredRemoval  # noqa: E402
from subscribers import Dropped, Subscriber, Wire, body_chunks, events  # noqa: E402

SERVERS = {"app1": "p1", "app2": "p2"}  # each host's X-Request-Id prefix


def post(msg: str, t: float, status=200, srv="p2") -> dict:
    return {"op": "post", "msg": msg, "t0": t, "t1": t + 0.01, "status": status, "srv": srv}


def read(host: str, t: float, messages: list[str], status=200, srv=None, who=None) -> dict:
    return {"op": "read", "host": host, "who": who or f"reader-{host}", "t0": t, "t1": t + 0.01, "status": status,
            "srv": srv or SERVERS.get(host), **(feed_record(messages) if status == 200 else {})}


WINDOW = Window("fault", cut=1.0, heal=2.0, settled=4.0, evidence=["it bit"], lb_sessions={"app1": 3, "app2": 2})
ORDER = ["a", "b", "c"]
REMOVED = ["x", "y"]  # posted after c, then removed during WINDOW: x by DELETE through HAProxy, y by psql
START = "1.ab"  # the empty store's Feed-Position


def stored(order: list[str]) -> list[StoredChatt]:
    """The final store holding `order`: one tick of the change log (token ab) per chatt, from tick 2 on."""
    return [StoredChatt(f"id-{m}", m, seq=i + 1, tick=i + 2, token="ab") for i, m in enumerate(order)]


def removed(order: list[str], gone=REMOVED) -> list[StoredChatt]:
    """The chatts of `gone` as they were logged, after `order`'s, before they were removed."""
    return [StoredChatt(f"id-{m}", m, seq=len(order) + i + 1, tick=len(order) + i + 2, token="ab")
            for i, m in enumerate(gone)]


def removals(order: list[str], gone=REMOVED) -> list[StoredRemoval]:
    """chatts_removals after `gone` were posted after `order` and removed, in that order (x by the remover's token,
    y in psql), each removal in a tick of its own after their chatts'."""
    first = len(order) + len(gone)
    return [StoredRemoval(f"id-{m}", seq=first + i + 1, chatt_seq=len(order) + i + 1, after=len(order),
                          tick=first + i + 2, token="ab", removed_by="sql:postgres" if m == "y" else MODERATOR,
                          reason=None if m == "y" else f"rm-{m}") for i, m in enumerate(gone)]


def remove(msg: str, t: float, status=200, via="lb", why="first", reason=None, srv="p1") -> dict:
    """A removal attempt of the remover (load.py): by DELETE /chatts/<id> with `reason`, or in psql (`via` sql)."""
    record = {"op": "remove", "msg": msg, "chatt": f"id-{msg}", "why": why, "t0": t, "t1": t + 0.01,
              "status": status, "via": via}
    if via == "sql":
        return {**record, "reason": None}
    return {**record, "reason": reason or f"rm-{msg}", "srv": srv}


def removing() -> list[dict]:
    """x and y posted after c and removed during WINDOW, both acknowledged: x by DELETE, y by psql."""
    return [post("x", 2.62), post("y", 2.63), remove("x", 2.7), remove("y", 2.75, "DELETE 1", via="sql")]


def event(name: str, t: float, chatt: StoredChatt | None = None, position: str | None = None, kind="message") -> dict:
    """`name`'s event for `chatt`, at the store's position for it unless told otherwise."""
    record = {"op": "event", "sub": name, "t": t, "event": kind}
    if chatt is not None:
        record.update(id=position or f"{chatt.tick}.{chatt.token}.{chatt.seq}", chatt=chatt.id, msg=chatt.msg)
    return record


def delete(name: str, t: float, removal: StoredRemoval, position: str | None = None) -> dict:
    """`name`'s `event: delete` for `removal`, at the store's position for it unless told otherwise."""
    return {"op": "event", "sub": name, "t": t, "event": "delete", "chatt": removal.id,
            "id": position or f"{removal.tick}.{removal.token}.{removal.seq}"}


def connected(name: str, t: float, srv: str, last_event_id: str, via: str) -> dict:
    return {"op": "sub", "sub": name, "what": "connected", "t": t, "via": via, "srv": srv,
            "last_event_id": last_event_id}


def log_events(name: str, order: list[str], gone=REMOVED, alone=()) -> list[dict]:
    """`name`'s events, untimed, for the change log of a store that ends as `order` after `gone` were posted and
    removed: every chatt, then each removal; the chatts of `alone` it never had (their deletes came alone)."""
    records = [event(name, 0.0, chatt) for chatt in stored(order) + removed(order, gone) if chatt.msg not in alone]
    return records + [delete(name, 0.0, removal) for removal in removals(order, gone)]


def subscription(name: str, order: list[str], via: str, servers: tuple[str, str], resume_at=1.5,
                 alone=()) -> list[dict]:
    """One subscriber that started from the empty store, had the first half of its events (log_events), left
    (rotated), resumed at `resume_at` on `servers[1]` with the last event it had, and had the rest."""
    events = log_events(name, order, alone=alone)
    half = max(1, len(events) // 2)
    records = [{"op": "sub", "sub": name, "what": "start", "t": 0.0, "via": via, "status": 200, "srv": servers[0],
                "position": START, "rows": 0},
               connected(name, 0.05, servers[0], START, via)]
    records += [{**e, "t": 0.2 + i / 100} for i, e in enumerate(events[:half])]
    last = records[-1]["id"] if events else START
    records += [{"op": "sub", "sub": name, "what": "rotated", "t": resume_at - 0.01},
                connected(name, resume_at, servers[1], last, via)]
    records += [{**e, "t": 2.8 + i / 100} for i, e in enumerate(events[half:])]
    return records


def following(order: list[str]) -> list[dict]:
    """The live feed's subscribers of a healthy run whose store ends as `order` (and REMOVED removed): one direct to
    app1 resuming there, one through HAProxy resuming on app1 after app2, both during WINDOW; the one through
    HAProxy never had y's chatt (as if it was posted and removed while it was away), only y's delete."""
    return ([{"op": "streams", "status": 200, "t": 0.0, "waited": 0.0, "subscribers": ["direct-app1", "lb-0"]}]
            + subscription("direct-app1", order, "app1", ("p1", "p1"))
            + subscription("lb-0", order, "lb", ("p2", "p1"), resume_at=1.6, alone=("y",)))


def healthy_history() -> list[dict]:
    return [post("a", 0.5), post("b", 1.5, 503), post("b2", 1.6, "timeout", srv=None), post("c", 2.5),
            read("app1", 0.7, ["a"]), read("app2", 0.8, ["a"]),
            read("app2", 2.6, ORDER, who="poster0"),
            read("app1", 3.0, ORDER), read("app2", 3.1, ORDER), read("lb", 3.2, ORDER, srv="p1", who="prober")
            ] + removing() + following(ORDER)


def problems(history, windows=(WINDOW,), order=ORDER, standby=None, gone=REMOVED, **options) -> list[str]:
    return verdict_of(history, windows, order, standby, gone, **options).problems


def verdict_of(history, windows=(WINDOW,), order=ORDER, standby=None, gone=REMOVED, **options):
    return check(history, list(windows), stored(order), Counter(standby if standby is not None else order),
                 removals=removals(order, gone), standby_removals=[f"id-{m}" for m in gone], **options)


def test_a_healthy_history_passes_with_its_figures():
    verdict = verdict_of(healthy_history())
    assert verdict.problems == []
    figures = verdict.faults[0]
    assert (figures.acknowledged, figures.lost, figures.duplicated, figures.indeterminate) == (3, 0, 0, 2)
    assert (figures.removals, figures.removals_during, figures.removed) == (2, 0, 2)
    assert abs(figures.unavailable - 1.51) < 1e-6  # from the cut to c's answer
    assert abs(figures.converged - 1.01) < 1e-6  # the first complete read after the heal, on the slower host
    assert figures.after_heal == {"app1": 1, "app2": 3}
    assert verdict.membership_checked == 6
    assert verdict.subscribers == [
        "direct-app1: 7 events (5 chatts, 2 removals, 0 of them without their chatt), 2 connections (app1; 1 left on "
        "purpose, 0 dropped, 0 refused), 1 resumes with Last-Event-ID (1 during a fault, 0 on the other process)",
        "lb-0: 6 events (4 chatts, 2 removals, 1 of them without their chatt), 2 connections (lb; 1 left on purpose, "
        "0 dropped, 0 refused), 1 resumes with Last-Event-ID (1 during a fault, 1 on the other process)"]
    assert verdict.removals == [
        "2 removal attempts: 1 by DELETE /chatts/<id> (1 via lb; 200: 1), 1 by DELETE in psql (DELETE 1: 1)",
        "chatts_removals holds 2 removals (1 by cluster-remover, 1 by sql:postgres); 0 of the 0 attempts without an "
        "answer committed; 0 answered 404 or DELETE 0"]
    assert verdict.other_process == ["lb-0 at 1.6 from app2 to app1 (during fault)"]


# --- storage

def test_an_acknowledged_post_missing_is_lost():
    verdict = verdict_of(healthy_history(), order=["a", "b"])
    assert any("not stored" in p for p in verdict.problems)
    assert verdict.faults[0].lost == 1


def test_a_post_stored_twice_is_duplicated():
    order = ["a", "b", "c", "c"]
    verdict = verdict_of(healthy_history(), order=order)
    assert any("more than once" in p for p in verdict.problems)
    assert verdict.faults[0].duplicated == 1


def test_a_refused_post_that_is_stored_is_found():
    history = healthy_history() + [post("d", 3.5, 400)]
    assert any("4xx" in p for p in problems(history, order=ORDER + ["d"]))


def test_an_acknowledged_post_missing_on_the_standby_is_found():
    assert any("standby" in p for p in problems(healthy_history(), standby=["a", "b"]))


# --- order

def test_a_read_out_of_the_final_order_is_found():
    history = healthy_history() + [read("app1", 3.5, ["a", "c", "b"])]
    assert any("not in the final feed's order" in p for p in problems(history))


def test_a_read_showing_a_chatt_that_is_not_stored_is_found():
    history = healthy_history() + [read("app1", 3.5, ["a", "b", "c", "ghost"])]
    assert any("not stored" in p for p in problems(history))


def test_a_read_that_shrinks_is_found():
    """b was never acknowledged, so only the reader's own earlier read says app2 must still have it."""
    history = healthy_history() + [read("app2", 3.5, ["a", "c"])]
    assert any("lacks chatts its reader's previous read" in p for p in problems(history))


# --- membership (no late-commit tolerance)

def test_a_read_lacking_a_post_still_in_flight_is_counted_not_refused():
    """b (answered 503, stored) began before c and committed after it: a read between the commits has [a, c]."""
    history = healthy_history() + [read("app1", 2.8, ["a", "c"], who="reader-x")]
    verdict = verdict_of(history)
    assert verdict.problems == []
    assert (verdict.reads_lacking_in_flight, verdict.most_lacking) == (1, 1)


def test_a_read_lacking_an_acknowledged_post_among_its_newest_is_found():
    """The rule the late-commit tolerance forgave: b was acknowledged before this read began."""
    history = [r for r in healthy_history() if r.get("msg") != "b"] + [
        post("b", 1.5), read("app1", 2.8, ["a", "c"], who="reader-x")]
    found = problems(history)
    assert any("lacks 1 posts acknowledged before it began" in p and "'b'" in p for p in found)


def test_a_read_lacking_an_acknowledged_post_below_its_newest_is_found():
    early = [f"r-0-{i}" for i in range(60)]
    order = early + ["r-1-0"]
    history = [post(m, 0.1 + i / 100) for i, m in enumerate(early)] + [post("r-1-0", 2.5)]
    history += [read("app1", 0.8, early), read("app2", 0.9, early), read("lb", 3.2, order, srv="p1"),
                read("app1", 3.0, order[1:], who="other"), read("app1", 3.6, order), read("app2", 3.7, order)]
    found = problems(history + removing() + following(order), order=order)
    assert found == ["app1 (other): a read at 3.0 lacks 1 posts acknowledged before it began (up to 2.9 s before), "
                     "e.g. ['r-0-0']"]


def test_the_read_after_a_200_without_the_post_is_found():
    history = healthy_history() + [read("app1", 2.6, ["a"], who="poster1")]
    assert any("lacks 1 posts acknowledged before it began" in p for p in problems(history))
    assert problems(history, strict_feeds=False) == []


# --- traffic in every phase

def test_a_run_without_an_acknowledged_post_fails():
    history = [{**r, "status": 503} if r["op"] == "post" else r for r in healthy_history()]
    found = problems(history)
    assert "no post was acknowledged in the whole run" in found
    assert any(p.startswith("the baseline: no post was acknowledged") for p in found)


def test_a_run_without_a_successful_read_from_a_host_fails():
    history = [r for r in healthy_history() if not (r["op"] == "read" and r["host"] == "app2")]
    found = problems(history)
    assert "no read from app2 succeeded in the whole run" in found


def test_a_fault_without_acknowledged_posts_after_its_heal_fails():
    history = [{**r, "status": 503} if r["op"] == "post" and r["t0"] > 2 else r for r in healthy_history()]
    found = problems(history)
    assert any(p.startswith("fault after its heal: no post was acknowledged") for p in found)


def test_a_fault_without_reads_from_a_host_after_its_heal_fails():
    history = [r for r in healthy_history() if not (r["op"] == "read" and r["host"] == "app1" and r["t0"] > 2)]
    history.append(read("app1", 3.0, [], status=503))
    assert any(p.startswith("fault after its heal: no read from app1 succeeded") for p in problems(history))


def test_a_must_serve_fault_with_a_gap_fails_and_one_without_passes():
    serving = replace(WINDOW, must_serve=True)
    steady = [post(f"s-0-{i}", 1.0 + i * 0.5) for i in range(3)]  # 1.0 .. 2.0
    reads = [read(h, 1.0 + i * 0.5, ["a"] + [f"s-0-{j}" for j in range(i)], who=f"steady-{h}")
             for h in ("app1", "app2") for i in range(3)]
    order = ["a", "s-0-0", "s-0-1", "s-0-2", "b", "c"]
    history = [r for r in healthy_history() if r["op"] in ("post", "remove")] + steady + reads + [
        read("app1", 0.7, ["a"]), read("app2", 0.8, ["a"]), read("app1", 3.0, order), read("app2", 3.1, order),
        read("lb", 3.2, order, srv="p1")] + following(order)
    assert problems(history, [serving], order) == []
    gappy = [r for r in history if not (r["op"] == "read" and r["host"] == "app2" and 1.2 < r["t0"] < 2.0)]
    assert problems(gappy, [serving], order) == []  # a gap of 1 s is within SERVING_GAP
    long_window = replace(serving, cut=-5.0)
    assert any("no post was acknowledged for" in p for p in problems(history, [long_window], order))
    no_app2 = [r for r in history if not (r["op"] == "read" and r["host"] == "app2" and r["t0"] < 2.5)]
    assert any("no read from app2 succeeded for" in p for p in problems(no_app2, [replace(serving, cut=-5.0)], order))


# --- faults took effect; traffic back through HAProxy

def test_a_fault_without_evidence_fails():
    found = problems(healthy_history(), [replace(WINDOW, evidence=[])])
    assert "fault: nothing showed that the fault took effect" in found


def test_an_affected_hosts_failed_reads_are_evidence():
    window = replace(WINDOW, evidence=[], affected="app1")
    history = healthy_history() + [read("app1", 1.2, [], status=503), read("app1", 1.5, [], status="timeout")]
    verdict = verdict_of(history, [window])
    assert verdict.problems == []
    assert verdict.faults[0].evidence == ["app1 failed 2 of 2 direct reads begun during the cut (503: 1, timeout: 1)"]


def test_no_traffic_through_haproxy_to_a_host_after_the_heal_fails():
    history = [r for r in healthy_history() if r["host" if r["op"] == "read" else "op"] != "lb"]
    assert "fault: after the heal no request through HAProxy was answered by app1" in problems(history)
    found = problems(healthy_history(), [replace(WINDOW, lb_sessions={"app1": 0, "app2": 4})])
    assert found == ["fault: after the heal HAProxy's session counter for app1 did not rise"]


def test_a_host_that_never_catches_up_does_not_converge():
    history = [r for r in healthy_history() if not (r["op"] == "read" and r["host"] == "app2" and r["t0"] > 2)]
    history.append(read("app2", 3.2, ["a"], status=503))
    verdict = verdict_of(history)
    assert verdict.faults[0].converged is None
    assert any("did not converge" in p for p in verdict.problems)


# --- PgBouncer down: every write goes through it

PGBOUNCER = replace(WINDOW, name="pgbouncer-restart", evidence=["its process changed"], writes_down=True)


def test_requests_refused_while_pgbouncer_is_down_and_posts_acknowledged_after_are_evidence():
    history = healthy_history() + [post("x", 1.2, 503), post("y", 1.995, 503),  # y is answered after the heal
                                   read("app1", 1.1, [], status=503), read("lb", 1.3, [], status="timeout")]
    verdict = verdict_of(history, [PGBOUNCER])
    assert verdict.problems == []
    assert verdict.faults[0].evidence == [
        "its process changed", "chatterd refused 3 posts and 1 reads begun while it was down, and acknowledged "
        "none of the 3 posts begun and answered then; the first post begun after the heal was acknowledged 0.5 s "
        "after it"]


def test_a_post_acknowledged_while_pgbouncer_is_down_fails():
    history = healthy_history() + [post("x", 1.2, 503), post("y", 1.3)]
    found = problems(history, [PGBOUNCER], order=["a", "b", "y", "c"])
    assert any("1 posts begun and answered while it was down were acknowledged, e.g. ['y']" in p for p in found)


def test_pgbouncer_down_without_requests_refused_by_chatterd_fails():
    history = [r for r in healthy_history() if r.get("msg") != "b"] + [post("b", 1.5, "timeout", srv=None)]
    assert "pgbouncer-restart: chatterd refused no request begun while it was down" in problems(history, [PGBOUNCER])


# --- removals: each attempt's answer against chatts_removals; reads around a removal

def test_a_removal_answered_200_must_be_the_one_recorded_and_its_chatt_gone():
    found = problems(healthy_history(), gone=["y"])  # the store has no removal of x
    assert "the removal of x (first, via lb, at 2.7) answered 200, but chatts_removals has no removal of it" in found
    still = problems(healthy_history(), order=ORDER + ["x"], gone=["x", "y"])
    assert "the removal of x (first, via lb, at 2.7) answered 200, but its chatt is still stored" in still
    assert "1 removed chatts are still stored, e.g. ['x']" in still


def test_a_second_200_for_a_removed_chatt_fails():
    history = healthy_history() + [remove("x", 3.5, why="again", reason="rm-x-again")]
    assert problems(history) == [
        "the removal of x (again, via lb, at 3.5) answered 200, but chatts_removals records the one begun at 2.7"]


def test_a_404_after_a_removal_that_committed_is_explained():
    """x asked again on purpose after its 200; y asked in psql after a psql that timed out and committed all the
    same (DELETE 0), then in psql again (DELETE 0): explained by the first, which began before them."""
    history = [r for r in healthy_history() if not (r["op"] == "remove" and r["msg"] == "y")] + [
        remove("y", 2.75, "timeout", via="sql"), remove("y", 2.9, "DELETE 0", via="sql", why="retry"),
        remove("x", 3.5, 404, via="app2", why="again", reason="rm-x-again")]
    verdict = verdict_of(history)
    assert verdict.problems == ["no removal by DELETE in psql deleted a row in the whole run"]
    assert verdict.removals == [
        "4 removal attempts: 2 by DELETE /chatts/<id> (1 via app2, 1 via lb; 200: 1, 404: 1), 2 by DELETE in psql "
        "(DELETE 0: 1, timeout: 1)",
        "chatts_removals holds 2 removals (1 by cluster-remover, 1 by sql:postgres); 1 of the 1 attempts without an "
        "answer committed; 2 answered 404 or DELETE 0, each after another attempt that committed (1 asked again on "
        "purpose after a 200, 1 retried after no answer)"]


def test_a_404_without_a_removal_or_before_it_fails():
    history = healthy_history() + [remove("a", 3.3, 404, reason="rm-a")]
    assert problems(history) == [
        "the removal of a (first, via lb, at 3.3) answered 404, but chatts_removals has no removal of it (it is "
        "still stored)"]
    early = healthy_history() + [remove("x", 2.65, 404, reason="rm-x-early")]
    assert problems(early) == [
        "the removal of x (first, via lb, at 2.6) answered 404, but the removal that committed began later (2.7)"]


def test_a_removal_no_attempt_made_or_made_twice_fails():
    history = [r for r in healthy_history() if not (r["op"] == "remove" and r["msg"] == "x")]
    history += [remove("x", 2.7, 503, reason="rm-x-other")]  # its reason is not the one the store recorded
    found = problems(history)
    assert ("a removal in chatts_removals the run did not make: x: removed by cluster-remover for 'rm-x', which no "
            "attempt for it asked") in found
    gone = removals(ORDER)
    retained = check(healthy_history(), [WINDOW], stored(ORDER), Counter(ORDER),
                     removals=[gone[0], replace(gone[1], removed_by="retention")]).problems
    assert ("a removal in chatts_removals the run did not make: y: removed by 'retention', which the run never asked"
            in retained)
    twice = check(healthy_history(), [WINDOW], stored(ORDER), Counter(ORDER), removals=gone + [gone[0]]).problems
    assert "1 chatts were removed more than once, e.g. ['x']" in twice


def test_a_removal_refused_with_another_4xx_fails():
    history = healthy_history() + [remove("a", 3.3, 401, reason="rm-a")]
    assert problems(history) == ["the removal of a (first, via lb, at 3.3) answered 401: the remover's requests are "
                                 "well formed and carry a listed token"]


def test_removals_on_the_standby_are_held_too():
    assert "1 removed chatts are still on the standby, e.g. ['x']" in problems(healthy_history(),
                                                                             standby=ORDER + ["x"])
    verdict = check(healthy_history(), [WINDOW], stored(ORDER), Counter(ORDER), removals=removals(ORDER),
                    standby_removals=["id-x"])
    assert verdict.problems == ["1 removals are not on the standby, e.g. ['y']"]


def test_a_run_without_removals_by_http_or_sql_or_during_a_fault_fails():
    history = [r for r in healthy_history() if r["op"] != "remove" or r["via"] == "sql"]
    assert "no removal by DELETE /chatts/<id> was answered 200 in the whole run" in problems(history)
    history = [r for r in healthy_history() if r["op"] != "remove" or r["via"] != "sql"]
    assert "no removal by DELETE in psql deleted a row in the whole run" in problems(history)
    later = replace(WINDOW, cut=2.8, heal=2.9, settled=3.05)
    assert "fault: no removal was attempted from its cut until it settled" in problems(healthy_history(), [later])


def test_a_read_begun_after_a_removal_was_acknowledged_must_not_show_it():
    late = healthy_history() + [read("app2", 2.72, ORDER + REMOVED, who="late")]  # x's 200 came at 2.71
    assert problems(late) == ["app2 (late): a read at 2.7 shows 1 chatts whose removal was acknowledged before it "
                              "began (up to 0.0 s before), e.g. ['x']"]
    assert problems(late, strict_feeds=False) == []
    overlapping = healthy_history() + [read("app2", 2.705, ORDER + ["x", "y"], who="overlapping")]
    assert problems(overlapping) == []


def test_a_read_may_lack_a_chatt_whose_removal_had_begun_and_it_is_not_in_flight():
    """x's removal began at 2.7: a read at 2.72 without it lacks nothing in flight; one at 2.66 must have it."""
    history = healthy_history() + [read("app1", 2.64, ORDER + REMOVED, who="r"), read("app1", 2.72, ORDER + ["y"],
                                                                                     who="r")]
    verdict = verdict_of(history)
    assert verdict.problems == []
    assert verdict.reads_lacking_in_flight == 0
    early = healthy_history() + [read("app1", 2.66, ORDER + ["y"], who="r")]
    assert problems(early) == ["app1 (r): a read at 2.7 lacks 1 posts acknowledged before it began (up to 0.0 s "
                               "before), e.g. ['x']"]


def test_a_read_that_shrinks_before_a_removal_began_is_found():
    history = healthy_history() + [read("app1", 2.64, ORDER + REMOVED, who="r"), read("app1", 2.68, ORDER + ["y"],
                                                                                     who="r")]
    assert problems(history, strict_feeds=False) == [
        "app1 (r): a read at 2.7 lacks chatts its reader's previous read (at 2.6) had, and no removal of them had "
        "begun"]


# --- the live feed's subscribers: mandatory

def test_a_live_feed_that_never_answers_200_fails_the_run():
    """It used to be skipped, and the run passed."""
    history = [r for r in healthy_history() if r["op"] not in ("streams", "sub", "event")]
    refused = history + [{"op": "streams", "status": 503, "t": 0.0, "waited": 30.0, "subscribers": []}]
    assert problems(refused) == [
        "subscribers: the live feed never answered 200 at load start (503 after 30 s), so no subscriber ran: they "
        "are the only check of exactly-once across faults"]
    assert any("never answered 200 at load start (nothing recorded)" in p for p in problems(history))


def test_a_run_without_faults_fails():
    found = problems(healthy_history(), windows=())
    assert "subscribers: no fault was injected, so no subscriber could resume across one (a run with --faults \"\" " \
           "cannot pass)" in found
    assert any("direct-app1: never resumed with Last-Event-ID during a fault" in p for p in found)


def test_a_subscriber_that_did_not_start_from_an_empty_store_fails():
    history = [{**r, "rows": 2} if r.get("what") == "start" and r["sub"] == "lb-0" else r for r in healthy_history()]
    assert any("subscriber lb-0: the feed it started from was not empty (2 rows)" in p for p in problems(history))
    history = [{**r, "status": 503, "position": None} if r.get("what") == "start" and r["sub"] == "lb-0" else r
               for r in healthy_history()]
    assert "subscriber lb-0: no starting position (the feed answered 503, Feed-Position None)" in problems(history)


def test_a_stored_chatt_that_never_came_fails_acknowledged_or_not():
    """b was answered 503, and stored: it must come all the same."""
    history = [r for r in healthy_history() if not (r["op"] == "event" and r["sub"] == "lb-0" and r.get("msg") == "b")]
    assert "subscriber lb-0: 1 stored chatts never came, e.g. ['b']" in problems(history)


def test_a_chatt_that_came_twice_fails():
    b = stored(ORDER)[1]
    history = healthy_history() + [connected("lb-0", 3.0, "p1", "8.ab.7", "lb"), event("lb-0", 3.1, b)]
    found = problems(history)
    assert "subscriber lb-0: 1 chatts came more than once, e.g. ['b']" in found
    assert "subscriber lb-0: position 3.ab.2 at 3.1 does not follow 8.ab.7" in found


def test_an_event_for_a_chatt_not_stored_or_not_as_stored_fails():
    ghost = StoredChatt("id-ghost", "ghost", seq=8, tick=9, token="ab")
    history = healthy_history() + [event("lb-0", 3.0, ghost)]
    assert "subscriber lb-0: events for 1 chatts that are not stored (nor removed), e.g. ['ghost']" in problems(history)
    history = [{**r, "msg": "c!"} if r["op"] == "event" and r["sub"] == "lb-0" and r.get("msg") == "c" else r
               for r in healthy_history()]
    assert "subscriber lb-0: 1 events whose message is not the stored one, e.g. ['c!']" in problems(history)


def test_a_reset_fails():
    history = healthy_history() + [event("direct-app1", 3.0, kind="reset")]
    assert problems(history) == [
        "subscriber direct-app1: `event: reset` at 3.0 (the load edits no chatt, and a removal must never cause one)"]


def test_a_subscriber_that_kept_a_removed_chatt_fails():
    history = [r for r in healthy_history() if not (r.get("sub") == "lb-0" and r["event" if r["op"] == "event"
                                                                              else "op"] == "delete"
                                                    and r.get("chatt") == "id-x")]
    found = problems(history)
    assert ("subscriber lb-0: kept 1 removed chatts (their chatt came, their delete never did), e.g. ['x']" in found)
    assert ("subscriber lb-0: its chatts less its removals are not the surviving store: 1 more (e.g. ['x']), 0 fewer "
            "(e.g. [])") in found


def test_a_subscriber_that_never_got_a_removal_alone_fails():
    """lb-0 never had y's chatt: its delete must come all the same."""
    history = [r for r in healthy_history() if not (r.get("sub") == "lb-0" and r.get("event") == "delete"
                                                    and r.get("chatt") == "id-y")]
    assert problems(history) == ["subscriber lb-0: the deletes of 1 removed chatts never came, e.g. ['y']"]


def test_a_removal_that_came_twice_fails():
    x_removal = removals(ORDER)[0]
    history = healthy_history() + [connected("lb-0", 3.0, "p1", "7.ab.6", "lb"), delete("lb-0", 3.1, x_removal)]
    found = problems(history)
    assert "subscriber lb-0: 1 removals came more than once, e.g. ['x']" in found
    assert "subscriber lb-0: position 7.ab.6 at 3.1 does not follow 8.ab.7" in found


def test_a_delete_of_a_chatt_not_removed_fails():
    surviving = StoredRemoval("id-a", seq=8, chatt_seq=1, after=0, tick=9, token="ab")
    history = healthy_history() + [delete("lb-0", 3.0, surviving)]
    found = problems(history)
    assert "subscriber lb-0: deletes of 1 chatts that chatts_removals does not hold, e.g. ['a']" in found
    assert ("subscriber lb-0: its chatts less its removals are not the surviving store: 0 more (e.g. []), 1 fewer "
            "(e.g. ['a'])") in found
    unknown = healthy_history() + [delete("lb-0", 3.0, replace(surviving, id="id-nobody"))]
    assert problems(unknown) == ["subscriber lb-0: deletes of 1 chatts that chatts_removals does not hold, e.g. "
                                 "['id-nobody']"]


def test_a_removal_before_its_chatt_or_not_where_the_store_logs_it_fails():
    x_post, x_removal = removed(ORDER)[0], removals(ORDER)[0]
    lb_events = [r for r in healthy_history() if not (r.get("sub") == "lb-0" and r["op"] == "event"
                                                      and r.get("chatt") == "id-x")]
    before = lb_events + [delete("lb-0", 2.0, x_removal, position="4.ab.35"), event("lb-0", 2.1, x_post)]
    found = problems(before)
    assert "subscriber lb-0: 1 removals came before their chatt, e.g. ['x']" in found
    assert "subscriber lb-0: the removal of x came at 4.ab.35, the store logs it at 7.ab.6" in found
    elsewhere = [{**r, "id": "7.ab.9"} if r.get("sub") == "lb-0" and r.get("event") == "delete"
                 and r.get("chatt") == "id-x" else r for r in healthy_history()]
    assert problems(elsewhere) == ["subscriber lb-0: the removal of x came at 7.ab.9, the store logs it at 7.ab.6"]


def test_a_removed_chatts_own_event_is_held_to_its_sequence_number_and_the_others():
    """The store no longer has x's row, so its tick is unknown: its seq and the other subscribers say where it was."""
    moved = [{**r, "id": "5.ab.5"} if r.get("sub") == "lb-0" and r.get("event") == "message"
             and r.get("chatt") == "id-x" else r for r in healthy_history()]
    assert problems(moved) == ["subscriber lb-0: x (removed since) came at 5.ab.5, but its sequence number was 4",
                               "subscriber lb-0: x (removed since) came at 5.ab.5, direct-app1 had it at 5.ab.4"]
    other_tick = [{**r, "id": "6.ab.4"} if r.get("sub") == "lb-0" and r.get("event") == "message"
                  and r.get("chatt") == "id-x" else r for r in healthy_history()]
    found = problems(other_tick)
    assert "subscriber lb-0: x (removed since) came at 6.ab.4, direct-app1 had it at 5.ab.4" in found


def test_positions_out_of_order_fail_within_a_connection_and_across_a_resume():
    a, b, c = stored(ORDER)
    lb_events = [r for r in healthy_history() if not (r.get("sub") == "lb-0" and r["op"] == "event")]
    swapped = lb_events + [event("lb-0", 0.2, b), event("lb-0", 0.21, a), event("lb-0", 2.5, c)]
    assert "subscriber lb-0: position 2.ab.1 at 0.2 does not follow 3.ab.2" in problems(swapped)
    resumed_behind = lb_events + [event("lb-0", 0.2, a), event("lb-0", 1.7, a), event("lb-0", 1.8, b),
                                  event("lb-0", 1.9, c)]  # it resumed at 1.6 from a: a again is behind
    assert "subscriber lb-0: position 2.ab.1 at 1.7 does not follow 2.ab.1" in problems(resumed_behind)


def test_a_tick_with_two_tokens_fails():
    history = [{**r, "id": "4.cd.3"} if r["op"] == "event" and r["sub"] == "lb-0" and r.get("msg") == "c" else r
               for r in healthy_history()]
    assert "subscriber lb-0: position 4.cd.3 names tick 4 with token cd, elsewhere ab" in problems(history)


def test_an_event_not_where_the_store_logs_its_chatt_fails():
    history = [{**r, "id": "4.ab.7"} if r["op"] == "event" and r["sub"] == "lb-0" and r.get("msg") == "c" else r
               for r in healthy_history()]
    assert "subscriber lb-0: c came at 4.ab.7, the store logs it at 4.ab.3" in problems(history)


def test_an_event_id_that_is_not_a_tick_position_fails():
    for old_style in ("1-3", "4.ab", "4.AB.3"):
        history = [{**r, "id": old_style} if r["op"] == "event" and r["sub"] == "lb-0" and r.get("msg") == "c" else r
                   for r in healthy_history()]
        assert f"subscriber lb-0: an event's id {old_style!r} is not T.K.S" in problems(history)


def test_a_subscriber_that_never_resumed_during_a_fault_fails():
    late = [r for r in healthy_history() if r.get("sub") != "direct-app1"] + subscription(
        "direct-app1", ORDER, "app1", ("p1", "p1"), resume_at=4.5)
    assert problems(late) == ["subscriber direct-app1: never resumed with Last-Event-ID during a fault"]
    from_the_start = [{**r, "last_event_id": START} if r.get("what") == "connected" and r["t"] > 1 else r
                      for r in healthy_history()]  # a position it never received
    found = problems(from_the_start)
    assert "subscriber direct-app1: never resumed with Last-Event-ID during a fault" in found
    assert "subscribers: none resumed on the other chatterd process than the one it was on" in found


def test_no_resume_on_the_other_process_fails():
    history = [{**r, "srv": "p1"} if r.get("sub") == "lb-0" and r["op"] == "sub" else r for r in healthy_history()]
    assert problems(history) == ["subscribers: none resumed on the other chatterd process than the one it was on"]


# --- cluster.py's command line and results directory

def run_cluster(*arguments: str) -> subprocess.CompletedProcess:
    cluster = Path(__file__).with_name("cluster.py")
    return subprocess.run([sys.executable, str(cluster), "--chatterd", "/nonexistent", *arguments],
                          capture_output=True, text=True, timeout=60)


def test_an_unknown_fault_name_is_an_error():
    result = run_cluster("--faults", "app-db-cut,no-such-fault")
    assert result.returncode == 2
    assert "unknown fault no-such-fault" in result.stderr


def test_a_run_without_faults_is_refused():
    result = run_cluster("--faults", "")
    assert result.returncode == 2
    assert "no fault given" in result.stderr


def test_an_earlier_runs_files_are_cleared():
    from cluster import prepare_results
    with tempfile.TemporaryDirectory() as directory:
        results = Path(directory)
        for name in ("outcomes.jsonl", "windows.json", "report.md", "keep.txt"):
            (results / name).write_text("old")
        (results / "logs").mkdir()
        (results / "logs" / "chatterd-app1.log").write_text("old")
        prepare_results(results)
        assert sorted(p.name for p in results.iterdir()) == ["keep.txt", "logs"]
        assert list((results / "logs").iterdir()) == []


# --- the subscribers' client, against a made-up stream server

def test_the_subscribers_parser_reads_chunked_events():
    class Parts:
        def __init__(self, data: bytes):
            self.parts = [data[i:i + 7] for i in range(0, len(data), 7)]

        def recv(self, _):
            return self.parts.pop(0) if self.parts else b""

    body = b'id: 2.ab.1\ndata: ["cluster","r-0-0","x","t"]\n\n:\n\nevent: reset\ndata: {}\n\n'
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in (body[:10], body[10:31], body[31:])) + b"0\r\n\r\n"
    wire = Wire(Parts(chunked), threading.Event())
    seen = []
    try:
        for parsed in events(body_chunks(wire, {"transfer-encoding": "chunked"})):
            seen.append(parsed)
    except Dropped as drop:
        assert str(drop) == "the stream ended"
    assert seen == [("message", "2.ab.1", '["cluster","r-0-0","x","t"]'), ("reset", "2.ab.1", "{}")]


def sse(n: int) -> bytes:
    return f"id: {n + 1}.ab.{n}\ndata: {json.dumps(['cluster', f'r-0-{n}', f'id-{n}', 't'])}\n\n".encode()


@contextmanager
def stream_server(answers: list[tuple[str, list[bytes], float]]):
    """A made-up TLS stream server on 127.0.0.1 answering one connection after another: (status line, events,
    seconds to hold the connection open after them). Yields (its address, a client context, the requests)."""
    with tempfile.TemporaryDirectory() as directory:
        cert, key = Path(directory, "c.pem"), Path(directory, "k.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-days",
                        "1", "-nodes", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
                        "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
        server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        server_context.load_cert_chain(cert, key)
        listener = socket.create_server(("127.0.0.1", 0))
        asked = []

        def answer(raw: socket.socket, number: int, status: str, parts: list[bytes], hold: float):
            connection = server_context.wrap_socket(raw, server_side=True)
            request = b""
            while b"\r\n\r\n" not in request:
                request += connection.recv(4096)
            asked.append(request.decode())
            connection.sendall(f"HTTP/1.1 {status}\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: "
                               f"chunked\r\nX-Request-Id: srv{number}-1-1\r\n\r\n".encode())
            for part in parts:
                connection.sendall(b"%x\r\n%s\r\n" % (len(part), part))
            time.sleep(hold)
            connection.close()

        def serve():
            for number, script in enumerate(answers):
                raw = listener.accept()[0]
                threading.Thread(target=answer, args=(raw, number, *script), daemon=True).start()

        threading.Thread(target=serve, daemon=True).start()
        yield f"127.0.0.1:{listener.getsockname()[1]}", ssl.create_default_context(cafile=str(cert)), asked


def follow(address: str, context, seconds: float, **options) -> list[dict]:
    """The records of a Subscriber of `address` (its targets: `address` twice, as home and other) that starts at
    START and runs for `seconds`."""
    with tempfile.TemporaryDirectory() as directory:
        out = Path(directory, "out.jsonl")
        subscriber = Subscriber("s", [("home", address), ("other", address)], context, Recorder(str(out)), **options)
        subscriber.last_event_id = START
        stop = threading.Event()
        thread = threading.Thread(target=subscriber.run, args=(stop,))
        thread.start()
        time.sleep(seconds)
        stop.set()
        thread.join(5)
        return [json.loads(line) for line in out.read_text().splitlines()]


def test_a_subscriber_resumes_after_a_drop_with_last_event_id():
    with stream_server([("200 OK", [sse(1), b":\n\n", sse(2)], 0), ("200 OK", [sse(3)], 1.5)]) as (address, ctx, asked):
        records = follow(address, ctx, 1.0)
    assert [r["msg"] for r in records if r["op"] == "event"] == ["r-0-1", "r-0-2", "r-0-3"]
    assert [r["chatt"] for r in records if r["op"] == "event"] == ["id-1", "id-2", "id-3"]
    assert [(r["what"], r.get("srv")) for r in records if r["op"] == "sub"] == [
        ("connected", "srv0"), ("dropped", None), ("connected", "srv1")]
    assert f"Last-Event-ID: {START}\r\n" in asked[0] and "Last-Event-ID: 3.ab.2\r\n" in asked[1]
    assert "GET /getchatts/stream HTTP/1.1" in asked[1]


def test_a_subscriber_leaves_on_time_and_fails_over_when_refused():
    """It rotates after its first stay, is refused at home, and resumes on its other target."""
    answers = [("200 OK", [sse(1)], 3), ("503 Service Unavailable", [], 0), ("200 OK", [sse(2)], 3)]
    with stream_server(answers) as (address, ctx, asked):
        records = follow(address, ctx, 2.8, first_rotation=0.5)
    assert [(r["what"], r.get("via")) for r in records if r["op"] == "sub"] == [
        ("connected", "home"), ("rotated", None), ("refused", "home"), ("connected", "other")]
    assert [r["msg"] for r in records if r["op"] == "event"] == ["r-0-1", "r-0-2"]
    assert all("Last-Event-ID: 2.ab.1\r\n" in request for request in asked[1:])


def test_a_subscriber_records_deletes_and_resumes_from_one():
    removal = b'event: delete\nid: 9.ab.8\ndata: "id-1"\n\n'
    with stream_server([("200 OK", [sse(1), removal], 0), ("200 OK", [sse(9)], 1.5)]) as (address, ctx, asked):
        records = follow(address, ctx, 1.0)
    assert [(r["event"], r["id"], r["chatt"]) for r in records if r["op"] == "event"] == [
        ("message", "2.ab.1", "id-1"), ("delete", "9.ab.8", "id-1"), ("message", "10.ab.9", "id-9")]
    assert "Last-Event-ID: 9.ab.8\r\n" in asked[1]


def test_a_subscriber_that_is_reset_stops():
    """A reset fails the run: the subscriber records it and follows no more (it would have to read the feed again)."""
    reset = b"event: reset\ndata: {}\n\n"
    with stream_server([("200 OK", [sse(1), reset], 0), ("200 OK", [sse(2)], 1.5)]) as (address, ctx, asked):
        records = follow(address, ctx, 1.0)
    assert [(r["op"], r.get("event") or r.get("what")) for r in records] == [
        ("sub", "connected"), ("event", "message"), ("event", "reset"), ("sub", "reset")]
    assert len(asked) == 1


if __name__ == "__main__":
    failed = 0
    tests = [(name, test) for name, test in sorted(globals().items()) if name.startswith("test_")]
    for name, test in tests:
        try:
            test()
            print(f"ok   {name}")
        except Exception as error:  # report every failing test, not just the first
            failed += 1
            print(f"FAIL {name}: {type(error).__name__}: {error}")
    print(f"{len(tests) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
