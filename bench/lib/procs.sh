# shellcheck shell=bash
# Background processes the benchmark starts (servers, load generators): tracking, readiness, cleanup.
# Source it after scripts/lib/common.sh.

BENCH_PIDS=()

# Starts a command in the background with stdout and stderr to LOG, tracks it, and sets STARTED_PID.
# Usage: start_tracked LOG COMMAND [ARGS...]
start_tracked() {
    local log_file=$1
    shift
    "$@" >"$log_file" 2>&1 &
    STARTED_PID=$!
    BENCH_PIDS+=("$STARTED_PID")
}

# Runs a command to completion with stdout to OUT (stderr appended), tracked so that an interrupt stops
# it too; fails with the command's status. Usage: run_tracked OUT COMMAND [ARGS...]
run_tracked() {
    local out=$1 status=0
    shift
    # In the background and waited for, so a trapped INT or TERM is handled at once, not after the run.
    "$@" >"$out" 2>&1 &
    local pid=$!
    BENCH_PIDS+=("$pid")
    wait "$pid" || status=$?
    _untrack "$pid"
    return "$status"
}

# Forgets PID (it has been reaped).
_untrack() {
    local kept=() pid
    for pid in "${BENCH_PIDS[@]}"; do
        [[ $pid == "$1" ]] || kept+=("$pid")
    done
    BENCH_PIDS=("${kept[@]}")
}

# Stops every tracked process that is still running (TERM, then KILL after 10 s) and reaps it.
stop_tracked() {
    local pid
    for pid in "${BENCH_PIDS[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${BENCH_PIDS[@]}"; do
        _reap "$pid"
    done
    BENCH_PIDS=()
    return 0
}

# Stops the tracked process PID (TERM, then KILL after 10 s), reaps and forgets it.
stop_tracked_one() {
    kill -TERM "$1" 2>/dev/null || true
    _reap "$1"
    _untrack "$1"
}

# Waits up to 10 s for PID (already sent TERM) to exit, then kills and reaps it.
_reap() {
    local i
    for (( i = 0; i < 100; i++ )); do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}

# Waits until curl gets a 2xx from URL (curl options may precede it) while PID lives; fails after 30 s.
# Usage: wait_http PID LOG [CURL-OPTIONS...] URL
wait_http() {
    local pid=$1 log_file=$2 i
    shift 2
    for (( i = 0; i < 300; i++ )); do
        curl -fsS -o /dev/null "$@" 2>/dev/null && return 0
        kill -0 "$pid" 2>/dev/null || { tail -n 20 "$log_file" >&2; die "process $pid exited (log: $log_file)"; }
        sleep 0.1
    done
    die "no answer from ${*: -1} within 30 s (log: $log_file)"
}
