#!/usr/bin/env bash
# Generates a self-signed TLS certificate and private key for chatterd that iOS accepts once the
# certificate is installed as a profile and fully trusted.
#
# Usage: deploy/gen-cert.sh [--out-dir DIR] [--name NAME] [--days N] [--key-type rsa|ec] [--force] [SAN ...]
#   SAN: DNS:name, IP:address, or a bare name or address (detected). Default: DNS:localhost IP:127.0.0.1.
#   Writes DIR/NAME.crt (0644) and DIR/NAME.key (0600). Defaults: DIR = repository root, NAME = chatterd,
#   365 days, RSA 2048. Refuses to replace an existing key unless --force.
#
# Why the certificate looks the way it does (Apple, "Requirements for trusted certificates in iOS 13"):
# - The names must be in subjectAltName (iOS ignores the CN), the signature SHA-256, an RSA key at
#   least 2048 bits, extendedKeyUsage must contain serverAuth, and validity at most 825 days.
# - basicConstraints CA:TRUE: iOS lists a certificate under Settings > General > About > Certificate
#   Trust Settings (where full trust is switched on) only when it is a CA. The server presents this
#   same certificate, so it is both the trust anchor and the leaf; keyCertSign goes with CA:TRUE.
#   pathlen:0 keeps it from vouching for intermediates. Because a phone then trusts this key as a
#   root, keep it private: whoever holds it can mint certificates that phone accepts.
# - RSA by default: it is what Apple's rules spell out and what every client takes. --key-type ec
#   gives a P-256 key (faster handshakes); keyEncipherment is then left out, as it has no meaning
#   for an EC key (RFC 5480).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out_dir=$ROOT name=chatterd days=365 key_type=rsa force=0
sans=()

die() { printf 'gen-cert: %s\n' "$*" >&2; exit 1; }

while (( $# > 0 )); do
    case $1 in
        --out-dir) out_dir=${2:?--out-dir needs a directory}; shift 2 ;;
        --name) name=${2:?--name needs a name}; shift 2 ;;
        --days) days=${2:?--days needs a number}; shift 2 ;;
        --key-type) key_type=${2:?--key-type needs rsa or ec}; shift 2 ;;
        --force) force=1; shift ;;
        -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown option $1" ;;
        *) sans+=("$1"); shift ;;
    esac
done

if ! [[ $days =~ ^[0-9]+$ ]] || (( days < 1 || days > 825 )); then
    die "--days must be 1..825 (iOS rejects longer)"
fi
[[ $name =~ ^[A-Za-z0-9._-]+$ ]] || die "bad --name $name"
[[ $key_type == rsa || $key_type == ec ]] || die "--key-type must be rsa or ec"
(( ${#sans[@]} > 0 )) || sans=(DNS:localhost IP:127.0.0.1)

# Turns each SAN argument into DNS:x or IP:x, validating it, and remembers the first name for the CN.
san_list='' cn=''
for san in "${sans[@]}"; do
    case $san in
        DNS:*|IP:*) ;;
        *:*) san=IP:$san ;;  # a bare argument with a colon can only be an IPv6 address
        *) if [[ $san =~ ^[0-9]+(\.[0-9]+){3}$ ]]; then san=IP:$san; else san=DNS:$san; fi ;;
    esac
    value=${san#*:}
    if [[ $san == DNS:* ]]; then
        [[ $value =~ ^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$ ]] \
            || die "not a DNS name: $value"
    else
        [[ $value =~ ^[0-9A-Fa-f:.]+$ ]] || die "not an IP address: $value"
    fi
    san_list+=${san_list:+,}$san
    [[ -n $cn ]] || cn=$value
done

mkdir -p "$out_dir"
key=$out_dir/$name.key crt=$out_dir/$name.crt
[[ ! -e $key || $force == 1 ]] || die "$key exists; pass --force to replace it (phones trusting $crt must then install the new one)"

work=$(mktemp -d "$out_dir/.gen-cert.XXXXXX")
trap 'rm -rf -- "$work"' EXIT

key_usage=critical,digitalSignature,keyEncipherment,keyCertSign
[[ $key_type == ec ]] && key_usage=critical,digitalSignature,keyCertSign
# Our own config, so the system openssl.cnf cannot add or change extensions.
cat >"$work/openssl.cnf" <<EOF
[req]
distinguished_name = dn
prompt = no
x509_extensions = v3
[dn]
CN = $cn
[v3]
basicConstraints = critical,CA:TRUE,pathlen:0
keyUsage = $key_usage
extendedKeyUsage = serverAuth
subjectAltName = $san_list
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
EOF

# umask 077 before the key exists: it is created 0600 and is never readable by others, not even briefly.
umask 077
if [[ $key_type == rsa ]]; then
    openssl genpkey -quiet -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$work/key"
else
    openssl genpkey -quiet -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$work/key"
fi
openssl req -new -x509 -config "$work/openssl.cnf" -key "$work/key" -sha256 -days "$days" -out "$work/crt"
chmod 0644 "$work/crt"

# Same filesystem, so each rename is atomic: a reader never sees a half-written file.
mv -f "$work/key" "$key"
mv -f "$work/crt" "$crt"

printf 'wrote %s and %s (0600)\n' "$crt" "$key"
openssl x509 -in "$crt" -noout -subject -ext subjectAltName -enddate -fingerprint -sha256
