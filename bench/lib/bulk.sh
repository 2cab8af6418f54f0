# shellcheck shell=bash
# The bulk-insert scenario: the feed comes to be by another writer's bulk insert while chatterd runs. A chatterd
# of its own (TLS) starts on a database of its own in the benchmark's cluster, empty, and its feed is built (both
# forms read); then psql inserts BENCH_ROWS chatts in one statement (bench/sql/seed.sql), whose trigger tells
# chatterd; both forms are read once, chatterd's resident set is noted once it is idle, and BENCH_CONNECTIONS wrk
# clients read both forms by turns for the run's duration. A fresh process, so no other scenario's memory is in
# its figures. Its row's RSS is the peak from the insert to the end of the reads, CPU and threads over the same span.
# Needs BENCH_DB_DIR, BENCH_ROWS, BENCH_OUT, BENCH_CONNECTIONS, BENCH_DURATION, BENCH_CHAIN, BENCH_KEY.
# shellcheck disable=SC2034 # the variables set here are read by report.sh
# Sets BENCH_BULK ("idle_kb body_bytes gzip_bytes rows": the resident set after the first reads of both forms, and
# the sizes of the forms read).

BENCH_BULK_DB=chatterd_bulk

bench_bulk_insert() {
    local out=$BENCH_OUT/bulk url port pid base etag status i started inserted waited body_bytes gzip_bytes count idle_kb
    mkdir -p "$out"
    pg_psql "$BENCH_DB_DIR" postgres -c "DROP DATABASE IF EXISTS $BENCH_BULK_DB" -c "CREATE DATABASE $BENCH_BULK_DB" \
        || die "cannot create the database $BENCH_BULK_DB"
    url=$(pg_cluster_url "$BENCH_DB_DIR" "$BENCH_BULK_DB")
    "$CHATTERD_BIN" migrate --database-url "$url" >"$out/migrate.log" 2>&1 \
        || die "chatterd migrate failed (see $out/migrate.log)"
    port=$(free_port)
    start_tracked "$out/chatterd.log" "$CHATTERD_BIN" serve --host 127.0.0.1 --port "$port" --database-url "$url" \
        --cert "$BENCH_CHAIN" --key "$BENCH_KEY"
    pid=$STARTED_PID base=https://127.0.0.1:$port
    wait_http "$pid" "$out/chatterd.log" --cacert "$BENCH_CHAIN" "$base/healthz"
    # Its feed built: the empty feed read in both forms.
    curl -fsS --cacert "$BENCH_CHAIN" -D "$out/empty.headers" -o "$out/empty.body" "$base/getmaps" \
        || die "GET /getmaps of the empty store failed"
    curl -fsS --cacert "$BENCH_CHAIN" -H "$BENCH_IOS_ENCODING" -o /dev/null "$base/getmaps" \
        || die "GET /getmaps of the empty store with Accept-Encoding failed"
    etag=$(awk 'tolower($1) == "etag:" { print $2 }' "$out/empty.headers" | tr -d '\r')
    [[ -n $etag ]] || die "GET /getmaps sent no ETag"

    log "bulk-insert (tls): psql inserts $BENCH_ROWS chatts in one statement while chatterd (pid $pid) runs"
    sample_begin "$pid"
    started=$(date +%s%N)
    pg_psql "$BENCH_DB_DIR" "$BENCH_BULK_DB" -v rows="$BENCH_ROWS" -f bench/sql/seed.sql \
        || die "the bulk insert failed"
    inserted=$(( ($(date +%s%N) - started) / 1000000 ))
    # The first read of each form, once the insert is settled: a second after it, when chatterd has long had the
    # notification (reads while it builds the new version would make the figure depend on their timing), identity
    # as soon as the feed has moved on from the empty one (304 until then), then gzip.
    sleep 1
    for (( i = 0; i < 1200; i++ )); do
        status=$(curl -sS --cacert "$BENCH_CHAIN" -H "If-None-Match: $etag" -o "$out/getmaps.body" -w '%{http_code}' \
            "$base/getmaps") || die "GET /getmaps after the bulk insert failed"
        [[ $status == 304 ]] || break
        sleep 0.05
    done
    [[ $status == 200 ]] || die "GET /getmaps after the bulk insert answered $status"
    waited=$(( ($(date +%s%N) - started) / 1000000 ))
    count=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1], "rb"))))' "$out/getmaps.body")
    [[ $count == "$BENCH_ROWS" ]] || die "GET /getmaps after the bulk insert had $count rows, not $BENCH_ROWS"
    curl -fsS --cacert "$BENCH_CHAIN" -H "$BENCH_IOS_ENCODING" -D "$out/getmaps.headers" -o "$out/getmaps.gz" \
        "$base/getmaps" || die "GET /getmaps with Accept-Encoding after the bulk insert failed"
    grep -qi '^content-encoding: *gzip' "$out/getmaps.headers" || die "chatterd did not gzip /getmaps"
    gzip -dc "$out/getmaps.gz" | cmp -s "$out/getmaps.body" - || die "the gzip form does not inflate to the body"
    body_bytes=$(stat -c %s "$out/getmaps.body")
    gzip_bytes=$(stat -c %s "$out/getmaps.gz")
    sleep 1
    idle_kb=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")
    log "bulk-insert (tls): the insert took $inserted ms, the first read came $waited ms after its start;" \
        "$body_bytes + $gzip_bytes bytes;" \
        "RSS $(( idle_kb / 1024 )) MB idle after both forms were read"
    BENCH_BULK="$idle_kb $body_bytes $gzip_bytes $BENCH_ROWS"

    bench_wrk_sampled bulk-insert tls "$pid" "$BENCH_CONNECTIONS" "$base/getmaps" -s bench/lua/both-forms.lua
    stop_tracked_one "$pid"
    pg_psql "$BENCH_DB_DIR" postgres -c "DROP DATABASE $BENCH_BULK_DB" -c CHECKPOINT \
        || die "cannot drop the database $BENCH_BULK_DB"
    rm -f "$out/getmaps.body" "$out/getmaps.gz"
}
