#!/usr/bin/env bash
# Installs chatterd as a systemd service on Debian 12, from this checkout. Run as root.
# Usage: deploy/install.sh [SAN ...]
#   SAN: names/addresses for a new certificate (see deploy/gen-cert.sh), used only when
#   /etc/chatterd/chatterd.key does not exist yet. Default: localhost, 127.0.0.1 and `hostname -I`.
# Environment: DATABASE_URL, if set and /etc/chatterd/chatterd.env does not exist, goes into that file;
# if unset, a local PostgreSQL (the distribution's cluster) gets a `chatterd` role and database.
# Re-running it upgrades: new binary and migrations, then a restart (which applies the migrations).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
source scripts/lib/common.sh
source scripts/lib/deps.sh
source scripts/lib/postgres.sh
source scripts/lib/cert.sh

BIN=/usr/local/bin/chatterd
SHARE=/usr/local/share/chatterd
ETC=/etc/chatterd
UNIT=/etc/systemd/system/chatterd.service

systemd_running() { [[ -d /run/systemd/system ]]; }

# Builds the release binary and installs it and the migrations.
install_files() {
    local build_dir=${CHATTERD_BUILD_DIR:-$ROOT/.build}
    log "building (swift build -c release)"
    swift build -c release --scratch-path "$build_dir"
    # Install next to the target, then rename: a running chatterd keeps its file, nothing half-written.
    install -m 0755 "$build_dir/release/chatterd" "$BIN.new"
    mv -f "$BIN.new" "$BIN"
    install -d -m 0755 "$SHARE/migrations"
    rm -f "$SHARE"/migrations/*.sql
    if compgen -G 'migrations/*.sql' >/dev/null; then
        install -m 0644 migrations/*.sql "$SHARE/migrations/"
    else
        warn "no migrations/*.sql in this checkout"
    fi
    log "installed $BIN and $SHARE/migrations"
}

# Creates the chatterd system user (no home, no shell) once.
ensure_user() {
    getent passwd chatterd >/dev/null && return
    useradd --system --user-group --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin chatterd
    log "created system user chatterd"
}

# Makes /etc/chatterd with a certificate and a key only chatterd can read (generated if missing).
ensure_tls() {
    install -d -m 0750 -o root -g chatterd "$ETC"
    if [[ ! -e $ETC/chatterd.key ]]; then
        local sans=("$@")
        # shellcheck disable=SC2207  # hostname -I prints space-separated addresses
        (( ${#sans[@]} > 0 )) || sans=(localhost 127.0.0.1 $(hostname -I 2>/dev/null))
        log "generating a certificate for: ${sans[*]}"
        deploy/gen-cert.sh --out-dir "$ETC" "${sans[@]}"
    elif ! cert_key_matches "$ETC/chatterd.crt" "$ETC/chatterd.key"; then
        die "$ETC/chatterd.key does not match $ETC/chatterd.crt; fix or remove both (phones trust the certificate)"
    fi
    chown chatterd:chatterd "$ETC/chatterd.key"
    chmod 0600 "$ETC/chatterd.key"
    chown root:root "$ETC/chatterd.crt"
    chmod 0644 "$ETC/chatterd.crt"
}

# Prints the port of the distribution's PostgreSQL cluster, started (and created) if needed.
local_postgres_port() {
    local version cluster
    version=$(basename "$(dirname "$(pg_bindir)")")
    if ! pg_lsclusters -h | grep -q .; then
        pg_createcluster "$version" main >&2
    fi
    read -r version cluster _ < <(pg_lsclusters -h | head -n 1)
    if systemd_running; then
        systemctl enable --now postgresql >&2
        systemctl start "postgresql@$version-$cluster" >&2
    else
        # No systemd (a container): postgresql-common starts the cluster directly.
        pg_ctlcluster "$version" "$cluster" status >/dev/null 2>&1 || pg_ctlcluster "$version" "$cluster" start >&2
    fi
    pg_lsclusters -h | awk -v v="$version" -v c="$cluster" '$1 == v && $2 == c { print $3 }'
}

# Creates the chatterd role (peer authentication: no password) and database in the local cluster.
ensure_local_database() {
    local port=$1
    local psql=(runuser -u postgres -- psql -X -q -v ON_ERROR_STOP=1 -p "$port" -d postgres)
    (cd / && "${psql[@]}" -c "DO \$\$ BEGIN
        IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'chatterd') THEN CREATE ROLE chatterd LOGIN; END IF;
        END \$\$")
    if [[ $(cd / && "${psql[@]}" -Atc "SELECT 1 FROM pg_database WHERE datname = 'chatterd'") != 1 ]]; then
        (cd / && "${psql[@]}" -c 'CREATE DATABASE chatterd OWNER chatterd')
    fi
    log "local PostgreSQL on port $port has role and database chatterd"
}

# Writes /etc/chatterd/chatterd.env once: DATABASE_URL from the environment, or a local database.
ensure_env_file() {
    local env=$ETC/chatterd.env url
    if [[ -e $env ]]; then
        log "keeping $env"
        return
    fi
    if [[ -n ${DATABASE_URL:-} ]]; then
        # Kept simple: these characters would need escaping in systemd's EnvironmentFile syntax.
        [[ $DATABASE_URL != *[\"\\\$]* ]] || die "DATABASE_URL contains \", \\ or \$: write $env by hand"
        url=$DATABASE_URL
    else
        local port
        port=$(local_postgres_port)
        ensure_local_database "$port"
        url="postgresql:///chatterd?host=/var/run/postgresql&port=$port"
    fi
    # 0640 root:chatterd: the URL may hold a password.
    (umask 027 && printf 'DATABASE_URL="%s"\n' "$url" >"$env")
    chown root:chatterd "$env"
    log "wrote $env"
}

# Installs the unit and (re)starts the service when systemd runs.
install_unit() {
    install -m 0644 deploy/chatterd.service "$UNIT"
    if ! systemd_running; then
        warn "systemd is not running here: installed $UNIT; start it with 'systemctl enable --now chatterd'"
        return
    fi
    systemctl daemon-reload
    systemctl enable chatterd
    systemctl restart chatterd
    systemctl --no-pager --lines=5 status chatterd || true
}

is_root || die "run as root (it installs into /usr/local, /etc and systemd)"
deps_ensure || exit 1
install_files
ensure_user
ensure_tls "$@"
ensure_env_file
install_unit
log "done. Phones need $ETC/chatterd.crt installed and trusted (README, 'Pointing the iOS app at it')"
