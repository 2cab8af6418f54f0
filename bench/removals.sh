#!/usr/bin/env bash
# Removals' targets, one run over TLS on loopback against a fresh PostgreSQL (full durability):
#   fan-out  ROWS chatts seeded, two chatterd processes on the store, SUBSCRIBERS live-feed subscribers split
#            between them, and a moderator removing REMOVALS chatts picked at random, one a second, by turns through
#            each process (bench/lib/removals.py): each removal's event: delete at every subscriber and its absence
#            from both processes' /getmaps (gzip), from its 200; resets; each process's full feed reads
#            (chatterd_feed_full_reads_total); stream bytes per subscriber per removal.
#   retention RETAIN chatts older than a week added to the store, and the 90/10 mix (bench/lib/open_loop.py, TLS,
#            MIX_RATE requests a second, every tenth a post) offered for DURATION seconds to a chatterd started
#            with --retention-days 7 (which removes them as it starts) and, by turns, to one without: post p99 of
#            each, and how long the retention pass took. Each round starts from the same store.
# Writes .build/removals/results.md and keeps every tool's output there.
#
# Usage: bench/removals.sh [--rows N] [--subscribers N] [--removals K] [--retain N] [--mix-rate R] [--duration S]
#                          [--rounds K] [--poll-ms MS] [--h2-mux] [--only fanout|retention]
#   defaults: --rows 100000 --subscribers 10000 --removals 30 --retain 50000 --mix-rate 100 --duration 20 --rounds 2
#   --poll-ms 5 (how often each /getmaps is asked while a removal is awaited; 0: not at all, events alone);
#   --h2-mux: every subscriber an HTTP/2 stream, 100 to a connection (far less client work per event)
# Environment: CHATTERD_BIN (a chatterd to use instead of building), CHATTERD_BUILD_DIR (.build).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
for lib in scripts/lib/common.sh scripts/lib/postgres.sh bench/lib/procs.sh bench/lib/chatterd.sh \
    bench/lib/database.sh; do
    # shellcheck source=/dev/null
    source "$lib"
done

usage() { sed -n '14,19p' "$0" | sed 's/^# \{0,1\}//'; }

rows=100000 subscribers=10000 removals=30 retain=50000 mix_rate=100 duration=20 rounds=2 poll_ms=5 mux=() only=''
command_line="bench/removals.sh${*:+ $*}"
while (( $# > 0 )); do
    case $1 in
        --rows) rows=${2:?}; shift 2 ;;
        --subscribers) subscribers=${2:?}; shift 2 ;;
        --removals) removals=${2:?}; shift 2 ;;
        --retain) retain=${2:?}; shift 2 ;;
        --mix-rate) mix_rate=${2:?}; shift 2 ;;
        --duration) duration=${2:?}; shift 2 ;;
        --rounds) rounds=${2:?}; shift 2 ;;
        --poll-ms) poll_ms=${2:?}; shift 2 ;;
        --h2-mux) mux=(--h2-share 1 --h2-streams 100); shift ;;
        --only) only=${2:?}; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "unknown option: $1" ;;
    esac
done

out=$ROOT/.build/removals
rm -rf -- "$out"
mkdir -p "$out"
bench_clean_up_on_exit

bench_chatterd_build
export CHATTERD_LOG_LEVEL=${CHATTERD_LOG_LEVEL:-warn}
crt=$out/bench-server.crt key=$out/bench.key
deploy/gen-cert.sh --out-dir "$out" --name bench --force >/dev/null
token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
( umask 077; printf 'bench:%s\n' "$token" >"$out/admin-tokens" )
log "starting PostgreSQL (full durability) and seeding $rows chatts"
bench_db_start 64
"$CHATTERD_BIN" migrate --database-url "$BENCH_DB_URL" >"$out/migrate.log" 2>&1 \
    || die "chatterd migrate failed (see $out/migrate.log)"
bench_db_seed "$rows"
report=$out/results.md
{
    echo "# Removals, $(date -u '+%Y-%m-%d %H:%M UTC') (chatterd at $(git rev-parse --short HEAD))"
    echo
    echo "\`$command_line\`; $(nproc) cores; every figure from one run."
    echo
} >"$report"

# Starts a chatterd on the benchmark's store with extra options; sets STARTED_PID and SERVER_URL.
start_server() {
    local log_file=$1 port
    shift
    port=$(free_port)
    start_tracked "$log_file" "$CHATTERD_BIN" serve --host 127.0.0.1 --port "$port" --database-url "$BENCH_DB_URL" \
        --cert "$crt" --key "$key" "$@"
    SERVER_URL=https://127.0.0.1:$port
    wait_http "$STARTED_PID" "$log_file" --cacert "$crt" "$SERVER_URL/healthz"
}

