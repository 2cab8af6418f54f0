#!/usr/bin/env bash
# Concurrent inserts with the notification inside the inserting transaction (migration 0004's trigger, as 0003
# did for every insert) against chatterd's way (a marked insert, then an announcement that does not wait for its
# WAL flush), and the marked insert alone; one-row inserts at -c64 and 16-row batches at -c8, each twice,
# interleaved. URL names a migrated database on a cluster with full durability (fsync and synchronous_commit on).
# Usage: bench/feedcost/notify.sh URL [SECONDS]
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
(( $# >= 1 )) || { sed -n '6p' "$0" | sed 's/^# //'; exit 64; }
url=$1 seconds=${2:-15}
for round in 1 2; do
    for run in "64 trigger" "64 announce" "64 silent" "8 trigger16" "8 announce16"; do
        read -r clients script <<<"$run"
        out=$(pgbench -n -M prepared -c"$clients" -j2 -T"$seconds" -f "$here/notify-$script.sql" "$url" 2>&1)
        echo "round $round -c$clients $script: $(grep -E '^tps' <<<"$out" | cut -d' ' -f1-3)," \
            "$(grep 'latency average' <<<"$out")"
    done
done
