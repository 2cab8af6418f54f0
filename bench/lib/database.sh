# shellcheck shell=bash
# The benchmark's throwaway PostgreSQL: start it with full durability, seed it, reset it between
# write scenarios, run pgbench against it, and destroy it (with every tracked process) when the script ends.
# Source it after scripts/lib/postgres.sh and bench/lib/procs.sh.
# Sets BENCH_DB_DIR and BENCH_DB_URL (bench_db_start) and BENCH_SEED_MAX_SEQ (bench_db_seed).

# Starts a cluster in a new directory with fsync and synchronous commit on (no --fast): the post
# scenarios and pgbench measure real commits. Room for CONNECTIONS pgbench clients besides chatterd's.
bench_db_start() {
    local connections=$1
    BENCH_DB_DIR=$(mktemp -d /tmp/chatterd-bench-XXXXXX)
    BENCH_DB_URL=$(pg_cluster_start "$BENCH_DB_DIR" "$(free_port)") || die "PostgreSQL did not start"
    # Default max_connections is 100; two chatterd pools and their listeners need about 20 besides pgbench.
    if (( connections + 40 > 100 )); then
        pg_psql "$BENCH_DB_DIR" postgres -c "ALTER SYSTEM SET max_connections = $(( connections + 40 ))"
        pg_cluster_stop "$BENCH_DB_DIR"
        BENCH_DB_URL=$(pg_cluster_start "$BENCH_DB_DIR" "$(free_port)") || die "PostgreSQL did not restart"
    fi
}

# Runs psql on the benchmark database with the given arguments.
bench_psql() {
    pg_psql "$BENCH_DB_DIR" chatterd "$@"
}

# Inserts ROWS chatts in one statement (bench/sql/seed.sql) and remembers the last seq.
bench_db_seed() {
    local rows=$1
    bench_psql -v rows="$rows" -f bench/sql/seed.sql
    bench_psql -c 'VACUUM ANALYZE chatts' -c 'CHECKPOINT'
    BENCH_SEED_MAX_SEQ=$(bench_psql -Atc 'SELECT coalesce(max(seq), 0) FROM chatts')
    local count
    count=$(bench_psql -Atc 'SELECT count(*) FROM chatts')
    [[ $count == "$rows" ]] || die "seeded $rows chatts but the table holds $count"
}

# Deletes the chatts written since seeding, so every scenario reads the same N-row map, and
# checkpoints so that one scenario's dirty pages are not flushed during the next.
bench_db_reset() {
    bench_psql -c "DELETE FROM chatts WHERE seq > $BENCH_SEED_MAX_SEQ" -c 'VACUUM ANALYZE chatts' -c 'CHECKPOINT'
}

# Runs pgbench with the chatterd insert, one per transaction, and prints the row fields
# "rps p50_ms p99_ms max_ms errors requests". Usage: bench_pgbench CLIENTS THREADS SECONDS OUTDIR
bench_pgbench() {
    local clients=$1 threads=$2 seconds=$3 out=$4 bindir
    bindir=$(pg_bindir) || die "no PostgreSQL binaries"
    [[ -x $bindir/pgbench ]] || die "$bindir/pgbench is missing (apt-get install postgresql-client)"
    rm -f "$out"/pgbench-log.*
    # The baseline is PostgreSQL's own insert rate. Migration 0003's trigger NOTIFYs, and a notifying commit
    # holds a server-wide lock, which would cut pgbench's rate several times over and flatter chatterd: the
    # baseline leaves it out. Its rows still take the change log's `xid` and its index entry (migrations/0006).
    bench_psql -q -c "ALTER TABLE chatts DISABLE TRIGGER chatts_changed"
    # -M prepared sends the -D values as parameters of one prepared statement, as chatterd does;
    # -n skips vacuuming pgbench's own tables, which this database does not have.
    run_tracked "$out/pgbench.txt" "$bindir/pgbench" -n -M prepared -c "$clients" -j "$threads" -T "$seconds" \
        -f bench/sql/pgbench-insert.sql -D name=pgbench \
        -D message='pgbench chatt, the same insert as POST /postmaps' \
        -D geodata='[42.29358926076338,-83.71645835213574,"North","walking"]' \
        -l --log-prefix="$out/pgbench-log" "$BENCH_DB_URL" || die "pgbench failed (see $out/pgbench.txt)"
    bench_psql -q -c "ALTER TABLE chatts ENABLE TRIGGER chatts_changed"
    local tps failed
    tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$out/pgbench.txt" | tail -n 1)
    failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$out/pgbench.txt")
    [[ -n $tps ]] || die "no tps in $out/pgbench.txt"
    # The per-transaction log's third field is the latency in microseconds.
    cat "$out"/pgbench-log.* | awk '{ print $3 }' | sort -n | awk -v tps="$tps" -v failed="${failed:-0}" '
        { v[NR] = $1 }
        END {
            if (NR == 0) { print tps, 0, 0, 0, failed, 0; exit }
            printf "%s %.3f %.3f %.3f %d %d\n", tps, v[int((NR - 1) * 0.5) + 1] / 1000,
                v[int((NR - 1) * 0.99) + 1] / 1000, v[NR] / 1000, failed, NR
        }'
}

# Makes the script stop every process it tracks and destroy the benchmark's PostgreSQL however it ends (EXIT, INT,
# TERM). Call it once the output directory exists.
bench_clean_up_on_exit() {
    trap _bench_clean_up EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
}

_bench_clean_up() {
    # Best effort to the end: a process that already exited must not stop the cleanup (errexit).
    set +e
    stop_tracked
    [[ -z ${BENCH_DB_DIR:-} ]] || pg_cluster_destroy "$BENCH_DB_DIR" >/dev/null 2>&1
}
