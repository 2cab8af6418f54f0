# shellcheck shell=bash
# The Markdown report: what ran where, the results table and the performance targets.

# Prints a one-line description of this machine: cores, CPU model, memory, kernel.
bench_machine() {
    local model ram_kb
    model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
    ram_kb=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
    printf '%s cores (nproc), %s, %.1f GB RAM, Linux %s\n' "$(nproc)" "${model:-unknown CPU}" \
        "$(awk -v kb="$ram_kb" 'BEGIN { print kb / 1048576 }')" "$(uname -r)"
}

# Prints the report for the results in BENCH_RESULTS. Usage: bench_report COMMAND-LINE BODY-FILE
bench_report() {
    local command=$1 body=$2 body_bytes=0 gzip_bytes=0 commit baselines='' http11='' name b
    [[ -f $body ]] && body_bytes=$(stat -c %s "$body")
    [[ -f $body.gz ]] && gzip_bytes=$(stat -c %s "$body.gz")
    commit=$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)
    for name in "${BENCH_SCENARIOS[@]}"; do
        b=$(bench_baseline_of "$name")
        [[ -z $b ]] || baselines+="$name=$b "
        # Each HTTP/2 scenario is the HTTP/1.1 one of the same name, spoken in HTTP/2.
        [[ $name != h2-* ]] || http11+="$name=${name#h2-} "
    done
    printf '# chatterd benchmark, %s\n\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
    # shellcheck disable=SC2016 # the backquotes are Markdown
    printf -- '- command: `%s`\n' "$command"
    printf -- '- machine: %s\n' "$(bench_machine)"
    printf -- '- chatterd %s (%s); %s; PostgreSQL %s with fsync and synchronous_commit on\n' "$commit" "$CHATTERD_BIN" \
        "$("$(_nginx_bin)" -v 2>&1 | sed 's/^nginx version: //')" "$(bench_psql -Atc 'SHOW server_version')"
    printf -- '- load: wrk -t%s -c%s -d%ss (getmaps-conns -c%s); h2load -t%s -c%s -m%s -D %s (transport h2: HTTP/2 over TLS, no cap of requests per connection, as h2load does not reconnect after GOAWAY); pgbench -c%s -j%s -T%s -M prepared\n' \
        "$BENCH_THREADS" "$BENCH_CONNECTIONS" "$BENCH_DURATION" $(( 4 * BENCH_CONNECTIONS )) \
        "$BENCH_THREADS" "$BENCH_CONNECTIONS" "$BENCH_H2_STREAMS" "$BENCH_DURATION" \
        "$BENCH_CONNECTIONS" "$BENCH_THREADS" "$BENCH_DURATION"
    printf -- '- post-lone: wrk -t1 -c1 (one client posting)'
    [[ -z ${BENCH_OPEN_RATE:-} ]] || printf '; mix-open: bench/lib/open_loop.py offering %s req/s (half the closed-loop mix'"'"'s %s over TLS) evenly spaced for %ss, every 10th a post, on up to %s kept-alive TLS connections, latency from each request'"'"'s due time' \
        "$BENCH_OPEN_RATE" "$BENCH_OPEN_MIX_RPS" "$BENCH_DURATION" "$BENCH_CONNECTIONS"
    [[ -z ${BENCH_BULK:-} ]] || printf '; bulk-insert: a chatterd of its own (TLS) on an empty database, %s chatts inserted by psql in one statement, both forms read once, then wrk -c%s reading both forms by turns' \
        "$BENCH_ROWS" "$BENCH_CONNECTIONS"
    printf '\n'
    printf -- '- nginx: 1 worker (nginx-tiny-1w), %s workers (the other nginx rows)\n' "$BENCH_NGINX_WORKERS"
    printf -- '- /getmaps: %s rows, %s bytes; %s bytes with gzip -9 (nginx gzip_static); ' \
        "$BENCH_ROWS" "$body_bytes" "$gzip_bytes"
    printf 'chatterd answers the iOS Accept-Encoding with %s\n' "${BENCH_CHATTERD_ENCODING:-unknown}"
    printf -- '- threads of the idle chatterd (TLS): %s before the load, %s five seconds after it\n\n' \
        "${BENCH_IDLE_THREADS:--}" "${BENCH_IDLE_THREADS_AFTER:--}"
    awk -v baselines="$baselines" -v http11="$http11" -v connections="$BENCH_CONNECTIONS" \
        -v streams="$BENCH_H2_STREAMS" -v body_bytes="$body_bytes" -v gzip_bytes="${BENCH_CHATTERD_GZIP_BYTES:-0}" \
        -v rows="$BENCH_ROWS" -v idle_threads="${BENCH_IDLE_THREADS:-}" -v built_kb="${BENCH_BUILT_KB:-0}" \
        -v held="${BENCH_HELD:-}" -v bulk="${BENCH_BULK:-}" -v open="${BENCH_OPEN:-}" \
        -v open_rate="${BENCH_OPEN_RATE:-0}" -v mix_rps="${BENCH_OPEN_MIX_RPS:-0}" \
        -f bench/lib/report.awk "$BENCH_RESULTS"
    bench_fanout_report
}
