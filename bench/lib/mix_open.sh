# shellcheck shell=bash
# The mix-open scenario: the 90/10 mix offered at a fixed rate over TLS by bench/lib/open_loop.py, at half the
# closed-loop mix's throughput over TLS measured earlier in the same run, while chatterd is sampled as in wrk.sh.
# Needs BENCH_RESULTS (with the mix's row), BENCH_OUT, BENCH_DURATION, BENCH_CONNECTIONS, BENCH_CHAIN.
# shellcheck disable=SC2034 # the variables set here are read by report.sh
# Sets BENCH_OPEN_RATE (requests a second offered), BENCH_OPEN_MIX_RPS (the closed-loop mix's) and BENCH_OPEN (the
# generator's OPEN line: per-kind percentiles, its own send lag).

# Usage: bench_mix_open NAME TRANSPORT PID URL (URL: the TLS server's base URL)
bench_mix_open() {
    local name=$1 transport=$2 pid=$3 url=$4 file=$BENCH_OUT/open-$1-$2.txt mix_rps rate usage fields bytes
    mix_rps=$(awk -F'\t' '$1 == "mix" && $2 == "tls" { print $3 }' "$BENCH_RESULTS")
    [[ -n $mix_rps ]] || die "$name needs the closed-loop mix over TLS measured before it in the same run"
    rate=$(awk -v r="$mix_rps" 'BEGIN { printf "%d\n", r / 2 + 0.5 }')
    (( rate >= 1 )) || die "the closed-loop mix ran at $mix_rps req/s: nothing to offer at half of it"
    BENCH_OPEN_RATE=$rate BENCH_OPEN_MIX_RPS=$mix_rps
    kill -0 "$pid" 2>/dev/null || die "the server for $name ($transport), pid $pid, is gone (logs in $BENCH_OUT)"
    log "$name ($transport): open_loop.py --rate $rate (half the closed-loop mix's $mix_rps req/s)" \
        "--duration $BENCH_DURATION --connections $BENCH_CONNECTIONS $url"
    sample_begin "$pid"
    run_tracked "$file" python3 bench/lib/open_loop.py "$url" --rate "$rate" --duration "$BENCH_DURATION" \
        --connections "$BENCH_CONNECTIONS" --cacert "$BENCH_CHAIN" || die "open_loop.py failed (see $file)"
    usage=$(sample_end)
    kill -0 "$pid" 2>/dev/null || die "the server (pid $pid) died during $name ($transport)"
    fields=$(bench_fields "$file")
    bytes=$(sed -n 's/^BENCH .* bytes=\([0-9]*\) .*/\1/p' "$file")
    BENCH_OPEN=$(sed -n 's/^OPEN //p' "$file")
    [[ -n $fields && -n $BENCH_OPEN ]] || die "no BENCH or OPEN line in $file"
    # shellcheck disable=SC2086 # the fields are numbers, split on purpose
    bench_record "$name" "$transport" $fields $usage "$bytes"
}
