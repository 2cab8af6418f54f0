#!/usr/bin/env bash
# Generates the certificates chatterd serves with: a CA that phones install and that can vouch only for
# this server, and the server's own certificate and key, signed by it.
#
# Usage: deploy/gen-cert.sh [--out-dir DIR] [--name NAME] [--days N] [--key-type rsa|ec] [--force] [SAN ...]
#   SAN: DNS:name, IP:address, or a bare name or address (detected). Default: DNS:localhost IP:127.0.0.1.
#   Writes DIR/NAME.crt (the CA, for phones and clients, 0644), DIR/NAME-server.crt (the server's certificate
#   followed by the CA: chatterd's --cert, 0644) and DIR/NAME.key (the server's key: --key, 0600).
#   Defaults: DIR = repository root, NAME = chatterd, 365 days, RSA 2048. Refuses to replace an existing key
#   unless --force; a new run makes a new CA, which every phone must install again.
#
# Why the certificates look the way they do:
# - A phone offers full trust (Settings > General > About > Certificate Trust Settings) only to a CA, and a
#   CA it fully trusts could vouch for any site. So the CA is name-constrained (nameConstraints, critical) to
#   the SANs given here and closed to any other DNS name or IP address, and its key exists only in this
#   script's memory: it signs the server's certificate and is gone. Whoever later gets NAME.key can pose
#   as this server, and nothing else. iOS applies a trusted root's name constraints, DNS and IP alike
#   (Apple's trustd: SecPolicyServer.c starts from the anchor's subtrees, nameconstraints.c matches them).
# - Apple, "Requirements for trusted certificates in iOS 13": names in subjectAltName (iOS ignores the CN),
#   SHA-256 signatures, RSA keys of at least 2048 bits, extendedKeyUsage serverAuth, at most 825 days.
#   Both certificates have the same validity.
# - RSA by default: it is what Apple's rules spell out and what every client takes. --key-type ec gives
#   P-256 keys (faster handshakes).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
# The certificate profiles: the checkout's, or the copy deploy/install.sh puts beside an installed gen-cert.sh.
lib=$ROOT/scripts/lib/cert.sh
[[ -r $lib ]] || lib=$HERE/cert.sh
# shellcheck source=scripts/lib/cert.sh
source "$lib"

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
        -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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

# The SANs as DNS:x and IP:x, comma-separated. The server certificate's CN is the first DNS name. Without
# one it is not a host name at all: OpenSSL checks a host-name-like CN against the CA's DNS constraint
# when there is no DNS SAN, and that constraint (DNS:invalid) would refuse an address there.
san_list='' cn='' first=''
for arg in "${sans[@]}"; do
    san=$(cert_san "$arg" 2>&1) || die "$san"
    san_list+=${san_list:+,}$san
    [[ -n $first ]] || first=${san#*:}
    [[ -n $cn || $san != DNS:* ]] || cn=${san#DNS:}
done
[[ -n $cn ]] || cn="chatterd at $first"

mkdir -p "$out_dir"
key=$out_dir/$name.key ca=$out_dir/$name.crt chain=$out_dir/$name-server.crt
[[ ! -e $key || $force == 1 ]] \
    || die "$key exists; pass --force to replace it (a new CA: phones trusting $ca must then install the new one)"

# umask 077 before any key exists: the server's key is created 0600 and is never readable by others.
umask 077
work=$(mktemp -d "$out_dir/.gen-cert.XXXXXX")
trap 'rm -rf -- "$work"' EXIT

# Prints a new private key of the chosen type, PEM.
new_key() {
    if [[ $key_type == rsa ]]; then
        openssl genpkey -quiet -algorithm RSA -pkeyopt rsa_keygen_bits:2048
    else
        openssl genpkey -quiet -algorithm EC -pkeyopt ec_paramgen_curve:P-256
    fi
}

# The CA's key stays in this variable: OpenSSL reads it through pipes (<(...)), so it is never in a file.
ca_key=$(new_key)
new_key >"$work/key"

# Our own config, so the system openssl.cnf cannot add or change extensions. `openssl ca` issues the server
# certificate because it alone can give it the CA's exact validity; its bookkeeping stays in $work.
cat >"$work/openssl.cnf" <<EOF
[req]
distinguished_name = ca_dn
prompt = no
[ca_dn]
CN = chatterd CA for $first ($(date -u +%Y-%m-%d))
[ca_ext]
$(cert_ca_extensions "$san_list")
[server_ext]
$(cert_leaf_extensions "$key_type" "$san_list")
[ca]
default_ca = issuer
[issuer]
database = index.txt
new_certs_dir = .
rand_serial = yes
default_md = sha256
unique_subject = no
copy_extensions = none
policy = policy_cn
[policy_cn]
commonName = supplied
EOF

# Runs openssl in $work, showing its chatter only when it fails.
quiet_openssl() {
    (cd "$work" && openssl "$@") >"$work/openssl.log" 2>&1 || { cat "$work/openssl.log" >&2; die "openssl $1 failed"; }
}

touch "$work/index.txt"
quiet_openssl req -new -x509 -config openssl.cnf -extensions ca_ext -key <(printf '%s\n' "$ca_key") -sha256 \
    -days "$days" -out ca.crt
not_before=$(date -u -d "$(openssl x509 -in "$work/ca.crt" -noout -startdate | cut -d= -f2)" +%Y%m%d%H%M%SZ)
not_after=$(date -u -d "$(openssl x509 -in "$work/ca.crt" -noout -enddate | cut -d= -f2)" +%Y%m%d%H%M%SZ)
quiet_openssl req -new -config openssl.cnf -key key -subj "/CN=$cn" -out server.csr
quiet_openssl ca -batch -notext -config openssl.cnf -extensions server_ext -cert ca.crt \
    -keyfile <(printf '%s\n' "$ca_key") -startdate "$not_before" -enddate "$not_after" -in server.csr -out server.crt
unset ca_key
cat "$work/server.crt" "$work/ca.crt" >"$work/chain"
chmod 0644 "$work/ca.crt" "$work/chain"
openssl verify -purpose sslserver -CAfile "$work/ca.crt" "$work/server.crt" >/dev/null \
    || die "the new server certificate does not verify against the new CA"

# Same filesystem, so each rename is atomic: a reader never sees a half-written file. The key goes first and
# the chain right after it: a reload between the two is refused (mismatch) and the old pair keeps serving.
mv -f "$work/key" "$key"
mv -f "$work/chain" "$chain"
mv -f "$work/ca.crt" "$ca"

printf 'wrote %s (the CA phones install), %s and %s (0600)\n' "$ca" "$chain" "$key"
openssl x509 -in "$ca" -noout -subject -ext nameConstraints -enddate -fingerprint -sha256
