# shellcheck shell=bash
# Project-local PostgreSQL clusters: create, start, stop and locate one in a directory of our own.
# Source it after common.sh. Layout of a cluster directory DIR:
#   DIR/data            the data directory (PGDATA)
#   DIR/sock            the Unix socket directory
#   DIR/postgres.log    the server log
# DIR is mode 0700 and owned by the cluster owner, so "trust" authentication on the socket is only
# as open as that directory: root and the owner can connect, nobody else.
# As root the owner is the postgres user (PostgreSQL refuses to run as root); otherwise it is you.

# Prints the bin directory of the newest PostgreSQL server installed (Debian's layout); fails if none.
pg_bindir() {
    if [[ -n ${CHATTERD_PG_BINDIR:-} ]]; then
        printf '%s\n' "$CHATTERD_PG_BINDIR"
        return
    fi
    local dir
    # pg_config --bindir is not used: it comes with libpq-dev and names the client, not the server.
    dir=$(compgen -G '/usr/lib/postgresql/*/bin' | sort -V | tail -n 1)
    if [[ -z $dir || ! -x $dir/initdb ]]; then
        printf 'error: no PostgreSQL server found under /usr/lib/postgresql/*/bin (apt-get install postgresql)\n' >&2
        return 1
    fi
    printf '%s\n' "$dir"
}

# Runs a command as the cluster owner: postgres when we are root, ourselves otherwise.
_pg_as_owner() {
    if is_root; then
        # cd / first: postgres may not be allowed into the caller's working directory (e.g. under /root).
        (cd / && runuser -u postgres -- "$@")
    else
        "$@"
    fi
}

# Prints where a cluster meant for PREFERRED should live: PREFERRED itself when the cluster owner can
# reach it and its socket path fits, else a stable per-checkout directory under /var/tmp.
pg_cluster_dir() {
    local preferred=$1 parent
    parent=$(dirname "$preferred")
    mkdir -p "$parent"
    parent=$(cd "$parent" && pwd)
    preferred=$parent/$(basename "$preferred")
    # A Unix socket path must fit in sun_path (108 bytes): DIR/sock/.s.PGSQL.NNNNN adds 20.
    local fits=1
    (( ${#preferred} + 20 < 100 )) || fits=0
    # As root, the cluster runs as postgres, which must be able to traverse every parent directory.
    # A checkout under /root (mode 0700) is the common case where it cannot; /var/tmp is open to all
    # and, unlike /tmp, survives reboots, so the cluster's data persists like .run/ would.
    if (( fits )) && { ! is_root || runuser -u postgres -- test -x "$parent" 2>/dev/null; }; then
        printf '%s\n' "$preferred"
        return
    fi
    local key
    key=$(printf '%s' "$preferred" | sha256sum | cut -c1-12)
    printf '/var/tmp/chatterd-pg-%s\n' "$key"
}

# Prints the connection URL of the running cluster in DIR for database DBNAME (default chatterd).
pg_cluster_url() {
    local dir=$1 db=${2:-chatterd} pidfile port sock
    pidfile=$dir/data/postmaster.pid
    [[ -r $pidfile ]] || { printf 'error: no running cluster in %s\n' "$dir" >&2; return 1; }
    # postmaster.pid holds the port on line 4 and the first socket directory on line 5.
    port=$(sed -n 4p "$pidfile")
    sock=$(sed -n 5p "$pidfile")
    printf 'postgresql:///%s?host=%s&port=%s&user=postgres\n' "$db" "$(uri_encode "$sock")" "$port"
}

# Succeeds when the cluster in DIR is running.
pg_cluster_running() {
    local bindir
    bindir=$(pg_bindir) || return 1
    [[ -f $1/data/PG_VERSION ]] && _pg_as_owner "$bindir/pg_ctl" -D "$1/data" status >/dev/null 2>&1
}

# Runs psql against database DB of the running cluster in DIR, as superuser postgres; extra args follow.
pg_psql() {
    local dir=$1 db=$2 bindir
    shift 2
    bindir=$(pg_bindir) || return 1
    "$bindir/psql" -X -q -v ON_ERROR_STOP=1 "$(pg_cluster_url "$dir" "$db")" "$@"
}

# Writes the settings the cluster starts with (socket, port, listen addresses, optional speed-ups).
_pg_write_conf() {
    local dir=$1 port=$2 listen=$3 fast=$4 conf=$1/data/chatterd.conf
    # Values are single-quoted in postgresql.conf syntax; a quote inside is doubled.
    local sock=${dir//\'/\'\'}/sock
    {
        printf '# Written by scripts/lib/postgres.sh at every start.\n'
        printf "unix_socket_directories = '%s'\n" "$sock"
        printf 'port = %s\n' "$port"
        printf "listen_addresses = '%s'\n" "${listen//\'/\'\'}"
        if (( fast )); then
            # Throwaway clusters: durability buys nothing, and tests spend their time in fsync.
            printf 'fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n'
        fi
    } >"$conf"
    is_root && chown postgres:postgres "$conf"
    return 0
}

# Creates (once) and starts (if stopped) the cluster in DIR on PORT, creates database DBNAME
# (default chatterd) if missing, and prints its connection URL. Reuses a running cluster as it is.
# Usage: pg_cluster_start [--fast] [--listen ADDRESSES] DIR PORT [DBNAME]
pg_cluster_start() {
    local fast=0 listen=''
    while [[ ${1:-} == --* ]]; do
        case $1 in
            --fast) fast=1; shift ;;
            --listen) listen=$2; shift 2 ;;
            *) printf 'error: pg_cluster_start: unknown option %s\n' "$1" >&2; return 1 ;;
        esac
    done
    local dir=$1 port=$2 db=${3:-chatterd} bindir
    [[ $db =~ ^[a-z_][a-z0-9_]*$ ]] || { printf 'error: bad database name %s\n' "$db" >&2; return 1; }
    bindir=$(pg_bindir) || return 1
    mkdir -p "$dir/sock"
    chmod 0700 "$dir" "$dir/sock"
    is_root && chown postgres:postgres "$dir" "$dir/sock"
    if [[ ! -f $dir/data/PG_VERSION ]]; then
        local sync=()
        (( fast )) && sync=(--no-sync)
        _pg_as_owner "$bindir/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-locale "${sync[@]}" \
            >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; return 1; }
        printf "include_if_exists = 'chatterd.conf'\n" >>"$dir/data/postgresql.conf"
    fi
    if ! pg_cluster_running "$dir"; then
        _pg_write_conf "$dir" "$port" "$listen" "$fast"
        if ! _pg_as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 start >/dev/null; then
            printf 'error: PostgreSQL did not start; last lines of %s:\n' "$dir/postgres.log" >&2
            tail -n 20 "$dir/postgres.log" >&2
            return 1
        fi
    fi
    local exists
    exists=$(pg_psql "$dir" postgres -Atc "SELECT 1 FROM pg_database WHERE datname = '$db'") || return 1
    [[ $exists == 1 ]] || pg_psql "$dir" postgres -c "CREATE DATABASE \"$db\"" || return 1
    pg_cluster_url "$dir" "$db"
}

# Stops the cluster in DIR if it runs (fast mode: disconnect clients, no waiting for them).
pg_cluster_stop() {
    local bindir
    bindir=$(pg_bindir) || return 1
    pg_cluster_running "$1" || return 0
    _pg_as_owner "$bindir/pg_ctl" -D "$1/data" -m fast -w stop >/dev/null
}

# Stops the cluster in DIR and deletes the directory.
pg_cluster_destroy() {
    pg_cluster_stop "$1" || true
    rm -rf -- "$1"
}
