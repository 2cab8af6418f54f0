"""The checker's rules for the live feed's subscribers (subscribers.py): the only check of exactly-once across real
faults, so they are mandatory. Each subscriber starts from the Feed-Position of the empty feed it read before any
post, so what it received is held to the final store itself:

- start: the live feed answered 200 at load start, and each subscriber read an empty feed and its position;
- exactly once: the chatts it received, less those it received `event: delete` for, are exactly the surviving
  stored ones (acknowledged or not); each surviving chatt came once, with its stored message, and was never
  deleted; each removed chatt (in chatts_removals) had its `event: delete` exactly once, and its chatt either once
  before it or never (one posted and removed while the subscriber was away, or before its process read the log,
  is gone from the store: the delete comes alone); no delete for a chatt chatts_removals does not hold; no
  `event: reset` (the load edits no chatt, and a removal must never cause one);
- order: its positions (`T.K.S`), chatts' and removals' alike, strictly increase by (tick, seq) from its start
  position (`T.K`, all of tick T) across its reconnections; one tick number has one token, in every subscriber's
  events and in the store; each surviving chatt's event and each removal's is at the position the store's change
  log gives it; a removed chatt's own event is at its sequence number, and where every other subscriber had it;
- resumes: each subscriber resumed with Last-Event-ID, a position it had received (a chatt's or a removal's), during a
  fault (from its cut
  until it settled), and at least one resumed on the other chatterd process than the one it was on before
  (X-Request-Id prefixes). A run without faults cannot show that, and fails.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

POSITION = re.compile(r"(\d{1,18})\.([0-9a-f]{1,16})(?:\.(\d{1,18}))?")
WHOLE_TICK = float("inf")


@dataclass(frozen=True)
class StoredChatt:
    """A chatt of the final store, in feed order: its id, message and sequence number, and the tick of the change log
    that holds it (None when the store has no such tick)."""
    id: str
    msg: str
    seq: int
    tick: int | None = None
    token: str | None = None


@dataclass(frozen=True)
class StoredRemoval:
    """A removal of the final store (chatts_removals): the removed chatt's id, the removal's own sequence number and
    the tick of the change log that holds it (its `event: delete`'s position), the removed chatt's sequence number,
    how many surviving chatts stood before it in feed order, who removed it and why, and its message (from the run's
    removal attempts; None when none asked for that id)."""
    id: str
    seq: int
    chatt_seq: int
    after: int
    tick: int | None = None
    token: str | None = None
    removed_by: str = ""
    reason: str | None = None
    msg: str | None = None


@dataclass(frozen=True)
class Position:
    tick: int
    token: int
    seq: float  # WHOLE_TICK for `T.K`

    @property
    def key(self) -> tuple[int, float]:
        return self.tick, self.seq


def parse_position(text) -> Position | None:
    """`T.K` or `T.K.S` (decimal tick, lower-case hex token, decimal seq); None for anything else."""
    found = POSITION.fullmatch(text) if isinstance(text, str) else None
    if found is None:
        return None
    tick, token, seq = found.groups()
    return Position(int(tick), int(token, 16), WHOLE_TICK if seq is None else int(seq))


@dataclass
class Resume:
    subscriber: str
    t: float
    fault: str | None  # the fault whose window it fell in
    before: str | None  # the chatterd process it was on before, and the one that took it
    after: str | None

    @property
    def moved(self) -> bool:
        """Whether it resumed on another chatterd process than the one it was on."""
        return bool(self.before and self.after and self.before != self.after)


@dataclass
class LiveFeedVerdict:
    summaries: list[str] = field(default_factory=list)
    found: list[list[str]] = field(default_factory=list)  # problems, grouped so that each group can be cut short
    other_process: list[Resume] = field(default_factory=list)


def check_subscribers(records: list[dict], windows: list, stored: list[StoredChatt],
                      removals: list[StoredRemoval] = ()) -> LiveFeedVerdict:
    """The subscribers' records against the final store (its surviving chatts in feed order, and its removals) and
    the fault windows (checker.Window: its name, cut and settling are what count here)."""
    verdict = LiveFeedVerdict()
    streams = next((r for r in records if r["op"] == "streams"), None)
    if streams is None or streams["status"] != 200:
        answer = "nothing recorded" if streams is None else f"{streams['status']} after {streams['waited']:.0f} s"
        verdict.found.append([f"subscribers: the live feed never answered 200 at load start ({answer}), so no "
                              "subscriber ran: they are the only check of exactly-once across faults"])
        return verdict
    if not streams["subscribers"]:
        verdict.found.append(["subscribers: the live feed answered 200, but no subscriber was started"])
    if not windows:
        verdict.found.append(["subscribers: no fault was injected, so no subscriber could resume across one "
                              "(a run with --faults \"\" cannot pass)"])
    tokens = {c.tick: int(c.token, 16) for c in list(stored) + list(removals) if c.tick is not None}
    placed: dict[str, tuple[str, str]] = {}  # a removed chatt's own event: (its id, the first subscriber that had it)
    for name in streams["subscribers"]:
        summary, found, resumes = follow(name, [r for r in records if r.get("sub") == name], windows, stored,
                                         removals, tokens, placed)
        verdict.summaries.append(summary)
        verdict.found.append(found)
        verdict.other_process += [resume for resume in resumes if resume.moved]
    if streams["subscribers"] and not verdict.other_process:
        verdict.found.append(["subscribers: none resumed on the other chatterd process than the one it was on"])
    return verdict


def follow(name: str, records: list[dict], windows: list, stored: list[StoredChatt], removals: list[StoredRemoval],
           tokens: dict[int, int], placed: dict[str, tuple[str, str]]) -> tuple[str, list[str], list[Resume]]:
    """One subscriber's summary, problems and resumes. `tokens` (tick -> token) and `placed` (a removed chatt's id
    -> the position of its own event and the subscriber that had it first) are shared by every subscriber."""
    start = next((r for r in records if r["op"] == "sub" and r["what"] == "start"), None)
    position = parse_position(start and start.get("position"))
    if start is None or start["status"] != 200 or position is None or position.seq != WHOLE_TICK:
        shown = "nothing" if start is None else f"{start['status']}, Feed-Position {start.get('position')!r}"
        return f"{name}: never started", [f"subscriber {name}: no starting position (the feed answered {shown})"], []
    found = []
    if start.get("rows") != 0:
        found.append(f"subscriber {name}: the feed it started from was not empty ({start.get('rows')} rows): its "
                     "events cannot be held to the whole store")
    events = [r for r in records if r["op"] == "event"]
    found += check_positions(name, position, events, stored, removals, tokens, placed)
    found += check_exactly_once(name, events, stored, removals)
    resumes = resumed(name, records, windows)
    if not any(r.fault for r in resumes):
        found.append(f"subscriber {name}: never resumed with Last-Event-ID during a fault")
    outcomes = Counter(r["what"] for r in records if r["op"] == "sub")
    vias = ", ".join(sorted({r["via"] for r in records if r["op"] == "sub" and r["what"] == "connected"}))
    kinds = Counter(e["event"] for e in events)
    posted = {e.get("chatt") for e in events if e["event"] == "message"}
    alone = sum(1 for e in events if e["event"] == "delete" and e.get("chatt") not in posted)
    summary = (f"{name}: {len(events)} events ({kinds['message']} chatts, {kinds['delete']} removals, {alone} of them "
               f"without their chatt), {outcomes['connected']} connections ({vias}; {outcomes['rotated']} "
               f"left on purpose, {outcomes['dropped']} dropped, {outcomes['refused']} refused), {len(resumes)} "
               f"resumes with Last-Event-ID ({sum(1 for r in resumes if r.fault)} during a fault, "
               f"{sum(1 for r in resumes if r.moved)} on the other process)")
    return summary, found, resumes


def check_positions(name: str, start: Position, events: list[dict], stored: list[StoredChatt],
                    removals: list[StoredRemoval], tokens: dict[int, int],
                    placed: dict[str, tuple[str, str]]) -> list[str]:
    """(tick, seq) strictly increasing from `start`, across chatts and removals; one token per tick; each surviving
    chatt's event and each removal's where the store logs it; a removed chatt's own event at its sequence number,
    and where the other subscribers had it (`placed`)."""
    logged = {c.id: c for c in stored}
    gone = {r.id: r for r in removals}
    found, last, last_text = [], start, f"its start {start.tick}.{start.token:x}"
    if (known := tokens.setdefault(start.tick, start.token)) != start.token:
        found.append(f"subscriber {name}: its start names tick {start.tick} with token {start.token:x}, "
                     f"elsewhere {known:x}")
    for event in events:
        if event["event"] == "reset":
            found.append(f"subscriber {name}: `event: reset` at {event['t']:.1f} (the load edits no chatt, and a "
                         "removal must never cause one)")
            continue
        position = parse_position(event["id"])
        if position is None or position.seq == WHOLE_TICK:
            found.append(f"subscriber {name}: an event's id {event['id']!r} is not T.K.S")
            continue
        if position.key <= last.key:
            found.append(f"subscriber {name}: position {event['id']} at {event['t']:.1f} does not follow {last_text}")
        known = tokens.setdefault(position.tick, position.token)
        if known != position.token:
            found.append(f"subscriber {name}: position {event['id']} names tick {position.tick} with token "
                         f"{position.token:x}, elsewhere {known:x}")
        chatt = event.get("chatt")
        if event["event"] == "delete":
            removal = gone.get(chatt)
            if removal and removal.tick is not None and position.key != (removal.tick, removal.seq):
                found.append(f"subscriber {name}: the removal of {removal.msg or chatt} came at {event['id']}, the "
                             f"store logs it at {removal.tick}.{removal.token}.{removal.seq}")
        elif (stored_chatt := logged.get(chatt)) is not None:
            if stored_chatt.tick is not None and position.key != (stored_chatt.tick, stored_chatt.seq):
                found.append(f"subscriber {name}: {stored_chatt.msg} came at {event['id']}, the store logs it at "
                             f"{stored_chatt.tick}.{stored_chatt.token}.{stored_chatt.seq}")
        elif (removal := gone.get(chatt)) is not None:
            if position.seq != removal.chatt_seq:
                found.append(f"subscriber {name}: {removal.msg or chatt} (removed since) came at {event['id']}, but "
                             f"its sequence number was {removal.chatt_seq}")
            first, by = placed.setdefault(chatt, (event["id"], name))
            if first != event["id"]:
                found.append(f"subscriber {name}: {removal.msg or chatt} (removed since) came at {event['id']}, "
                             f"{by} had it at {first}")
        last, last_text = position, event["id"]
    return found


def check_exactly_once(name: str, events: list[dict], stored: list[StoredChatt],
                       removals: list[StoredRemoval]) -> list[str]:
    """What it holds at the end (its chatts less those it had deletes for) is exactly the surviving store; each
    surviving chatt came once with its stored message; each removal's delete came once, after its chatt or alone;
    no delete for a chatt that was not removed."""
    messages = {c.id: c.msg for c in stored}
    gone = {r.id: r for r in removals}
    shown = {**{r.id: r.msg or r.id for r in removals}, **messages}
    chatts = [e for e in events if e["event"] == "message"]
    deletes = [e for e in events if e["event"] == "delete"]
    seen = Counter(e.get("chatt") for e in chatts)
    deleted = Counter(e.get("chatt") for e in deletes)
    found = []
    held = set(seen) - set(deleted)
    if held != set(messages):
        extra, lacking = held - set(messages), set(messages) - held
        found.append(f"subscriber {name}: its chatts less its removals are not the surviving store: {len(extra)} "
                     f"more (e.g. {sorted(shown.get(c, str(c)) for c in extra)[:3]}), {len(lacking)} fewer (e.g. "
                     f"{sorted(shown[c] for c in lacking)[:3]})")
    if twice := sorted(shown.get(c, str(c)) for c, n in seen.items() if n > 1):
        found.append(f"subscriber {name}: {len(twice)} chatts came more than once, e.g. {twice[:3]}")
    if unstored := sorted(str(e.get("msg") or e.get("data")) for e in chatts
                          if e.get("chatt") not in messages and e.get("chatt") not in gone):
        found.append(f"subscriber {name}: events for {len(unstored)} chatts that are not stored (nor removed), e.g. "
                     f"{unstored[:3]}")
    expected = {**{r.id: r.msg for r in removals if r.msg is not None}, **messages}
    if altered := sorted(e["msg"] for e in chatts if e.get("chatt") in expected and e["msg"] != expected[e["chatt"]]):
        found.append(f"subscriber {name}: {len(altered)} events whose message is not the stored one, e.g. "
                     f"{altered[:3]}")
    if missing := [c.msg for c in stored if not seen[c.id]]:
        found.append(f"subscriber {name}: {len(missing)} stored chatts never came, e.g. {missing[:3]}")
    if deleted_twice := sorted(shown.get(c, str(c)) for c, n in deleted.items() if n > 1):
        found.append(f"subscriber {name}: {len(deleted_twice)} removals came more than once, e.g. {deleted_twice[:3]}")
    if unknown := sorted(shown.get(c, str(c)) for c in deleted if c not in gone):
        found.append(f"subscriber {name}: deletes of {len(unknown)} chatts that chatts_removals does not hold, e.g. "
                     f"{unknown[:3]}")
    if kept := sorted(r.msg or r.id for r in removals if seen[r.id] and not deleted[r.id]):
        found.append(f"subscriber {name}: kept {len(kept)} removed chatts (their chatt came, their delete never did), "
                     f"e.g. {kept[:3]}")
    if never := sorted(r.msg or r.id for r in removals if not seen[r.id] and not deleted[r.id]):
        found.append(f"subscriber {name}: the deletes of {len(never)} removed chatts never came, e.g. {never[:3]}")
    order = {(e["event"], e.get("chatt")): i for i, e in reversed(list(enumerate(events)))}
    if early := sorted(shown.get(c, str(c)) for c in deleted
                       if seen[c] and order[("message", c)] > order[("delete", c)]):
        found.append(f"subscriber {name}: {len(early)} removals came before their chatt, e.g. {early[:3]}")
    return found


def resumed(name: str, records: list[dict], windows: list) -> list[Resume]:
    """Its connections that resumed with Last-Event-ID from an event it had received."""
    received: set[str] = set()
    previous, resumes = None, []
    for record in records:
        if record["op"] == "event" and record["event"] in ("message", "delete"):
            received.add(record["id"])
        elif record["op"] == "sub" and record["what"] == "connected":
            if previous is not None and record["last_event_id"] in received:
                fault = next((w.name for w in windows if w.cut <= record["t"] <= w.settled), None)
                resumes.append(Resume(name, record["t"], fault, previous.get("srv"), record.get("srv")))
            previous = record
    return resumes
