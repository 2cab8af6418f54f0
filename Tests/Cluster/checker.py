"""The checker, in the style of Jepsen's: every request's recorded outcome against what the database holds
at the end. What it holds the history to (the report lists the same):

- Traffic: the run, and each phase of it (the baseline before the first fault, and each fault's time from
  its heal until it settled), has acknowledged posts and successful reads from every chatterd host; a fault
  that must keep the cluster serving (etcd-member-cut) has no gap longer than SERVING_GAP without an
  acknowledged post, or without a successful read from each host, from its cut until it settled.
- Storage: a post answered 200 is stored exactly once (on the primary, and on the standby once it caught
  up); a post answered 4xx is never stored; 503s, timeouts and broken connections are indeterminate (stored
  at most once); nothing is stored that was never posted.
- Membership (--strict-feeds): a read holds every post acknowledged before the read began, whichever host
  answers. A feed is in the order of each chatt's transaction start, so a read may lack rows of posts still in
  flight when it began, anywhere in it; those reads are counted, not failed.
- Order: every read is the final feed restricted to its own rows (the same rows in the same order, and no row
  that is not stored); each reader's successive reads only grow.
- Faults took effect: each fault window carries the evidence its injector saw (a host answering 503, a new
  Patroni leader, HAProxy marking a server DOWN, ...); a window without any fails. While a fault that every write
  goes through is down (`writes_down`: PgBouncer), no post begun and answered in it is acknowledged, chatterd
  refuses requests begun in it, and it acknowledges posts again after the heal.
- Back through the balancer: after each heal, requests through HAProxy are answered by both chatterd hosts
  again (their X-Request-Id prefixes), and HAProxy's session counters for both servers rise.
- Convergence: after each heal, a read from each host holds every post acknowledged before the heal within
  CONVERGENCE_BOUND seconds.
- Subscribers (mandatory): subscriber_checks.py holds each one's events, from the empty store on, to the final
  store (every stored chatt exactly once, in the change log's order) and requires resumes across the faults.
"""

from __future__ import annotations

import bisect
import hashlib
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from subscriber_checks import StoredChatt, check_subscribers

CONVERGENCE_BOUND = 30.0
SERVING_GAP = 5.0
APP_HOSTS = ("app1", "app2")
SHOWN = 5  # problems of one kind spelled out before "... and N more"

CHECKS = [
    "traffic: acknowledged posts and successful reads from app1 and app2 overall, in the baseline and after each "
    f"heal; no gap over {SERVING_GAP:.0f} s in either from a must-serve fault's cut until it settled",
    "storage: acknowledged posts stored exactly once, on the primary and the standby; 4xx never stored; "
    "nothing stored that was never posted",
    "membership: every read holds every post acknowledged before it began (any host, through HAProxy or direct)",
    "order: every read is the final feed restricted to its rows (same order, nothing unstored); each reader's "
    "reads only grow",
    "faults: each fault recorded evidence that it took effect; while PgBouncer was down, no post begun and answered "
    "then was acknowledged, chatterd refused requests begun then, and acknowledged posts again after it",
    "balancer: after each heal, responses through HAProxy from both app1 and app2 (X-Request-Id prefixes) and "
    "HAProxy's session counters rising for both",
    f"convergence: after each heal, a read from each host with every post acknowledged before it within "
    f"{CONVERGENCE_BOUND:.0f} s",
    "subscribers (mandatory, from the empty store on): the live feed answered 200 at load start; each subscriber "
    "had every stored chatt (acknowledged or not) exactly once and nothing else, no reset, positions T.K.S strictly "
    "increasing by (tick, seq) across its reconnections, one token per tick, each where the store's change log "
    "has its chatt; each resumed with Last-Event-ID during a fault, and one on the other chatterd process",
]


def chain(messages, digest: bytes = b"") -> str:
    """load.chain: the hash chain over `messages`."""
    for message in messages:
        digest = hashlib.sha256(digest + message.encode() + b"\n").digest()
    return digest.hex()


def split_message(message: str) -> tuple[str, int] | None:
    """`run-poster-seq` as (`run-poster`, seq); None for anything else."""
    stem, _, seq = message.rpartition("-")
    return (stem, int(seq)) if stem and seq.isdigit() else None


