"""The checker must find what it exists to find: made-up histories, one for each rule it must fail (a lost, a
duplicated, a refused but stored post; a read out of order, one that shrinks, one lacking an acknowledged post;
a run or a phase without acknowledged posts or successful reads; a fault without evidence; no traffic through
HAProxy to a host after a heal; a must-serve fault with a gap; a host that never converges; subscribers' missing,
repeated, reordered or reset events), and healthy ones it must pass.

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
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from checker import Window, check  # noqa: E402
from load import Recorder, feed_record, subscriber  # noqa: E402

SERVERS = {"app1": "p1", "app2": "p2"}  # each host's X-Request-Id prefix


def post(msg: str, t: float, status=200, srv="p2") -> dict:
    return {"op": "post", "msg": msg, "t0": t, "t1": t + 0.01, "status": status, "srv": srv}


def read(host: str, t: float, messages: list[str], status=200, srv=None, who=None) -> dict:
    return {"op": "read", "host": host, "who": who or f"reader-{host}", "t0": t, "t1": t + 0.01, "status": status,
            "srv": srv or SERVERS.get(host), **(feed_record(messages) if status == 200 else {})}


WINDOW = Window("fault", cut=1.0, heal=2.0, settled=4.0, evidence=["it bit"], lb_sessions={"app1": 3, "app2": 2})
ORDER = ["a", "b", "c"]


def healthy_history() -> list[dict]:
    return [post("a", 0.5), post("b", 1.5, 503), post("b2", 1.6, "timeout", srv=None), post("c", 2.5),
            read("app1", 0.7, ["a"]), read("app2", 0.8, ["a"]),
            read("app2", 2.6, ORDER, who="poster0"),
            read("app1", 3.0, ORDER), read("app2", 3.1, ORDER), read("lb", 3.2, ORDER, srv="p1", who="prober")]


def problems(history, windows=(WINDOW,), order=ORDER, standby=None, **options) -> list[str]:
    return check(history, list(windows), order, Counter(standby if standby is not None else order), **options).problems


def test_a_healthy_history_passes_with_its_figures():
    verdict = check(healthy_history(), [WINDOW], ORDER, Counter(ORDER))
    assert verdict.problems == []
    figures = verdict.faults[0]
    assert (figures.acknowledged, figures.lost, figures.duplicated, figures.indeterminate) == (1, 0, 0, 2)
    assert abs(figures.unavailable - 1.51) < 1e-6  # from the cut to c's answer
    assert abs(figures.converged - 1.01) < 1e-6  # the first complete read after the heal, on the slower host
    assert figures.after_heal == {"app1": 1, "app2": 1}
    assert verdict.membership_checked == 6
    assert verdict.subscribers == ["skipped: /getmaps/stream answered None"]


# --- storage

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
    verdict = check(history, [WINDOW], ORDER, Counter(ORDER))
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
    found = problems(history, order=order)
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
    history = [r for r in healthy_history() if r.get("msg") != "c"] + [post("c", 2.5, 503)]
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
    history = [r for r in healthy_history() if r["op"] == "post"] + steady + reads + [
        read("app1", 0.7, ["a"]), read("app2", 0.8, ["a"]), read("app1", 3.0, order), read("app2", 3.1, order),
        read("lb", 3.2, order, srv="p1")]
    assert problems(history, [serving], order) == []
    gappy = [r for r in history if not (r["op"] == "read" and r["host"] == "app2" and 1.2 < r["t0"] < 2.0)]
    assert problems(gappy, [serving], order) == []  # a gap of 1 s is within SERVING_GAP
    long_window = replace(serving, cut=-5.0)
    assert any("no post was acknowledged for" in p for p in problems(history, [long_window], order))
    no_app2 = [r for r in history if not (r["op"] == "read" and r["host"] == "app2" and r["t0"] < 2.5)]
    assert any("no read from app2 succeeded for" in p for p in problems(no_app2, [replace(serving, cut=-5.0)], order))


# --- faults took effect; traffic back through HAProxy

def test_a_fault_without_evidence_fails():
    assert "fault: nothing showed that the fault took effect" in problems(healthy_history(), [replace(WINDOW, evidence=[])])


def test_an_affected_hosts_failed_reads_are_evidence():
    window = replace(WINDOW, evidence=[], affected="app1")
    history = healthy_history() + [read("app1", 1.2, [], status=503), read("app1", 1.5, [], status="timeout")]
    verdict = check(history, [window], ORDER, Counter(ORDER))
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
    verdict = check(history, [WINDOW], ORDER, Counter(ORDER))
    assert verdict.faults[0].converged is None
    assert any("did not converge" in p for p in verdict.problems)


# --- the live feed's subscribers

def subscribed(*events, name="direct-app1", connected=0.1) -> list[dict]:
    """healthy_history with the live feed on and one subscriber that connected at `connected`."""
    records = [{"op": "streams", "enabled": True, "status": 200, "t": 0.0},
               {"op": "sub", "sub": name, "what": "connected", "t": connected, "srv": "p1", "last_event_id": None}]
    for t, event_id, msg, *kind in events:
        records.append({"op": "event", "sub": name, "t": t, "id": event_id, "msg": msg,
                        "event": kind[0] if kind else "message"})
    return healthy_history() + records


def test_a_subscriber_with_every_post_once_in_order_passes():
    verdict = check(subscribed((0.52, "1-1", "a"), (1.7, "1-2", "b"), (2.52, "1-3", "c")), [WINDOW], ORDER,
                    Counter(ORDER))
    assert verdict.problems == []
    assert verdict.subscribers == ["direct-app1: 3 events, 1 connections, 0 kinds of problem"]
    # Posts acknowledged before it first connected need not come.
    assert problems(subscribed((2.52, "1-3", "c"), connected=2.0)) == []


def test_a_subscriber_missing_an_acknowledged_post_fails():
    assert any("1 acknowledged posts never came" in p and "'c'" in p
               for p in problems(subscribed((0.52, "1-1", "a"), (1.7, "1-2", "b"))))


def test_a_subscriber_given_a_post_twice_fails():
    history = subscribed((0.52, "1-1", "a"), (1.7, "1-2", "b"), (2.52, "1-3", "c"), (2.6, "1-3", "c"))
    found = problems(history)
    assert any("came more than once" in p for p in found)
    assert any("position 1-3 at 2.6 does not follow 1-3" in p for p in found)


def test_a_subscriber_given_posts_out_of_commit_order_fails():
    history = subscribed((0.52, "1-2", "a"), (1.7, "1-1", "b"), (2.52, "1-3", "c"))
    assert any("position 1-1 at 1.7 does not follow 1-2" in p for p in problems(history))
    other_epoch = subscribed((0.52, "1-1", "a"), (1.7, "2-2", "b"), (2.52, "2-3", "c"))
    assert any("position 2-2 at 1.7 does not follow 1-1" in p for p in problems(other_epoch))


def test_a_subscriber_told_to_reset_fails():
    history = subscribed((0.52, "1-1", "a"), (1.0, None, None, "reset"), (1.7, "1-2", "b"), (2.52, "1-3", "c"))
    assert any("`event: reset`" in p for p in problems(history))


def test_a_subscriber_given_an_unstored_chatt_fails():
    history = subscribed((0.52, "1-1", "a"), (1.7, "1-2", "b"), (2.52, "1-3", "c"), (2.7, "1-4", "ghost"))
    assert any("chatts that are not stored" in p for p in problems(history))


# --- cluster.py's command line and results directory

def test_an_unknown_fault_name_is_an_error():
    cluster = Path(__file__).with_name("cluster.py")
    result = subprocess.run([sys.executable, str(cluster), "--chatterd", "/nonexistent", "--faults",
                             "app-db-cut,no-such-fault"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "unknown fault no-such-fault" in result.stderr


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


# --- load.py's subscriber client (the server has no live feed yet: a made-up one)

def test_the_subscribers_parser_reads_chunked_events():
    from load import Dropped, Wire, body_chunks, events

    class Parts:
        def __init__(self, data: bytes):
            self.parts = [data[i:i + 7] for i in range(0, len(data), 7)]

        def recv(self, _):
            return self.parts.pop(0) if self.parts else b""

    body = b'id: 1-1\ndata: ["cluster","r-0-0","x","t"]\n\n:\n\nevent: reset\ndata: {}\n\n'
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in (body[:10], body[10:31], body[31:])) + b"0\r\n\r\n"
    wire = Wire(Parts(chunked), threading.Event())
    seen = []
    try:
        for event in events(body_chunks(wire, {"transfer-encoding": "chunked"})):
            seen.append(event)
    except Dropped as drop:
        assert str(drop) == "the stream ended"
    assert seen == [("message", "1-1", '["cluster","r-0-0","x","t"]'), ("reset", "1-1", "{}")]


def test_a_subscriber_resumes_after_a_drop_with_last_event_id():
    """py's subscriber against a made-up TLS server: two events, a dropped connection, then the rest
    from the Last-Event-ID it sent."""
    with tempfile.TemporaryDirectory() as directory:
        cert, key = Path(directory, "c.pem"), Path(directory, "k.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-days",
                        "1", "-nodes", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
                        "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
        server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        server_context.load_cert_chain(cert, key)
        listener = socket.create_server(("127.0.0.1", 0))
        port = listener.getsockname()[1]
        asked = []

        def event(n):
            return f"id: 1-{n}\ndata: {json.dumps(['cluster', f'r-0-{n}', 'x', 't'])}\n\n".encode()

        def serve():
            for answer in ([event(1), b":\n\n", event(2)], [event(3)]):
                connection = server_context.wrap_socket(listener.accept()[0], server_side=True)
                request = b""
                while b"\r\n\r\n" not in request:
                    request += connection.recv(4096)
                asked.append(request.decode())
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                   b"Transfer-Encoding: chunked\r\nX-Request-Id: abcd-1-1\r\n\r\n")
                for part in answer:
                    connection.sendall(b"%x\r\n%s\r\n" % (len(part), part))
                if answer[-1] == event(2):
                    connection.close()
                else:
                    time.sleep(1.5)
                    connection.close()

        threading.Thread(target=serve, daemon=True).start()
        out = Path(directory, "out.jsonl")
        recorder, stop = Recorder(str(out)), threading.Event()
        client_context = ssl.create_default_context(cafile=str(cert))
        thread = threading.Thread(target=subscriber, args=("s", f"127.0.0.1:{port}", client_context, recorder, stop))
        thread.start()
        time.sleep(1.0)
        stop.set()
        thread.join(5)
        records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["msg"] for r in records if r["op"] == "event"] == ["r-0-1", "r-0-2", "r-0-3"]
    assert [r["what"] for r in records if r["op"] == "sub"] == ["connected", "dropped", "connected"]
    assert "Last-Event-ID" not in asked[0] and "Last-Event-ID: 1-2\r\n" in asked[1]
    assert "GET /getchatts/stream HTTP/1.1" in asked[1]


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
