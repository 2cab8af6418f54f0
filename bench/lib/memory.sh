# shellcheck shell=bash
# Memory figures besides each scenario's peak: the TLS server's resident set once its feed is built after a start
# on the seeded store, and what slow readers holding older feed versions cost (bench/lib/held_versions.py).
# shellcheck disable=SC2034 # the variables set here are read by report.sh
# Sets BENCH_BUILT_KB and BENCH_HELD ("before_kb after_kb readers").

# Notes the TLS server's resident set now: started on the seeded store and its feed read in both forms.
bench_memory_built() {
    BENCH_BUILT_KB=$(awk '/^VmRSS:/ { print $2 }' "/proc/${BENCH_PID["chatterd-tls"]}/status")
}

# Eight readers each hold a version one post newer than the last, on the plain server; then the store is reset.
bench_memory_held() {
    log "slow readers holding older feed versions (bench/lib/held_versions.py)"
    BENCH_HELD=$(python3 bench/lib/held_versions.py "${BENCH_URL["chatterd-plain"]}" "${BENCH_PID["chatterd-plain"]}" 8) \
        || die "bench/lib/held_versions.py failed"
    bench_db_reset
}
