# shellcheck shell=bash
# shellcheck disable=SC2034 # BENCH_PID and BENCH_URL are read by bench/lib/scenarios.sh
# nginx as the baseline: a throwaway configuration under the output directory (no system file is
# read or touched), serving chatterd's tiny /healthz response and a static copy of the /getmaps body,
# plain and precompressed, over TLS with chatterd's certificate (ALPN h2 or http/1.1, as chatterd) and over
# plain HTTP.
# bench_nginx_start NAME sets BENCH_PID[NAME-tls], BENCH_PID[NAME-plain], BENCH_PID[NAME-h2] (the same
# master process), BENCH_URL[NAME-tls], BENCH_URL[NAME-plain] and BENCH_URL[NAME-h2] (h2load's listener, see
# BENCH_H2_REQUESTS_PER_CONNECTION).

# Copies the /getmaps body BODY into DOCROOT as getmaps, with getmaps.gz beside it for gzip_static.
bench_nginx_docroot() {
    local body=$1 docroot=$2
    mkdir -p "$docroot"
    cp "$body" "$docroot/getmaps"
    gzip -9 -n -c "$body" >"$docroot/getmaps.gz"
    chmod 0755 "$docroot"
    chmod 0644 "$docroot/getmaps" "$docroot/getmaps.gz"
}

# Prints the nginx executable: Debian puts it in /usr/sbin, which a normal user's PATH lacks.
_nginx_bin() {
    command -v nginx 2>/dev/null || printf '/usr/sbin/nginx\n'
}

# Prints the `user` directive nginx needs: none unless we are root; then nobody when nobody can read
# DOCROOT (e.g. not under /root), else root (tolerable for a loopback-only throwaway server).
_nginx_user_directive() {
    local docroot=$1
    is_root || return 0
    if runuser -u nobody -- test -r "$docroot/getmaps.gz" 2>/dev/null; then
        printf 'user nobody %s;\n' "$(id -gn nobody)"
    else
        printf 'user root;\n'
    fi
}

# Writes DIR/nginx.conf: WORKERS worker processes, TLS on TLS_PORT, plain HTTP on PLAIN_PORT, and TLS for
# h2load on H2_PORT.
# Usage: _nginx_write_conf DIR WORKERS TLS_PORT PLAIN_PORT H2_PORT DOCROOT CRT KEY MAX_CONNECTIONS
_nginx_write_conf() {
    local dir=$1 workers=$2 tls_port=$3 plain_port=$4 h2_port=$5 docroot=$6 crt=$7 key=$8 max_connections=$9
    mkdir -p "$dir/tmp"
    cat >"$dir/nginx.conf" <<CONF
# Written by bench/lib/nginx.sh for one benchmark run.
$(_nginx_user_directive "$docroot")
worker_processes $workers;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections $max_connections; }
http {
    # As chatterd in the benchmark: no per-request log line.
    access_log off;
    client_body_temp_path $dir/tmp/body;
    proxy_temp_path $dir/tmp/proxy;
    fastcgi_temp_path $dir/tmp/fastcgi;
    uwsgi_temp_path $dir/tmp/uwsgi;
    scgi_temp_path $dir/tmp/scgi;
    sendfile on;
    tcp_nodelay on;
    server_tokens off;
    # chatterd's limits: 60 s keep-alive idle, 1000 requests per connection (HTTP/2 streams count as
    # requests), 100 concurrent streams.
    keepalive_timeout 60s;
    keepalive_requests 1000;
    http2_max_concurrent_streams 100;
    # chatterd's TLS: 1.2 and 1.3, the same groups, the same certificate.
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_ecdh_curve X25519:prime256v1:secp384r1;
    ssl_certificate $crt;
    ssl_certificate_key $key;
    types { }
    default_type application/json;
    server {
        listen 127.0.0.1:$plain_port;
        listen 127.0.0.1:$tls_port ssl http2;
        root $docroot;
        location = /healthz { return 200 '{"status":"ok"}'; }
        location = /getmaps { gzip_static on; }
    }
    server {
        listen 127.0.0.1:$h2_port ssl http2;
        keepalive_requests $BENCH_H2_REQUESTS_PER_CONNECTION;
        root $docroot;
        location = /healthz { return 200 '{"status":"ok"}'; }
        location = /getmaps { gzip_static on; }
    }
}
CONF
}

# Starts nginx NAME (its files in OUT/NAME) with WORKERS workers and waits until it answers.
# Usage: bench_nginx_start NAME WORKERS DOCROOT CRT KEY OUT MAX_CONNECTIONS
bench_nginx_start() {
    local name=$1 workers=$2 docroot=$3 crt=$4 key=$5 out=$6 max_connections=$7
    local dir=$out/$name tls_port plain_port h2_port
    tls_port=$(free_port)
    plain_port=$(free_port)
    h2_port=$(free_port)
    _nginx_write_conf "$dir" "$workers" "$tls_port" "$plain_port" "$h2_port" "$docroot" "$crt" "$key" \
        "$max_connections"
    # -e: the error log before the configuration is read, which is otherwise a system path.
    start_tracked "$dir/stderr.log" "$(_nginx_bin)" -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log"
    BENCH_PID["$name-tls"]=$STARTED_PID
    BENCH_PID["$name-plain"]=$STARTED_PID
    BENCH_PID["$name-h2"]=$STARTED_PID
    BENCH_URL["$name-tls"]=https://127.0.0.1:$tls_port
    BENCH_URL["$name-plain"]=http://127.0.0.1:$plain_port
    BENCH_URL["$name-h2"]=https://127.0.0.1:$h2_port
    wait_http "$STARTED_PID" "$dir/error.log" --cacert "$crt" "${BENCH_URL["$name-tls"]}/healthz"
    wait_http "$STARTED_PID" "$dir/error.log" "${BENCH_URL["$name-plain"]}/healthz"
}

# Checks that nginx at URL (curl options may precede it) sends the bytes chatterd sends: /healthz like
# chatterd's at CHATTERD_URL, /getmaps as BODY, and BODY gzip-compressed for the iOS Accept-Encoding.
# Usage: bench_nginx_check BODY CHATTERD_URL [CURL-OPTIONS...] URL
bench_nginx_check() {
    local body=$1 chatterd_url=$2 tmp
    shift 2
    local url=${*: -1} options=("${@:1:$#-1}")
    tmp=$(mktemp -d)
    curl -fsS "${options[@]}" -o "$tmp/ours" "$chatterd_url/healthz"
    curl -fsS "${options[@]}" -o "$tmp/theirs" "$url/healthz"
    cmp -s "$tmp/ours" "$tmp/theirs" || die "nginx's /healthz differs from chatterd's"
    curl -fsS "${options[@]}" -o "$tmp/getmaps" "$url/getmaps"
    cmp -s "$body" "$tmp/getmaps" || die "nginx's /getmaps is not byte-identical to chatterd's"
    curl -fsS "${options[@]}" -H 'Accept-Encoding: gzip, deflate, br' -D "$tmp/headers" -o "$tmp/getmaps.gz" \
        "$url/getmaps"
    grep -qi '^content-encoding: gzip' "$tmp/headers" || die "nginx did not serve getmaps.gz (gzip_static)"
    gzip -dc "$tmp/getmaps.gz" | cmp -s "$body" - || die "nginx's getmaps.gz does not inflate to the body"
    rm -rf -- "$tmp"
}
