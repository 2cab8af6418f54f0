# shellcheck shell=bash
# The distribution's PostgreSQL clusters (Debian's postgresql-common: pg_lsclusters, pg_ctlcluster),
# as deploy/install.sh and deploy/uninstall.sh use them. Source it after common.sh and postgres.sh.
# Run as root.

# The directory of the distribution's PostgreSQL Unix sockets.
DISTRO_PG_SOCKET_DIR=/var/run/postgresql

# Succeeds when systemd manages this machine (it is PID 1).
systemd_running() { [[ -d /run/systemd/system ]]; }

# Prints "VERSION NAME PORT STATUS" of a cluster: the one on PORT when given, else the first online
# one, else the first; prints nothing when there is none.
distro_cluster() {
    local port=${1:-}
    # "online" sorts after "down", so a reverse sort on the status puts running clusters first.
    pg_lsclusters -h | awk -v p="$port" 'p == "" || $3 == p { print $1, $2, $3, $4 }' \
        | sort -s -k4,4r | head -n 1
}

# Starts cluster VERSION NAME; under systemd it is also enabled, so it starts at boot.
distro_cluster_start() {
    if systemd_running; then
        systemctl enable --now postgresql >&2
        systemctl start "postgresql@$1-$2" >&2
    else
        # No systemd (a container): postgresql-common starts it directly, and nothing will at boot.
        pg_ctlcluster "$1" "$2" start >&2
    fi
}

# Starts the cluster to use (creating one if there is none) and prints its port.
distro_cluster_up() {
    local version name port status
    if [[ -z $(distro_cluster "") ]]; then
        version=$(basename "$(dirname "$(pg_bindir)")")
        log "creating PostgreSQL cluster $version/main"
        pg_createcluster "$version" main >&2
    fi
    read -r version name port status < <(distro_cluster "")
    if systemd_running || [[ $status != online ]]; then
        log "starting PostgreSQL cluster $version/$name"
        distro_cluster_start "$version" "$name"
    fi
    printf '%s\n' "$port"
}

# Stops cluster VERSION NAME.
distro_cluster_stop() {
    if systemd_running; then
        systemctl stop "postgresql@$1-$2" >&2
    else
        pg_ctlcluster "$1" "$2" stop >&2
    fi
}

# Runs psql as the postgres superuser on the local cluster at PORT; further arguments follow.
distro_psql() {
    local port=$1
    shift
    # cd /: postgres may not enter the caller's working directory (a checkout under /root).
    (cd / && runuser -u postgres -- psql -X -q -v ON_ERROR_STOP=1 -h "$DISTRO_PG_SOCKET_DIR" -p "$port" \
        -d postgres "$@")
}

# Creates role ROLE (LOGIN, no password: peer authentication maps the OS user of the same name onto
# it) and database DB owned by it, on the cluster at PORT, unless they exist.
distro_ensure_database() {
    local port=$1 role=$2 db=$3
    # psql interpolates :'role' only in what it reads, so the statements come on stdin.
    distro_psql "$port" -v role="$role" -v db="$db" <<'SQL'
SELECT format('CREATE ROLE %I LOGIN', :'role')
 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'role') \gexec
SELECT format('CREATE DATABASE %I OWNER %I', :'db', :'role')
 WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = :'db') \gexec
SQL
}
