# shellcheck shell=bash
# Server resource use per scenario, from /proc: peak resident memory and CPU seconds of a process and
# its children (nginx's workers), and the most threads the process had. Usage: sample_begin PID; ...load...;
# sample_end  (prints "RSS_MB CPU_S THREADS").

# Prints PID and its children's PIDs, one per line.
_sample_tree() {
    printf '%s\n' "$1"
    local -a children=()
    read -r -a children <"/proc/$1/task/$1/children" 2>/dev/null || true
    (( ${#children[@]} == 0 )) || printf '%s\n' "${children[@]}"
}

# Prints the sum of user and system CPU clock ticks of the given PIDs.
_sample_ticks() {
    local pid stat rest total=0 fields
    for pid in "$@"; do
        stat=$(cat "/proc/$pid/stat" 2>/dev/null) || continue
        # Fields after the command name, which is in parentheses and may hold spaces: utime and
        # stime are fields 14 and 15 of the whole line, so 12 and 13 of what follows ") ".
        rest=${stat##*) }
        read -r -a fields <<<"$rest"
        total=$(( total + fields[11] + fields[12] ))
    done
    printf '%s\n' "$total"
}

# Prints the sum of the peak resident set sizes (VmHWM, kB) of the given PIDs.
_sample_peak_kb() {
    local pid kb total=0
    for pid in "$@"; do
        kb=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null) || continue
        total=$(( total + ${kb:-0} ))
    done
    printf '%s\n' "$total"
}

# Prints the number of threads of PID (0 once it is gone).
sample_threads() {
    awk '/^Threads:/ { print $2; found = 1 } END { if (!found) print 0 }' "/proc/$1/status" 2>/dev/null || echo 0
}

# Writes the most threads PID has had to FILE, checking every 0.1 s until killed.
_sample_thread_peak() {
    local pid=$1 file=$2 most=0 now
    while kill -0 "$pid" 2>/dev/null; do
        now=$(sample_threads "$pid")
        if (( now > most )); then
            most=$now
            printf '%s\n' "$most" >"$file"
        fi
        sleep 0.1
    done
}

# Starts measuring PID and its children: resets their peak RSS to the current RSS, notes CPU ticks and starts
# watching PID's thread count.
sample_begin() {
    mapfile -t SAMPLE_PIDS < <(_sample_tree "$1")
    local pid
    for pid in "${SAMPLE_PIDS[@]}"; do
        # Writing 5 to clear_refs resets VmHWM (Linux 4.0+), so the peak is this scenario's alone.
        echo 5 2>/dev/null >"/proc/$pid/clear_refs" || warn "cannot reset the peak RSS of $pid; it counts from its start"
    done
    SAMPLE_TICKS=$(_sample_ticks "${SAMPLE_PIDS[@]}")
    SAMPLE_THREADS_FILE=$(mktemp)
    sample_threads "$1" >"$SAMPLE_THREADS_FILE"
    _sample_thread_peak "$1" "$SAMPLE_THREADS_FILE" &
    SAMPLE_THREADS_PID=$!
}

# Prints the peak RSS in MB, the CPU seconds used since sample_begin and the most threads seen meanwhile.
sample_end() {
    local ticks kb hz threads
    kill "$SAMPLE_THREADS_PID" 2>/dev/null || true
    wait "$SAMPLE_THREADS_PID" 2>/dev/null || true
    threads=$(cat "$SAMPLE_THREADS_FILE")
    rm -f "$SAMPLE_THREADS_FILE"
    ticks=$(_sample_ticks "${SAMPLE_PIDS[@]}")
    kb=$(_sample_peak_kb "${SAMPLE_PIDS[@]}")
    hz=$(getconf CLK_TCK)
    awk -v kb="$kb" -v t="$(( ticks - SAMPLE_TICKS ))" -v hz="$hz" -v threads="${threads:-0}" \
        'BEGIN { printf "%.1f %.2f %d\n", kb / 1024, t / hz, threads }'
}
