"""The checker, in the style of Jepsen's: every request's recorded outcome against what the database holds
at the end. What it holds the history to (the report lists the same):

- Traffic: the run, and each phase of it (the baseline before the first fault, and each fault's time from
  its heal until it settled), has acknowledged posts and successful reads from every chatterd host; a fault
  that must keep the cluster serving (etcd-member-cut) has no gap longer than SERVING_GAP without an
  acknowledged post, or without a successful read from each host, from its cut until it settled.
- Storage: a post answered 200 is stored exactly once (on the primary, and on the standby once it caught
  up), or was removed (in chatts_removals, on both, and no longer among the chatts); a post answered 4xx is never
  stored; 503s, timeouts and broken connections are indeterminate (stored at most once); nothing is stored that
  was never posted.
- Removals (load.py's remover; each attempt has a reason of its own, which chatts_removals keeps): a removal
  answered 200 (or a psql DELETE that deleted a row) is the one chatts_removals records for its chatt, which is no
  longer stored; one answered 404 (or DELETE 0) is explained by another attempt for that chatt, begun before the
  answer, that committed; every removal in chatts_removals was made by one of the run's attempts (by the remover's
  token, or `sql:` for psql), once per chatt; attempts answered otherwise (503s, timeouts, broken connections) are
  indeterminate; any other 4xx is a failure. The run removed chatts by HTTP and by SQL, during every fault.
- Membership (--strict-feeds): a read holds every post acknowledged before the read began, whichever host
  answers, unless a removal of it had begun before the read ended. A feed is in the order of each chatt's
  transaction start, so a read may lack rows of posts still in flight when it began, anywhere in it; those reads
  are counted, not failed. A read begun after a removal was acknowledged does not show the removed chatt (a read
  overlapping the removal may show it or not).
- Order: every read is the final feed, with the removed chatts in the places they had, restricted to its own rows
  (the same rows in the same order, and no row never stored); each reader's successive reads only grow, but for
  chatts whose removal had begun before the later read ended.
- Faults took effect: each fault window carries the evidence its injector saw (a host answering 503, a new
  Patroni leader, HAProxy marking a server DOWN, ...); a window without any fails. While a fault that every write
  goes through is down (`writes_down`: PgBouncer), no post begun and answered in it is acknowledged, chatterd
  refuses requests begun in it, and it acknowledges posts again after the heal.
- Back through the balancer: after each heal, requests through HAProxy are answered by both chatterd hosts
  again (their X-Request-Id prefixes), and HAProxy's session counters for both servers rise.
- Convergence: after each heal, a read from each host holds every post acknowledged before the heal (but those
  whose removal had begun before the read ended) within CONVERGENCE_BOUND seconds.
- Subscribers (mandatory): subscriber_checks.py holds each one's events, from the empty store on, to the final
  store (every surviving chatt exactly once, every removed one deleted once after its chatt or alone, in the
  change log's order) and requires resumes across the faults.
"""

from __future__ import annotations

import bisect
import hashlib
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace

from client import MODERATOR
from subscriber_checks import StoredChatt, StoredRemoval, check_subscribers

CONVERGENCE_BOUND = 30.0
SERVING_GAP = 5.0
APP_HOSTS = ("app1", "app2")
SHOWN = 5  # problems of one kind spelled out before "... and N more"

