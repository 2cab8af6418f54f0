#!/usr/bin/env bash
# Installs chatterd from this checkout as a systemd service, or upgrades it in place. Run as root.
# `deploy/install.sh --help` lists the options; deploy/README.md is the walk-through.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
source scripts/lib/common.sh
source scripts/lib/deps.sh
source scripts/lib/postgres.sh
source scripts/lib/cert.sh
source scripts/lib/distro-pg.sh
source scripts/lib/install-layout.sh

usage() {
    cat <<'EOF'
Usage: deploy/install.sh [options]

Installs chatterd from this checkout as a systemd service on Debian 12 or Ubuntu 22.04+, as root:
apt packages it lacks, a release build, the binary and migrations, a system user, a PostgreSQL role
and database reached over the Unix socket with peer authentication (no password anywhere), a key and
certificate, /etc/chatterd/chatterd.env, and the unit, enabled and started.
Run it again to upgrade: it rebuilds, replaces binary and migrations, applies new migrations and
restarts the service. It keeps the database, the key, the certificate and chatterd.env.

Options:
  --domain NAME       a DNS name phones use to reach the server; repeat for several
  --ip ADDRESS        an IP address phones use; repeat for several (default: the source address of
                      the default route, which is the public IP on a typical VPS; behind NAT give the
                      public address)
  --port N            HTTPS port (default 443)
  --prefix DIR        install DIR/bin/chatterd, DIR/bin/chatter and DIR/share/chatterd (default /usr/local)
  --user NAME         system user the service runs as, and its PostgreSQL role (default chatterd)
  --database NAME     database to create in the local PostgreSQL (default chatterd)
  --database-url URL  use this existing database instead of a local one (a libpq URI; keep any
                      password in a pgpass file, see deploy/chatterd.env.example)
  --no-start          install and enable the service, but do not start or restart it
  --swift PATH        the Swift 6 toolchain: its swift executable or bin directory
                      (default: swift on PATH, else /opt/swift/usr/bin)
  --build-dir DIR     SwiftPM scratch path (default $CHATTERD_BUILD_DIR, else .build); the
                      install's static build lives in DIR/static
  -h, --help          show this text

A new certificate names localhost, 127.0.0.1, every --domain and every --ip. It is made only when
/etc/chatterd/chatterd.key does not exist: phones trust the certificate, so a re-run never replaces
it (deploy/README.md, "Rotate the certificate"). --port and the database options shape a new
chatterd.env; once it exists, edit it instead.
EOF
}

prefix=/usr/local user=chatterd database=chatterd database_url='' port=443 start=1
build_dir=${CHATTERD_BUILD_DIR:-$ROOT/.build} settings_given=() created_user=no
domains=() ips=()