class Read:
    """A successful feed read as load.py recorded it (its length, hash chain and rows per poster), against the
    final order."""

    def __init__(self, record: dict, order: list[str], chains: list[str], position: dict[str, int]):
        self.record = record
        self.host, self.t0, self.t1 = record["host"], record["t0"], record["t1"]
        self.who = record.get("who", self.host)
        self.n = record["n"]
        self.have = {stem: (entry[0], set(entry[1])) for stem, entry in record.get("have", {}).items()}
        self.other = set(record.get("other", []))
        self.prefix = self.n <= len(order) and chains[self.n] == record["chain"]
        self.problem = None
        self.lacking = 0  # rows of the final feed before its newest row that it lacks (posts in flight)
        self._members: list[str] | None = None
        if self.prefix:
            return
        members = self.members()
        if len(members) != self.n:
            self.problem = f"it has {self.n} rows but {len(members)} distinct chatts"
        elif unknown := sorted(m for m in members if m not in position):
            self.problem = f"it shows {len(unknown)} chatts that are not stored, e.g. {unknown[:3]}"
        elif chain(sorted(members, key=position.__getitem__)) != record["chain"]:
            self.problem = "its rows are not in the final feed's order"
        else:
            self.lacking = max(position[m] for m in members) + 1 - len(members) if members else 0

    def members(self) -> list[str]:
        if self._members is None:
            self._members = [f"{stem}-{seq}" for stem, (top, missing) in self.have.items()
                             for seq in range(top + 1) if seq not in missing] + sorted(self.other)
        return self._members

    def has(self, message: str, position: dict[str, int]) -> bool:
        if self.prefix:
            return position.get(message, len(position)) < self.n
        parts = split_message(message)
        if parts is None:
            return message in self.other
        entry = self.have.get(parts[0])
        return entry is not None and parts[1] <= entry[0] and parts[1] not in entry[1]

    def holds(self, earlier: "Read", position: dict[str, int]) -> bool:
        """Whether this read has every chatt `earlier` had."""
        if self.prefix and earlier.prefix:
            return self.n >= earlier.n
        return all(self.has(m, position) for m in earlier.members())


@dataclass
class Window:
    """One fault: when it began (the cut) and ended (the heal), when the next one may begin, what showed it
    took effect, and HAProxy's new sessions per chatterd server from the heal until it settled (None when its
    stats socket did not answer)."""
    name: str
    cut: float
    heal: float
    settled: float
    evidence: list[str] = field(default_factory=list)
    lb_sessions: dict[str, int] | None = None
    must_serve: bool = False
    affected: str | None = None  # a host whose failed direct reads during the cut show the fault took effect
    writes_down: bool = False  # every post goes through what is down from the cut to the heal


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
    after_heal: dict[str, int] = field(default_factory=dict)  # 200s through HAProxy from each host after the heal
    evidence: list[str] = field(default_factory=list)
    lb_sessions: dict[str, int] | None = None
    read_gap: float | None = None


@dataclass
class Verdict:
    faults: list[FaultFigures]
    acknowledged: int = 0
    stored: int = 0
    reads: int = 0
    reads_through_lb: int = 0
    membership_checked: int = 0
    reads_lacking_in_flight: int = 0
    most_lacking: int = 0
    subscribers: list[str] = field(default_factory=list)
    other_process: list[str] = field(default_factory=list)  # the subscribers' resumes on the other process
    problems: list[str] = field(default_factory=list)


def prefix_chains(order: list[str]) -> list[str]:
    """chains[k] is chain(order[:k]), for every k."""
    chains, digest = [b"".hex()], b""
    for message in order:
        digest = hashlib.sha256(digest + message.encode() + b"\n").digest()
        chains.append(digest.hex())
    return chains


def longest_gap(times: list[float], start: float, end: float) -> float:
    """The longest time within [start, end] between successive `times` (and the ends)."""
    marks = [start] + sorted(t for t in times if start <= t <= end) + [end]
    return max(b - a for a, b in zip(marks, marks[1:]))


def report_some(problems: list[str], found: list[str]) -> None:
    problems.extend(found[:SHOWN])
    if len(found) > SHOWN:
        problems.append(f"... and {len(found) - SHOWN} more like it")


