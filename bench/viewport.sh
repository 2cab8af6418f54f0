#!/usr/bin/env bash
# Viewports at a million chatts, one run over TLS on loopback against a fresh PostgreSQL (full durability), for each
# spatial mix of bench/sql/seed-spatial.sql (campus, uniform, tracks):
#   boxes      BOXES boxes of each selectivity class (about 10, 100, 1 000, 10 000 and 100 000 hits), centred on
#              chatts at random (bench/lib/viewport_boxes.py), each asked as /getmaps?bbox=...&newest=500 with the
#              iOS app's Accept-Encoding;
#   chatterd   per class, wrk with CONNECTIONS kept-alive connections (its most, closed loop), then the same boxes
#              offered open loop at half that rate (bench/lib/open_loop.py, capped at MAX_OPEN a second, what the
#              generator keeps up with): p50/p99/max;
#   postgis    the anchor: PostGIS on the same store (bench/sql/postgis.sql: generated point column, GiST index, the
#              table clustered on it, shared_buffers above table and index), two ways:
#              through chatterd: a second chatterd (serve --bbox-in-database) that asks PostGIS for the ids of the
#              box's newest 500 and slices their rows from its feed, open loop at chatterd's open-loop rate;
#              returning rows: pgbench with the newest 500 whole rows of a random box of the class
#              (bench/sql/postgis-rows.sql, prepared), closed loop with CONNECTIONS clients, and open loop (--rate)
#              at chatterd's open-loop rate: the database's ceiling without HTTP;
#   clusters   /getmaps/clusters of the whole world at zooms 0 to 3 (a screen up to 2 048 pixels wide shows it
#              whole) and of BOXES screens (1024 x 768 pixels) at random zooms around random chatts, in turn: wrk
#              closed loop, then open loop at half its rate; then the whole world at each zoom 0 to 6 alone, one
#              request at a time;
#   start      a chatterd started on the store: seconds to its first bbox answer, its RSS then;
# and the index alone against a scan of every row, in one process (bench/viewport-index). --only boxes or
# --only clusters runs that scenario alone (with the start, and the index alone).
# Writes .build/viewport/results.md and keeps every tool's output there.
#
# Usage: bench/viewport.sh [--rows N] [--mixes LIST] [--boxes N] [--duration S] [--connections C] [--max-open R]
#                          [--only boxes|clusters]
#   defaults: --rows 1000000 --mixes campus,uniform,tracks --boxes 20 --duration 10 --connections 8 --max-open 1500
# Environment: CHATTERD_BIN (a chatterd to use instead of building), CHATTERD_BUILD_DIR (.build).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
for lib in scripts/lib/common.sh scripts/lib/postgres.sh scripts/lib/deps.sh bench/lib/procs.sh \
    bench/lib/chatterd.sh bench/lib/database.sh; do
    # shellcheck source=/dev/null
    source "$lib"
done

usage() { sed -n '26,29p' "$0" | sed 's/^# \{0,1\}//'; }

rows=1000000 mixes=campus,uniform,tracks boxes=20 duration=10 connections=8 max_open=1500
command_line="bench/viewport.sh${*:+ $*}"
while (( $# > 0 )); do
    case $1 in
        --rows) rows=${2:?}; shift 2 ;;
        --mixes) mixes=${2:?}; shift 2 ;;
        --boxes) boxes=${2:?}; shift 2 ;;
        --duration) duration=${2:?}; shift 2 ;;
        --connections) connections=${2:?}; shift 2 ;;
        --max-open) max_open=${2:?}; shift 2 ;;
        --only) only=${2:?}; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "unknown option: $1" ;;
    esac
done
classes=(10 100 1000 10000 100000)
only=${only:-boxes,clusters}
[[ $only =~ ^(boxes|clusters|boxes,clusters)$ ]] || die "--only takes boxes or clusters"

out=$ROOT/.build/viewport
rm -rf -- "$out"
mkdir -p "$out"
bench_clean_up_on_exit

