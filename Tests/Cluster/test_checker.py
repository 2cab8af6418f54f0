"""The checker must find what it exists to find: synthetic histories with a lost, a duplicated, a refused but
stored, a reordered and a shrinking read, a missed read-your-writes, and a host that never converges."""

from __future__ import annotations

from collections import Counter

from checker import Window, check
from load import feed_record


def post(msg: str, t: float, status=200) -> dict:
    return {"op": "post", "msg": msg, "t0": t, "t1": t + 0.01, "status": status}


def read(host: str, t: float, messages: list[str], status=200) -> dict:
    return {"op": "read", "host": host, "t0": t, "t1": t + 0.01, "status": status, **feed_record(messages)}


WINDOW = Window("fault", cut=1.0, heal=2.0, settled=4.0)
ORDER = ["a", "b", "c"]


def healthy_history() -> list[dict]:
    return [post("a", 0.5), post("b", 1.5, 503), post("b2", 1.6, "timeout"), post("c", 2.5),
            read("app1", 0.7, ["a"]), read("app2", 0.8, ["a"]),
            read("app1", 3.0, ORDER), read("app2", 3.1, ORDER),
            {"op": "ryw", "msg": "c", "host": "app2", "t0": 2.6, "t1": 2.7, "status": 200, "seen": True}]


def test_a_healthy_history_passes_with_its_figures():
    verdict = check(healthy_history(), [WINDOW], ORDER, Counter(ORDER))
    assert verdict.problems == []
    figures = verdict.faults[0]
    assert (figures.acknowledged, figures.lost, figures.duplicated, figures.indeterminate) == (1, 0, 0, 2)
    assert abs(figures.unavailable - 1.51) < 1e-6  # from the cut to c's answer
    assert abs(figures.converged - 1.11) < 1e-6  # the first complete read after the heal, on the slower host


def test_an_acknowledged_post_missing_is_lost():
    verdict = check(healthy_history(), [WINDOW], ["a", "b"], Counter(["a", "b"]))
    assert any("not stored" in p for p in verdict.problems)
    assert verdict.faults[0].lost == 1


def test_a_post_stored_twice_is_duplicated():
    order = ["a", "b", "c", "c"]
    verdict = check(healthy_history(), [WINDOW], order, Counter(order))
    assert any("more than once" in p for p in verdict.problems)
    assert verdict.faults[0].duplicated == 1


def test_a_refused_post_that_is_stored_is_found():
    history = healthy_history() + [post("d", 3.5, 400)]
    order = ORDER + ["d"]
    verdict = check(history, [WINDOW], order, Counter(order))
    assert any("4xx" in p for p in verdict.problems)


def test_an_acknowledged_post_missing_on_the_standby_is_found():
    verdict = check(healthy_history(), [WINDOW], ORDER, Counter(["a", "b"]))
    assert any("standby" in p for p in verdict.problems)


def test_a_read_out_of_the_final_order_is_found():
    history = healthy_history() + [read("app1", 3.5, ["b", "a"])]
    verdict = check(history, [WINDOW], ORDER, Counter(ORDER))
    assert any("not in the final feed's order" in p for p in verdict.problems)


def test_a_read_that_shrinks_is_found():
    history = healthy_history() + [read("app2", 3.5, ["a"])]
    verdict = check(history, [WINDOW], ORDER, Counter(ORDER))
    assert any("lacks chatts an earlier read had" in p for p in verdict.problems)


def test_a_row_that_committed_late_among_the_newest_is_counted_not_refused():
    """b's transaction began before c's and committed after it: a read between the two commits has [a, c]."""
    history = healthy_history() + [read("app1", 2.8, ["a", "c"])]
    verdict = check(history, [WINDOW], ORDER, Counter(ORDER))
    assert verdict.problems == []
    assert (verdict.reads_with_late_rows, verdict.most_late_rows) == (1, 1)


def test_a_row_missing_below_the_newest_rows_is_found():
    order = [f"m{i}" for i in range(60)]
    posts = [post(m, 0.1 + i / 100) for i, m in enumerate(order)]
    history = posts + [read("app1", 3.0, order[1:]), read("app1", 3.5, order), read("app2", 3.5, order)]
    verdict = check(history, [WINDOW], order, Counter(order))
    assert any("older rows are not a prefix" in p for p in verdict.problems)


def test_a_read_after_a_200_without_the_post_is_found():
    history = healthy_history() + [
        {"op": "ryw", "msg": "c", "host": "app1", "t0": 2.6, "t1": 2.7, "status": 200, "seen": False}]
    verdict = check(history, [WINDOW], ORDER, Counter(ORDER))
    assert any("did not have it" in p for p in verdict.problems)
    assert check(history, [WINDOW], ORDER, Counter(ORDER), strict_feeds=False).problems == []


def test_a_host_that_never_catches_up_does_not_converge():
    history = [r for r in healthy_history() if not (r["op"] == "read" and r["host"] == "app2" and r["t0"] > 2)]
    history.append(read("app2", 3.2, ["a"], status=503))
    verdict = check(history, [WINDOW], ORDER, Counter(ORDER))
    assert verdict.faults[0].converged is None
    assert any("did not converge" in p for p in verdict.problems)