CHECKS = [
    "traffic: acknowledged posts and successful reads from app1 and app2 overall, in the baseline and after each "
    f"heal; no gap over {SERVING_GAP:.0f} s in either from a must-serve fault's cut until it settled",
    "storage: acknowledged posts stored exactly once, on the primary and the standby, or removed (in "
    "chatts_removals on both, not stored); 4xx never stored; nothing stored that was never posted",
    "removals: each answered 200 (or a psql DELETE of a row) is the removal chatts_removals records, its chatt no "
    "longer stored; each 404 (or DELETE 0) explained by another attempt, begun before it, that committed; every "
    "removal in the store made by an attempt of the run, once per chatt; no other 4xx; removals by HTTP and by SQL, "
    "during every fault",
    "membership: every read holds every post acknowledged before it began (any host, through HAProxy or direct) "
    "unless its removal began before the read ended; no read begun after a removal was acknowledged shows the chatt",
    "order: every read is the final feed (removed chatts in their places) restricted to its rows (same order, "
    "nothing never stored); each reader's reads only grow, but for chatts whose removal had begun",
    "faults: each fault recorded evidence that it took effect; while PgBouncer was down, no post begun and answered "
    "then was acknowledged, chatterd refused requests begun then, and acknowledged posts again after it",
    "balancer: after each heal, responses through HAProxy from both app1 and app2 (X-Request-Id prefixes) and "
    "HAProxy's session counters rising for both",
    f"convergence: after each heal, a read from each host with every post acknowledged before it within "
    f"{CONVERGENCE_BOUND:.0f} s",
    "subscribers (mandatory, from the empty store on): the live feed answered 200 at load start; each subscriber's "
    "chatts less its deletes are exactly the surviving store (acknowledged or not): every surviving chatt once and "
    "never deleted, every removed one deleted exactly once, after its chatt or alone, no delete of a chatt not "
    "removed, no reset; positions T.K.S of chatts and deletes strictly increasing by (tick, seq) across its "
    "reconnections, one token per tick, each where the store's change log has it; each resumed with Last-Event-ID "
    "during a fault, and one on the other chatterd process",
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

    def __init__(self, record: dict, order: list[str], chains: list[str], position: dict[str, int],
                 removed_before: list[int] | None = None, removed: frozenset[str] = frozenset()):
        self.record = record
        self.host, self.t0, self.t1 = record["host"], record["t0"], record["t1"]
        self.who = record.get("who", self.host)
        self.n = record["n"]
        self.have = {stem: (entry[0], set(entry[1])) for stem, entry in record.get("have", {}).items()}
        self.other = set(record.get("other", []))
        self.prefix = self.n <= len(order) and chains[self.n] == record["chain"]
        self.problem = None
        self.lacking = 0  # rows of the final feed before its newest that it lacks, but removed ones: posts in flight
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
        elif members:
            top = max(position[m] for m in members) + 1
            lacking_removed = (removed_before[top] if removed_before else 0) - sum(1 for m in members if m in removed)
            self.lacking = top - len(members) - lacking_removed

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

    def holds(self, earlier: "Read", position: dict[str, int], gone: "Removals") -> bool:
        """Whether this read has every chatt `earlier` had, but those whose removal began before it ended."""
        if self.prefix and earlier.prefix:
            return self.n >= earlier.n
        return all(self.has(m, position) or gone.began_before(m, self.t1) for m in earlier.members())


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
    removals: int = 0  # removal attempts begun from the cut until it settled
    removals_during: int = 0  # of those, begun before the heal
    removed: int = 0  # of those, acknowledged (200, or a psql DELETE of a row)
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
    removals: list[str] = field(default_factory=list)  # the removals' figures, for the report
    problems: list[str] = field(default_factory=list)


class Removals:
    """The run's removal attempts (outcomes `remove`) against the store's removals (chatts_removals): which attempt
    made each one, and so when the removal of each chatt began, and when it was acknowledged."""

    def __init__(self, attempts: list[dict], removals: list[StoredRemoval]):
        self.attempts = sorted(attempts, key=lambda a: a["t0"])
        self.removals = removals
        self.by_id = {r.id: r for r in removals}
        by_reason = {a["reason"]: a for a in self.attempts if a["via"] != "sql" and a.get("reason")}
        sql = defaultdict(list)
        for attempt in self.attempts:
            if attempt["via"] == "sql" and attempt["status"] != "DELETE 0":
                sql[attempt["chatt"]].append(attempt)
        self.made: dict[str, dict] = {}  # chatt id -> the attempt that made its removal
        self.unexplained: list[str] = []
        for removal in removals:
            shown = removal.msg or removal.id
            if removal.removed_by == MODERATOR:
                attempt = by_reason.get(removal.reason)
                if attempt is None or attempt["chatt"] != removal.id:
                    self.unexplained.append(f"{shown}: removed by {MODERATOR} for {removal.reason!r}, which no "
                                            "attempt for it asked")
                    continue
            elif removal.removed_by.startswith("sql:"):
                if not sql[removal.id]:
                    self.unexplained.append(f"{shown}: removed by {removal.removed_by}, but no psql DELETE of it "
                                            "could have done it")
                    continue
                attempt = next((a for a in sql[removal.id] if a["status"] == "DELETE 1"), sql[removal.id][0])
            else:
                self.unexplained.append(f"{shown}: removed by {removal.removed_by!r}, which the run never asked")
                continue
            self.made[removal.id] = attempt
        # When the removal of each chatt (by message) began, and when it was acknowledged, for the reads.
        self.began = {a["msg"]: a["t0"] for a in self.made.values()}
        self.acknowledged = sorted((a["t1"], a["msg"]) for a in self.made.values() if acknowledged_removal(a))

    def began_before(self, message: str, t: float) -> bool:
        """Whether the removal of `message` that committed began before `t` (a read ending at `t` may lack it)."""
        return self.began.get(message, float("inf")) < t


def acknowledged_removal(attempt: dict) -> bool:
    return attempt["status"] in (200, "DELETE 1")


def absent_removal(attempt: dict) -> bool:
    return attempt["status"] in (404, "DELETE 0")


def refused_removal(attempt: dict) -> bool:
    return isinstance(attempt["status"], int) and 400 <= attempt["status"] < 500 and attempt["status"] != 404


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
          strict_feeds: bool = True, removals: list[StoredRemoval] = (),
          standby_removals: list[str] | None = None) -> Verdict:
    """The history (`records`, outcomes.jsonl) against the faults and the final store: the primary's chatts in
    feed order and its removals (chatts_removals, in the feed order of the chatts they removed), and the standby's
    messages and removed ids (None: not recorded)."""
    attempts = [r for r in records if r["op"] == "remove"]
    message_of = {a["chatt"]: a["msg"] for a in attempts}
    removals = [replace(r, msg=message_of.get(r.id)) for r in removals]
    gone = Removals(attempts, removals)
    removed = frozenset(r.msg for r in removals if r.msg is not None)
    order = [chatt.msg for chatt in chatts]
    posts = [r for r in records if r["op"] == "post"]
    stored = Counter(order)
    acknowledged = {p["msg"] for p in posts if p["status"] == 200}
    refused = {p["msg"] for p in posts if isinstance(p["status"], int) and 400 <= p["status"] < 500}
    verdict = Verdict(faults=[], acknowledged=len(acknowledged), stored=len(order))
    problems = verdict.problems

    lost = sorted(m for m in acknowledged if stored[m] == 0 and m not in removed)
    twice = sorted(m for m, n in stored.items() if n > 1)
    not_on_standby = sorted(m for m in acknowledged if standby[m] == 0 and m not in removed)
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
    if on_standby := sorted(m for m in removed if standby[m]):
        problems.append(f"{len(on_standby)} removed chatts are still on the standby, e.g. {on_standby[:3]}")
    replayed = set(standby_removals or ())
    if standby_removals is not None and (
            unreplayed := sorted(r.msg or r.id for r in removals if r.id not in replayed)):
        problems.append(f"{len(unreplayed)} removals are not on the standby, e.g. {unreplayed[:3]}")
    verdict.removals = check_removals(gone, chatts, problems)

    # The final feed with every removed chatt where it stood (a read before its removal has it there).
    ever = with_removed(chatts, removals)
    chains = prefix_chains(ever)
    position = {message: index for index, message in enumerate(ever)}
    removed_before = [0]
    for message in ever:
        removed_before.append(removed_before[-1] + (message in removed))
    reads = [r for r in records if r["op"] == "read"]
    good = [Read(r, ever, chains, position, removed_before, removed)
            for r in sorted(reads, key=lambda r: r["t0"]) if r["status"] == 200]
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
        if before and not read.holds(before, position, gone):
            found.append(f"{read.host} ({read.who}): a read at {read.t0:.1f} lacks chatts its reader's previous "
                         f"read (at {before.t0:.1f}) had, and no removal of them had begun")
        previous[read.who] = read
    report_some(problems, found)

    if strict_feeds:
        verdict.membership_checked, found = check_membership(good, posts, position, gone)
        report_some(problems, found)
        report_some(problems, check_removed_absent(good, gone, position))

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
        figures.lost = sum(1 for p in inside
                           if p["status"] == 200 and stored[p["msg"]] == 0 and p["msg"] not in removed)
        figures.duplicated = sum(1 for p in inside if stored[p["msg"]] > 1)
        answered = [p["t1"] for p in posts if p["status"] == 200]
        figures.unavailable = longest_gap(answered, window.cut, window.settled)
        figures.slowest_refusal = max((p["t1"] - p["t0"] for p in inside if p["status"] != 200), default=0.0)
        figures.converged = converged_after(window, posts, direct, position, gone)
        tried = [a for a in attempts if window.cut <= a["t0"] <= window.settled]
        figures.removals, figures.removed = len(tried), sum(1 for a in tried if acknowledged_removal(a))
        figures.removals_during = sum(1 for a in tried if a["t0"] <= window.heal)
        if not tried:
            problems.append(f"{window.name}: no removal was attempted from its cut until it settled")
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

    live = check_subscribers(records, windows, chatts, removals)
    verdict.subscribers = live.summaries
    verdict.other_process = [f"{r.subscriber} at {r.t:.1f} from {server_of.get(r.before, r.before)} to "
                             f"{server_of.get(r.after, r.after)}" + (f" (during {r.fault})" if r.fault else "")
                             for r in live.other_process]
    for found in live.found:
        report_some(problems, found)
    return verdict


