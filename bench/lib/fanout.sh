# shellcheck shell=bash
# The fanout scenario: the live feed (GET /getmaps/stream) fanned out to BENCH_FANOUT_SUBSCRIBERS TLS subscribers
# while one client posts BENCH_FANOUT_RATE chatts a second for BENCH_DURATION seconds (bench/lib/fanout.py), each
# part under a chatterd of its own (TLS) on the benchmark's database, started fresh so that its resident set before
# the first connection is the baseline of the RSS per subscriber:
#   fanout        half the subscribers HTTP/1.1, half HTTP/2, each on a TLS connection of its own (as phones hold
#                 them): RSS per idle subscriber, and the delivery latency from each post's 200 to each subscriber;
#   fanout-h2mux  every subscriber an HTTP/2 stream, 100 to a connection: the same posts, far less client work per
#                 delivery (the load generator shares the two cores), and the server's cost per stream;
#   fanout-idle   the same number of TLS connections, half HTTP/1.1 and half HTTP/2, opened and left idle (no request),
#                 on chatterd and on nginx (1 worker): the RSS per idle TLS connection of each.
# Needs BENCH_OUT, BENCH_DURATION, BENCH_CHAIN, BENCH_KEY, BENCH_DB_URL, CHATTERD_BIN, and bench_nginx_start's
# arguments (BENCH_OUT/www as its docroot).
# shellcheck disable=SC2034 # the variables set here are read by report.sh
# Sets BENCH_FANOUT (the FANOUT lines, "part key=value ..." one a line).

BENCH_FANOUT_SUBSCRIBERS=${BENCH_FANOUT_SUBSCRIBERS:-10000}
BENCH_FANOUT_RATE=${BENCH_FANOUT_RATE:-10}
BENCH_FANOUT=''

# Starts a chatterd for the fan-out on a free port; sets STARTED_PID and FANOUT_URL.
_fanout_chatterd() {
    local out=$1 port
    port=$(free_port)
    # Room for every subscriber and the poster; no per-client limit, no post rate limit (the defaults).
    start_tracked "$out" "$CHATTERD_BIN" serve --host 127.0.0.1 --port "$port" --database-url "$BENCH_DB_URL" \
        --cert "$BENCH_CHAIN" --key "$BENCH_KEY" --max-connections $(( BENCH_FANOUT_SUBSCRIBERS + 256 ))
    FANOUT_URL=https://127.0.0.1:$port
    wait_http "$STARTED_PID" "$out" --cacert "$BENCH_CHAIN" "$FANOUT_URL/healthz"
}

# Runs fanout.py for PART against the server at URL (pid PID) with extra options; records its FANOUT line.
_fanout_run() {
    local part=$1 url=$2 pid=$3 file=$BENCH_OUT/fanout-$1.txt line
    shift 3
    log "$part: fanout.py --subscribers $BENCH_FANOUT_SUBSCRIBERS $* $url (pid $pid)"
    run_tracked "$file" python3 bench/lib/fanout.py "$url" --pid "$pid" --cacert "$BENCH_CHAIN" \
        --subscribers "$BENCH_FANOUT_SUBSCRIBERS" "$@" || die "fanout.py failed (see $file)"
    kill -0 "$pid" 2>/dev/null || die "the server (pid $pid) died during $part"
    line=$(sed -n 's/^FANOUT //p' "$file")
    [[ -n $line ]] || die "no FANOUT line in $file"
    BENCH_FANOUT+="$part $line"$'\n'
}

