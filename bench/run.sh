#!/usr/bin/env bash
# Benchmarks the release chatterd on loopback against baselines measured in the same run: nginx serving
# the same tiny response and the same /getmaps bytes as a static file (plain and gzip_static), over
# HTTP/1.1 (wrk) and HTTP/2 (h2load, TLS), and pgbench running chatterd's INSERT one per transaction on
# the same PostgreSQL. Only the ratios compare across machines and days. Writes .build/bench/results.md
# (and keeps every tool's output there).
#
# Usage: bench/run.sh [--rows N] [--duration S] [--connections C] [--threads T] [--only LIST]
#                     [--subscribers N] [--rate R]
#   --rows N         chatts seeded before the run (default 1000; 10000 and 100000 work too)
#   --duration S     seconds per scenario (default 10)
#   --connections C  wrk, h2load and pgbench clients (default 64); --threads T: their threads (default 2)
#   --subscribers N  fanout: feed stream subscribers (default 10000); --rate R: its posts a second (default 10)
#   --only LIST      scenarios to run, comma-separated (default all); each brings its baseline along (post
#                    brings post-rejected, post-lone and pgbench-c1; post-lone brings pgbench-c1; mix brings
#                    getmaps-gzip, getmaps-gzip-end, post, post-rejected and pgbench; mix-open brings mix alone):
#                    tiny getmaps getmaps-gzip getmaps-conns post-rejected post post-lone mix getmaps-gzip-end
#                    mix-open bulk-insert fanout h2-tiny h2-getmaps h2-getmaps-gzip
#                    nginx-tiny-1w nginx-tiny nginx-getmaps nginx-getmaps-gzip pgbench pgbench-c1
#                    nginx-h2-tiny-1w nginx-h2-getmaps nginx-h2-getmaps-gzip
#                    (post-lone: one client posting, wrk -t1 -c1; mix-open: the mix offered at a fixed rate,
#                    half the closed-loop mix's, by bench/lib/open_loop.py; bulk-insert: N chatts inserted by
#                    psql under a chatterd of its own, then read: its RSS, bench/lib/bulk.sh; fanout: the live
#                    feed to --subscribers TLS subscribers while one client posts --rate a second, under chatterds
#                    of its own, and nginx holding as many idle TLS connections, bench/lib/fanout.sh)
# Environment: CHATTERD_BIN (a chatterd to use instead of building), CHATTERD_BUILD_DIR (.build).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
for lib in scripts/lib/common.sh scripts/lib/deps.sh scripts/lib/postgres.sh bench/lib/*.sh; do
    # shellcheck source=/dev/null
    source "$lib"
done

usage() { sed -n '8,26p' "$0" | sed 's/^# \{0,1\}//'; }

BENCH_ROWS=1000 BENCH_DURATION=10 BENCH_CONNECTIONS=64 BENCH_THREADS=2 only=''
command_line="bench/run.sh${*:+ $*}"
while (( $# > 0 )); do
    [[ $1 != --* || $1 == --help || $# -ge 2 ]] || die "$1 needs a value"
    case $1 in
        --rows) BENCH_ROWS=${2:-}; shift 2 ;;
        --duration) BENCH_DURATION=${2:-}; shift 2 ;;
        --connections) BENCH_CONNECTIONS=${2:-}; shift 2 ;;
        --threads) BENCH_THREADS=${2:-}; shift 2 ;;
        --only) only=${2:-}; shift 2 ;;
        --subscribers) BENCH_FANOUT_SUBSCRIBERS=${2:-}; shift 2 ;;
        --rate) BENCH_FANOUT_RATE=${2:-}; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
for n in "$BENCH_ROWS" "$BENCH_DURATION" "$BENCH_CONNECTIONS" "$BENCH_THREADS" "$BENCH_FANOUT_SUBSCRIBERS"; do
    [[ $n =~ ^[1-9][0-9]*$ ]] || die "not a positive whole number: '$n'"
done
if [[ ! $BENCH_FANOUT_RATE =~ ^[0-9]+(\.[0-9]+)?$ || $BENCH_FANOUT_RATE =~ ^0+(\.0+)?$ ]]; then
    die "--rate must be a positive number: '$BENCH_FANOUT_RATE'"
fi
(( BENCH_CONNECTIONS >= BENCH_THREADS )) || die "--connections must be at least --threads (wrk needs one per thread)"
bench_select "$only"

deps_ensure wrk h2load=nghttp2-client /usr/sbin/nginx=nginx-light pgbench=postgresql-client || exit 1
BENCH_OUT=$ROOT/.build/bench
BENCH_RESULTS=$BENCH_OUT/results.tsv
# chatterd's I/O queues and handler threads use every core; nginx gets as many workers.
BENCH_NGINX_WORKERS=$(nproc)
rm -rf -- "$BENCH_OUT"
mkdir -p "$BENCH_OUT"
: >"$BENCH_RESULTS"

bench_clean_up_on_exit

bench_chatterd_build
# The chain gen-cert.sh writes: what chatterd and nginx serve, and (as it ends with the CA) what the clients trust.
crt=$BENCH_OUT/bench-server.crt key=$BENCH_OUT/bench.key
# shellcheck disable=SC2034 # read by bench/lib/bulk.sh and mix_open.sh
BENCH_CHAIN=$crt BENCH_KEY=$key
deploy/gen-cert.sh --out-dir "$BENCH_OUT" --name bench --force >/dev/null
log "starting PostgreSQL (full durability) and seeding $BENCH_ROWS chatts"
bench_db_start "$BENCH_CONNECTIONS"
"$CHATTERD_BIN" migrate --database-url "$BENCH_DB_URL" >"$BENCH_OUT/migrate.log" 2>&1 \
    || die "chatterd migrate failed (see $BENCH_OUT/migrate.log)"
bench_db_seed "$BENCH_ROWS"

log "starting chatterd (TLS and plain) and nginx (1 and $BENCH_NGINX_WORKERS workers)"
bench_chatterd_start "$BENCH_DB_URL" "$crt" "$key" "$BENCH_OUT"
docroot=$BENCH_OUT/www
mkdir -p "$docroot"
bench_chatterd_body "$BENCH_OUT/getmaps.body" "$BENCH_ROWS" "$crt"
bench_nginx_docroot "$BENCH_OUT/getmaps.body" "$docroot"
max_connections=$(( 4 * BENCH_CONNECTIONS + 64 ))
(( max_connections >= 1024 )) || max_connections=1024
bench_nginx_start nginx1 1 "$docroot" "$crt" "$key" "$BENCH_OUT" "$max_connections"
bench_nginx_start nginx "$BENCH_NGINX_WORKERS" "$docroot" "$crt" "$key" "$BENCH_OUT" "$max_connections"
for server in nginx1 nginx; do
    bench_nginx_check "$docroot/getmaps" "${BENCH_URL["chatterd-tls"]}" --cacert "$crt" --http1.1 \
        "${BENCH_URL["$server-tls"]}"
    bench_nginx_check "$docroot/getmaps" "${BENCH_URL["chatterd-h2"]}" --cacert "$crt" --http2 \
        "${BENCH_URL["$server-h2"]}"
    bench_nginx_check "$docroot/getmaps" "${BENCH_URL["chatterd-plain"]}" "${BENCH_URL["$server-plain"]}"
done
bench_h2_check "$crt" "${BENCH_URL["chatterd-tls"]}" "${BENCH_URL["chatterd-h2"]}" "${BENCH_URL["nginx1-h2"]}" \
    "${BENCH_URL["nginx-h2"]}"

# Threads of the idle TLS server, before any load and a few seconds after the last scenario (for the report).
# shellcheck disable=SC2034
BENCH_IDLE_THREADS=$(sample_threads "${BENCH_PID["chatterd-tls"]}")
# The servers started on the seeded store and the checks above read their feed in both forms.
bench_memory_built
bench_run_all
bench_memory_held
sleep 5
# shellcheck disable=SC2034
BENCH_IDLE_THREADS_AFTER=$(sample_threads "${BENCH_PID["chatterd-tls"]}")
bench_report "$command_line" "$docroot/getmaps" >"$BENCH_OUT/results.md"
cat "$BENCH_OUT/results.md"
log "report written to $BENCH_OUT/results.md"