def with_removed(chatts: list[StoredChatt], removals: list[StoredRemoval]) -> list[str]:
    """The messages of the final feed with each removed chatt back where it stood (after `after` surviving chatts;
    removals come in the feed order of their chatts). A removed chatt no attempt named has no message known: it
    stands as a placeholder no read can hold (and the removals' check fails it)."""
    ever, pending = [], sorted(removals, key=lambda r: r.after)
    k = 0
    for index, chatt in enumerate(chatts + [None]):
        while k < len(pending) and pending[k].after <= index:
            ever.append(pending[k].msg or f"(removed {pending[k].id})")
            k += 1
        if chatt is not None:
            ever.append(chatt.msg)
    return ever


def check_removals(gone: Removals, chatts: list[StoredChatt], problems: list[str]) -> list[str]:
    """Each removal attempt's answer against chatts_removals (see the module's docstring); returns the figures for
    the report."""
    surviving = {c.id for c in chatts}
    found = []
    for attempt in gone.attempts:
        made = gone.made.get(attempt["chatt"])
        what = (f"the removal of {attempt['msg']} ({attempt['why']}, via {attempt['via']}, at {attempt['t0']:.1f}) "
                f"answered {attempt['status']}")
        if acknowledged_removal(attempt):
            if made is not attempt:
                found.append(f"{what}, but chatts_removals " + (
                    "has no removal of it" if made is None else f"records the one begun at {made['t0']:.1f}"))
            if attempt["chatt"] in surviving:
                found.append(f"{what}, but its chatt is still stored")
        elif absent_removal(attempt):
            if made is None:
                found.append(f"{what}, but chatts_removals has no removal of it" + (
                    " (it is still stored)" if attempt["chatt"] in surviving else ""))
            elif made is attempt:
                found.append(f"{what}, but chatts_removals records its removal by it")
            elif made["t0"] >= attempt["t1"]:
                found.append(f"{what}, but the removal that committed began later ({made['t0']:.1f})")
        elif refused_removal(attempt):
            found.append(f"{what}: the remover's requests are well formed and carry a listed token")
    report_some(problems, found)
    report_some(problems, [f"a removal in chatts_removals the run did not make: {text}" for text in gone.unexplained])
    ids = Counter(r.id for r in gone.removals)
    if twice := sorted(r.msg or r.id for r in gone.removals if ids[r.id] > 1):
        problems.append(f"{len(set(twice))} chatts were removed more than once, e.g. {sorted(set(twice))[:3]}")
    if still := sorted(r.msg or r.id for r in gone.removals if r.id in surviving):
        problems.append(f"{len(still)} removed chatts are still stored, e.g. {still[:3]}")
    by_http = [a for a in gone.attempts if a["via"] != "sql"]
    by_sql = [a for a in gone.attempts if a["via"] == "sql"]
    if not any(acknowledged_removal(a) for a in by_http):
        problems.append("no removal by DELETE /chatts/<id> was answered 200 in the whole run")
    if not any(acknowledged_removal(a) for a in by_sql):
        problems.append("no removal by DELETE in psql deleted a row in the whole run")

    def tally(attempts: list[dict]) -> str:
        counts = Counter(str(a["status"]) for a in attempts)
        return ", ".join(f"{status}: {n}" for status, n in sorted(counts.items())) or "none"

    made = set(id(a) for a in gone.made.values())
    unanswered = [a for a in gone.attempts if not acknowledged_removal(a) and not absent_removal(a)
                  and not refused_removal(a)]
    absent = [a for a in gone.attempts if absent_removal(a)]
    routes = Counter(a["via"] for a in by_http)
    why = Counter(a["why"] for a in absent)
    by = Counter(r.removed_by for r in gone.removals)
    return [
        f"{len(gone.attempts)} removal attempts: {len(by_http)} by DELETE /chatts/<id> ("
        + ", ".join(f"{n} via {via}" for via, n in sorted(routes.items())) + f"; {tally(by_http)}), "
        f"{len(by_sql)} by DELETE in psql ({tally(by_sql)})",
        f"chatts_removals holds {len(gone.removals)} removals (" + ", ".join(f"{n} by {who}" for who, n in
                                                                                 sorted(by.items())) + "); "
        f"{sum(1 for a in unanswered if id(a) in made)} of the {len(unanswered)} attempts without an answer "
        f"committed; {len(absent)} answered 404 or DELETE 0" + (
            ", each after another attempt that committed (" + ", ".join(
                f"{n} {WHY.get(kind, kind)}" for kind, n in sorted(why.items())) + ")" if absent else ""),
    ]


