# shellcheck shell=bash
# The certificates chatterd serves with: what deploy/gen-cert.sh puts in them, and the checks scripts/run and
# deploy/install.sh make before serving. Source it (after common.sh for cert_check_chain); it defines functions
# only. deploy/install.sh installs a copy beside the installed gen-cert.sh, which sources it from there.

# Succeeds when certificate CRT (its first one, for a chain) and private key KEY hold the same public key.
cert_key_matches() {
    local crt_pub key_pub
    crt_pub=$(openssl x509 -in "$1" -noout -pubkey 2>/dev/null) || return 1
    key_pub=$(openssl pkey -in "$2" -pubout 2>/dev/null) || return 1
    [[ -n $crt_pub && $crt_pub == "$key_pub" ]]
}

# Succeeds when KEY is readable by its owner only (chatterd refuses a key open to group or others).
key_mode_private() {
    local mode
    mode=$(stat -c '%a' "$1") || return 1
    (( (8#$mode & 8#077) == 0 ))
}

# Prints ARG as a subjectAltName entry, DNS:name or IP:address; fails with the reason on stderr when it is
# neither. A bare argument is an IP address when it looks like one (a colon can only be IPv6), else a name.
cert_san() {
    local san=$1 value
    case $san in
        DNS:*|IP:*) ;;
        *:*) san=IP:$san ;;
        *) if [[ $san =~ ^[0-9]+(\.[0-9]+){3}$ ]]; then san=IP:$san; else san=DNS:$san; fi ;;
    esac
    value=${san#*:}
    if [[ $san == DNS:* ]]; then
        [[ ! $value =~ ^[0-9.]+$ ]] || { printf 'neither an IPv4 address nor a DNS name: %s\n' "$value" >&2; return 1; }
        [[ $value =~ ^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$ ]] \
            || { printf 'not a DNS name: %s\n' "$value" >&2; return 1; }
    elif [[ $value == *:* ]]; then
        # IPv6: the characters and at least two colons here; OpenSSL checks the rest.
        [[ $value =~ ^[0-9A-Fa-f:.]+$ && $value == *:*:* ]] \
            || { printf 'not an IPv6 address: %s\n' "$value" >&2; return 1; }
    else
        local octet
        [[ $value =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ ]] || { printf 'not an IP address: %s\n' "$value" >&2; return 1; }
        for octet in ${value//./ }; do
            (( 10#$octet <= 255 )) || { printf 'not an IPv4 address: %s\n' "$value" >&2; return 1; }
        done
    fi
    printf '%s\n' "$san"
}

# Prints the nameConstraints value that lets a CA vouch only for the entries of SAN_LIST (comma-separated
# DNS:x and IP:x): a permitted subtree per name (a wildcard's base name covers it) and per address (a
# single-address mask). A form with no entry is closed, so the CA can vouch for none of it: DNS names by
# permitting only "invalid" (RFC 2606 reserves that name; it never resolves), an address family by
# excluding all of it.
cert_name_constraints() {
    local entry value subtrees='' ipv4=0 ipv6=0 dns=0
    local -a entries
    IFS=, read -r -a entries <<<"$1"
    for entry in "${entries[@]}"; do
        value=${entry#*:}
        case $entry in
            DNS:*) subtrees+=",permitted;DNS:${value#\*.}"; dns=1 ;;
            IP:*:*) subtrees+=",permitted;IP:$value/ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"; ipv6=1 ;;
            IP:*) subtrees+=",permitted;IP:$value/255.255.255.255"; ipv4=1 ;;
        esac
    done
    (( dns )) || subtrees+=",permitted;DNS:invalid"
    (( ipv4 )) || subtrees+=",excluded;IP:0.0.0.0/0.0.0.0"
    (( ipv6 )) || subtrees+=",excluded;IP:::/::"
    printf 'critical%s\n' "$subtrees"
}

# Prints the x509v3 extensions (config lines for OpenSSL) of the CA phones install, for the names and
# addresses in SAN_LIST. It may sign only end-entity certificates (pathlen:0) for those names, only for
# TLS servers (extendedKeyUsage, which Apple and OpenSSL also apply to what a CA issues).
cert_ca_extensions() {
    cat <<EOF
basicConstraints = critical,CA:TRUE,pathlen:0
keyUsage = critical,keyCertSign,cRLSign
extendedKeyUsage = serverAuth
nameConstraints = $(cert_name_constraints "$1")
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
EOF
}

# Prints the x509v3 extensions of the server's own (leaf) certificate for a KEY_TYPE (rsa or ec) key and the
# names in SAN_LIST. keyEncipherment only means something for RSA (RFC 5480 leaves it out for EC keys).
cert_leaf_extensions() {
    local key_usage=critical,digitalSignature
    [[ $1 == rsa ]] && key_usage+=,keyEncipherment
    cat <<EOF
basicConstraints = critical,CA:FALSE
keyUsage = $key_usage
extendedKeyUsage = serverAuth
subjectAltName = $2
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
EOF
}

# Checks that KEY, CHAIN (what chatterd serves: its certificate, then the CA) and CA (what phones install)
# belong together: the first certificate of CHAIN holds KEY's public key and CHAIN verifies up to CA. A pair
# made before gen-cert.sh made a CA (CA is then KEY's own self-signed certificate, and there is no CHAIN)
# gets CHAIN as a copy of CA, which is its own chain, so it keeps serving until gen-cert.sh --force replaces
# it. Prints the reason and fails when they do not belong together.
cert_check_chain() {
    local ca=$1 chain=$2 key=$3 output
    if [[ ! -e $chain ]] && cert_key_matches "$ca" "$key"; then
        log "$chain is missing, and $ca is $key's own certificate: it serves as its own chain"
        cp -- "$ca" "$chain.new" && chmod 0644 "$chain.new" && mv -f -- "$chain.new" "$chain" || return 1
    fi
    if [[ ! -e $chain ]]; then
        printf '%s does not match %s, and there is no %s\n' "$key" "$ca" "$chain" >&2
        return 1
    fi
    if ! cert_key_matches "$chain" "$key"; then
        printf '%s does not match the first certificate in %s\n' "$key" "$chain" >&2
        return 1
    fi
    if ! output=$(openssl verify -purpose sslserver -CAfile "$ca" -untrusted "$chain" "$chain" 2>&1); then
        printf '%s does not lead to %s: %s\n' "$chain" "$ca" "$(tr '\n' ' ' <<<"$output")" >&2
        return 1
    fi
}
