#!/usr/bin/env python3
"""Writes fuzz/http2-session/corpus: valid client sessions (and a few the server must refuse), each what a
client sends after the connection preface, behind the harness's control byte (see SessionFuzzer.swift).
Needs PyPI's hyperframe and hpack, as the end-to-end tests do. Usage: fuzz/http2-session/make-corpus.py"""

from pathlib import Path

import hpack
from hyperframe.frame import (ContinuationFrame, DataFrame, GoAwayFrame, HeadersFrame, PingFrame, PriorityFrame,
                              RstStreamFrame, SettingsFrame, WindowUpdateFrame)

CORPUS = Path(__file__).resolve().parent / "corpus"
WHOLE, BYTEWISE, SMALL_LIMITS, DRAIN, UNREAD = 0x07, 0x00, 0x80, 0x20, 0x40


def request(encoder, stream, method="GET", path="/", fields=(), end_stream=True):
    block = encoder.encode([(":method", method), (":scheme", "https"), (":authority", "localhost"),
                            (":path", path), *fields])
    return HeadersFrame(stream, data=block, flags=["END_HEADERS"] + (["END_STREAM"] if end_stream else []))


def session(*frames, settings=None):
    return b"".join(f.serialize() for f in [SettingsFrame(0, settings=settings or {}), SettingsFrame(0, flags=["ACK"]),
                                            *frames])


def seeds():
    e = hpack.Encoder
    yield "get", WHOLE, session(request(e(), 1))
    yield "get-bytewise", BYTEWISE, session(request(e(), 1, path="/getmaps"))
    body = b'{"name":"a","message":"b"}'
    enc = e()
    yield "post", WHOLE, session(request(enc, 1, "POST", "/postmaps", [("content-length", str(len(body)))], False),
                                 DataFrame(1, data=body, flags=["END_STREAM"]))
    enc = e()
    yield "streams", 0x04, session(request(enc, 1, path="/a"), request(enc, 3, "HEAD", "/getmaps"),
                                   request(enc, 5, path="/slow"), PingFrame(0, opaque_data=b"12345678"),
                                   request(enc, 7, path="/getchatts?since=x"))
    enc = e()
    yield "small-window", WHOLE, session(request(enc, 1, path="/" + "w" * 60),
                                         WindowUpdateFrame(1, window_increment=1000),
                                         WindowUpdateFrame(0, window_increment=100_000),
                                         settings={4: 1024})
    enc = e()
    yield "reset", WHOLE, session(request(enc, 1, path="/slow"), RstStreamFrame(1, error_code=8),
                                  request(enc, 3, path="/after"))
    enc = e()
    block = enc.encode([(":method", "GET"), (":scheme", "https"), (":authority", "localhost"), (":path", "/c"),
                        ("x-a", "1"), ("x-b", "2")])
    yield "continuation", 0x03, session(HeadersFrame(1, data=block[:5], flags=["END_STREAM"]),
                                        ContinuationFrame(1, data=block[5:9]),
                                        ContinuationFrame(1, data=block[9:], flags=["END_HEADERS"]))
    enc = e()
    yield "over-limits", SMALL_LIMITS | WHOLE, session(
        request(enc, 1, "POST", "/p", [("content-length", "70000")], False),
        request(enc, 3, path="/" + "t" * 80),
        request(enc, 5, fields=[(f"x-{i}", "v") for i in range(10)]),
        request(enc, 7, "POST", "/q", [], False), DataFrame(7, data=b"d" * 150, flags=["END_STREAM"]))
    enc = e()
    yield "malformed", WHOLE, session(request(enc, 1, fields=[("connection", "close")]),
                                      request(enc, 3, "BREW", "/"), request(enc, 5, path="https://x/"),
                                      request(enc, 7, "POST", "/p", [("content-length", "5")], False),
                                      DataFrame(7, data=b"abc", flags=["END_STREAM"]), request(enc, 9))
    enc = e()
    yield "client-goaway", WHOLE, session(request(enc, 1), GoAwayFrame(0, last_stream_id=0, error_code=0))
    enc = e()
    yield "priority-padding", WHOLE, session(
        PriorityFrame(3, depends_on=1, stream_weight=16),
        HeadersFrame(1, data=enc.encode([(":method", "GET"), (":scheme", "http"), (":authority", "h"),
                                         (":path", "/pad")]), flags=["END_HEADERS", "END_STREAM", "PADDED"],
                     pad_length=7))
    enc = e()
    yield "drain", DRAIN | 0x04, session(request(enc, 1, path="/slow"), request(enc, 3, path="/two"),
                                         request(enc, 5, path="/three"), request(enc, 7, path="/four"))
    enc = e()
    # A header block that does not decode (a Huffman string cut short) after the drain's GOAWAY was queued.
    yield "drain-then-bad-hpack", DRAIN | 0x04, session(request(enc, 1, path="/slow"), request(enc, 3, path="/two"),
                                                        request(enc, 5, path="/three"),
                                                        HeadersFrame(7, data=bytes.fromhex("82874484625385"),
                                                                     flags=["END_HEADERS", "END_STREAM"]))
    yield "unread-pings", UNREAD | 0x05, session(*[PingFrame(0, opaque_data=b"%08d" % i) for i in range(120)])
    yield "stalled-body", SMALL_LIMITS | 0x00, session(request(e(), 1, "POST", "/p", [("content-length", "10")], False),
                                                       DataFrame(1, data=b"12"))


def main():
    CORPUS.mkdir(exist_ok=True)
    for name, control, data in seeds():
        (CORPUS / name).write_bytes(bytes([control]) + data)


if __name__ == "__main__":
    main()
