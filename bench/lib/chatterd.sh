# shellcheck shell=bash
# The chatterd under test: the release binary, and one TLS and one plain-HTTP server on free ports, and a
# TLS one for h2load (see BENCH_H2_REQUESTS_PER_CONNECTION).
# shellcheck disable=SC2034 # the variables set here are read by run.sh and the other bench/lib files
# Sets CHATTERD_BIN, BENCH_CHATTERD_ENCODING, BENCH_CHATTERD_GZIP_BYTES, and BENCH_PID and BENCH_URL [chatterd-tls], [chatterd-plain]
# and [chatterd-h2].

# Builds the release chatterd unless CHATTERD_BIN names one already.
bench_chatterd_build() {
    if [[ -n ${CHATTERD_BIN:-} ]]; then
        [[ -x $CHATTERD_BIN ]] || die "CHATTERD_BIN=$CHATTERD_BIN is not an executable"
        return
    fi
    local build_dir=${CHATTERD_BUILD_DIR:-$ROOT/.build}
    log "building the release chatterd (swift build -c release, scratch path $build_dir)"
    swift build -c release --product chatterd --scratch-path "$build_dir" >&2 || die "swift build failed"
    CHATTERD_BIN=$build_dir/release/chatterd
}

# Starts the two servers on the database at URL with certificate CRT and key KEY, logging to OUT.
# Usage: bench_chatterd_start URL CRT KEY OUT
bench_chatterd_start() {
    local url=$1 crt=$2 key=$3 out=$4 tls_port plain_port h2_port
    tls_port=$(free_port)
    plain_port=$(free_port)
    h2_port=$(free_port)
    # Per-request access lines are off (once chatterd has them), as nginx's access_log is off.
    export CHATTERD_LOG_LEVEL=${CHATTERD_LOG_LEVEL:-warn}
    start_tracked "$out/chatterd-tls.log" "$CHATTERD_BIN" serve --host 127.0.0.1 --port "$tls_port" \
        --database-url "$url" --cert "$crt" --key "$key"
    BENCH_PID["chatterd-tls"]=$STARTED_PID
    BENCH_URL["chatterd-tls"]=https://127.0.0.1:$tls_port
    start_tracked "$out/chatterd-plain.log" "$CHATTERD_BIN" serve --host 127.0.0.1 --port "$plain_port" \
        --database-url "$url" --plain-http
    BENCH_PID["chatterd-plain"]=$STARTED_PID
    BENCH_URL["chatterd-plain"]=http://127.0.0.1:$plain_port
    start_tracked "$out/chatterd-h2.log" "$CHATTERD_BIN" serve --host 127.0.0.1 --port "$h2_port" \
        --database-url "$url" --cert "$crt" --key "$key" \
        --max-requests-per-connection "$BENCH_H2_REQUESTS_PER_CONNECTION"
    BENCH_PID["chatterd-h2"]=$STARTED_PID
    BENCH_URL["chatterd-h2"]=https://127.0.0.1:$h2_port
    wait_http "${BENCH_PID["chatterd-h2"]}" "$out/chatterd-h2.log" --cacert "$crt" "${BENCH_URL["chatterd-h2"]}/healthz"
    wait_http "${BENCH_PID["chatterd-tls"]}" "$out/chatterd-tls.log" --cacert "$crt" "${BENCH_URL["chatterd-tls"]}/healthz"
    wait_http "${BENCH_PID["chatterd-plain"]}" "$out/chatterd-plain.log" "${BENCH_URL["chatterd-plain"]}/healthz"
}

# Saves the current GET /getmaps body to FILE, checks that both servers send the same bytes and that
# it holds ROWS rows, and sets BENCH_CHATTERD_ENCODING to gzip when chatterd compresses it for the iOS
# Accept-Encoding (checking that it inflates to the same bytes), else to identity.
# Usage: bench_chatterd_body FILE ROWS CRT
bench_chatterd_body() {
    local file=$1 rows=$2 crt=$3 count encoding tls=${BENCH_URL["chatterd-tls"]}
    curl -fsS -o "$file" "${BENCH_URL["chatterd-plain"]}/getmaps" || die "GET /getmaps failed"
    curl -fsS --cacert "$crt" -o "$file.tls" "$tls/getmaps" || die "GET /getmaps over TLS failed"
    cmp -s "$file" "$file.tls" || die "the TLS and plain servers sent different /getmaps bodies"
    rm -f "$file.tls"
    count=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1], "rb"))))' "$file")
    [[ $count == "$rows" ]] || die "GET /getmaps returned $count rows, expected $rows"
    curl -fsS --cacert "$crt" -H 'Accept-Encoding: gzip, deflate, br' -D "$file.headers" -o "$file.encoded" \
        "$tls/getmaps" || die "GET /getmaps with Accept-Encoding failed"
    encoding=$(awk 'tolower($1) == "content-encoding:" { print tolower($2) }' "$file.headers" | tr -d '\r')
    case $encoding in
        '') cmp -s "$file" "$file.encoded" || die "GET /getmaps with Accept-Encoding sent a different body"
            BENCH_CHATTERD_ENCODING=identity ;;
        gzip) gzip -dc "$file.encoded" | cmp -s "$file" - || die "chatterd's gzip /getmaps does not inflate to the body"
            BENCH_CHATTERD_ENCODING=gzip
            BENCH_CHATTERD_GZIP_BYTES=$(stat -c %s "$file.encoded") ;;
        *) die "chatterd answered Accept-Encoding with Content-Encoding: $encoding" ;;
    esac
    rm -f "$file.headers" "$file.encoded"
}
