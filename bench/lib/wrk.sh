# shellcheck shell=bash
# One wrk scenario: load a server for the run's duration, sample its memory and CPU, and append a row
# to the results file. Needs BENCH_OUT, BENCH_THREADS, BENCH_DURATION and BENCH_RESULTS.

# Appends one results row: NAME TRANSPORT RPS P50_MS P99_MS MAX_MS ERRORS REQUESTS RSS_MB CPU_S BYTES_READ.
bench_record() {
    local IFS=$'\t'
    printf '%s\n' "$*" >>"$BENCH_RESULTS"
}

# Runs wrk against URL (a full URL, path included) with CONNECTIONS connections while sampling the
# server process PID; extra arguments go to wrk (a -s script replaces report.lua; it must require it).
# Usage: bench_wrk NAME TRANSPORT PID CONNECTIONS URL [WRK-OPTIONS...]
bench_wrk() {
    kill -0 "$3" 2>/dev/null || die "the server for $1 ($2), pid $3, is gone (logs in $BENCH_OUT)"
    sample_begin "$3"
    bench_wrk_sampled "$@"
}

# As bench_wrk, for a caller that began sampling PID itself (sample_begin), so the row's peak RSS, CPU and
# threads count from there.
bench_wrk_sampled() {
    local name=$1 transport=$2 pid=$3 connections=$4 url=$5
    shift 5
    local file=$BENCH_OUT/wrk-$name-$transport.txt usage fields bytes script=(-s bench/lua/report.lua)
    local threads=$BENCH_THREADS
    # wrk needs a connection per thread: a lone client is one thread.
    (( connections >= threads )) || threads=$connections
    [[ " $* " == *' -s '* ]] && script=()
    log "$name ($transport): wrk -t$threads -c$connections -d${BENCH_DURATION}s $* $url"
    # --timeout 30s: a large /getmaps body (100 000 rows) may take seconds under 64 connections; it
    # should count as slow, not as an error.
    run_tracked "$file" wrk -t"$threads" -c"$connections" -d"${BENCH_DURATION}s" --timeout 30s \
        "${script[@]}" "$@" "$url" || die "wrk failed (see $file)"
    usage=$(sample_end)
    kill -0 "$pid" 2>/dev/null || die "the server (pid $pid) died during $name ($transport)"
    fields=$(bench_fields "$file")
    bytes=$(sed -n 's/^BENCH .* bytes=\([0-9]*\) .*/\1/p' "$file")
    [[ -n $fields ]] || die "no BENCH line in $file"
    # shellcheck disable=SC2086 # the fields are numbers, split on purpose
    bench_record "$name" "$transport" $fields $usage "$bytes"
}

# Prints "rps p50_ms p99_ms max_ms errors requests" from the BENCH line (bench/lua/report.lua's form) in FILE.
bench_fields() {
    awk '/^BENCH / {
            for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
            printf "%s %.3f %.3f %.3f %d %d\n", v["rps"], v["p50_us"] / 1000, v["p99_us"] / 1000,
                v["max_us"] / 1000, v["status_errors"] + v["socket_errors"], v["requests"]
        }' "$1"
}
