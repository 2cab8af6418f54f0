"""The soak's verdict (soak.py): the invariants checked once the load is gone, the summary, and the Markdown
report with the series of samples."""

from __future__ import annotations

import os
import statistics
import time

from soak_store import KEEP_ROWS

# With the store's size held, resident memory stays within a megabyte of its baseline here; a leak of a
# few hundred bytes per request or a few kilobytes per vanished client passes this within minutes.
RSS_SLACK_BYTES = 8 * 1024 * 1024


def checks(args, tally, counts: dict[str, int], baseline, final, ready, restarts) -> list[tuple[str, bool, str]]:
    """(what, whether it held, what went wrong) for each invariant: `counts` are the copies of each message stored,
    `baseline` and `final` the idle samples before and after the load, `ready` the status of /readyz after it."""
    acknowledged = set(tally.acknowledged)
    missing = [m for m in acknowledged if counts.get(m, 0) != 1]
    doubled = [m for m, n in counts.items() if n > 1]
    refused_stored = [m for m in tally.refused_posts if counts.get(m, 0)]
    baseline_other = baseline.fds - (baseline.db or 0)
    final_other = final.fds - (final.db or 0)
    rss_allowed = baseline.rss + RSS_SLACK_BYTES
    return [
        (f"{len(acknowledged)} posts acknowledged, every one stored once (in chatts or soak_archive)", not missing,
         f"missing or not once: {missing[:5]}"),
        ("no chatt stored twice", not doubled, f"doubled: {doubled[:5]}"),
        (f"{len(tally.refused_posts)} HTTP/2 posts refused unprocessed at a GOAWAY, none stored", not refused_stored,
         f"stored: {refused_stored[:5]}"),
        ("only 200, 304, 503 with Retry-After (and 404 for a since id trimmed away), no client error",
         not tally.violations,
         f"{len(tally.violations)}: {tally.violations[:5]}"),
        (f"descriptors back at baseline: {final.fds} open, {final.db} database sessions "
         f"(baseline {baseline.fds}, {baseline.db})", final_other <= baseline_other and final.db is not None,
         f"{final_other - baseline_other} more descriptors than database sessions explain"),
        ("no client connection left open", final.clients == 0, f"{final.clients} open"),
        (f"resident memory back near baseline: {final.rss / 1048576:.1f} MB "
         f"(baseline {baseline.rss / 1048576:.1f} MB, allowed {rss_allowed / 1048576:.1f} MB)",
         final.rss <= rss_allowed, "grew past the allowance"),
        ("/readyz 200 after the load", ready == 200, f"/readyz {ready}"),
        (f"HTTP/2 clients served: {tally.http2_requests} requests", tally.http2_requests > 0, "no HTTP/2 request answered"),
        (f"{len(restarts)} PostgreSQL restarts", len(restarts) >= max(1, int(args.minutes)),
         "fewer restarts than minutes"),
    ]


def summary(tally, vanished: int, restarts, baseline_feed: int, final_feed: int, samples) -> list[str]:
    load_rss = [s.rss for s in samples if s.phase == "load"]
    return [
        f"requests: {tally.requests} ({', '.join(f'{k}: {v}' for k, v in sorted(tally.statuses.items(), key=str))}), "
        f"{tally.http2_requests} of them over HTTP/2 ({tally.refused_streams} more streams refused unprocessed, "
        f"at the stream cap's GOAWAY); clients vanished mid-request: {vanished}",
        "restarts (offset s, mode, seconds down): "
        + ", ".join(f"{o:g} {m} {d:.1f}" for o, m, d in restarts),
        f"feed (held near {KEEP_ROWS} chatts): {baseline_feed} bytes at baseline, {final_feed} after; RSS under load: median "
        f"{statistics.median(load_rss) / 1048576:.1f} MB, peak {max(load_rss) / 1048576:.1f} MB" if load_rss else "",
    ]


def show(lines: list[str], results: list[tuple[str, bool, str]]) -> None:
    for line in lines:
        print(line)
    for text, ok, detail in results:
        print(("ok:   " if ok else "FAIL: ") + text + ("" if ok else f" ({detail})"))


def write_report(path: str, command: str, lines: list[str], samples, results: list[tuple[str, bool, str]]) -> None:
    with open(path, "w") as report:
        report.write(f"## Soak run of {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n\n")
        report.write(f"- command: `{command}`\n")
        report.write(f"- machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the end\n")
        for line in lines:
            if line:
                report.write(f"- {line}\n")
        report.write("\n| t s | phase | RSS MB | fds | db sessions | client conns | requests | of them HTTP/2 | 503s |\n")
        report.write("|--:|---|--:|--:|--:|--:|--:|--:|--:|\n")
        for s in samples:
            report.write(f"| {s.offset} | {s.phase} | {s.rss / 1048576:.1f} | {s.fds} | {s.db} | {s.clients} | "
                         f"{s.requests} | {s.http2} | {s.unavailable} |\n")
        report.write("\n")
        for text, ok, detail in results:
            report.write(f"- {'ok' if ok else '**FAIL**'}: {text}{'' if ok else f' ({detail})'}\n")