parse_args() {
    while (( $# > 0 )); do
        case $1 in
            --domain) domains+=("${2:?--domain needs a name}"); shift 2 ;;
            --ip) ips+=("${2:?--ip needs an address}"); shift 2 ;;
            --port) port=${2:?--port needs a number}; settings_given+=(--port); shift 2 ;;
            --prefix) prefix=${2:?--prefix needs a directory}; shift 2 ;;
            --user) user=${2:?--user needs a name}; shift 2 ;;
            --database) database=${2:?--database needs a name}; settings_given+=(--database); shift 2 ;;
            --database-url) database_url=${2:?--database-url needs a URL}; settings_given+=(--database-url); shift 2 ;;
            --no-start) start=0; shift ;;
            --swift) use_swift "${2:?--swift needs a path}"; shift 2 ;;
            --build-dir) build_dir=${2:?--build-dir needs a directory}; shift 2 ;;
            -h|--help) usage; exit 0 ;;
            *) die "unknown argument $1 (see --help)" ;;
        esac
    done
    if ! [[ $port =~ ^[0-9]+$ ]] || (( port < 1 || port > 65535 )); then die "--port must be 1..65535"; fi
    [[ $prefix =~ ^/[A-Za-z0-9._/-]*$ ]] || die "--prefix must be an absolute path of plain characters"
    [[ $user =~ ^[a-z_][a-z0-9_-]{0,31}$ ]] || die "--user must be a lower-case user name"
    [[ $database =~ ^[a-z_][a-z0-9_]{0,62}$ ]] || die "--database must be a lower-case SQL name"
    # These characters would need escaping in both systemd's and the shell's environment file syntax.
    [[ $database_url != *[\"\\\$\`]* ]] || die "--database-url contains \", \\, \$ or \`"
    BIN=$prefix/bin/chatterd SHARE=$prefix/share/chatterd
}

# Puts the toolchain at PATH (a swift executable or the directory holding it) first on PATH.
use_swift() {
    local dir=$1
    [[ -d $dir ]] || dir=$(dirname "$1")
    [[ -x $dir/swift ]] || die "--swift $1: no swift executable there"
    PATH=$dir:$PATH
}

# Installs the apt packages the build, the certificate and (unless remote) the database need.
ensure_packages() {
    deps_find_swift || exit 1
    swift --version >/dev/null 2>&1 || die "swift does not run; install the toolchain's dependencies (swift.org)"
    local database=--local-database
    [[ -z $database_url ]] || database=--remote-database
    deps_ensure_server "$database" || die "the packages chatterd needs could not be installed"
}

# Builds a release binary with the Swift runtime linked in, so the service does not depend on where
# the toolchain lives (systemd's ProtectHome hides one under /root), and installs it with the migrations.
install_files() {
    local scratch=$build_dir/static
    log "building (swift build -c release --static-swift-stdlib)"
    swift build -c release --static-swift-stdlib --product chatterd --scratch-path "$scratch"
    swift build -c release --static-swift-stdlib --product chatter --scratch-path "$scratch"
    mkdir -p "$prefix/bin"
    install -d -m 0755 "$SHARE/migrations"
    # Install next to the target, then rename: a running chatterd keeps its file, nothing half-written.
    install -m 0755 "$scratch/release/chatterd" "$BIN.new"
    mv -f "$BIN.new" "$BIN"
    # The command-line client, to check the service from the server itself (chatter --help).
    install -m 0755 "$scratch/release/chatter" "$prefix/bin/chatter.new"
    mv -f "$prefix/bin/chatter.new" "$prefix/bin/chatter"
    rm -f "$SHARE"/migrations/*.sql
    install -m 0644 migrations/*.sql "$SHARE/migrations/"
    install -m 0755 deploy/gen-cert.sh "$SHARE/gen-cert.sh"
    # What gen-cert.sh puts in the certificates; the installed copy sources it from beside itself.
    install -m 0644 scripts/lib/cert.sh "$SHARE/cert.sh"
    install -m 0644 deploy/README.md "$SHARE/README.md"
    log "installed $BIN ($("$BIN" --version)), $SHARE/migrations ($(find "$SHARE/migrations" -name '*.sql' | wc -l) files)"
}

# Creates the system user (no home, no shell) once; its group has the same name.
ensure_user() {
    if getent passwd "$user" >/dev/null; then
        log "keeping system user $user"
    else
        useradd --system --user-group --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin "$user"
        created_user=yes
        log "created system user $user"
    fi
}

# The address of the default route: what the world reaches on a server with a public IP.
default_ip() {
    local address=''
    if command -v ip >/dev/null 2>&1; then
        address=$(ip -4 route get 1.1.1.1 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p' | head -n 1)
    fi
    [[ -n $address ]] || address=$(hostname -I 2>/dev/null | awk '{ print $1 }')
    printf '%s' "$address"
}

# Makes /etc/chatterd with the CA phones install (chatterd.crt), the chain chatterd serves
# (chatterd-server.crt) and its key, which only the service user can read; generated once.
ensure_tls() {
    install -d -m 0750 -o root -g "$user" "$ETC"
    local ca=$ETC/chatterd.crt chain=$ETC/chatterd-server.crt key=$ETC/chatterd.key name
    (( ${#ips[@]} > 0 )) || { name=$(default_ip); [[ -z $name ]] || ips=("$name"); }
    if [[ ! -e $key ]]; then
        log "generating a CA, a key and a certificate for localhost 127.0.0.1 ${domains[*]} ${ips[*]}"
        deploy/gen-cert.sh --out-dir "$ETC" localhost 127.0.0.1 "${domains[@]}" "${ips[@]}" >&2
    else
        log "keeping $key, $chain and $ca"
    fi
    cert_check_chain "$ca" "$chain" "$key" \
        || die "restore the files made together (phones trust $ca), or make new ones (deploy/README.md, rotate)"
    for name in "${domains[@]}"; do
        openssl x509 -in "$chain" -noout -checkhost "$name" | grep -q 'does match' \
            || warn "$chain does not name $name: phones using it will refuse it (deploy/README.md, rotate)"
    done
    for name in "${ips[@]}"; do
        openssl x509 -in "$chain" -noout -checkip "$name" | grep -q 'does match' \
            || warn "$chain does not name $name: phones using it will refuse it (deploy/README.md, rotate)"
    done
    chown "$user:$user" "$key"
    chmod 0600 "$key"
    chown root:root "$ca" "$chain"
    chmod 0644 "$ca" "$chain"
}

# Prints the value of KEY in the environment file, without quotes.
env_value() {
    sed -n "s/^$1=\"\{0,1\}\([^\"]*\)\"\{0,1\}\$/\1/p" "$ENV_FILE" | tail -n 1
}

# Sets DB_URL (the URL the service uses) and makes sure a local database exists and runs.
prepare_database() {
    local db=$database
    if [[ -e $ENV_FILE ]]; then
        DB_URL=$(env_value CHATTERD_DATABASE_URL)
        [[ -n $DB_URL ]] || die "$ENV_FILE has no CHATTERD_DATABASE_URL"
        # A local database is one on the distribution's socket; only then is there anything to start.
        [[ $DB_URL == *"host=$DISTRO_PG_SOCKET_DIR"* ]] || return 0
        db=${DB_URL#postgresql:///}
        db=${db%%\?*}
    elif [[ -n $database_url ]]; then
        DB_URL=$database_url
        return 0
    fi
    local cluster_port
    cluster_port=$(distro_cluster_up)
    distro_ensure_database "$cluster_port" "$user" "$db"
    log "PostgreSQL on port $cluster_port has role $user and database $db"
    [[ -n ${DB_URL:-} ]] || DB_URL="postgresql:///$db?host=$DISTRO_PG_SOCKET_DIR&port=$cluster_port"
}

# Applies migrations as the service user, which also proves it can log in (peer authentication).
migrate() {
    log "applying migrations as $user"
    (cd / && runuser -u "$user" -- "$BIN" migrate --database-url "$DB_URL" --migrations "$SHARE/migrations") \
        || die "chatterd migrate failed as $user. A local database needs 'local all all peer' in pg_hba.conf"
}

# Writes the environment file from the example once; an existing one is kept.
ensure_env_file() {
    if [[ -e $ENV_FILE ]]; then
        log "keeping $ENV_FILE${settings_given[*]:+ (${settings_given[*]} not applied: edit it instead)}"
        serve_chain_in_env_file
        # Readable by the service user, writable by root only (uninstall.sh hands it to root).
        chown "root:$user" "$ENV_FILE"
        chmod 0640 "$ENV_FILE"
        return
    fi
    # Replaces the KEY= line of the example with the value, or leaves it be (awk: no escaping trouble).
    (umask 027 && K1=CHATTERD_DATABASE_URL V1=$DB_URL K2=CHATTERD_PORT V2=$port \
        K3=CHATTERD_MIGRATIONS V3=$SHARE/migrations awk '
        { for (i = 1; i <= 3; i++) if (index($0, ENVIRON["K" i] "=") == 1) $0 = ENVIRON["K" i] "=\"" ENVIRON["V" i] "\"" }
        { print }' deploy/chatterd.env.example >"$ENV_FILE.new")
    chown "root:$user" "$ENV_FILE.new"
    mv -f "$ENV_FILE.new" "$ENV_FILE"
    log "wrote $ENV_FILE"
}

# An environment file written before gen-cert.sh made a CA serves $ETC/chatterd.crt, which a new
# gen-cert.sh run replaces with the CA phones install; point it at the chain chatterd serves instead (for a
# kept pair, the same certificate). Only that exact line changes; the rest of the file stays as it is.
serve_chain_in_env_file() {
    local old=$ETC/chatterd.crt new=$ETC/chatterd-server.crt pattern
    pattern="^CHATTERD_CERT=\"?${old//./\\.}\"?\$"
    if [[ ! -e $new ]] || ! grep -Eq "$pattern" "$ENV_FILE"; then
        return 0
    fi
    (umask 027 && sed -E "s|$pattern|CHATTERD_CERT=\"$new\"|" "$ENV_FILE" >"$ENV_FILE.new")
    chown "root:$user" "$ENV_FILE.new"
    mv -f "$ENV_FILE.new" "$ENV_FILE"
    log "$ENV_FILE: CHATTERD_CERT is now $new (the server's certificate and the CA)"
}

# Installs the unit for this user and prefix, and (re)starts the service when systemd runs.
install_unit() {
    sed -e "s|^User=chatterd\$|User=$user|" -e "s|^Group=chatterd\$|Group=$user|" -e "s|/usr/local/|$prefix/|g" \
        deploy/chatterd.service >"$UNIT.new"
    chmod 0644 "$UNIT.new"
    mv -f "$UNIT.new" "$UNIT"
    if ! systemd_running; then
        warn "systemd is not running here (PID 1 is $(ps -p 1 -o comm=)): installed $UNIT but started nothing."
        warn "run it by hand as the unit would: $(manual_command)"
        return
    fi
    systemctl daemon-reload
    systemctl enable chatterd
    if (( ! start )); then
        log "--no-start: enabled, not started; start it with: systemctl restart chatterd"
        return
    fi
    systemctl restart chatterd
    check_service
}

# The command line that runs chatterd like the unit does (user, capability, environment), for hosts
# without systemd.
manual_command() {
    printf "setpriv --reuid=%s --regid=%s --clear-groups --inh-caps=-all,+net_bind_service" "$user" "$user"
    printf " --ambient-caps=-all,+net_bind_service --no-new-privs -- bash -c 'set -a; . %s; exec %s serve'" \
        "$ENV_FILE" "$BIN"
}

# Waits for /healthz over TLS; shows the journal and fails when the service does not come up.
check_service() {
    local port_now url
    port_now=$(env_value CHATTERD_PORT)
    url="https://localhost:${port_now:-443}/healthz"
    for _ in $(seq 50); do
        if curl -fsS --cacert "$ETC/chatterd.crt" "$url" >/dev/null 2>&1; then
            log "chatterd is running: $url answers"
            return
        fi
        sleep 0.2
    done
    journalctl -u chatterd -n 30 --no-pager >&2 || true
    die "chatterd did not answer $url within 10 s (journalctl -u chatterd)"
}

# Records what was installed where, for uninstall.sh. CREATED_USER=yes once this script made the user.
write_manifest() {
    if [[ -e $MANIFEST ]] && grep -qx 'CREATED_USER=yes' "$MANIFEST"; then created_user=yes; fi
    install -d -m 0750 -o root -g "$user" "$ETC"
    printf 'PREFIX=%s\nUSER=%s\nCREATED_USER=%s\n' "$prefix" "$user" "$created_user" >"$MANIFEST"
    chmod 0644 "$MANIFEST"
}

main() {
    parse_args "$@"
    is_root || die "run as root (it installs packages, a user and a service)"
    ensure_packages
    install_files
    ensure_user
    write_manifest
    ensure_tls
    prepare_database
    migrate
    ensure_env_file
    install_unit
    log "done. Phones need $ETC/chatterd.crt installed and fully trusted (deploy/README.md);"
    log "its fingerprint: $(openssl x509 -in "$ETC/chatterd.crt" -noout -fingerprint -sha256 | cut -d= -f2)"
}

main "$@"