deps_ensure wrk /usr/lib/postgresql/15/lib/postgis-3.so=postgresql-15-postgis-3 || die "missing packages"
bench_chatterd_build
export CHATTERD_LOG_LEVEL=${CHATTERD_LOG_LEVEL:-warn}
crt=$out/bench-server.crt key=$out/bench.key
deploy/gen-cert.sh --out-dir "$out" --name bench --force >/dev/null
log "starting PostgreSQL (full durability, shared_buffers 2 GB: above a million rows' table and indexes)"
bench_db_start "$connections"
pg_psql "$BENCH_DB_DIR" postgres -qc "ALTER SYSTEM SET shared_buffers = '2GB'"
pg_cluster_stop "$BENCH_DB_DIR"
BENCH_DB_URL=$(pg_cluster_start "$BENCH_DB_DIR" "$(free_port)") || die "PostgreSQL did not restart"
"$CHATTERD_BIN" migrate --database-url "$BENCH_DB_URL" >"$out/migrate.log" 2>&1 \
    || die "chatterd migrate failed (see $out/migrate.log)"

report=$out/results.md
{
    echo "# Viewports, $(date -u '+%Y-%m-%d %H:%M UTC') (chatterd at $(git rev-parse --short HEAD))"
    echo
    echo "\`$command_line\`; $(nproc) cores; every figure from one run. Latencies in ms; each request the newest"
    echo "500 chatts of a box (\`/getmaps?bbox=...&newest=500\`, gzip), each class's boxes in turn."
    echo
} >"$report"

# Seeds the store with MIX and sets PostGIS up on it.
seed_mix() {
    local mix=$1
    log "$mix: seeding $rows chatts, then PostGIS (index, cluster, analyse)"
    bench_psql -q -c 'DROP INDEX IF EXISTS chatts_geom' -c 'TRUNCATE chatts'
    bench_psql -q -v rows="$rows" -v mix="$mix" -f bench/sql/seed-spatial.sql >/dev/null
    bench_psql -q -f bench/sql/postgis.sql
    bench_psql -q -c 'VACUUM ANALYZE chatts' -c 'CHECKPOINT'
}

# Starts chatterd on the store, with any further arguments, and waits for its first bbox answer; sets PID, URL and
# START_FIGURES.
start_viewport_server() {
    local log_file=$1 port started ready
    shift
    port=$(free_port)
    started=$(date +%s.%N)
    start_tracked "$log_file" "$CHATTERD_BIN" serve --host 127.0.0.1 --port "$port" --database-url "$BENCH_DB_URL" \
        --cert "$crt" --key "$key" "$@"
    PID=$STARTED_PID URL=https://127.0.0.1:$port
    wait_http "$PID" "$log_file" --cacert "$crt" "$URL/healthz"
    until curl -fsS -o /dev/null --cacert "$crt" "$URL/getmaps?bbox=-180,-90,180,90&newest=1" 2>/dev/null; do
        kill -0 "$PID" 2>/dev/null || die "chatterd exited (log: $log_file)"
        sleep 0.1
    done
    ready=$(date +%s.%N)
    # The index of the full read is packed in the background: its RSS once that is done.
    sleep 3
    START_FIGURES="first bbox answer $(awk -v a="$started" -v b="$ready" 'BEGIN { printf "%.1f", b - a }') s after start;"
    START_FIGURES+=" RSS $(awk '/^VmRSS:/ { printf "%d", $2 / 1024 }' "/proc/$PID/status") MiB"
}

# Prints "seconds count" of the request durations (complete request to queued response) in /metrics at URL.
duration_totals() {
    curl -fsS --cacert "$crt" "$1/metrics" | awk '
        /^chatterd_request_duration_seconds_sum / { sum = $2 }
        /^chatterd_request_duration_seconds_count / { count = $2 }
        END { print sum, count }'
}

# Prints the mean handler time in ms between two "seconds count" lines of duration_totals.
handler_mean() {
    awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " "); printf "%.2f", (y[1] - x[1]) / (y[2] - x[2]) * 1000 }'
}

# Prints "rps p50 p99 max" (ms) from a file holding a BENCH line.
bench_line() {
    awk '/^BENCH / {
            for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
            printf "%.0f %.2f %.2f %.2f", v["rps"], v["p50_us"] / 1000, v["p99_us"] / 1000, v["max_us"] / 1000
        }' "$1"
}

# Prints "tps p50 p99 max" (ms) of a pgbench run whose per-transaction logs start with PREFIX.
pgbench_line() {
    local file=$1 prefix=$2 tps
    tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$file" | tail -n 1)
    # The per-transaction log's third field is the latency in microseconds (with --rate, from the scheduled start).
    cat "$prefix".* | awk '{ print $3 }' | sort -n | awk -v tps="$tps" '
        { v[NR] = $1 }
        END { printf "%.0f %.2f %.2f %.2f", tps, v[int((NR - 1) * 0.5) + 1] / 1000, v[int((NR - 1) * 0.99) + 1] / 1000,
              v[NR] / 1000 }'
}

