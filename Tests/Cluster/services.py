"""The cluster's services, each started in its own test host from Debian's packages: etcd 3.4, Patroni 3.0
with PostgreSQL 15 (configured from deploy/patroni.yml), PgBouncer 1.18 with a stock-style pgbouncer.ini,
HAProxy 2.6 (deploy/haproxy.cfg), and chatterd."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import socket
import time
from collections import Counter
from pathlib import Path

import yaml

from netns import Network

# deploy/haproxy.cfg's and deploy/patroni.yml's example addresses, and the test host that takes each one's place.
EXAMPLE_ADDRESSES = {"10.0.0.10": "lb", "10.0.0.11": "app1", "10.0.0.12": "app2", "10.0.0.20": "pgb",
                     "10.0.0.21": "db1", "10.0.0.22": "db2"}
CHATTERD_PORT = 443
# Test-sized Patroni timings: a dead primary's key expires after TTL seconds. Patroni wants
# loop_wait + 2 * retry_timeout below ttl.
PATRONI_TIMINGS = {"ttl": 10, "loop_wait": 2, "retry_timeout": 3}


def wait_until(predicate, timeout: float, what: str, interval: float = 0.25):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


class Services:
    def __init__(self, network: Network, work: Path, repo: Path, chatterd_bin: str):
        self.net = network
        self.work = work
        self.repo = repo
        self.chatterd_bin = chatterd_bin
        self.patroni: dict[str, subprocess.Popen] = {}
        self.pgbouncer: subprocess.Popen | None = None
        self.chatterd: dict[str, subprocess.Popen] = {}

    def ip(self, host: str) -> str:
        return self.net.address(host)

    def _postgres_dir(self, name: str) -> Path:
        path = self.work / name
        path.mkdir(mode=0o750, exist_ok=True)
        shutil.chown(path, "postgres", "postgres")
        return path

    def _fetch(self, host: str, url: str, timeout: float = 2.0) -> tuple[int, bytes] | None:
        """GET from inside `host` (curl in its namespace); None when nothing answered."""
        result = self.net.run(host, "curl", "-s", "-m", str(timeout), "-o", "-", "-w", "\n%{http_code}", url,
                              check=False, timeout=timeout + 5)
        body, _, code = result.stdout.rpartition("\n")
        return (int(code), body.encode()) if code.isdigit() and code != "000" else None

    # --- etcd

    ETCD_MEMBERS = ("etcd1", "etcd2", "etcd3")

    def etcd_endpoints(self) -> str:
        return ",".join(f"{self.ip(member)}:2379" for member in self.ETCD_MEMBERS)

    def start_etcd(self) -> None:
        """etcd as three members, one per host, as deploy/patroni.yml has it."""
        cluster = ",".join(f"{member}=http://{self.ip(member)}:2380" for member in self.ETCD_MEMBERS)
        for member in self.ETCD_MEMBERS:
            ip = self.ip(member)
            self.net.spawn(member, member, "etcd", "--name", member, "--data-dir", str(self.work / member),
                           "--listen-client-urls", f"http://{ip}:2379", "--advertise-client-urls",
                           f"http://{ip}:2379", "--listen-peer-urls", f"http://{ip}:2380",
                           "--initial-advertise-peer-urls", f"http://{ip}:2380", "--initial-cluster", cluster,
                           "--initial-cluster-state", "new", "--initial-cluster-token", self.net.prefix,
                           "--log-level", "warn")
        for member in self.ETCD_MEMBERS:
            wait_until(lambda: self.etcd_healthy(member), 60, f"etcd member {member} to be healthy")

    def etcd_healthy(self, member: str, asked_from: str | None = None, timeout: float = 2.0) -> bool:
        """Whether `member` answers /health with true (it is in a cluster that has a leader), asked from
        `asked_from`'s host (its own by default)."""
        answer = self._fetch(asked_from or member, f"http://{self.ip(member)}:2379/health", timeout)
        return bool(answer) and answer[0] == 200 and json.loads(answer[1]).get("health") == "true"

    def etcd_status(self, member: str, timeout: float = 2.0) -> dict | None:
        """`member`'s own id and its raft leader's id, from the v3 gateway, asked on its own host."""
        result = self.net.run(member, "curl", "-s", "-m", str(timeout), "-X", "POST", "-d", "{}",
                              f"http://{self.ip(member)}:2379/v3/maintenance/status", check=False,
                              timeout=timeout + 5)
        try:
            status = json.loads(result.stdout)
            return {"id": status["header"]["member_id"], "leader": status["leader"]}
        except (ValueError, KeyError):
            return None

    def etcd_leader(self, among: tuple[str, ...] | None = None) -> str | None:
        """The etcd member that leads the raft group, as the members `among` (every one by default) see it."""
        statuses = {member: self.etcd_status(member) for member in self.ETCD_MEMBERS}
        ids = {status["id"]: member for member, status in statuses.items() if status}
        seen = Counter(status["leader"] for member, status in statuses.items()
                       if status and member in (among or self.ETCD_MEMBERS) and status["leader"] != "0")
        return ids.get(seen.most_common(1)[0][0], "unknown") if seen else None

    def etcd_member_used_by(self, host: str) -> str | None:
        """The etcd member `host`'s processes (Patroni) hold the most connections to."""
        output = self.net.run(host, "ss", "-Htn", "state", "established", "dport", "=", ":2379", check=False).stdout
        peers = Counter(line.split()[-1].rsplit(":", 1)[0] for line in output.splitlines() if line.strip())
        by_ip = {self.ip(member): member for member in self.ETCD_MEMBERS}
        return next((by_ip[ip] for ip, _ in peers.most_common() if ip in by_ip), None)

    # --- Patroni and PostgreSQL

    def patroni_config(self, host: str) -> dict:
        """deploy/patroni.yml for `host`, with test addresses, directories and timings."""
        config = yaml.safe_load((self.repo / "deploy/patroni.yml").read_text())
        ip, home = self.ip(host), self._postgres_dir(host)
        config["name"] = host
        config["restapi"] = {"listen": f"{ip}:8008", "connect_address": f"{ip}:8008"}
        config["etcd3"] = {"hosts": self.etcd_endpoints()}
        dcs = config["bootstrap"]["dcs"]
        dcs.update(PATRONI_TIMINGS)
        # A standby cut off silently is noticed by its WAL sender within wal_sender_timeout (60 s by default).
        dcs["postgresql"]["parameters"].update({"wal_sender_timeout": "5s", "wal_receiver_timeout": "5s"})
        subnet = f"{'.'.join(ip.split('.')[:3])}.0/24"
        # Test hosts only: no passwords to make, keep or leak.
        config["bootstrap"]["pg_hba"] = ["local all all trust", f"host replication replicator {subnet} trust",
                                         f"host all all {subnet} trust"]
        postgresql = config["postgresql"]
        postgresql.update({"listen": f"{ip}:5432", "connect_address": f"{ip}:5432",
                           "data_dir": str(home / "data"), "pgpass": str(home / "pgpass")})
        postgresql["parameters"]["unix_socket_directories"] = str(home)
        # A new standby's pg_basebackup would otherwise wait for a spread checkpoint (minutes on an idle primary).
        postgresql["basebackup"] = [{"checkpoint": "fast"}]
        return config

    def start_patroni(self, host: str) -> None:
        path = self._postgres_dir(host) / "patroni.yml"
        path.write_text(yaml.safe_dump(self.patroni_config(host)))
        self.patroni[host] = self.net.spawn(host, f"patroni-{host}", "patroni", str(path), user="postgres")

    def stop_patroni(self, host: str) -> None:
        self.net.stop(self.patroni.pop(host), timeout=30)

    def cluster_members(self) -> list[dict]:
        """Patroni's view of the members, asked of whichever REST API answers."""
        for host in ("db1", "db2"):
            answer = self._fetch(host, f"http://{self.ip(host)}:8008/cluster")
            if answer and answer[0] == 200:
                return json.loads(answer[1])["members"]
        return []

    def leader(self) -> str | None:
        return next((m["name"] for m in self.cluster_members() if m["role"] == "leader"), None)

    def synchronous_pair(self) -> tuple[str, str] | None:
        """(leader, sync standby) once both run and the standby streams synchronously."""
        members = self.cluster_members()
        leader = next((m["name"] for m in members if m["role"] == "leader" and m["state"] == "running"), None)
        standby = next((m["name"] for m in members
                        if m["role"] == "sync_standby" and m["state"] in ("running", "streaming")), None)
        return (leader, standby) if leader and standby else None

    def psql(self, host: str, sql: str, database: str = "postgres", timeout: float = 30) -> str:
        home = self.work / host
        return self.net.run(host, "psql", "-X", "-q", "-A", "-t",
                            "-h", str(home), "-p", "5432", "-d", database, "-v", "ON_ERROR_STOP=1", "-c", sql,
                            user="postgres", timeout=timeout).stdout

    def write_refusal(self, host: str) -> str | None:
        """How `host`'s PostgreSQL, asked on its own socket, shows that it takes no write now: in recovery, a write
        refused with SQLSTATE 25006 (read_only_sql_transaction), or not running (its socket refuses connections or
        is gone). None when it takes writes, and for any other failure (a timeout, a server starting up or shutting
        down), which shows neither."""
        # The write is rolled back, so a primary that still takes it never waits for a synchronous standby.
        try:
            result = self.net.run(host, "psql", "-X", "-q", "-A", "-t", "-h", str(self.work / host), "-p", "5432",
                                  "-d", "postgres", "-v", "VERBOSITY=verbose", "-c", "SELECT pg_is_in_recovery()",
                                  "-c", "BEGIN; CREATE TEMP TABLE write_probe (x int); ROLLBACK",
                                  user="postgres", check=False, timeout=5)
        except subprocess.TimeoutExpired:
            return None
        shown = []
        if result.stdout.split()[:1] == ["t"]:
            shown.append("in recovery (pg_is_in_recovery() true)")
        if re.search(r"^ERROR:\s+25006:", result.stderr, re.MULTILINE):
            shown.append("a write refused with SQLSTATE 25006 (read_only_sql_transaction)")
        if down := re.search(r'on socket "[^"]*" failed: (Connection refused|No such file or directory)$',
                             result.stderr, re.MULTILINE):
            shown.append(f"not running (its socket: {down.group(1)})")
        return ", ".join(shown) or None

    def create_database(self, leader: str) -> None:
        self.psql(leader, "CREATE ROLE chatterd LOGIN")
        self.psql(leader, "CREATE DATABASE chatterd OWNER chatterd")

    # --- HAProxy

    def haproxy_config(self, cafile: Path) -> str:
        text = (self.repo / "deploy/haproxy.cfg").read_text()
        for example, host in EXAMPLE_ADDRESSES.items():
            text = text.replace(example + ":", self.ip(host) + ":")
        text = text.replace("log /dev/log local0", "log stderr format raw local0 info\n"
                            f"    stats socket {self.haproxy_socket()} mode 600 level admin")
        return text.replace("/etc/haproxy/chatterd.crt", str(cafile))

    def haproxy_socket(self) -> Path:
        return self.work / "haproxy.sock"

    def haproxy_command(self, command: str) -> str:
        """A command on HAProxy's stats socket (a Unix socket: reached from here, whatever namespace HAProxy is in)."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(5)
            sock.connect(str(self.haproxy_socket()))
            sock.sendall(command.encode() + b"\n")
            answer = b""
            while data := sock.recv(65536):
                answer += data
        return answer.decode(errors="replace")

    def haproxy_servers(self) -> dict[tuple[str, str], dict[str, str]]:
        """`show stat` per (backend, server): status, stot (sessions so far), check_status, ..."""
        lines = self.haproxy_command("show stat").splitlines()
        if not lines or not lines[0].startswith("# "):
            return {}
        columns = lines[0][2:].split(",")
        rows = [dict(zip(columns, line.split(","))) for line in lines[1:] if line]
        return {(row["pxname"], row["svname"]): row for row in rows if row["svname"] not in ("FRONTEND", "BACKEND")}

    def haproxy_sessions(self) -> dict[str, int]:
        """Sessions HAProxy has sent to each chatterd server so far, over both of its chatterd backends."""
        totals: Counter = Counter()
        for (backend, server), row in self.haproxy_servers().items():
            if backend.startswith("chatterd"):
                totals[server] += int(row.get("stot") or 0)
        return dict(totals)

    def start_haproxy(self, cafile: Path) -> None:
        path = self.work / "haproxy.cfg"
        path.write_text(self.haproxy_config(cafile))
        self.net.spawn("lb", "haproxy", "haproxy", "-db", "-f", str(path))

    # --- PgBouncer

    def start_pgbouncer(self) -> None:
        """PgBouncer 1.18 in transaction mode with pgbouncer.ini's stock settings otherwise: in particular no
        ignore_startup_parameters, so it refuses the startup parameter `options`."""
        home = self._postgres_dir("pgbouncer")
        (home / "userlist.txt").write_text('"chatterd" ""\n')
        (home / "pgbouncer.ini").write_text(
            "[databases]\n"
            f"chatterd = host={self.ip('lb')} port=5000 dbname=chatterd\n"
            "[pgbouncer]\n"
            f"listen_addr = {self.ip('pgb')}\nlisten_port = 6432\nunix_socket_dir =\n"
            f"auth_type = trust\nauth_file = {home}/userlist.txt\n"
            "pool_mode = transaction\ndefault_pool_size = 10\nmax_client_conn = 200\n"
            # Stock is 15 s between attempts to reach a server that refused: past a failover, that is 15 s more
            # without a primary (deploy/SCALING.md, step 3).
            "server_login_retry = 1\n"
            f"logfile = {home}/pgbouncer.log\npidfile = {home}/pgbouncer.pid\n")
        for name in ("userlist.txt", "pgbouncer.ini"):
            shutil.chown(home / name, "postgres", "postgres")
        self.pgbouncer = self.net.spawn("pgb", "pgbouncer", "pgbouncer", str(home / "pgbouncer.ini"), user="postgres")
        wait_until(lambda: self.net.run("pgb", "bash", "-c", f"exec 3<>/dev/tcp/{self.ip('pgb')}/6432",
                                        check=False).returncode == 0, 15, "PgBouncer to listen")

    def kill_pgbouncer(self) -> None:
        self.net.stop(self.pgbouncer, sig=9)
        self.pgbouncer = None

    def pgbouncer_starts(self, since: int = 0) -> list[int]:
        """The process id of each start PgBouncer logged (logs/pgbouncer.log, from byte `since` on), in order."""
        with open(self.net.logs / "pgbouncer.log", "rb") as log:
            log.seek(since)
            text = log.read().decode(errors="replace")
        return [int(pid) for pid in re.findall(r"\[(\d+)\] LOG process up: ", text)]

    # --- chatterd

    def chatterd_environment(self, host: str, cert: Path, key: Path, admin_tokens: Path) -> dict[str, str]:
        return {
            "CHATTERD_HOST": self.ip(host), "CHATTERD_PORT": str(CHATTERD_PORT),
            "CHATTERD_CERT": str(cert), "CHATTERD_KEY": str(key),
            "CHATTERD_DATABASE_URL": f"postgresql://chatterd@{self.ip('pgb')}:6432/chatterd",
            "CHATTERD_DIRECT_DATABASE_URL":
                f"postgresql://chatterd@{self.ip('db1')}:5432,{self.ip('db2')}:5432/chatterd",
            "CHATTERD_MIGRATIONS": str(self.repo / "migrations"),
            "CHATTERD_TRUSTED_PROXY": self.ip("lb"),
            "CHATTERD_STRICT_FEEDS": "true",
            "CHATTERD_ADMIN_TOKEN_FILE": str(admin_tokens),
        }

    def start_chatterd(self, host: str, cert: Path, key: Path, admin_tokens: Path) -> None:
        self.chatterd[host] = self.net.spawn(host, f"chatterd-{host}", self.chatterd_bin, "serve",
                                             env=self.chatterd_environment(host, cert, key, admin_tokens))

    def balanced(self, cafile: Path) -> bool:
        """Whether a request from the client host through HAProxy is answered 200 by /readyz."""
        result = self.net.run("client", "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-m", "2",
                              "--cacert", str(cafile), f"https://{self.ip('lb')}/readyz", check=False, timeout=10)
        return result.stdout == "200"

    def readyz(self, host: str, cafile: Path) -> str:
        """The status of `host`'s GET /readyz asked on its own host ("000": no answer within 2 s)."""
        result = self.net.run(host, "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-m", "2",
                              "--cacert", str(cafile), f"https://{self.ip(host)}:{CHATTERD_PORT}/readyz",
                              check=False, timeout=10)
        return result.stdout

    def ready(self, host: str, cafile: Path) -> bool:
        return self.readyz(host, cafile) == "200"
