#!/usr/bin/env bash
# Soak test: one chatterd (TLS) under mixed load for N minutes (posts, feeds with gzip and ETags, incremental reads,
# health checks, over HTTP/1.1 and HTTP/2, clients that vanish mid-request, and another writer holding the store near
# 1000 chatts), its PostgreSQL restarted every minute, its resident memory and descriptors sampled every 10 s. Fails
# when an acknowledged post is not stored exactly once, an answer is not 200/304/503-with-Retry-After, memory or
# descriptors do not return to their baseline once the load is gone, or chatterd does not exit 0 on SIGTERM.
# Loopback only; the load is bench/lib/soak.py. Writes the series and the verdicts to .build/soak/results.md
# (bench/RESULTS.md keeps recorded runs).
#
# Usage: bench/soak.sh [--minutes N]
#   --minutes N   minutes of load after a 15 s warm-up (default 2; fractions allowed)
# Environment: CHATTERD_BIN (a chatterd to use instead of building), CHATTERD_BUILD_DIR (.build),
# CHATTERD_PYTHON (a python3 with PyPI's h2, for the HTTP/2 clients; scripts/test sets it).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
for lib in scripts/lib/common.sh scripts/lib/postgres.sh bench/lib/procs.sh bench/lib/chatterd.sh; do
    # shellcheck source=/dev/null
    source "$lib"
done

usage() { sed -n '10,13p' "$0" | sed 's/^# \{0,1\}//'; }

minutes=2
command_line="bench/soak.sh${*:+ $*}"
while (( $# > 0 )); do
    case $1 in
        --minutes) [[ $# -ge 2 ]] || die "--minutes needs a value"; minutes=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
[[ $minutes =~ ^[0-9]+(\.[0-9]+)?$ && $minutes != 0 ]] || die "--minutes must be a positive number, not '$minutes'"

out=${CHATTERD_BUILD_DIR:-$ROOT/.build}/soak
rm -rf -- "$out"
mkdir -p "$out"
cluster=$(mktemp -d /tmp/chatterd-soak-XXXXXX)
cleanup() {
    set +e
    stop_tracked
    pg_cluster_destroy "$cluster" >/dev/null 2>&1
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

bench_chatterd_build
deploy/gen-cert.sh --out-dir "$out" --name soak --force >/dev/null
log "starting a throwaway PostgreSQL in $cluster"
# Full durability (no --fast): the restarts include crashes (-m immediate), and with synchronous_commit off
# a crash loses commits PostgreSQL had already acknowledged, which would be no fault of chatterd's.
url=$(pg_cluster_start "$cluster" "$(free_port)" chatterd)
# A feed of production size to begin with: 1000 chatts shaped like the app's.
"$CHATTERD_BIN" migrate --database-url "$url" --migrations migrations >"$out/migrate.log" 2>&1 \
    || die "chatterd migrate failed (see $out/migrate.log)"
pg_psql "$cluster" chatterd -f bench/sql/seed.sql -v rows=1000 >/dev/null

port=$(free_port)
pool_size=8
# warn: no access line per request, so the log stays small over a long soak.
start_tracked "$out/chatterd.log" "$CHATTERD_BIN" serve --host 127.0.0.1 --port "$port" --database-url "$url" \
    --cert "$out/soak-server.crt" --key "$out/soak.key" --pool-size "$pool_size" --log-level warn
pid=$STARTED_PID
wait_http "$pid" "$out/chatterd.log" --cacert "$out/soak.crt" "https://127.0.0.1:$port/readyz"

log "soak: $minutes min of load (series every 10 s, PostgreSQL restarted every minute)"
status=0
"${CHATTERD_PYTHON:-python3}" bench/lib/soak.py --minutes "$minutes" --port "$port" --pid "$pid" --cacert "$out/soak.crt" \
    --database-url "$url" --pgdata "$cluster/data" --pg-bindir "$(pg_bindir)" --pg-log "$cluster/postgres.log" \
    --pool-size "$pool_size" --report "$out/results.md" --command "$command_line" || status=$?

kill -0 "$pid" 2>/dev/null || { tail -n 20 "$out/chatterd.log" >&2; die "chatterd died during the soak"; }
kill -TERM "$pid"
exit_status=0
wait "$pid" || exit_status=$?
_untrack "$pid"
if (( exit_status == 0 )); then
    printf -- '- ok: chatterd exited 0 on SIGTERM\n' >>"$out/results.md"
else
    printf -- '- **FAIL**: chatterd exited %s on SIGTERM\n' "$exit_status" >>"$out/results.md"
    warn "chatterd exited $exit_status on SIGTERM"
    status=1
fi
log "report: $out/results.md"
(( status == 0 )) || die "soak invariants violated (see above and $out/chatterd.log)"
log "soak passed"
