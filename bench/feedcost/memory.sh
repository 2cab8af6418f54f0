#!/usr/bin/env bash
# RSS of one chatterd (plain HTTP) over a database of ROWS chatts seeded by bench/sql/seed.sql: idle, after
# reading /getmaps plain and gzip, and after 40 posts each followed by both reads; VmHWM is the peak so far.
# ADMIN_URL names a superuser connection; the database feedmem_ROWS is made (once) next to it.
# Usage: bench/feedcost/memory.sh CHATTERD_BINARY ADMIN_URL ROWS
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
(( $# == 3 )) || { sed -n '5p' "$0" | sed 's/^# //'; exit 64; }
bin=$1 admin=$2 rows=$3 db=feedmem_$3
url="${admin%%\?*}" query=""
[[ $admin == *\?* ]] && query="?${admin#*\?}"
dburl="${url%/*}/$db$query"
if [[ $(psql -X "$admin" -Atc "SELECT 1 FROM pg_database WHERE datname = '$db'") != 1 ]]; then
    psql -X -q "$admin" -c "CREATE DATABASE $db"
    "$bin" migrate --database-url "$dburl" --migrations "$ROOT/migrations" >/dev/null 2>&1
    psql -X -q "$dburl" -v rows="$rows" -f "$ROOT/bench/sql/seed.sql"
    psql -X -q "$dburl" -c "VACUUM ANALYZE chatts"
fi
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$bin" serve --host 127.0.0.1 --port "$port" --plain-http --database-url "$dburl" \
    --migrations "$ROOT/migrations" --log-level warn &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.1; done
sleep 1
rss() { awk '/VmRSS|VmHWM/ { printf "%s %d MB  ", $1, $2 / 1024 }' "/proc/$pid/status"; }
feed="http://127.0.0.1:$port/getmaps"
echo "idle: $(rss)"
for _ in 1 2 3; do
    plain=$(curl -s "$feed" | wc -c)
    gzip=$(curl -s -H 'Accept-Encoding: gzip' "$feed" | wc -c)
done
echo "body $plain bytes, gzip $gzip bytes; after reads: $(rss)"
for i in $(seq 40); do
    curl -s -o /dev/null "http://127.0.0.1:$port/postmaps" \
        -d "{\"name\":\"mem\",\"message\":\"post $i\",\"geodata\":\"[42.29,-83.71,\\\"North\\\",\\\"walking\\\"]\"}"
    curl -s -o /dev/null "$feed"
    curl -s -o /dev/null -H 'Accept-Encoding: gzip' "$feed"
done
echo "after 40 posts and reads: $(rss)"
