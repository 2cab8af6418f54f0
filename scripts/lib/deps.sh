# shellcheck shell=bash
# Checks the tools and libraries chatterd needs and installs missing ones with apt (Debian 12).
# Source it after common.sh. Nothing is reinstalled: each check is a file or command lookup.

# Puts swift on PATH (it may only exist in /opt/swift/usr/bin); fails with advice if it is nowhere.
deps_find_swift() {
    command -v swift >/dev/null 2>&1 && return 0
    if [[ -x /opt/swift/usr/bin/swift ]]; then
        export PATH=$PATH:/opt/swift/usr/bin
        return 0
    fi
    # Debian has no Swift 6 package: the toolchain comes from swift.org and is not apt's to install.
    printf 'error: swift not found in PATH or /opt/swift/usr/bin; install the Swift 6 toolchain for Debian 12\n' >&2
    return 1
}

# Sets CHATTERD_PYTHON to a Python 3 that has pytest and PyYAML (for openapi.yaml); fails when none has.
_deps_find_pytest() {
    local py
    # apt's python3-pytest installs for /usr/bin/python3, which may not be the python3 first on PATH.
    for py in python3 /usr/bin/python3; do
        if "$py" -m pytest --version >/dev/null 2>&1 && "$py" -c 'import yaml' 2>/dev/null; then
            export CHATTERD_PYTHON=$py
            return 0
        fi
    done
    return 1
}

# Prints the missing apt packages, one per line, that the build and a server from this checkout need: the C
# libraries, pkg-config, openssl for certificates, curl for health checks, Leaflet for /map, and a PostgreSQL
# server unless the argument is --remote-database (else --local-database).
_deps_missing_server() {
    [[ -f /usr/include/postgresql/libpq-fe.h ]] || echo libpq-dev
    [[ -f /usr/include/openssl/ssl.h ]] || echo libssl-dev
    [[ -f /usr/include/zlib.h ]] || echo zlib1g-dev
    [[ -f /usr/include/nghttp2/nghttp2.h ]] || echo libnghttp2-dev
    [[ -f /usr/include/libdeflate.h ]] || echo libdeflate-dev
    command -v pkg-config >/dev/null 2>&1 || echo pkg-config
    [[ ${1:-} == --remote-database ]] || compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || echo postgresql
    command -v openssl >/dev/null 2>&1 || echo openssl
    command -v curl >/dev/null 2>&1 || echo curl
    # Leaflet for /map: Debian's libjs-leaflet, which `serve --leaflet-dir` reads by default.
    [[ -f /usr/share/javascript/leaflet/leaflet.js ]] || echo libjs-leaflet
}

