"""deploy/gen-cert.sh makes a CA that can vouch only for the server's own names, whose key is gone, and the
certificate chatterd serves, signed by it; scripts/lib/cert.sh's cert_check_chain keeps a pair from before
(a self-signed chatterd.crt) serving and refuses files that do not belong together."""

from __future__ import annotations

import ipaddress
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import Certs, launch
from processes import wait_until
from wire import Conn, build_request

SANS = ["localhost", "127.0.0.1", "chatter.example.org", "192.0.2.7", "::1"]
ALL_ONES_V6 = "FFFF:FFFF:FFFF:FFFF:FFFF:FFFF:FFFF:FFFF"
# What openssl prints for the excluded "every IPv4 address" and "every IPv6 address" subtrees.
ALL_V4, ALL_V6 = "IP:0.0.0.0/0.0.0.0", "IP:0:0:0:0:0:0:0:0/0:0:0:0:0:0:0:0"


@dataclass
class Made:
    """The files one gen-cert.sh run wrote."""
    directory: Path
    ca: Path
    chain: Path
    key: Path
    key_type: str = ""
    tmpdir: Path | None = None


def run(args: list, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True)


def openssl(*args) -> str:
    result = run(["openssl", *args])
    assert result.returncode == 0, result.stderr
    return result.stdout


def gen_cert(repo: Path, directory: Path, *args, tmpdir: Path | None = None) -> Made:
    env = dict(os.environ, TMPDIR=str(tmpdir)) if tmpdir else None
    result = run([repo / "deploy/gen-cert.sh", "--out-dir", directory, *args], env=env)
    assert result.returncode == 0, result.stderr
    return Made(directory, directory / "chatterd.crt", directory / "chatterd-server.crt", directory / "chatterd.key")


def lib(repo: Path, script: str, *args) -> subprocess.CompletedProcess:
    """Runs `script` in bash with scripts/lib/common.sh and cert.sh sourced; $1... are `args`."""
    return run(["bash", "-c", f"source scripts/lib/common.sh && source scripts/lib/cert.sh && {script}", "_",
                *args], cwd=repo)


def name_constraints(cert: Path) -> tuple[bool, set[str], set[str]]:
    """(critical, permitted, excluded) as openssl prints them."""
    text = openssl("x509", "-in", cert, "-noout", "-ext", "nameConstraints")
    assert text, f"{cert} has no nameConstraints extension"
    critical = text.splitlines()[0].rstrip().endswith("critical")
    permitted, excluded, section = set(), set(), None
    for line in text.splitlines()[1:]:
        entry = line.strip()
        if entry in ("Permitted:", "Excluded:"):
            section = permitted if entry == "Permitted:" else excluded
        elif entry:
            section.add(entry)
    return critical, permitted, excluded


def public_key(path: Path) -> str:
    if "PRIVATE KEY" in path.read_text():
        return openssl("pkey", "-in", path, "-pubout")
    return openssl("x509", "-in", path, "-noout", "-pubkey")


def pem_blocks(path: Path) -> list[str]:
    return re.findall(r"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----\n", path.read_text(), re.S)


def extension(cert: Path, name: str) -> str:
    return openssl("x509", "-in", cert, "-noout", "-ext", name)


@pytest.fixture(scope="module", params=["rsa", "ec"])
def made(request, env, tmp_path_factory) -> Made:
    directory = tmp_path_factory.mktemp(f"gen-cert-{request.param}")
    tmpdir = tmp_path_factory.mktemp(f"tmpdir-{request.param}")
    made = gen_cert(env.repo, directory, "--key-type", request.param, *SANS, tmpdir=tmpdir)
    made.key_type, made.tmpdir = request.param, tmpdir
    return made


def test_the_ca_permits_exactly_the_servers_names_and_addresses(made):
    critical, permitted, excluded = name_constraints(made.ca)
    assert critical
    assert permitted == {"DNS:localhost", "DNS:chatter.example.org", "IP:127.0.0.1/255.255.255.255",
                         "IP:192.0.2.7/255.255.255.255", f"IP:0:0:0:0:0:0:0:1/{ALL_ONES_V6}"}
    assert excluded == set()


