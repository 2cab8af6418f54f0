"""Server-sent events parsed as their bytes arrive, by the WHATWG HTML standard's rules ("Server-sent events",
interpreting an event stream): the one reader of the end-to-end suite (sse.py holds it to chatterd's own form), the
cluster stage's subscribers and, for framing alone, the fan-out bench. Standard library only.

Lines end with CRLF, LF or CR; a UTF-8 BOM opening the stream is dropped; a line starting with `:` is a comment; a
line `name: value` loses one space after the colon, and a line without a colon is a field with an empty value; a
blank line ends the block of field lines before it. Of the fields, `event`, `data` (its lines joined with LF), `id`
(ignored when it holds NUL; the last one read stays the stream's last event ID) and `retry` (ASCII digits only) are
kept, any other is ignored.

Unlike a browser, it reports every block, also one the spec fires no event for (no `data`: an id-only block only
moves the last event ID), and it decodes UTF-8 strictly (an error, not U+FFFD): a test client is to see what the
server sent, not what a browser would make of it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

BOM = b"\xef\xbb\xbf"
LINE_END = re.compile(rb"\r\n?|\n")


@dataclass
class Event:
    """One block of field lines ended by a blank line."""

    id: str | None  # its own `id` field (None: it has none)
    event: str | None  # its `event` field (None: none, so its type is "message")
    data: str | None  # its `data` lines joined with LF (None: it has none)
    raw: bytes  # its bytes as they came, from its first field line to its blank line
    at: float  # when its blank line arrived
    last_id: str = ""  # the stream's last event ID once it is read
    retry: int | None = None
    lines: list[bytes] = field(default_factory=list)  # its field lines, without their line ends

    @property
    def type(self) -> str:
        return self.event or "message"

    @property
    def dispatched(self) -> bool:
        """Whether a browser fires an event for it: only for a block with data."""
        return self.data is not None

    @property
    def row(self) -> list:
        return json.loads(self.data)


@dataclass
class Comment:
    at: float
    text: str  # after the colon, as sent
    inside: bool  # it came between the field lines of an unfinished block


class EventStream:
    """The parser of one stream. `feed` returns the Events and Comments its bytes complete, in order."""

    def __init__(self):
        self.buf = bytearray()  # an unfinished line
        self.last_id = ""
        self.retry: int | None = None
        self.blank_lines = 0  # blank lines that ended no block (the spec does nothing for them)
        self._lines: list[bytes] = []
        self._raw = bytearray()
        self._opened = False  # the BOM is behind us
        self._cr = False  # the last line ended with a CR: an LF that comes next is part of its line end

    @property
    def partial(self) -> bool:
        """Bytes of an unfinished block (or line) are held."""
        return bool(self.buf or self._lines)

    def feed(self, data: bytes, at: float = 0.0) -> list[Event | Comment]:
        self.buf += data
        if not self._opened:
            if len(self.buf) < len(BOM) and BOM.startswith(self.buf):
                return []
            if self.buf.startswith(BOM):
                del self.buf[:len(BOM)]
            self._opened = True
        if self._cr and self.buf[:1] == b"\n":
            del self.buf[:1]
        self._cr = False
        items, start = [], 0
        while (end := LINE_END.search(self.buf, start)) is not None:
            item = self._line(bytes(self.buf[start:end.start()]), bytes(self.buf[start:end.end()]), at)
            if item is not None:
                items.append(item)
            start = end.end()
            self._cr = end.group() == b"\r" and start == len(self.buf)
        del self.buf[:start]
        return items

    def _line(self, line: bytes, whole: bytes, at: float) -> Event | Comment | None:
        if line.startswith(b":"):
            if self._lines:
                self._raw += whole
            return Comment(at, line[1:].decode("utf-8"), bool(self._lines))
        if line:
            self._lines.append(line)
            self._raw += whole
            return None
        if not self._lines:
            self.blank_lines += 1
            return None
        event = self._block(bytes(self._raw + whole), at)
        self._lines, self._raw = [], bytearray()
        return event

    def _block(self, raw: bytes, at: float) -> Event:
        own_id = kind = retry = None
        data: list[str] | None = None
        for line in self._lines:
            name, colon, value = line.partition(b":")
            if colon and value.startswith(b" "):
                value = value[1:]
            name, text = name.decode("utf-8"), value.decode("utf-8")
            if name == "event":
                kind = text
            elif name == "data":
                data = (data or []) + [text]
            elif name == "id" and "\0" not in text:
                own_id = self.last_id = text
            elif name == "retry" and text.isascii() and text.isdigit():
                retry = self.retry = int(text)
        return Event(own_id, kind, None if data is None else "\n".join(data), raw, at, self.last_id, retry,
                     list(self._lines))


def whole_events(data: bytes) -> tuple[bytes, bytes]:
    """(the bytes of the whole events in `data`, the rest): the framing alone, for a reader that only scans events'
    bytes, the fan-out bench's thousands of subscribers, whose own CPU must stay small next to the server's. A blank
    line is taken to be LF LF, as chatterd writes it; EventStream also reads the CR forms."""
    last = data.rfind(b"\n\n")
    if last < 0:
        return b"", data
    return data[:last], data[last + 2:]
