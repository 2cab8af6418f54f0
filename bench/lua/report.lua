-- Shared by every wrk scenario: when the run ends, prints one line that bench/lib/wrk.sh parses.
-- errors.status counts responses with status >= 400; the socket errors are connect, read, write and
-- timeout (a request unanswered within wrk's --timeout).
function done(summary, latency, requests)
    local seconds = summary.duration / 1e6
    local e = summary.errors
    io.write(string.format(
        "BENCH requests=%d bytes=%d seconds=%.3f rps=%.1f p50_us=%d p99_us=%d max_us=%d status_errors=%d socket_errors=%d\n",
        summary.requests, summary.bytes, seconds, summary.requests / seconds, latency:percentile(50), latency:percentile(99),
        latency.max, e.status, e.connect + e.read + e.write + e.timeout))
end