# Runs wrk closed loop over the targets in FILE (bench/lua/targets.lua, gzip) against chatterd, output to OUT.
closed_loop() {
    local out=$1 file=$2
    TARGETS=$file GZIP=1 run_tracked "$out" wrk -t2 -c"$connections" -d"${duration}s" -s bench/lua/targets.lua "$URL" \
        || die "wrk failed (see $out)"
}

# Offers the targets in FILE to the server at SERVER_URL at RATE a second (bench/lib/open_loop.py), output to OUT.
open_loop() {
    local out=$1 server_url=$2 file=$3 rate=$4
    run_tracked "$out" python3 bench/lib/open_loop.py "$server_url" --rate "$rate" --duration "$duration" \
        --connections "$connections" --cacert "$crt" --post-every 0 --targets "$file" \
        || die "open_loop.py failed (see $out)"
}

run_mix() {
    local mix=$1
    local dir=$out/$mix
    mkdir -p "$dir"
    seed_mix "$mix"
    bench_psql -At -c "SELECT ST_X(geom), ST_Y(geom) FROM chatts WHERE geom IS NOT NULL" \
        | python3 bench/lib/viewport_boxes.py "$dir" --boxes "$boxes" >"$dir/classes.txt" \
        || die "viewport_boxes.py failed"
    bench_psql -q -f "$dir/boxes.sql"
    start_viewport_server "$dir/chatterd.log"
    printf '## %s\n\n%s.\n\n' "$mix" "$START_FIGURES" >>"$report"
    if [[ $only == *boxes* ]]; then run_boxes "$mix"; fi
    if [[ $only == *clusters* ]]; then run_clusters "$mix"; fi
    stop_tracked_one "$PID"
}

# The boxes of each class of MIX: chatterd closed and open loop, PostGIS through a second chatterd and returning rows.
run_boxes() {
    local mix=$1
    local dir=$out/$mix class closed rate closed_db open_db bindir c50 c99 o50 o99 omax dbtps d50 d99 e50 e99 emax
    local server_pid=$PID server_url=$URL through_pid through_url t50 t99 tmax before handler
    bindir=$(pg_bindir) || die "no PostgreSQL binaries"
    start_viewport_server "$dir/chatterd-postgis.log" --bbox-in-database
    through_pid=$PID through_url=$URL
    PID=$server_pid URL=$server_url
    {
        echo "Hits per class: $(awk '{ printf "%s%s", sep, $5; sep = ", " }' "$dir/classes.txt")."
        echo
        echo "Open loop, each at chatterd's open-loop rate: chatterd (and its handler's mean time, from /metrics);"
        echo "PostGIS through chatterd; PostGIS returning rows (pgbench, no HTTP or TLS). Ratios: PostGIS's p99 over"
        echo "chatterd's."
        echo
        echo "| class | chatterd closed (req/s) | p50 | p99 | open rate | p50 | p99 | max | handler mean | PostGIS through chatterd p50 | p99 | max | PostGIS rows closed (tps) | p50 | p99 | open p50 | p99 | max | p99 ratio through chatterd | p99 ratio rows |"
        echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    } >>"$report"
    for class in "${classes[@]}"; do
        log "$mix, class $class: wrk -c$connections, then open loop; pgbench the same"
        closed_loop "$dir/wrk-$class.txt" "$dir/class-$class.txt"
        read -r closed c50 c99 _ <<<"$(bench_line "$dir/wrk-$class.txt")"
        rate=$(( closed / 2 < max_open ? closed / 2 : max_open ))
        before=$(duration_totals "$URL")
        open_loop "$dir/open-$class.txt" "$URL" "$dir/class-$class.txt" "$rate"
        read -r _ o50 o99 omax <<<"$(bench_line "$dir/open-$class.txt")"
        handler=$(handler_mean "$before" "$(duration_totals "$URL")")
        open_loop "$dir/through-$class.txt" "$through_url" "$dir/class-$class.txt" "$rate"
        read -r _ t50 t99 tmax <<<"$(bench_line "$dir/through-$class.txt")"
        run_tracked "$dir/pgbench-$class.txt" "$bindir/pgbench" -n -M prepared -c "$connections" -j 2 \
            -T "$duration" -D class="$class" -D boxes="$boxes" -f bench/sql/postgis-rows.sql \
            -l --log-prefix="$dir/pgbench-closed-$class" "$BENCH_DB_URL" || die "pgbench failed"
        closed_db=$(pgbench_line "$dir/pgbench-$class.txt" "$dir/pgbench-closed-$class")
        run_tracked "$dir/pgbench-open-$class.txt" "$bindir/pgbench" -n -M prepared -c "$connections" -j 2 \
            -T "$duration" -R "$rate" -D class="$class" -D boxes="$boxes" -f bench/sql/postgis-rows.sql \
            -l --log-prefix="$dir/pgbench-open-$class" "$BENCH_DB_URL" || die "pgbench --rate failed"
        open_db=$(pgbench_line "$dir/pgbench-open-$class.txt" "$dir/pgbench-open-$class")
        read -r dbtps d50 d99 _ <<<"$closed_db"
        read -r _ e50 e99 emax <<<"$open_db"
        echo "| $class | $closed | $c50 | $c99 | $rate | $o50 | $o99 | $omax | $handler | $t50 | $t99 | $tmax |" \
            "$dbtps | $d50 | $d99 |" \
            "$e50 | $e99 | $emax | $(awk -v a="$t99" -v b="$o99" 'BEGIN { printf "%.1f×", a / b }') |" \
            "$(awk -v a="$e99" -v b="$o99" 'BEGIN { printf "%.1f×", a / b }') |" >>"$report"
    done
    echo >>"$report"
    stop_tracked_one "$through_pid"
}