WHY = {"again": "asked again on purpose after a 200", "retry": "retried after no answer",
       "first": "asked once"}


def check_removed_absent(reads: list[Read], gone: Removals, position: dict[str, int]) -> list[str]:
    """No read begun after a removal was acknowledged shows the removed chatt (--strict-feeds: every read has the
    change log ticked first)."""
    ends = [t for t, _ in gone.acknowledged]
    found = []
    for read in reads:
        if read.problem:
            continue
        k = bisect.bisect_left(ends, read.t0)
        if shown := [(t, m) for t, m in gone.acknowledged[:k] if read.has(m, position)]:
            found.append(f"{read.host} ({read.who}): a read at {read.t0:.1f} shows {len(shown)} chatts whose removal "
                         f"was acknowledged before it began (up to {max(read.t0 - t for t, _ in shown):.1f} s before), "
                         f"e.g. {[m for _, m in shown[:3]]}")
    return found


def check_membership(reads: list[Read], posts: list[dict], position: dict[str, int],
                     gone: Removals) -> tuple[int, list[str]]:
    """Every read holds every post answered 200 before the read began, unless its removal began before the read
    ended; returns how many reads were held to it and what it found."""
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
        missing = [p for p in acked[:k] if not read.has(p["msg"], position)
                   and not gone.began_before(p["msg"], read.t1)]
        if missing:
            worst = max(read.t0 - p["t1"] for p in missing)
            found.append(f"{read.host} ({read.who}): a read at {read.t0:.1f} lacks {len(missing)} posts acknowledged "
                         f"before it began (up to {worst:.1f} s before), e.g. {[p['msg'] for p in missing[:3]]}")
    return checked, found


def converged_after(window: Window, posts: list[dict], reads: list[Read], position: dict[str, int],
                    gone: Removals) -> float | None:
    """Seconds from the heal until a read from every host has each post acknowledged before the heal, but those
    whose removal had begun before it ended (reads only grow, so every later one has them too); None when some host
    never got there before the window settled."""
    before = [p["msg"] for p in posts if p["status"] == 200 and p["t1"] <= window.heal and p["msg"] in position]
    latest = window.heal
    for host in APP_HOSTS:
        first = next((read for read in reads if read.host == host and window.heal <= read.t0 <= window.settled
                      and not read.problem
                      and all(read.has(m, position) or gone.began_before(m, read.t1) for m in before)), None)
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
