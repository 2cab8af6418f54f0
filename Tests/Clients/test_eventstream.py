"""eventstream.py against the WHATWG rules, bytes split everywhere. Run by scripts/test with pytest, or alone:
python3 Tests/Clients/test_eventstream.py"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from eventstream import Event, EventStream, whole_events  # noqa: E402


def parse(data: bytes, step: int = 0) -> tuple[EventStream, list]:
    """Every item of `data`, fed whole (step 0) or `step` bytes at a time."""
    stream, items = EventStream(), []
    for start in range(0, len(data), step or len(data) or 1):
        items += stream.feed(data[start:start + (step or len(data))], float(start))
    return stream, items


def events(data: bytes) -> list[tuple]:
    """(type, id, data, last event ID) of each block, the same however the bytes are split."""
    results = []
    for step in (0, 1, 2, 3, 5):
        _, items = parse(data, step)
        results.append([(e.type, e.id, e.data, e.last_id) for e in items if isinstance(e, Event)])
    assert all(result == results[0] for result in results), results
    return results[0]


def test_fields_and_line_ends():
    for end in (b"\n", b"\r\n", b"\r"):
        data = end.join([b"event: add", b"data: one", b"data:two", b"id: 7", b"", b"data", b"", b""])
        assert events(data) == [("add", "7", "one\ntwo", "7"), ("message", None, "", "7")]


def test_one_space_dropped_and_colons_in_values_kept():
    assert events(b"data:  x: y\n\n") == [("message", None, " x: y", "")]


def test_id_only_blocks_move_the_last_event_id_and_fire_nothing():
    stream, items = parse(b"id: 1.a.2\n\ndata: x\n\n")
    assert [(e.id, e.data, e.dispatched, e.last_id) for e in items] == [("1.a.2", None, False, "1.a.2"),
                                                                         (None, "x", True, "1.a.2")]
    assert stream.last_id == "1.a.2"


def test_an_id_with_nul_is_ignored_and_an_empty_one_clears():
    assert events(b"id: 3\n\nid: a\0b\ndata: x\n\nid\ndata: y\n\n") == [
        ("message", "3", None, "3"), ("message", None, "x", "3"), ("message", "", "y", "")]


def test_retry_digits_only_and_unknown_fields_ignored():
    stream, items = parse(b"retry: 1500\nfoo: bar\ndata: x\n\nretry: 2s\ndata: y\n\n")
    assert [(e.retry, e.data) for e in items] == [(1500, "x"), (None, "y")]
    assert stream.retry == 1500


def test_comments_in_order_and_inside_marked():
    stream, items = parse(b":\n: hi\ndata: x\n:mid\n\n\n")
    assert [(type(i).__name__, getattr(i, "text", None), getattr(i, "inside", None)) for i in items] == [
        ("Comment", "", False), ("Comment", " hi", False), ("Comment", "mid", True), ("Event", None, None)]
    assert items[-1].raw == b"data: x\n:mid\n\n" and items[-1].lines == [b"data: x"]
    assert stream.blank_lines == 1 and not stream.partial


def test_bom_dropped_once_and_partial_held():
    stream, items = parse(b"\xef\xbb\xbfdata: x\n\n\xef\xbb\xbfdata: y\n\ndata: z\n", 1)
    assert [e.lines[0] for e in items if isinstance(e, Event)] == [b"data: x", b"\xef\xbb\xbfdata: y"]
    assert stream.partial


def test_crlf_split_between_reads_is_one_line_end():
    stream = EventStream()
    assert stream.feed(b"data: x\r") == []
    items = stream.feed(b"\n\r")
    assert len(items) == 1 and items[0].data == "x"
    assert stream.feed(b"\ndata: y\n\n")[0].data == "y"
    assert stream.blank_lines == 0


def test_invalid_utf8_is_an_error():
    try:
        parse(b"data: \xff\n\n")
    except UnicodeDecodeError:
        return
    raise AssertionError("invalid UTF-8 decoded")


def test_whole_events():
    assert whole_events(b"data: a\n\ndata: b\n\nda") == (b"data: a\n\ndata: b", b"da")
    assert whole_events(b"data: a\n") == (b"", b"data: a\n")


if __name__ == "__main__":
    for name, test in list(globals().items()):
        if name.startswith("test_"):
            test()
    print("ok")
