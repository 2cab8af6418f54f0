"""The checker, in the style of Jepsen's: every request's recorded outcome against what the database holds
at the end.

- A post answered 200 is stored exactly once (on the primary, and on the standby once it caught up).
- A post answered 4xx is never stored; 503s, timeouts and broken connections are indeterminate (stored at
  most once).
- Each host's successive reads only grow, and every read is a prefix of one order, the final feed, but for
  rows that committed late: a feed is ordered by each chatt's transaction start (README, "Incremental feeds"),
  so a transaction that began first and committed last lands before rows already read. Such rows may only be
  missing among a read's newest TAIL_ROWS, and are counted.
- With --strict-feeds, a read after an acknowledged post has that post, whichever host answers.
- After each heal, every read from both hosts has every post acknowledged before the heal within
  CONVERGENCE_BOUND seconds.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field

CONVERGENCE_BOUND = 30.0


class Read:
    """A successful feed read as load.py recorded it, against the final order."""

    def __init__(self, record: dict, order: list[str], chains: list[str], position: dict[str, int]):
        self.record = record
        self.host, self.t0, self.t1 = record["host"], record["t0"], record["t1"]
        self.head, self.tail = record["head"], record["tail"]
        self.tail_set = set(self.tail)
        self.late = 0
        self.problem = None
        if record["n"] <= len(order) and chains[record["n"]] == record["chain"]:
            return  # a prefix
        if self.head > len(order) or chains[self.head] != record["head_chain"]:
            self.problem = "its older rows are not a prefix of the final feed"
            return
        places = [position.get(message, -1) for message in self.tail]
        if min(places, default=self.head) < self.head or places != sorted(set(places)):
            self.problem = "its newest rows are not in the final feed's order"
            return
        # Rows of the final order this read skipped among its newest: they committed after it, but sort before.
        self.late = places[-1] + 1 - self.head - len(places)

    def has(self, message: str, position: dict[str, int]) -> bool:
        place = position.get(message)
        return place is not None and (place < self.head or message in self.tail_set)

    def has_everything_before(self, needed: int, order: list[str]) -> bool:
        """Whether this read holds every row of the final order before position `needed`."""
        return all(message in self.tail_set for message in order[self.head:needed])

    def holds(self, earlier: "Read", order: list[str], position: dict[str, int]) -> bool:
        """Whether this read has every chatt `earlier` had."""
        return self.has_everything_before(earlier.head, order) and all(self.has(m, position) for m in earlier.tail)


@dataclass
class Window:
    """One fault: its name, when it began (the cut) and ended (the heal), and when the next one may begin."""
    name: str
    cut: float
    heal: float
    settled: float


@dataclass
class FaultFigures:
    name: str
    acknowledged: int = 0
    lost: int = 0
    duplicated: int = 0
    indeterminate: int = 0
    unavailable: float = 0.0
    slowest_refusal: float = 0.0
    converged: float | None = None


@dataclass
class Verdict:
    faults: list[FaultFigures]
    acknowledged: int = 0
    stored: int = 0
    reads: int = 0
    reads_with_late_rows: int = 0
    most_late_rows: int = 0
    problems: list[str] = field(default_factory=list)


def prefix_chains(order: list[str]) -> list[str]:
    """chains[k] is load.chain(order[:k]), for every k."""
    chains, digest = [b"".hex()], b""
    for message in order:
        digest = hashlib.sha256(digest + message.encode() + b"\n").digest()
        chains.append(digest.hex())
    return chains


def longest_gap(posts: list[dict], start: float, end: float) -> float:
    """The longest time within [start, end] in which no post was answered 200, measured between answers."""
    answers = sorted(p["t1"] for p in posts if p["status"] == 200 and start <= p["t1"] <= end)
    marks = [start] + answers + [end]
    return max(b - a for a, b in zip(marks, marks[1:]))


def check(records: list[dict], windows: list[Window], order: list[str], standby: Counter,
          strict_feeds: bool = True) -> Verdict:
    posts = [r for r in records if r["op"] == "post"]
    reads = [r for r in records if r["op"] == "read"]
    stored = Counter(order)
    acknowledged = {p["msg"] for p in posts if p["status"] == 200}
    refused = {p["msg"] for p in posts if isinstance(p["status"], int) and 400 <= p["status"] < 500}
    verdict = Verdict(faults=[], acknowledged=len(acknowledged), stored=len(order))
    problems = verdict.problems

    lost = sorted(m for m in acknowledged if stored[m] == 0)
    twice = sorted(m for m, n in stored.items() if n > 1)
    not_on_standby = sorted(m for m in acknowledged if standby[m] == 0)
    if lost:
        problems.append(f"{len(lost)} acknowledged posts are not stored, e.g. {lost[:3]}")
    if twice:
        problems.append(f"{len(twice)} posts are stored more than once, e.g. {twice[:3]}")
    if not_on_standby:
        problems.append(f"{len(not_on_standby)} acknowledged posts are not on the standby, e.g. {not_on_standby[:3]}")
    if stored_refused := sorted(m for m in refused if stored[m]):
        problems.append(f"{len(stored_refused)} posts answered 4xx are stored, e.g. {stored_refused[:3]}")
    if unexpected := sorted(set(stored) - {p["msg"] for p in posts}):
        problems.append(f"{len(unexpected)} stored chatts were never posted, e.g. {unexpected[:3]}")

    chains = prefix_chains(order)
    position = {message: index for index, message in enumerate(order)}
    good = [Read(r, order, chains, position) for r in sorted(reads, key=lambda r: r["t0"]) if r["status"] == 200]
    verdict.reads = len(good)
    verdict.reads_with_late_rows = sum(1 for read in good if read.late)
    verdict.most_late_rows = max((read.late for read in good), default=0)
    previous: dict[str, Read] = {}
    for read in good:
        if read.problem:
            problems.append(f"{read.host}: a read of {read.record['n']} chatts at {read.t0:.1f}: {read.problem}")
            continue
        before = previous.get(read.host)
        if before and not read.holds(before, order, position):
            problems.append(f"{read.host}: a read at {read.t0:.1f} lacks chatts an earlier read had")
        previous[read.host] = read

    if strict_feeds:
        missed = [r for r in records if r["op"] == "ryw" and r["status"] == 200 and not r["seen"]]
        for read in missed[:5]:
            problems.append(f"{read['host']}: the read after {read['msg']}'s 200 did not have it")
        if len(missed) > 5:
            problems.append(f"... and {len(missed) - 5} more reads without the poster's own chatt")

    for window in windows:
        figures = FaultFigures(window.name)
        inside = [p for p in posts if window.cut <= p["t0"] <= window.settled]
        figures.acknowledged = sum(1 for p in inside if p["status"] == 200)
        figures.indeterminate = sum(1 for p in inside if not isinstance(p["status"], int) or p["status"] >= 500)
        figures.lost = sum(1 for p in inside if p["status"] == 200 and stored[p["msg"]] == 0)
        figures.duplicated = sum(1 for p in inside if stored[p["msg"]] > 1)
        figures.unavailable = longest_gap(posts, window.cut, window.settled)
        figures.slowest_refusal = max((p["t1"] - p["t0"] for p in inside if p["status"] != 200), default=0.0)
        figures.converged = converged_after(window, posts, good, order, position)
        if figures.converged is None or figures.converged > CONVERGENCE_BOUND:
            problems.append(f"{window.name}: the hosts did not converge within {CONVERGENCE_BOUND:.0f} s of the heal")
        verdict.faults.append(figures)
    return verdict


def converged_after(window: Window, posts: list[dict], reads: list[Read], order: list[str],
                    position: dict[str, int]) -> float | None:
    """Seconds from the heal until a read from every host has each post acknowledged before the heal (reads
    only grow, so every later one has them too); None when some host never got there before the window settled."""
    before = [position[p["msg"]] for p in posts
              if p["status"] == 200 and p["t1"] <= window.heal and p["msg"] in position]
    needed = max(before) + 1 if before else 0
    latest = window.heal
    for host in sorted({read.host for read in reads}):
        first = next((read for read in reads if read.host == host and window.heal <= read.t0 <= window.settled
                      and not read.problem and read.has_everything_before(needed, order)), None)
        if first is None:
            return None
        latest = max(latest, first.t1)
    return latest - window.heal