def check(records: list[dict], windows: list[Window], chatts: list[StoredChatt], standby: Counter,
          strict_feeds: bool = True) -> Verdict:
    """The history (`records`, outcomes.jsonl) against the faults and the final store: the primary's chatts in
    feed order, and the standby's messages."""
    order = [chatt.msg for chatt in chatts]
    posts = [r for r in records if r["op"] == "post"]
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
    reads = [r for r in records if r["op"] == "read"]
    good = [Read(r, order, chains, position) for r in sorted(reads, key=lambda r: r["t0"]) if r["status"] == 200]
    direct = [read for read in good if read.host in APP_HOSTS]
    verdict.reads = len(good)
    verdict.reads_through_lb = sum(1 for read in good if read.host == "lb")
    verdict.reads_lacking_in_flight = sum(1 for read in good if read.lacking)
    verdict.most_lacking = max((read.lacking for read in good), default=0)

    # Traffic, overall.
    if not acknowledged:
        problems.append("no post was acknowledged in the whole run")
    for host in APP_HOSTS:
        if not any(read.host == host for read in direct):
            problems.append(f"no read from {host} succeeded in the whole run")

    # Order, and each reader's reads only growing.
    found, previous = [], {}
    for read in good:
        if read.problem:
            found.append(f"{read.host} ({read.who}): a read of {read.n} chatts at {read.t0:.1f}: {read.problem}")
            continue
        before = previous.get(read.who)
        if before and not read.holds(before, position):
            found.append(f"{read.host} ({read.who}): a read at {read.t0:.1f} lacks chatts its reader's previous "
                         f"read (at {before.t0:.1f}) had")
        previous[read.who] = read
    report_some(problems, found)

    if strict_feeds:
        verdict.membership_checked, found = check_membership(good, posts, position)
        report_some(problems, found)

    # Which host answered, by the prefix of the X-Request-Id it makes.
    servers: dict[str, set[str]] = defaultdict(set)
    for read in reads:
        if read["host"] in APP_HOSTS and read.get("srv"):
            servers[read["srv"]].add(read["host"])
    for prefix, hosts in servers.items():
        if len(hosts) > 1:
            problems.append(f"the request id prefix {prefix} came from {sorted(hosts)}")
    server_of = {prefix: next(iter(hosts)) for prefix, hosts in servers.items()}
    through_lb = [r for r in posts + reads if r["status"] == 200 and r.get("srv")
                  and (r["op"] == "post" or r["host"] == "lb")]

    phases = [("the baseline", min((r["t0"] for r in posts + reads), default=0.0), windows[0].cut if windows else
               max((r["t1"] for r in posts + reads), default=0.0))]
    phases += [(f"{w.name} after its heal", w.heal, w.settled) for w in windows]
    for name, start, end in phases:
        if not any(p["status"] == 200 and start <= p["t0"] and p["t1"] <= end for p in posts):
            problems.append(f"{name}: no post was acknowledged ({start:.1f}-{end:.1f})")
        for host in APP_HOSTS:
            if not any(read.host == host and start <= read.t0 and read.t1 <= end for read in direct):
                problems.append(f"{name}: no read from {host} succeeded ({start:.1f}-{end:.1f})")

    for window in windows:
        figures = FaultFigures(window.name, evidence=list(window.evidence), lb_sessions=window.lb_sessions)
        inside = [p for p in posts if window.cut <= p["t0"] <= window.settled]
        figures.acknowledged = sum(1 for p in inside if p["status"] == 200)
        figures.indeterminate = sum(1 for p in inside if not isinstance(p["status"], int) or p["status"] >= 500)
        figures.lost = sum(1 for p in inside if p["status"] == 200 and stored[p["msg"]] == 0)
        figures.duplicated = sum(1 for p in inside if stored[p["msg"]] > 1)
        answered = [p["t1"] for p in posts if p["status"] == 200]
        figures.unavailable = longest_gap(answered, window.cut, window.settled)
        figures.slowest_refusal = max((p["t1"] - p["t0"] for p in inside if p["status"] != 200), default=0.0)
        figures.converged = converged_after(window, posts, direct, position)
        if figures.converged is None or figures.converged > CONVERGENCE_BOUND:
            problems.append(f"{window.name}: the hosts did not converge within {CONVERGENCE_BOUND:.0f} s of the heal")
        if window.affected:
            during = [r for r in reads if r["host"] == window.affected and window.cut <= r["t0"] <= window.heal]
            if failed := Counter(str(r["status"]) for r in during if r["status"] != 200):
                statuses = ", ".join(f"{k}: {v}" for k, v in failed.items())
                figures.evidence.append(f"{window.affected} failed {sum(failed.values())} of {len(during)} direct "
                                        f"reads begun during the cut ({statuses})")
        if window.writes_down:
            check_writes_down(window, posts, reads, figures.evidence, problems)
        if not figures.evidence:
            problems.append(f"{window.name}: nothing showed that the fault took effect")
        figures.after_heal = dict(Counter(server_of.get(r["srv"], "unknown") for r in through_lb
                                          if window.heal <= r["t0"] and r["t1"] <= window.settled))
        for host in APP_HOSTS:
            if not figures.after_heal.get(host):
                problems.append(f"{window.name}: after the heal no request through HAProxy was answered by {host}")
            if window.lb_sessions is not None and window.lb_sessions.get(host, 0) <= 0:
                problems.append(f"{window.name}: after the heal HAProxy's session counter for {host} did not rise")
        if window.must_serve:  # from the cut until it settled: a heal can disturb the cluster too
            if figures.unavailable > SERVING_GAP:
                problems.append(f"{window.name}: no post was acknowledged for {figures.unavailable:.1f} s "
                                f"(at most {SERVING_GAP:.0f} s)")
            figures.read_gap = 0.0
            for host in APP_HOSTS:
                gap = longest_gap([read.t1 for read in direct if read.host == host], window.cut, window.settled)
                figures.read_gap = max(figures.read_gap, gap)
                if gap > SERVING_GAP:
                    problems.append(f"{window.name}: no read from {host} succeeded for {gap:.1f} s "
                                    f"(at most {SERVING_GAP:.0f} s)")
        verdict.faults.append(figures)

    live = check_subscribers(records, windows, chatts)
    verdict.subscribers = live.summaries
    verdict.other_process = [f"{r.subscriber} at {r.t:.1f} from {server_of.get(r.before, r.before)} to "
                             f"{server_of.get(r.after, r.after)}" + (f" (during {r.fault})" if r.fault else "")
                             for r in live.other_process]
    for found in live.found:
        report_some(problems, found)
    return verdict


