# shellcheck shell=bash
# Checks on the TLS certificate and key pair chatterd serves with. Source it after common.sh.

# Succeeds when certificate CRT and private key KEY hold the same public key.
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