def test_the_ca_is_a_ca_iphones_offer_full_trust_for(made):
    assert extension(made.ca, "basicConstraints").split() == ["X509v3", "Basic", "Constraints:", "critical",
                                                              "CA:TRUE,", "pathlen:0"]
    key_usage = extension(made.ca, "keyUsage")
    assert "critical" in key_usage and "Certificate Sign, CRL Sign" in key_usage and "Digital" not in key_usage
    assert "TLS Web Server Authentication" in extension(made.ca, "extendedKeyUsage")
    text = openssl("x509", "-in", made.ca, "-noout", "-text")
    assert "Signature Algorithm: " + ("sha256WithRSAEncryption" if made.key_type == "rsa" else "ecdsa-with-SHA256") in text
    assert ("Public-Key: (2048 bit)" if made.key_type == "rsa" else "Public-Key: (256 bit)") in text


def test_the_server_certificate_is_a_leaf_for_the_names_signed_by_the_ca(made):
    blocks = pem_blocks(made.chain)
    assert len(blocks) == 2 and blocks[1] == made.ca.read_text(), "the chain is the server's certificate, then the CA"
    leaf = made.directory / "leaf.pem"
    leaf.write_text(blocks[0])
    try:
        assert extension(leaf, "subjectAltName").split("\n", 1)[1].split() == [
            "DNS:localhost,", "IP", "Address:127.0.0.1,", "DNS:chatter.example.org,", "IP", "Address:192.0.2.7,",
            "IP", "Address:0:0:0:0:0:0:0:1"]
        assert "critical" in extension(leaf, "basicConstraints") and "CA:FALSE" in extension(leaf, "basicConstraints")
        key_usage = extension(leaf, "keyUsage")
        assert "Digital Signature" in key_usage and "Certificate Sign" not in key_usage
        assert ("Key Encipherment" in key_usage) == (made.key_type == "rsa")
        assert "TLS Web Server Authentication" in extension(leaf, "extendedKeyUsage")
        assert openssl("x509", "-in", leaf, "-noout", "-subject").strip() == "subject=CN = localhost"
        ca_ski = extension(made.ca, "subjectKeyIdentifier").split("\n", 1)[1].strip()
        assert ca_ski in extension(leaf, "authorityKeyIdentifier")
        dates = ["-startdate", "-enddate"]
        assert openssl("x509", "-in", leaf, "-noout", *dates) == openssl("x509", "-in", made.ca, "-noout", *dates)
    finally:
        leaf.unlink()


def test_the_ca_key_is_not_the_servers_and_is_nowhere(made):
    assert public_key(made.chain) == public_key(made.key)
    assert public_key(made.ca) != public_key(made.key)
    files = sorted(p.relative_to(made.directory).as_posix() for p in made.directory.rglob("*"))
    assert files == ["chatterd-server.crt", "chatterd.crt", "chatterd.key"]
    assert list(made.tmpdir.iterdir()) == [], "gen-cert.sh left files in TMPDIR"
    assert (made.key.stat().st_mode & 0o777) == 0o600
    assert (made.ca.stat().st_mode & 0o777) == 0o644 and (made.chain.stat().st_mode & 0o777) == 0o644


def test_openssl_verifies_the_chain_for_each_name(made):
    base = ["verify", "-purpose", "sslserver", "-CAfile", made.ca, "-untrusted", made.chain]
    for name in SANS:
        flag = "-verify_ip" if ":" in name or name[0].isdigit() else "-verify_hostname"
        assert openssl(*base, flag, name, made.chain).strip().endswith("OK")
    refused = run(["openssl", *base, "-verify_hostname", "example.com", made.chain])
    assert refused.returncode != 0 and "hostname mismatch" in refused.stdout + refused.stderr


def test_a_strict_webpki_verifier_accepts_the_chain(made):
    verification = pytest.importorskip("cryptography.x509.verification")
    from cryptography import x509
    ca = x509.load_pem_x509_certificate(made.ca.read_bytes())
    leaf, *rest = x509.load_pem_x509_certificates(made.chain.read_bytes())
    for name in SANS:
        try:
            subject = verification.IPAddress(ipaddress.ip_address(name))
        except ValueError:
            subject = verification.DNSName(name)
        verifier = verification.PolicyBuilder().store(verification.Store([ca])).build_server_verifier(subject)
        assert verifier.verify(leaf, rest)[-1] == ca


