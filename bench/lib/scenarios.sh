# shellcheck shell=bash
# The scenarios, their baselines, which ones --only selects, and the order they run in.
# Needs BENCH_PID and BENCH_URL (servers), BENCH_CONNECTIONS, BENCH_THREADS, BENCH_DURATION, BENCH_OUT, and
# BENCH_CHAIN and BENCH_KEY (the servers' chain and key; the chain ends with the CA the clients trust).

# Every scenario; bench_run_all fixes the order they run in. The h2-* ones are HTTP/2 over TLS with h2load,
# against nginx's http2 (nginx-h2-*) and beside chatterd's HTTP/1.1 figures for the same request.
# post-rejected is the same POST refused with 400 before any database work; pgbench-c1 is pgbench with one
# client, whose latency is one commit's WAL flush, and post-lone a post from one client (wrk -t1 -c1), held to
# it; getmaps-gzip-end reads the feed as the mix left it (it grew by the mix's posts), so the mix can be held to
# the GET rate at both sizes. mix-open offers the mix at a fixed rate, half the closed-loop mix's over TLS in the
# same run (bench/lib/open_loop.py); bulk-insert is another writer's bulk insert under a chatterd of its own
# (bench/lib/bulk.sh); fanout is the live feed fanned out to many TLS subscribers under chatterds of its own, with
# nginx holding as many idle TLS connections beside it (bench/lib/fanout.sh).
BENCH_SCENARIOS=(nginx-tiny-1w tiny nginx-h2-tiny-1w h2-tiny nginx-tiny nginx-getmaps getmaps nginx-h2-getmaps
    h2-getmaps nginx-getmaps-gzip getmaps-gzip nginx-h2-getmaps-gzip h2-getmaps-gzip getmaps-conns pgbench
    pgbench-c1 post-lone post-rejected post mix getmaps-gzip-end mix-open bulk-insert fanout)

# The iOS app's Accept-Encoding.
BENCH_IOS_ENCODING='Accept-Encoding: gzip, deflate, br'

declare -A BENCH_SELECTED=()
# Server process ids and base URLs by "SERVER-TRANSPORT" (chatterd-tls, nginx1-plain, ...).
declare -A BENCH_PID=() BENCH_URL=()

# Prints the baseline scenario that chatterd scenario NAME is compared with; nothing if none.
bench_baseline_of() {
    case $1 in
        tiny) echo nginx-tiny-1w ;;
        getmaps) echo nginx-getmaps ;;
        getmaps-gzip) echo nginx-getmaps-gzip ;;
        post) echo pgbench ;;
        h2-tiny) echo nginx-h2-tiny-1w ;;
        h2-getmaps) echo nginx-h2-getmaps ;;
        h2-getmaps-gzip) echo nginx-h2-getmaps-gzip ;;
    esac
}

# Prints the transports scenario NAME runs over: HTTP/2 ones over h2 (TLS, ALPN h2), pgbench once (it has no
# transport), getmaps-conns, mix-open and bulk-insert over TLS only (phones poll over TLS), the others over TLS and
# plain HTTP/1.1.
bench_transports_of() {
    case $1 in
        h2-* | nginx-h2-*) echo h2 ;;
        pgbench | pgbench-c1 | getmaps-conns | mix-open | bulk-insert | fanout) echo tls ;;
        *) echo tls plain ;;
    esac
}

# Selects the scenarios in LIST (names separated by commas or spaces; empty: all), each with its baseline.
bench_select() {
    local name known
    local -a names
    IFS=', ' read -r -a names <<<"$1"
    (( ${#names[@]} > 0 )) || names=("${BENCH_SCENARIOS[@]}")
    for name in "${names[@]}"; do
        known=0
        [[ " ${BENCH_SCENARIOS[*]} " == *" $name "* ]] && known=1
        (( known )) || die "unknown scenario $name (known: ${BENCH_SCENARIOS[*]})"
        BENCH_SELECTED[$name]=1
        # The ratios need these in the same run: a post against a refused one, a lone post against one flush,
        # a mix at its end size, the open-loop mix at half the closed-loop one's rate.
        case $name in
            post) BENCH_SELECTED[post-rejected]=1 BENCH_SELECTED[post-lone]=1 BENCH_SELECTED[pgbench-c1]=1 ;;
            post-lone) BENCH_SELECTED[pgbench-c1]=1 ;;
            mix) BENCH_SELECTED[getmaps-gzip-end]=1 BENCH_SELECTED[getmaps-gzip]=1 BENCH_SELECTED[post]=1
                BENCH_SELECTED[post-rejected]=1 BENCH_SELECTED[pgbench]=1 ;;
            mix-open) BENCH_SELECTED[mix]=1 ;;
        esac
        name=$(bench_baseline_of "$name")
        [[ -z $name ]] || BENCH_SELECTED[$name]=1
    done
}

