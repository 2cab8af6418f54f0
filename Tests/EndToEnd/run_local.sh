#!/bin/sh
# Runs the end-to-end suite against a release build, with a throwaway PostgreSQL cluster on port 5462.
# Usage: Tests/EndToEnd/run_local.sh [pytest args...]
# (from anywhere; builds nothing if CHATTERD_BIN and CHATTER_BIN are set)
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
port=${E2E_PG_PORT:-5462}
bindir=$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)
[ -x "$bindir/pg_ctl" ] || bindir=/usr/lib/postgresql/15/bin
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

scratch=${E2E_SCRATCH:-/tmp/build-e2e}
if [ -z "${CHATTERD_BIN:-}" ]; then
    swift build -c release --package-path "$repo" --scratch-path "$scratch" --product chatterd
    CHATTERD_BIN="$scratch/release/chatterd"
fi
if [ -z "${CHATTER_BIN:-}" ]; then
    swift build -c release --package-path "$repo" --scratch-path "$scratch" --product chatter
    CHATTER_BIN="$scratch/release/chatter"
fi

dir=$(mktemp -d /tmp/e2e-run-XXXX)
[ "$(id -u)" = 0 ] && chown postgres "$dir"
as_pg "$bindir/initdb" -D "$dir/data" -A trust -U postgres >/dev/null
as_pg "$bindir/pg_ctl" -D "$dir/data" -o "-k $dir -p $port -c listen_addresses=''" -l "$dir/log" -w start >/dev/null
trap 'as_pg "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null; rm -rf "$dir"' EXIT

export CHATTERD_BIN CHATTER_BIN CHATTERD_REPO="$repo"
export CHATTERD_TEST_DATABASE_URL="postgresql:///postgres?host=$dir&port=$port&user=postgres"
# Run the whole suite unless a test path was given.
case " $* " in *" Tests/"*) ;; *) set -- "$@" Tests/EndToEnd ;; esac
cd "$repo" && python3 -m pytest -p no:cacheprovider "$@"