@pytest.mark.parametrize("sans, permitted, excluded", [
    (["192.0.2.7"], {"IP:192.0.2.7/255.255.255.255", "DNS:invalid"}, {ALL_V6}),
    (["::1"], {f"IP:0:0:0:0:0:0:0:1/{ALL_ONES_V6}", "DNS:invalid"}, {ALL_V4}),
    (["chatter.example.org"], {"DNS:chatter.example.org"}, {ALL_V4, ALL_V6}),
    (["*.example.org", "10.1.2.3"], {"DNS:example.org", "IP:10.1.2.3/255.255.255.255"}, {ALL_V6}),
], ids=["ipv4-only", "ipv6-only", "name-only", "wildcard"])
def test_a_name_form_without_entries_is_closed(env, tmp_path, sans, permitted, excluded):
    made = gen_cert(env.repo, tmp_path, "--key-type", "ec", *sans)
    assert name_constraints(made.ca) == (True, permitted, excluded)
    assert openssl("verify", "-CAfile", made.ca, "-untrusted", made.chain, made.chain).strip().endswith("OK")


ROGUE = {"dns": "DNS:example.com", "ipv4": "IP:10.0.0.1", "ipv6": "IP:::2", "a-name-and-a-good-one": "DNS:localhost,DNS:example.com"}


@pytest.mark.parametrize("kind", ROGUE)
def test_a_ca_like_gen_certs_cannot_vouch_for_other_names(env, tmp_path, kind):
    """A CA key is needed to sign a rogue certificate, and gen-cert.sh keeps none: so this builds a CA with the
    extensions gen-cert.sh prints (scripts/lib/cert.sh) for localhost, 127.0.0.1 and ::1, checks they are what a
    gen-cert.sh CA for those names carries, and signs a certificate for a name outside them."""
    names = "DNS:localhost,IP:127.0.0.1,IP:::1"
    sections = lib(env.repo, 'printf "[ca_ext]\\n"; cert_ca_extensions "$1"; printf "[leaf]\\n"; '
                   'cert_leaf_extensions ec "$2"; printf "[good]\\n"; cert_leaf_extensions ec "$1"', names, ROGUE[kind])
    assert sections.returncode == 0, sections.stderr
    config = tmp_path / "ca.cnf"
    config.write_text("[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = test CA\n" + sections.stdout)
    ca, ca_key = tmp_path / "ca.crt", tmp_path / "ca.key"
    openssl("req", "-new", "-x509", "-config", config, "-extensions", "ca_ext", "-newkey", "ec", "-pkeyopt",
            "ec_paramgen_curve:P-256", "-nodes", "-keyout", ca_key, "-days", "2", "-out", ca)
    real = gen_cert(env.repo, tmp_path / "real", "--key-type", "ec", "localhost", "127.0.0.1", "::1")
    assert name_constraints(ca) == name_constraints(real.ca)
    for section in ("leaf", "good"):
        key, cert = tmp_path / f"{section}.key", tmp_path / f"{section}.crt"
        openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key,
                "-subj", f"/CN={section}", "-out", tmp_path / "req.csr")
        openssl("x509", "-req", "-in", tmp_path / "req.csr", "-CA", ca, "-CAkey", ca_key, "-extfile", config,
                "-extensions", section, "-days", "1", "-out", cert)
    assert openssl("verify", "-CAfile", ca, tmp_path / "good.crt").strip().endswith("OK"), "the control must pass"
    refused = run(["openssl", "verify", "-CAfile", ca, tmp_path / "leaf.crt"])
    assert refused.returncode != 0
    assert re.search(r"error 4[78] .*(permitted|excluded) subtree violation", refused.stdout + refused.stderr), \
        refused.stdout + refused.stderr
    try:
        from cryptography import x509
        from cryptography.x509 import verification
    except ImportError:
        return
    rogue = ROGUE[kind].split(",")[-1].split(":", 1)[1]
    subject = (verification.DNSName(rogue) if kind in ("dns", "a-name-and-a-good-one")
               else verification.IPAddress(ipaddress.ip_address(rogue)))
    store = verification.Store([x509.load_pem_x509_certificate(ca.read_bytes())])
    verifier = verification.PolicyBuilder().store(store).build_server_verifier(subject)
    with pytest.raises(verification.VerificationError, match="name constraint"):
        verifier.verify(x509.load_pem_x509_certificate((tmp_path / "leaf.crt").read_bytes()), [])


