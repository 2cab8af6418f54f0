# shellcheck shell=bash
# Server resource use per scenario, from /proc: peak resident memory and CPU seconds of a process and
# its children (nginx's workers). Usage: sample_begin PID; ...load...; sample_end  (prints "RSS_MB CPU_S").

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

# Starts measuring PID and its children: resets their peak RSS to the current RSS and notes CPU ticks.
sample_begin() {
    mapfile -t SAMPLE_PIDS < <(_sample_tree "$1")
    local pid
    for pid in "${SAMPLE_PIDS[@]}"; do
        # Writing 5 to clear_refs resets VmHWM (Linux 4.0+), so the peak is this scenario's alone.
        echo 5 2>/dev/null >"/proc/$pid/clear_refs" || warn "cannot reset the peak RSS of $pid; it counts from its start"
    done
    SAMPLE_TICKS=$(_sample_ticks "${SAMPLE_PIDS[@]}")
}

# Prints the peak RSS in MB and the CPU seconds used since sample_begin.
sample_end() {
    local ticks kb hz
    ticks=$(_sample_ticks "${SAMPLE_PIDS[@]}")
    kb=$(_sample_peak_kb "${SAMPLE_PIDS[@]}")
    hz=$(getconf CLK_TCK)
    awk -v kb="$kb" -v t="$(( ticks - SAMPLE_TICKS ))" -v hz="$hz" 'BEGIN { printf "%.1f %.2f\n", kb / 1024, t / hz }'
}