bench_fanout() {
    local pid
    # Each process needs a descriptor per connection: raise the soft limit to the hard one (inherited by both).
    ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
    if (( $(ulimit -n) < BENCH_FANOUT_SUBSCRIBERS + 512 )); then
        warn "fanout skipped: it needs ulimit -n ≥ $(( BENCH_FANOUT_SUBSCRIBERS + 512 )) (hard limit $(ulimit -Hn));" \
            "raise the hard limit or pass a smaller --subscribers"
        return 0
    fi
    local rate=(--rate "$BENCH_FANOUT_RATE" --duration "$BENCH_DURATION")

    _fanout_chatterd "$BENCH_OUT/chatterd-fanout.log"
    pid=$STARTED_PID
    _fanout_run fanout "$FANOUT_URL" "$pid" "${rate[@]}" --h2-share 0.5 --h2-streams 1
    stop_tracked_one "$pid"
    bench_db_reset

    _fanout_chatterd "$BENCH_OUT/chatterd-fanout-h2mux.log"
    pid=$STARTED_PID
    _fanout_run fanout-h2mux "$FANOUT_URL" "$pid" "${rate[@]}" --h2-share 1 --h2-streams 100
    stop_tracked_one "$pid"
    bench_db_reset

    _fanout_chatterd "$BENCH_OUT/chatterd-fanout-idle.log"
    pid=$STARTED_PID
    _fanout_run fanout-idle "$FANOUT_URL" "$pid" --connect-only --h2-share 0.5
    stop_tracked_one "$pid"

    bench_nginx_start nginx-fanout 1 "$BENCH_OUT/www" "$BENCH_CHAIN" "$BENCH_KEY" "$BENCH_OUT" \
        $(( BENCH_FANOUT_SUBSCRIBERS + 256 ))
    pid=${BENCH_PID[nginx-fanout-tls]}
    _fanout_run nginx-fanout-idle "${BENCH_URL[nginx-fanout-tls]}" "$pid" --connect-only --h2-share 0.5
    stop_tracked_one "$pid"
}

# Prints the fan-out section of the report: a row per part, and the targets (bench/RESULTS.md, "Live feed fan-out").
bench_fanout_report() {
    [[ -n $BENCH_FANOUT ]] || return 0
    printf '\n## Live feed fan-out (GET /getmaps/stream, TLS; bench/lib/fanout.py)\n\n'
    printf '| part | subscribers (h1 / h2 on conns) | RSS before → idle MB | RSS per subscriber | posts/s | post p99 ms | deliveries/s | delivery p50 / p99 / max ms (from the 200) | p99 from the send ms | missing, dup, ended | server CPU s | client CPU s |\n'
    printf '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n'
    printf '%s' "$BENCH_FANOUT" | awk '
        NF == 0 { next }
        {
            delete v
            for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
            subs = sprintf("%d of %d (%d / %d on %d)", v["subscribed"], v["subscribers"], v["h1"], v["h2"], v["h2_conns"])
            rss = sprintf("%.0f → %.0f", v["rss_before_kb"] / 1024, v["rss_idle_kb"] / 1024)
            per = sprintf("%.1f KiB", v["rss_per_sub_b"] / 1024)
            if (v["connect_only"]) {
                printf "| %s | %s, connections only | %s | %s | - | - | - | - | - | - | - | - |\n", $1, subs, rss, per
                next
            }
            # The poster posts one at a time: when posts take longer than the schedule allows, fewer go out.
            achieved = v["span_s"] > 0 ? v["posts_ok"] / v["span_s"] : 0
            printf "| %s | %s | %s | %s | %.1f of %s | %s | %s | %s / %s / %s | %s | %d, %d, %d | %s | %s |\n", $1, subs, rss, per,
                achieved, v["rate"], v["post_p99_ms"], v["deliveries_per_s"], v["p50_ms"], v["p99_ms"], v["max_ms"],
                v["p99_from_send_ms"], v["missing"], v["duplicates"], v["ended"], v["cpu_server_s"], v["cpu_workers_s"]
            if ($1 == "fanout") {
                p99 = v["p99_ms"]; p99s = v["p99_from_send_ms"]; rate = v["rate"]; got = achieved; n = v["subscribed"]
                ok = v["missing"] + v["ended"] == 0; per_sub = v["rss_per_sub_b"]
            }
        }
        END {
            print ""
            print "| target (2 cores) | measured | |"
            print "|---|---|---|"
            if (n > 0) {
                # Met only at the rate offered (at least 90 % of it posted), with nothing lost.
                printf "| delivery p99 ≤ 250 ms from the post'"'"'s 200, %d TLS subscribers (h1 + h2), %s posts/s offered | p99 %s ms from the 200 (%s ms from the send) at %.1f posts/s achieved, %s | %s |\n",
                    n, rate, p99, p99s, got, ok ? "nothing missing" : "some missing or ended",
                    (p99 <= 250 && ok && got >= 0.9 * rate) ? "**met**" : "**not met**"
                printf "| RSS per idle TLS subscriber ≤ 8 KiB | %.1f KiB | %s |\n", per_sub / 1024, per_sub <= 8192 ? "**met**" : "**not met**"
            }
            print ""
            print "External reference (published, not measured here): Centrifugo, about 30 KB of memory per connection and 12.5k deliveries a second per CPU."
        }'
}