# Prints the missing packages of everything: the server's, the test tools (Python 3 with pytest and PyYAML),
# then each extra argument, CHECK or CHECK=PACKAGE: CHECK is a command looked up in PATH, or an absolute path
# that must exist (/usr/sbin is not in a normal user's PATH; a library is no command); PACKAGE defaults to CHECK.
_deps_missing() {
    _deps_missing_server --local-database
    command -v python3 >/dev/null 2>&1 || echo python3
    _deps_find_pytest || printf '%s\n' python3-pytest python3-yaml
    local extra check
    for extra in "$@"; do
        check=${extra%%=*}
        if [[ $check == /* ]]; then
            [[ -e $check ]] || echo "${extra#*=}"
        else
            command -v "$check" >/dev/null 2>&1 || echo "${extra#*=}"
        fi
    done
}

# Python modules the end-to-end tests import besides pytest and PyYAML, as MODULE=REQUIREMENT: PyPI's h2
# as the HTTP/2 client, with its hyperframe and hpack for raw frames.
# shellcheck disable=SC2034 # read by scripts/test
DEPS_E2E_PYTHON_MODULES=("h2=h2>=4.1,<5" "hyperframe=hyperframe>=6.0,<7" "hpack=hpack>=4.0,<5"
    "jsonschema=jsonschema>=4.10,<5")

# What the end-to-end tests run besides chatterd, as deps_ensure arguments: headless Chromium for /map
# (test_map_page.py, which drives it over --remote-debugging-pipe with the standard library alone), and PostGIS,
# whose answers test_viewport.py holds `?bbox=` to.
# shellcheck disable=SC2034 # read by scripts/test
DEPS_E2E=(chromium /usr/lib/postgresql/15/lib/postgis-3.so=postgresql-15-postgis-3)

# What the cluster stage (Tests/Cluster) runs on its test hosts, as deps_ensure arguments: Debian 12's etcd 3.4,
# Patroni 3.0, HAProxy 2.6, PgBouncer 1.18, nftables (the partitions) and iproute2 (the namespaces), besides
# PostgreSQL 15 and curl.
# shellcheck disable=SC2034 # read by scripts/test
DEPS_CLUSTER=(/usr/bin/etcd=etcd-server /usr/bin/patroni=patroni /usr/sbin/haproxy=haproxy
    /usr/sbin/pgbouncer=pgbouncer /usr/sbin/nft=nftables /usr/bin/psql=postgresql-client /usr/sbin/ip=iproute2)

# Prints each MODULE=REQUIREMENT argument whose module $CHATTERD_PYTHON cannot import.
_deps_missing_modules() {
    local entry
    for entry in "$@"; do
        "$CHATTERD_PYTHON" -c "import ${entry%%=*}" 2>/dev/null || printf '%s\n' "$entry"
    done
}

# Succeeds when $CHATTERD_PYTHON refuses pip installs into itself (PEP 668; Debian's own python3 does).
_deps_externally_managed() {
    "$CHATTERD_PYTHON" -c 'import os, sys, sysconfig
sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")) else 1)'
}

# Ensures $CHATTERD_PYTHON (found by deps_ensure) imports each MODULE=REQUIREMENT argument, installing the
# missing ones from PyPI with pip, or, into a Python that refuses pip, Debian's python3-MODULE packages.
deps_ensure_python_modules() {
    local missing entry packages=()
    mapfile -t missing < <(_deps_missing_modules "$@")
    (( ${#missing[@]} == 0 )) && return 0
    if _deps_externally_managed; then
        for entry in "${missing[@]}"; do packages+=("python3-${entry%%=*}"); done
        if ! is_root; then
            printf 'error: %s lacks Python modules; run: sudo apt-get install -y %s\n' "$CHATTERD_PYTHON" \
                "${packages[*]}" >&2
            return 1
        fi
        log "installing ${packages[*]}"
        deps_apt_install "${packages[@]}" || { printf 'error: apt-get install failed\n' >&2; return 1; }
    else
        local requirements=("${missing[@]#*=}")
        log "installing ${requirements[*]} from PyPI for $CHATTERD_PYTHON"
        "$CHATTERD_PYTHON" -m pip install -q --disable-pip-version-check --root-user-action=ignore \
            "${requirements[@]}" >&2 || {
            printf 'error: pip install failed; run: %s -m pip install %s\n' "$CHATTERD_PYTHON" \
                "${requirements[*]@Q}" >&2
            return 1
        }
    fi
    mapfile -t missing < <(_deps_missing_modules "$@")
    (( ${#missing[@]} == 0 )) || { printf 'error: still missing Python modules: %s\n' "${missing[*]%%=*}" >&2; return 1; }
}

# Runs apt-get update (once per process) and installs the given packages.
deps_apt_install() {
    export DEBIAN_FRONTEND=noninteractive
    # Wait for another apt run to release the lock instead of failing at once.
    local apt=(apt-get -q -o DPkg::Lock::Timeout=600)
    if [[ -z ${_DEPS_APT_UPDATED:-} ]]; then
        "${apt[@]}" update >&2 || return 1
        _DEPS_APT_UPDATED=1
    fi
    "${apt[@]}" install -y --no-install-recommends "$@" >&2
}

# Installs what the list function LIST (called with the further arguments) prints as missing: as root with
# apt, otherwise it says how and fails. Fails too when something is still missing afterwards.
_deps_install_missing() {
    local list=$1 missing
    shift
    mapfile -t missing < <("$list" "$@")
    (( ${#missing[@]} == 0 )) && return 0
    if ! is_root; then
        printf 'error: missing packages: %s\n' "${missing[*]}" >&2
        printf 'run:   sudo apt-get update && sudo apt-get install -y %s\n' "${missing[*]}" >&2
        return 1
    fi
    log "installing ${missing[*]}"
    deps_apt_install "${missing[@]}" || { printf 'error: apt-get install failed\n' >&2; return 1; }
    mapfile -t missing < <("$list" "$@")
    if (( ${#missing[@]} > 0 )); then
        printf 'error: still missing after apt-get install: %s\n' "${missing[*]}" >&2
        return 1
    fi
}

# Ensures every dependency of building and testing is present; extra arguments name further commands as
# CHECK[=PACKAGE] (e.g. shellcheck, wrk, /usr/sbin/nginx=nginx-light). As root, installs what is missing;
# otherwise says how and fails. Sets CHATTERD_PYTHON.
deps_ensure() {
    deps_find_swift || return 1
    _deps_install_missing _deps_missing "$@" || return 1
    # The checks ran in a subshell; find pytest again here so CHATTERD_PYTHON reaches the caller.
    _deps_find_pytest
}

# Ensures what a server built from this checkout needs (deploy/install.sh): the toolchain, the C libraries and
# tools, and a PostgreSQL server unless the argument is --remote-database (else --local-database). No test tools.
deps_ensure_server() {
    deps_find_swift || return 1
    _deps_install_missing _deps_missing_server "$1"
}