def test_an_existing_key_is_kept_unless_forced(env, tmp_path):
    made = gen_cert(env.repo, tmp_path, "--key-type", "ec")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    again = run([env.repo / "deploy/gen-cert.sh", "--out-dir", tmp_path, "--key-type", "ec"])
    assert again.returncode != 0 and "--force" in again.stderr
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    gen_cert(env.repo, tmp_path, "--key-type", "ec", "--force")
    assert all(made.directory.joinpath(name).read_bytes() != data for name, data in before.items())


@pytest.mark.parametrize("args, message", [
    (["not a name"], "not a DNS name"), (["300.1.2.3"], "not an IPv4 address"), (["1.2.3"], "neither"),
    (["IP:zz::1"], "not an IPv6 address"), (["--days", "826"], "825"), (["--key-type", "dsa"], "rsa or ec"),
])
def test_bad_input_is_refused_and_writes_nothing(env, tmp_path, args, message):
    result = run([env.repo / "deploy/gen-cert.sh", "--out-dir", tmp_path / "out", *args])
    assert result.returncode != 0 and message in result.stderr
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []


# MARK: - chatterd serving the chain

def context_for(cafile: Path, version: ssl.TLSVersion) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(cafile))
    ctx.check_hostname = True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ctx.minimum_version = ctx.maximum_version = version
    return ctx


def healthz_as(server, ctx: ssl.SSLContext, hostname: str) -> tuple[int, bytes]:
    """GET /healthz over a new connection checked for `hostname`; the status and the certificate served."""
    raw = socket.create_connection((server.host, server.port), timeout=10)
    with Conn(ctx.wrap_socket(raw, server_hostname=hostname)) as conn:
        conn.send(build_request("GET", "/healthz"))
        return conn.read_response().status, conn.sock.getpeercert(binary_form=True)


@pytest.fixture(scope="module")
def serving(env, database_url, made):
    server = launch(env, database_url, Certs(made.directory, made.chain, made.key),
                    context_for(made.ca, ssl.TLSVersion.TLSv1_3))
    yield server
    server.process.stop(timeout=15)


@pytest.mark.parametrize("hostname", ["localhost", "127.0.0.1"])
@pytest.mark.parametrize("version", [ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3], ids=["tls1.2", "tls1.3"])
def test_chatterd_serves_a_chain_that_the_ca_alone_makes_trusted(serving, made, hostname, version):
    status, der = healthz_as(serving, context_for(made.ca, version), hostname)
    assert status == 200
    assert der == ssl.PEM_cert_to_DER_cert(pem_blocks(made.chain)[0])


def test_a_name_the_certificate_does_not_carry_is_refused(serving, made):
    with pytest.raises(ssl.SSLCertVerificationError, match="mismatch"):
        healthz_as(serving, context_for(made.ca, ssl.TLSVersion.TLSv1_3), "example.com")


# MARK: - a pair from before the CA: cert_check_chain

LEGACY_EXTENSIONS = """[req]
distinguished_name = dn
prompt = no
x509_extensions = v3
[dn]
CN = localhost
[v3]
basicConstraints = critical,CA:TRUE,pathlen:0
keyUsage = critical,digitalSignature,keyEncipherment,keyCertSign
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost,IP:127.0.0.1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
"""


def make_legacy_pair(directory: Path) -> tuple[Path, Path]:
    """chatterd.crt and chatterd.key as gen-cert.sh made them before: one self-signed certificate, CA and leaf."""
    directory.mkdir(exist_ok=True)
    config, crt, key = directory / "legacy.cnf", directory / "chatterd.crt", directory / "chatterd.key"
    config.write_text(LEGACY_EXTENSIONS)
    openssl("req", "-new", "-x509", "-config", config, "-newkey", "rsa:2048", "-nodes", "-keyout", key,
            "-sha256", "-days", "30", "-out", crt)
    config.unlink()
    os.chmod(key, 0o600)
    return crt, key


