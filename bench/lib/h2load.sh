# shellcheck shell=bash
# One h2load scenario: HTTP/2 over TLS (ALPN h2) with several streams per connection, sampled and recorded
# as bench/lib/wrk.sh does wrk's. Needs BENCH_OUT, BENCH_THREADS, BENCH_DURATION, BENCH_RESULTS (and
# bench_record from wrk.sh).

# Concurrent streams h2load keeps open on each connection (-m).
BENCH_H2_STREAMS=10
# Requests allowed on one connection by the listeners h2load loads (chatterd-h2, nginx's h2 server). h2load
# does not reconnect after a GOAWAY, so at the usual 1000 every connection would stop after 1000 requests
# and the run measure the cap, not the server.
# shellcheck disable=SC2034 # read by chatterd.sh and nginx.sh
BENCH_H2_REQUESTS_PER_CONNECTION=100000000

# Runs h2load against URL with CONNECTIONS connections of BENCH_H2_STREAMS streams each while sampling the
# server process PID; extra arguments go to h2load (e.g. -H). Usage: bench_h2load NAME PID CONNECTIONS URL [...]
bench_h2load() {
    local name=$1 pid=$2 connections=$3 url=$4
    shift 4
    local file=$BENCH_OUT/h2load-$name.txt times=$BENCH_OUT/h2load-$name.times usage summary latency
    kill -0 "$pid" 2>/dev/null || die "the server for $name, pid $pid, is gone (logs in $BENCH_OUT)"
    log "$name (h2): h2load -t$BENCH_THREADS -c$connections -m$BENCH_H2_STREAMS -D $BENCH_DURATION $* $url"
    sample_begin "$pid"
    # --log-file: one line per request (start, status, microseconds), for the percentiles h2load does not print.
    run_tracked "$file" h2load -t"$BENCH_THREADS" -c"$connections" -m"$BENCH_H2_STREAMS" -D "$BENCH_DURATION" \
        --log-file="$times" "$@" "$url" || die "h2load failed (see $file)"
    usage=$(sample_end)
    kill -0 "$pid" 2>/dev/null || die "the server (pid $pid) died during $name"
    grep -q '^finished in' "$file" || die "no summary in $file"
    # "finished in 10.00s, 12345.67 req/s, ..."; "requests: N total, N started, N done, N succeeded, N failed,
    # ..."; "traffic: 1.2MB (1234567) total, ...". failed counts status >= 400 and reset or broken streams.
    summary=$(awk '
        /^finished in/ { rps = $4 }
        /^requests:/ { done = $6; failed = $10 }
        /^traffic:/ { gsub(/[()]/, "", $3); bytes = $3 }
        END { printf "%s %d %d %s\n", rps, failed, done, bytes }' "$file")
    latency=$(_bench_h2load_latency "$times")
    local rps failed answered bytes p50 p99 max
    read -r rps failed answered bytes <<<"$summary"
    read -r p50 p99 max <<<"$latency"
    # shellcheck disable=SC2086 # the fields are numbers, split on purpose
    bench_record "$name" h2 "$rps" "$p50" "$p99" "$max" "$failed" "$answered" $usage "$bytes"
}

# Prints p50, p99 and max in milliseconds of the answered requests in an h2load --log-file FILE.
_bench_h2load_latency() {
    awk -F'\t' '$2 > 0 { print $3 }' "$1" | sort -n | awk '
        { v[NR] = $1 }
        END {
            if (NR == 0) { print "0 0 0"; exit }
            printf "%.3f %.3f %.3f\n", v[int((NR - 1) * 0.50) + 1] / 1000, v[int((NR - 1) * 0.99) + 1] / 1000, v[NR] / 1000
        }'
}

# Fails unless every URL answers /healthz over HTTP/2 when offered h2 and http/1.1 (certificate CRT), so the
# h2 rows compare HTTP/2 with HTTP/2. Usage: bench_h2_check CRT URL...
bench_h2_check() {
    local crt=$1 url version
    shift
    for url in "$@"; do
        version=$(curl -fsS --http2 --cacert "$crt" -o /dev/null -w '%{http_version}' "$url/healthz") \
            || die "GET $url/healthz failed"
        [[ $version == 2 ]] || die "$url answered over HTTP/$version, not HTTP/2"
    done
}