run_fanout() {
    local pids=() urls=() line n
    ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
    (( $(ulimit -n) >= subscribers + 512 )) || die "fan-out needs ulimit -n ≥ $(( subscribers + 512 ))"
    bench_psql -Atc "SELECT id FROM chatts ORDER BY random() LIMIT $removals" >"$out/removal-ids"
    for n in 1 2; do
        start_server "$out/chatterd-fanout-$n.log" --admin-token-file "$out/admin-tokens" \
            --max-connections $(( subscribers / 2 + 256 ))
        pids+=("$STARTED_PID") urls+=("$SERVER_URL")
    done
    log "fan-out: $subscribers subscribers on two processes, $removals removals"
    run_tracked "$out/removals.txt" python3 bench/lib/removals.py "${urls[@]}" --pids "${pids[0]},${pids[1]}" \
        --token-file "$out/admin-tokens" --ids-file "$out/removal-ids" --subscribers "$subscribers" \
        --removals "$removals" --poll-ms "$poll_ms" "${mux[@]}" --cacert "$crt" \
        || die "removals.py failed (see $out/removals.txt)"
    line=$(sed -n 's/^REMOVALS //p' "$out/removals.txt")
    [[ -n $line ]] || die "no REMOVALS line in $out/removals.txt"
    stop_tracked_one "${pids[0]}"
    stop_tracked_one "${pids[1]}"
    {
        echo "## Fan-out: $subscribers subscribers on two processes, $rows chatts, $removals removals"
        echo
        echo '```'
        tr ' ' '\n' <<<"$line"
        echo '```'
        echo
    } >>"$report"
}

# Adds RETAIN chatts dated from 30 days back (older than --retention-days 7) to the seeded store.
add_old_chatts() {
    bench_psql -c "DELETE FROM chatts WHERE seq > $BENCH_SEED_MAX_SEQ" >/dev/null
    bench_psql -v rows="$retain" -f bench/sql/seed.sql >/dev/null
    bench_psql -c "UPDATE chatts SET time = time - interval '30 days' WHERE seq > $BENCH_SEED_MAX_SEQ" \
        -c 'VACUUM ANALYZE chatts' -c 'CHECKPOINT' >/dev/null
}

# One mix run: PART (with or without retention) offered to a fresh chatterd; appends its row to the table.
run_mix() {
    local part=$1 round=$2 options=() file line pass last
    [[ $part == with ]] && options=(--retention-days 7)
    add_old_chatts
    last=$(bench_psql -Atc 'SELECT coalesce(max(seq), 0) FROM chatts_removals')
    file=$out/mix-$part-$round.txt
    start_server "$out/chatterd-mix-$part-$round.log" "${options[@]}"
    run_tracked "$file" python3 bench/lib/open_loop.py "$SERVER_URL" --rate "$mix_rate" --duration "$duration" \
        --cacert "$crt" || die "open_loop.py failed (see $file)"
    stop_tracked_one "$STARTED_PID"
    line=$(sed -n 's/^OPEN //p' "$file")
    [[ -n $line ]] || die "no OPEN line in $file"
    pass=$(bench_psql -Atc "SELECT coalesce(extract(epoch FROM max(removed_at) - min(removed_at))::numeric(8, 1)::text,
        '-') || ' s, ' || count(*) FROM chatts_removals WHERE removed_by = 'retention' AND seq > $last")
    awk -v part="$part" -v round="$round" -v pass="$pass" '{
            for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
            printf "| %s | %s | %s | %.1f | %.1f | %.1f | %.1f | %s |\n", round, part, v["posts"],
                v["posts_p50_us"] / 1000, v["posts_p99_us"] / 1000, v["reads_p50_us"] / 1000,
                v["reads_p99_us"] / 1000, pass
        }' <<<"$line" >>"$report"
}

run_retention() {
    local round
    {
        echo "## Retention: $retain old chatts under the 90/10 mix ($mix_rate requests/s offered, $duration s)"
        echo
        echo "| round | retention | posts | post p50 ms | post p99 ms | read p50 ms | read p99 ms |" \
            "pass (first to last removal, removed) |"
        echo "|---|---|---|---|---|---|---|---|"
    } >>"$report"
    for (( round = 1; round <= rounds; round++ )); do
        # By turns, so that a drift of the machine does not favour one side.
        if (( round % 2 )); then
            run_mix without "$round"; run_mix with "$round"
        else
            run_mix with "$round"; run_mix without "$round"
        fi
    done
    echo >>"$report"
}

[[ -z $only || $only == fanout ]] && run_fanout
[[ -z $only || $only == retention ]] && run_retention
cat "$report"
log "report written to $report"