# Runs scenario NAME over TRANSPORT (tls, plain, or h2: TLS with ALPN h2 on h2load's listeners) if it is
# selected.
bench_run() {
    local name=$1 transport=$2 c=$BENCH_CONNECTIONS
    [[ -n ${BENCH_SELECTED[$name]:-} ]] || return 0
    local chatterd pid
    chatterd=${BENCH_URL["chatterd-$transport"]}
    pid=${BENCH_PID["chatterd-$transport"]}
    case $name in
        tiny) bench_wrk "$name" "$transport" "$pid" "$c" "$chatterd/healthz" ;;
        getmaps) bench_wrk "$name" "$transport" "$pid" "$c" "$chatterd/getmaps" ;;
        getmaps-gzip) bench_wrk "$name" "$transport" "$pid" "$c" "$chatterd/getmaps" -H "$BENCH_IOS_ENCODING" ;;
        # Four times the pollers: memory must not grow with the number of connections.
        getmaps-conns) bench_wrk "$name" "$transport" "$pid" $(( 4 * c )) "$chatterd/getmaps" ;;
        post-rejected) bench_wrk "$name" "$transport" "$pid" "$c" "$chatterd/postmaps" -s bench/lua/post-rejected.lua ;;
        post) bench_wrk "$name" "$transport" "$pid" "$c" "$chatterd/postmaps" -s bench/lua/post.lua
            bench_db_reset ;;
        post-lone) bench_wrk "$name" "$transport" "$pid" 1 "$chatterd/postmaps" -s bench/lua/post.lua
            bench_db_reset ;;
        # The store is reset after getmaps-gzip-end, which reads what the mix left.
        mix) bench_wrk "$name" "$transport" "$pid" "$c" "$chatterd/getmaps" -s bench/lua/mix.lua
            [[ -n ${BENCH_SELECTED[getmaps-gzip-end]:-} ]] || bench_db_reset ;;
        getmaps-gzip-end) bench_wrk "$name" "$transport" "$pid" "$c" "$chatterd/getmaps" -H "$BENCH_IOS_ENCODING"
            bench_db_reset ;;
        mix-open) bench_mix_open "$name" "$transport" "$pid" "$chatterd"
            bench_db_reset ;;
        bulk-insert) bench_bulk_insert ;;
        fanout) bench_fanout ;;
        h2-tiny) bench_h2load "$name" "$pid" "$c" "$chatterd/healthz" ;;
        h2-getmaps) bench_h2load "$name" "$pid" "$c" "$chatterd/getmaps" ;;
        h2-getmaps-gzip) bench_h2load "$name" "$pid" "$c" "$chatterd/getmaps" -H "$BENCH_IOS_ENCODING" ;;
        nginx-h2-tiny-1w) bench_h2load "$name" "${BENCH_PID[nginx1-h2]}" "$c" "${BENCH_URL[nginx1-h2]}/healthz" ;;
        nginx-h2-getmaps) bench_h2load "$name" "${BENCH_PID[nginx-h2]}" "$c" "${BENCH_URL[nginx-h2]}/getmaps" ;;
        nginx-h2-getmaps-gzip) bench_h2load "$name" "${BENCH_PID[nginx-h2]}" "$c" "${BENCH_URL[nginx-h2]}/getmaps" \
            -H "$BENCH_IOS_ENCODING" ;;
        nginx-tiny-1w) _bench_run_nginx nginx1 "$transport" /healthz ;;
        nginx-tiny) _bench_run_nginx nginx "$transport" /healthz ;;
        nginx-getmaps) _bench_run_nginx nginx "$transport" /getmaps ;;
        nginx-getmaps-gzip) _bench_run_nginx nginx "$transport" /getmaps -H "$BENCH_IOS_ENCODING" ;;
        pgbench) log "pgbench: -c$c -j$BENCH_THREADS -T$BENCH_DURATION, one INSERT per transaction"
            # shellcheck disable=SC2046 # the fields are numbers, split on purpose
            bench_record pgbench socket $(bench_pgbench "$c" "$BENCH_THREADS" "$BENCH_DURATION" "$BENCH_OUT") - - - -
            bench_db_reset ;;
        pgbench-c1) log "pgbench: -c1 -j1 -T$BENCH_DURATION, one INSERT per transaction: one WAL flush each"
            # shellcheck disable=SC2046 # the fields are numbers, split on purpose
            bench_record pgbench-c1 socket $(bench_pgbench 1 1 "$BENCH_DURATION" "$BENCH_OUT") - - - -
            bench_db_reset ;;
    esac
}

# Runs wrk on nginx instance SERVER over TRANSPORT at PATH, with extra wrk options.
_bench_run_nginx() {
    local server=$1 transport=$2 path=$3
    shift 3
    bench_wrk "$name" "$transport" "${BENCH_PID["$server-$transport"]}" "$BENCH_CONNECTIONS" \
        "${BENCH_URL["$server-$transport"]}$path" "$@"
}

# Runs every selected scenario over each of its transports (bench_transports_of), a baseline right
# before the chatterd scenario it is compared with over the same transport.
bench_run_all() {
    local group transport name
    for group in 'nginx-tiny-1w tiny' 'nginx-h2-tiny-1w h2-tiny' nginx-tiny 'nginx-getmaps getmaps' \
        'nginx-h2-getmaps h2-getmaps' 'nginx-getmaps-gzip getmaps-gzip' 'nginx-h2-getmaps-gzip h2-getmaps-gzip' \
        getmaps-conns pgbench 'pgbench-c1 post-lone' 'post-rejected post' 'mix getmaps-gzip-end' mix-open \
        bulk-insert fanout; do
        for transport in tls plain h2; do
            for name in $group; do
                if [[ " $(bench_transports_of "$name") " == *" $transport "* ]]; then
                    bench_run "$name" "$transport"
                fi
            done
        done
    done
}
