"""Reading what chatterd reports about itself: log lines (logfmt or JSON) and /metrics (Prometheus text 0.0.4)."""

from __future__ import annotations

import json
import math
import re

from processes import wait_until

LOGFMT_FIELD = re.compile(r'([a-z_]+)=("(?:[^"\\]|\\.)*"|[^\s"]*)(?: |$)')
RFC3339_MS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
ACCESS_FIELDS = ("time", "level", "event", "request_id", "method", "path", "remote", "status", "bytes",
                 "duration_ms", "proto")


def parse_logfmt(line: str) -> dict[str, str]:
    """The fields of one logfmt line; raises ValueError unless the whole line is key=value pairs."""
    fields: dict[str, str] = {}
    position = 0
    while position < len(line):
        match = LOGFMT_FIELD.match(line, position)
        if not match:
            raise ValueError(f"not logfmt at {position}: {line!r}")
        key, raw = match.groups()
        if key in fields:
            raise ValueError(f"duplicate key {key}: {line!r}")
        fields[key] = json.loads(raw) if raw.startswith('"') else raw
        position = match.end()
    return fields


def parse_line(line: str, log_format: str) -> dict:
    if log_format == "json":
        value = json.loads(line)
        if not isinstance(value, dict):
            raise ValueError(f"not a JSON object: {line!r}")
        return value
    return parse_logfmt(line)


def log_records(process, log_format: str) -> list[dict]:
    """Every line the process wrote so far, parsed; any line in another shape fails the test."""
    return [parse_line(line, log_format) for line in list(process.lines)]


def wait_for_record(process, log_format: str, predicate, timeout: float = 5.0) -> dict:
    """The first parsed log record matching `predicate`, waiting for the log to be written (flushed every ~100 ms)."""
    def find():
        return next((record for record in log_records(process, log_format) if predicate(record)), None)
    record = wait_until(find, timeout)
    assert record, f"no matching log line within {timeout}s:\n{process.log()}"
    return record


SAMPLE = re.compile(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*\})? (\S+)')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\.)*)"')
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}


def parse_exposition(text: str) -> tuple[dict[str, str], dict[tuple, float]]:
    """Checks the page line by line; returns (family → type, (name, sorted labels) → value)."""
    assert text.endswith("\n"), "page must end with a newline"
    types: dict[str, str] = {}
    helps: set[str] = set()
    samples: dict[tuple, float] = {}
    family = None
    for number, line in enumerate(text[:-1].split("\n"), 1):
        where = f"line {number}: {line!r}"
        if line.startswith("# HELP "):
            name, _, help_text = line[7:].partition(" ")
            assert name not in helps and help_text, where
            helps.add(name)
            family = name
        elif line.startswith("# TYPE "):
            name, _, kind = line[7:].partition(" ")
            assert kind in TYPES and name not in types, where
            types[name] = kind
            family = name
        else:
            match = SAMPLE.fullmatch(line)
            assert match, where
            name, labels, value = match.groups()
            suffixes = ("_bucket", "_sum", "_count") if types.get(family) == "histogram" else ("",)
            assert family and any(name == family + suffix for suffix in suffixes), f"{where} outside {family}"
            parsed = float(value.replace("Inf", "inf"))
            assert not math.isnan(parsed) or value == "NaN", where
            key = (name, tuple(sorted(LABEL.findall(labels or ""))))
            assert key not in samples, f"{where} repeated"
            samples[key] = parsed
    assert helps == set(types), f"HELP and TYPE differ: {sorted(helps ^ set(types))}"
    return types, samples


def metric(samples: dict[tuple, float], name: str, **labels) -> float | None:
    return samples.get((name, tuple(sorted(labels.items()))))
