# shellcheck shell=bash
# Small helpers shared by scripts/, deploy/ and bench/. Source it; it defines functions only.

# Prints a progress line on stderr, so stdout stays free for values a caller captures.
log() { printf '==> %s\n' "$*" >&2; }

# Prints a warning on stderr.
warn() { printf 'warning: %s\n' "$*" >&2; }

# Prints an error on stderr and exits 1.
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Succeeds when running as root.
is_root() { [[ $(id -u) -eq 0 ]]; }

# Prints a free TCP port on 127.0.0.1 chosen by the kernel.
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Percent-encodes $1 for use as a URI query value (libpq connection URIs accept percent-encoding).
uri_encode() {
    # Byte-wise (C locale), so non-ASCII path characters become their UTF-8 bytes.
    local LC_ALL=C s=$1 out='' c i
    for (( i = 0; i < ${#s}; i++ )); do
        c=${s:i:1}
        case $c in
            [A-Za-z0-9/._~-]) out+=$c ;;
            *) out+=$(printf '%%%02X' "'$c") ;;
        esac
    done
    printf '%s' "$out"
}