def check_membership(reads: list[Read], posts: list[dict], position: dict[str, int]) -> tuple[int, list[str]]:
    """Every read holds every post answered 200 before the read began; returns how many reads were held to it
    and what it found."""
    acked = sorted((p for p in posts if p["status"] == 200), key=lambda p: p["t1"])
    ends = [p["t1"] for p in acked]
    highest, top = [], -1  # highest[k]: the latest final position among acked[:k + 1] that is stored
    for p in acked:
        top = max(top, position.get(p["msg"], -1))
        highest.append(top)
    found, checked = [], 0
    for read in reads:
        if read.problem:
            continue
        k = bisect.bisect_left(ends, read.t0)
        checked += 1
        if k == 0 or (read.prefix and highest[k - 1] < read.n):
            continue  # a prefix of the final feed as long as the latest of them (lost ones are failed above)
        missing = [p for p in acked[:k] if not read.has(p["msg"], position)]
        if missing:
            worst = max(read.t0 - p["t1"] for p in missing)
            found.append(f"{read.host} ({read.who}): a read at {read.t0:.1f} lacks {len(missing)} posts acknowledged "
                         f"before it began (up to {worst:.1f} s before), e.g. {[p['msg'] for p in missing[:3]]}")
    return checked, found


def converged_after(window: Window, posts: list[dict], reads: list[Read], position: dict[str, int]) -> float | None:
    """Seconds from the heal until a read from every host has each post acknowledged before the heal (reads
    only grow, so every later one has them too); None when some host never got there before the window settled."""
    before = [p["msg"] for p in posts if p["status"] == 200 and p["t1"] <= window.heal and p["msg"] in position]
    latest = window.heal
    for host in APP_HOSTS:
        first = next((read for read in reads if read.host == host and window.heal <= read.t0 <= window.settled
                      and not read.problem and all(read.has(m, position) for m in before)), None)
        if first is None:
            return None
        latest = max(latest, first.t1)
    return latest - window.heal


def check_writes_down(window: Window, posts: list[dict], reads: list[dict], evidence: list[str],
                      problems: list[str]) -> None:
    """What is down between the cut and the heal carries every write (and, with --strict-feeds, every read's tick):
    no post begun and answered then was acknowledged, chatterd refused requests begun then, and it acknowledged a
    post begun after the heal. Requests in flight at the heal may end either way."""
    during = [p for p in posts if window.cut <= p["t0"] and p["t1"] <= window.heal]
    if acknowledged := [p["msg"] for p in during if p["status"] == 200]:
        problems.append(f"{window.name}: {len(acknowledged)} posts begun and answered while it was down were "
                        f"acknowledged, e.g. {acknowledged[:3]}")
    refused = Counter(r["op"] for r in posts + reads
                      if window.cut <= r["t0"] <= window.heal and r["status"] != 200 and r.get("srv"))
    if not refused:
        problems.append(f"{window.name}: chatterd refused no request begun while it was down")
    again = min((p["t1"] for p in posts if p["status"] == 200 and p["t0"] >= window.heal), default=None)
    if refused and not acknowledged and again is not None:
        evidence.append(f"chatterd refused {refused['post']} posts and {refused['read']} reads begun while it was "
                        f"down, and acknowledged none of the {len(during)} posts begun and answered then; the first "
                        f"post begun after the heal was acknowledged {again - window.heal:.1f} s after it")