# The clusters of MIX: wrk closed loop, then open loop at half its rate.
run_clusters() {
    local mix=$1
    local dir=$out/$mix closed rate c50 c99 o50 o99 omax before handler
    log "$mix, clusters: wrk -c$connections, then open loop"
    closed_loop "$dir/wrk-clusters.txt" "$dir/clusters.txt"
    read -r closed c50 c99 _ <<<"$(bench_line "$dir/wrk-clusters.txt")"
    rate=$(( closed / 2 < max_open ? closed / 2 : max_open ))
    before=$(duration_totals "$URL")
    open_loop "$dir/open-clusters.txt" "$URL" "$dir/clusters.txt" "$rate"
    read -r _ o50 o99 omax <<<"$(bench_line "$dir/open-clusters.txt")"
    handler=$(handler_mean "$before" "$(duration_totals "$URL")")
    {
        echo "Clusters (the whole world at zooms 0-3 and $boxes screens at zooms 2-18, gzip): closed $closed req/s,"
        echo "p50 $c50, p99 $c99; open loop at $rate/s: p50 $o50, p99 $o99, max $omax; handler mean $handler."
        echo
        echo "The whole world alone, one request at a time (curl, kept alive, gzip; the median of 5):"
        whole_world_line
        echo
    } >>"$report"
}

# Prints, for each zoom 0-6, the median time of 5 requests for the whole world's clusters (after one that opens the
# connection) and their gzip size.
whole_world_line() {
    local zoom url args
    for zoom in 0 1 2 3 4 5 6; do
        url="$URL/getmaps/clusters?zoom=$zoom" args=()
        for _ in 1 2 3 4 5 6; do args+=(-o /dev/null "$url"); done
        curl -sS --cacert "$crt" -H 'Accept-Encoding: gzip' -w '%{time_total} %{size_download}\n' "${args[@]}" \
            | tail -n 5 | sort -n | awk -v zoom="$zoom" 'NR == 3 { printf "zoom %d %.2f ms (%.0f KB); ", zoom, $1 * 1000, $2 / 1024 }'
    done
    echo
}

IFS=, read -r -a mix_list <<<"$mixes"
for mix in "${mix_list[@]}"; do
    run_mix "$mix"
done

log "the index alone against a scan (bench/viewport-index)"
swift build -c release --product viewport-index-bench --scratch-path "${CHATTERD_BUILD_DIR:-$ROOT/.build}" >&2 \
    || die "swift build failed"
{
    echo "## The index alone against a scan, in one process"
    echo
    echo '```'
    "${CHATTERD_BUILD_DIR:-$ROOT/.build}/release/viewport-index-bench" "$rows"
    echo '```'
} >>"$report"
cat "$report"