def check_chain(env, directory: Path) -> subprocess.CompletedProcess:
    return lib(env.repo, 'cert_check_chain "$1" "$2" "$3"', directory / "chatterd.crt",
               directory / "chatterd-server.crt", directory / "chatterd.key")


def reloaded(server) -> int:
    return sum("event=certificate_reloaded" in line for line in server.process.lines)


def test_a_pair_from_before_keeps_serving_until_gen_cert_force(env, database_url, tmp_path):
    crt, key = make_legacy_pair(tmp_path)
    checked = check_chain(env, tmp_path)
    assert checked.returncode == 0, checked.stderr
    chain = tmp_path / "chatterd-server.crt"
    assert chain.read_bytes() == crt.read_bytes() and (chain.stat().st_mode & 0o777) == 0o644
    assert check_chain(env, tmp_path).returncode == 0, "a second check changes nothing"

    ctx = context_for(crt, ssl.TLSVersion.TLSv1_3)
    server = launch(env, database_url, Certs(tmp_path, chain, key), ctx)
    try:
        assert healthz_as(server, ctx, "localhost")[0] == 200
        # The operator's way out: new files in place, then SIGHUP (deploy/README.md, "Rotate the certificate").
        made = gen_cert(env.repo, tmp_path, "--force", "--key-type", "ec")
        before = reloaded(server)
        server.process.signal(signal.SIGHUP)
        assert wait_until(lambda: reloaded(server) > before, 10), server.process.log()
        new_ctx = context_for(made.ca, ssl.TLSVersion.TLSv1_3)
        assert healthz_as(server, new_ctx, "127.0.0.1")[0] == 200
        with pytest.raises(ssl.SSLCertVerificationError):
            healthz_as(server, ctx, "localhost")
    finally:
        server.process.stop(timeout=15)


def test_a_key_that_matches_neither_file_is_refused(env, tmp_path):
    made = gen_cert(env.repo, tmp_path / "new", "--key-type", "ec")
    _, legacy_key = make_legacy_pair(tmp_path / "old")
    shutil.copy(legacy_key, made.key)
    made.chain.unlink()
    checked = check_chain(env, made.directory)
    assert checked.returncode == 1 and "does not match" in checked.stderr
    assert not made.chain.exists(), "nothing is made from files that do not belong together"


def test_a_chain_whose_certificate_is_not_the_keys_is_refused(env, tmp_path):
    made = gen_cert(env.repo, tmp_path / "a", "--key-type", "ec")
    other = gen_cert(env.repo, tmp_path / "b", "--key-type", "ec")
    shutil.copy(other.key, made.key)
    checked = check_chain(env, made.directory)
    assert checked.returncode == 1 and "does not match the first certificate" in checked.stderr


def test_a_chain_from_another_ca_is_refused(env, tmp_path):
    made = gen_cert(env.repo, tmp_path / "a", "--key-type", "ec")
    other = gen_cert(env.repo, tmp_path / "b", "--key-type", "ec")
    shutil.copy(other.ca, made.ca)
    checked = check_chain(env, made.directory)
    assert checked.returncode == 1 and "does not lead to" in checked.stderr


# MARK: - the repository

def test_the_committed_certificate_is_a_constrained_ca_and_no_key_is_committed(env):
    critical, permitted, _ = name_constraints(env.repo / "chatterd.crt")
    assert critical and permitted == {"DNS:localhost", "IP:127.0.0.1/255.255.255.255"}
    assert "CA:TRUE" in extension(env.repo / "chatterd.crt", "basicConstraints")
    listed = run(["git", "ls-files"], cwd=env.repo)
    if listed.returncode != 0:
        pytest.skip(f"{env.repo} is not a git checkout")
    tracked = listed.stdout.split()
    private_key = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")
    assert not [f for f in tracked if f.endswith((".key", "-server.crt")) or private_key.search(_text(env.repo / f))]
    ignored = run(["git", "check-ignore", "chatterd.key", "chatterd-server.crt"], cwd=env.repo)
    assert ignored.stdout.split() == ["chatterd.key", "chatterd-server.crt"]


def _text(path: Path) -> str:
    try:
        return path.read_text(errors="replace") if path.is_file() and path.stat().st_size < 1_000_000 else ""
    except OSError:
        return ""
