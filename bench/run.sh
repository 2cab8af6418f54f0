#!/usr/bin/env bash
# Benchmarks the release chatterd with wrk on loopback against a throwaway PostgreSQL, and prints
# requests/s and p50/p90/p99 latency per endpoint, each also as a ratio to `GET /` over TLS measured
# in the same run (so numbers from different machines or days compare through the ratios).
# Usage: bench/run.sh [--rows N] [--duration SECONDS] [--threads T] [--connections C]
#   defaults: 1000 seeded rows, 10 s per endpoint, wrk -t2 -c32
# Environment: CHATTERD_BIN (use this binary instead of building), CHATTERD_BUILD_DIR (.build).
# Output: .build/bench/ (wrk outputs, server logs, results.txt).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
source scripts/lib/common.sh
source scripts/lib/deps.sh
source scripts/lib/postgres.sh

rows=1000 duration=10 threads=2 connections=32
while (( $# > 0 )); do
    case $1 in
        --rows) rows=$2; shift 2 ;;
        --duration) duration=$2; shift 2 ;;
        --threads) threads=$2; shift 2 ;;
        --connections) connections=$2; shift 2 ;;
        *) die "usage: bench/run.sh [--rows N] [--duration SECONDS] [--threads T] [--connections C]" ;;
    esac
done
for n in "$rows" "$duration" "$threads" "$connections"; do
    [[ $n =~ ^[0-9]+$ ]] || die "not a whole number: $n"
done

deps_ensure wrk || exit 1
out=$ROOT/.build/bench
mkdir -p "$out"
if [[ -z ${CHATTERD_BIN:-} ]]; then
    build_dir=${CHATTERD_BUILD_DIR:-$ROOT/.build}
    log "building (swift build -c release)"
    swift build -c release --scratch-path "$build_dir"
    CHATTERD_BIN=$build_dir/release/chatterd
fi

cluster=$(mktemp -d /tmp/chatterd-bench-XXXXXX)
servers=()
cleanup() {
    local pid
    for pid in "${servers[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${servers[@]}"; do wait "$pid" 2>/dev/null || true; done
    pg_cluster_destroy "$cluster" >/dev/null 2>&1
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Full durability (no --fast): POST /postmaps is meant to measure real commits.
url=$(pg_cluster_start "$cluster" "$(free_port)")
deploy/gen-cert.sh --out-dir "$out" --name bench --force >/dev/null
"$CHATTERD_BIN" migrate --database-url "$url"

# Starts a server with the given extra options, logging to $out/server-NAME.log.
start_server() {
    local name=$1
    shift
    "$CHATTERD_BIN" serve --host 127.0.0.1 --database-url "$url" "$@" >"$out/server-$name.log" 2>&1 &
    servers+=($!)
}

# Waits until URL answers /healthz with 200 (curl options before the URL), or fails after 30 s.
wait_ready() {
    local i
    for (( i = 0; i < 300; i++ )); do
        curl -fsS -o /dev/null "$@" 2>/dev/null && return 0
        sleep 0.1
    done
    die "server did not answer $* (see $out/server-*.log)"
}

tls_port=$(free_port)
plain_port=$(free_port)
start_server tls --port "$tls_port" --cert "$out/bench.crt" --key "$out/bench.key"
start_server plain --port "$plain_port" --plain-http
tls=https://127.0.0.1:$tls_port
plain=http://127.0.0.1:$plain_port
wait_ready --cacert "$out/bench.crt" "$tls/healthz"
wait_ready "$plain/healthz"

log "seeding $rows chatts"
"${CHATTERD_PYTHON:-python3}" bench/seed.py 127.0.0.1 "$plain_port" "$rows"
stored=$(curl -fsS "$plain/getmaps" | "${CHATTERD_PYTHON:-python3}" -c 'import json, sys; print(len(json.load(sys.stdin)))')
(( stored >= rows )) || die "GET /getmaps returned $stored rows after seeding $rows"

# Prints "requests/s p50 p90 p99 errors" (latencies in ms) from one wrk --latency output file.
parse_wrk() {
    awk '
        function ms(v) {
            if (v ~ /us$/) return v / 1000
            if (v ~ /ms$/) return v + 0
            if (v ~ /s$/) return v * 1000
            if (v ~ /m$/) return v * 60000
            return v
        }
        /Requests\/sec:/ { rps = $2 }
        /^ +50%/ { p50 = ms($2) }
        /^ +90%/ { p90 = ms($2) }
        /^ +99%/ { p99 = ms($2) }
        /Non-2xx or 3xx responses:/ { errors += $NF }
        /Socket errors:/ { gsub(",", ""); errors += $4 + $6 + $8 + $10 }
        END { printf "%s %.3f %.3f %.3f %d\n", rps + 0, p50, p90, p99, errors }
    ' "$1"
}

results=()
# Runs wrk on one endpoint: LABEL FILE-NAME URL [wrk options...].
measure() {
    local label=$1 name=$2 target=$3
    shift 3
    log "wrk ${duration}s -t$threads -c$connections: $label"
    wrk -t"$threads" -c"$connections" -d"${duration}s" --latency "$@" "$target" >"$out/wrk-$name.txt"
    results+=("$label|$(parse_wrk "$out/wrk-$name.txt")")
}

measure 'GET / (TLS, baseline)' root "$tls/"
measure 'GET / (plain HTTP)' root-plain "$plain/"
measure "GET /getmaps (TLS, $rows rows)" getmaps "$tls/getmaps"
measure 'POST /postmaps (TLS)' postmaps "$tls/postmaps" -s bench/postmaps.lua

{
    printf 'chatterd bench %s: wrk -t%s -c%s, %s s each, %s seeded rows, %s\n' \
        "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$threads" "$connections" "$duration" "$rows" "$(nproc) cores"
    printf '%s\n' "${results[@]}" | awk -F'|' '
        BEGIN { printf "%-30s %10s %8s %8s %8s  %7s %7s %7s %7s %7s\n", "endpoint", "req/s", "p50 ms", "p90 ms", "p99 ms",
                "req/s x", "p50 x", "p90 x", "p99 x", "errors" }
        {
            split($2, v, " ")
            if (NR == 1) { for (i = 1; i <= 4; i++) base[i] = (v[i] > 0 ? v[i] : 1) }
            printf "%-30s %10.0f %8.3f %8.3f %8.3f  %7.2f %7.2f %7.2f %7.2f %7d\n", $1, v[1], v[2], v[3], v[4],
                v[1] / base[1], v[2] / base[2], v[3] / base[3], v[4] / base[4], v[5]
        }'
    printf 'ratios (x) are against the first row; errors = non-2xx responses + socket errors.\n'
} | tee "$out/results.txt"
