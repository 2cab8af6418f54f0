#!/usr/bin/env bash
# Removes what deploy/install.sh added. Run as root. `deploy/uninstall.sh --help` says what stays.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
source scripts/lib/common.sh
source scripts/lib/distro-pg.sh
source scripts/lib/install-layout.sh

usage() {
    cat <<'EOF'
Usage: deploy/uninstall.sh [--purge]

Removes what deploy/install.sh added: stops and disables the chatterd service, and deletes its unit,
PREFIX/bin/chatterd, PREFIX/bin/chatter, PREFIX/share/chatterd and the system user (if install.sh
created it). PREFIX and the user come from /etc/chatterd/install.conf (default /usr/local and
chatterd). Directories install.sh may have made under PREFIX (bin, share) stay, even when empty.

Kept, so that a later install.sh picks up where this one left off:
  - the database and its PostgreSQL role (the data: every chatt),
  - /etc/chatterd: the certificate phones trust, its private key (handed to root), chatterd.env
    and install.conf.

Options:
  --purge      also drop the local database and role, and delete /etc/chatterd with the key and
               certificate. Irreversible: back up first (deploy/README.md). A remote database
               (not on the local socket) is never dropped.
  -h, --help   show this text

Never removed: apt packages, and the PostgreSQL cluster (other software may use them).
EOF
}

purge=0
while (( $# > 0 )); do
    case $1 in
        --purge) purge=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) die "unknown argument $1 (see --help)" ;;
    esac
done
is_root || die "run as root"

# Reads KEY from install.conf (or the environment file), falling back to DEFAULT.
setting() {
    local file=$1 key=$2 default=$3 value=''
    [[ -r $file ]] && value=$(sed -n "s/^$key=\"\{0,1\}\([^\"]*\)\"\{0,1\}\$/\1/p" "$file" | tail -n 1)
    printf '%s' "${value:-$default}"
}

prefix=$(setting "$MANIFEST" PREFIX /usr/local)
user=$(setting "$MANIFEST" USER chatterd)
created_user=$(setting "$MANIFEST" CREATED_USER yes)
[[ $prefix =~ ^/[A-Za-z0-9._/-]*$ && $user =~ ^[a-z_][a-z0-9_-]*$ ]] || die "$MANIFEST is damaged"

# Stops the service; without systemd, refuses to go on while the user still runs processes.
stop_service() {
    if systemd_running; then
        if [[ -e $UNIT ]]; then
            systemctl disable --now chatterd || warn "could not stop or disable chatterd"
            log "stopped and disabled chatterd"
        fi
    elif pgrep -u "$user" >/dev/null 2>&1; then
        die "processes of $user are running ($(pgrep -u "$user" | tr '\n' ' ')); stop them first"
    fi
    rm -f "$UNIT"
    if systemd_running; then
        systemctl daemon-reload
        systemctl reset-failed chatterd 2>/dev/null || true
    fi
}

# Drops the local database and role named in the environment file, starting the cluster for it
# (and stopping it again) when it is down.
drop_database() {
    local url db port version name status
    url=$(setting "$ENV_FILE" CHATTERD_DATABASE_URL "")
    if [[ -z $url ]]; then
        warn "not dropping any database: $ENV_FILE names none"
        return
    elif [[ $url != *"host=$DISTRO_PG_SOCKET_DIR"* ]]; then
        warn "not dropping the database at $url: it is not on this machine's PostgreSQL socket"
        return
    fi
    db=${url#postgresql:///} db=${db%%\?*}
    port=$(sed -n 's/.*[?&]port=\([0-9]*\).*/\1/p' <<<"$url")
    read -r version name port status < <(distro_cluster "${port:-5432}")
    [[ -n ${version:-} ]] || { warn "no local cluster on port ${port:-5432}: database $db not dropped"; return; }
    [[ $status == online ]] || distro_cluster_start "$version" "$name"
    distro_psql "$port" -v role="$user" -v db="$db" <<'SQL'
SELECT format('DROP DATABASE IF EXISTS %I WITH (FORCE)', :'db') \gexec
SELECT format('DROP ROLE IF EXISTS %I', :'role') \gexec
SQL
    [[ $status == online ]] || distro_cluster_stop "$version" "$name"
    log "dropped database $db and role $user (cluster $version/$name on port $port)"
}

stop_service
rm -f "$prefix/bin/chatterd" "$prefix/bin/chatter"
rm -rf -- "$prefix/share/chatterd"
log "removed $UNIT, $prefix/bin/chatterd, $prefix/bin/chatter and $prefix/share/chatterd"

if (( purge )); then
    drop_database
    rm -rf -- "$ETC"
    log "removed $ETC (key, certificate, chatterd.env, install.conf)"
elif [[ -e $ETC ]]; then
    # The key outlives the user: hand it to root, so no future account reusing the uid can read it.
    chown -R root:root "$ETC"
    log "kept $ETC, now owned by root: $(find "$ETC" -mindepth 1 -printf '%f ')"
    log "kept the database and its role $user (deploy/uninstall.sh --purge drops them)"
fi

if [[ $created_user == yes ]] && getent passwd "$user" >/dev/null; then
    userdel "$user"
    if getent group "$user" >/dev/null; then groupdel "$user"; fi
    log "removed system user $user"
elif getent passwd "$user" >/dev/null; then
    log "kept system user $user: install.sh did not create it"
fi
log "apt packages and the PostgreSQL cluster were left alone"
