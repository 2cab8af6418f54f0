"""The checker's rules for the live feed's subscribers (subscribers.py): the only check of exactly-once across real
faults, so they are mandatory. Each subscriber starts from the Feed-Position of the empty feed it read before any
post, so what it received is held to the final store itself:

- start: the live feed answered 200 at load start, and each subscriber read an empty feed and its position;
- exactly once: the chatts among its events are exactly the stored ones (acknowledged or not), each once, each
  with its stored message; no `event: reset` (the load never edits a chatt);
- order: its positions (`T.K.S`) strictly increase by (tick, seq) from its start position (`T.K`, all of tick T)
  across its reconnections; one tick number has one token, in every subscriber's events and in the store; and
  each event's position is the one the store's change log gives its chatt;
- resumes: each subscriber resumed with Last-Event-ID, a position it had received, during a fault (from its cut
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


def check_subscribers(records: list[dict], windows: list, stored: list[StoredChatt]) -> LiveFeedVerdict:
    """The subscribers' records against the final store (in feed order) and the fault windows (checker.Window:
    its name, cut and settling are what count here)."""
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
    tokens = {c.tick: int(c.token, 16) for c in stored if c.tick is not None}
    for name in streams["subscribers"]:
        summary, found, resumes = follow(name, [r for r in records if r.get("sub") == name], windows, stored, tokens)
        verdict.summaries.append(summary)
        verdict.found.append(found)
        verdict.other_process += [resume for resume in resumes if resume.moved]
    if streams["subscribers"] and not verdict.other_process:
        verdict.found.append(["subscribers: none resumed on the other chatterd process than the one it was on"])
    return verdict


def follow(name: str, records: list[dict], windows: list, stored: list[StoredChatt],
           tokens: dict[int, int]) -> tuple[str, list[str], list[Resume]]:
    """One subscriber's summary, problems and resumes. `tokens` (tick -> token) is shared by every subscriber."""
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
    found += check_positions(name, position, events, stored, tokens)
    found += check_exactly_once(name, events, stored)
    resumes = resumed(name, records, windows)
    if not any(r.fault for r in resumes):
        found.append(f"subscriber {name}: never resumed with Last-Event-ID during a fault")
    outcomes = Counter(r["what"] for r in records if r["op"] == "sub")
    vias = ", ".join(sorted({r["via"] for r in records if r["op"] == "sub" and r["what"] == "connected"}))
    summary = (f"{name}: {len(events)} events, {outcomes['connected']} connections ({vias}; {outcomes['rotated']} "
               f"left on purpose, {outcomes['dropped']} dropped, {outcomes['refused']} refused), {len(resumes)} "
               f"resumes with Last-Event-ID ({sum(1 for r in resumes if r.fault)} during a fault, "
               f"{sum(1 for r in resumes if r.moved)} on the other process)")
    return summary, found, resumes


def check_positions(name: str, start: Position, events: list[dict], stored: list[StoredChatt],
                    tokens: dict[int, int]) -> list[str]:
    """(tick, seq) strictly increasing from `start`; one token per tick; each event where the store logs its chatt."""
    logged = {c.id: c for c in stored}
    found, last, last_text = [], start, f"its start {start.tick}.{start.token:x}"
    if (known := tokens.setdefault(start.tick, start.token)) != start.token:
        found.append(f"subscriber {name}: its start names tick {start.tick} with token {start.token:x}, "
                     f"elsewhere {known:x}")
    for event in events:
        if event["event"] == "reset":
            found.append(f"subscriber {name}: `event: reset` at {event['t']:.1f} (the load never edits a chatt)")
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
        chatt = logged.get(event.get("chatt"))
        if chatt and chatt.tick is not None and (position.tick, position.seq) != (chatt.tick, chatt.seq):
            found.append(f"subscriber {name}: {chatt.msg} came at {event['id']}, the store logs it at "
                         f"{chatt.tick}.{chatt.token}.{chatt.seq}")
        last, last_text = position, event["id"]
    return found


def check_exactly_once(name: str, events: list[dict], stored: list[StoredChatt]) -> list[str]:
    """The chatts among the events are exactly the stored ones, each once, with its stored message."""
    messages = {c.id: c.msg for c in stored}
    chatts = [e for e in events if e["event"] == "message"]
    seen = Counter(e.get("chatt") for e in chatts)
    found = []
    if twice := sorted(messages.get(c, c) for c, n in seen.items() if n > 1):
        found.append(f"subscriber {name}: {len(twice)} chatts came more than once, e.g. {twice[:3]}")
    if unstored := sorted(str(e.get("msg") or e.get("data")) for e in chatts if e.get("chatt") not in messages):
        found.append(f"subscriber {name}: events for {len(unstored)} chatts that are not stored, e.g. {unstored[:3]}")
    if altered := sorted(e["msg"] for e in chatts if e.get("chatt") in messages and e["msg"] != messages[e["chatt"]]):
        found.append(f"subscriber {name}: {len(altered)} events whose message is not the stored one, e.g. "
                     f"{altered[:3]}")
    if missing := [c.msg for c in stored if not seen[c.id]]:
        found.append(f"subscriber {name}: {len(missing)} stored chatts never came, e.g. {missing[:3]}")
    return found


def resumed(name: str, records: list[dict], windows: list) -> list[Resume]:
    """Its connections that resumed with Last-Event-ID from an event it had received."""
    received: set[str] = set()
    previous, resumes = None, []
    for record in records:
        if record["op"] == "event" and record["event"] == "message":
            received.add(record["id"])
        elif record["op"] == "sub" and record["what"] == "connected":
            if previous is not None and record["last_event_id"] in received:
                fault = next((w.name for w in windows if w.cut <= record["t"] <= w.settled), None)
                resumes.append(Resume(name, record["t"], fault, previous.get("srv"), record.get("srv")))
            previous = record
    return resumes
