# shellcheck shell=bash
# Checks on the TLS certificates and key chatterd serves with. Source it after common.sh.

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
