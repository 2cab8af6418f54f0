"""Test hosts: network namespaces on one bridge, addresses from 198.18.0.0/15 (RFC 2544), and the faults
between them (nftables drop rules for silent partitions, `ip link` for hard cuts).

Every name this module makes starts with the run's prefix, and `Network.teardown` removes exactly those:
the processes it started (by process group), then its namespaces. The bridge lives in a namespace of its
own, and no namespace has a route off the 198.18.0.0/24 subnet, so nothing sent here leaves the
namespaces this run made.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

SUBNET_PREFIX = 24
PARTITION_TABLE = "partition"


def sh(*argv: str, check: bool = True, timeout: float = 30.0) -> subprocess.CompletedProcess:
    return subprocess.run(argv, check=check, capture_output=True, text=True, timeout=timeout)


def namespaces_supported() -> str | None:
    """None when this process can make network namespaces and nftables rules, else the reason it cannot."""
    if os.geteuid() != 0:
        return "not root: network namespaces need CAP_SYS_ADMIN"
    probe = f"chcprobe{os.getpid()}"
    try:
        sh("ip", "netns", "add", probe)
    except (subprocess.CalledProcessError, FileNotFoundError) as error:
        return f"ip netns add failed: {getattr(error, 'stderr', error)}".strip()
    try:
        sh("ip", "netns", "exec", probe, "nft", "add", "table", "inet", "probe")
    except (subprocess.CalledProcessError, FileNotFoundError) as error:
        return f"nft inside a namespace failed: {getattr(error, 'stderr', error)}".strip()
    finally:
        sh("ip", "netns", "del", probe, check=False)
    return None


class Network:
    """Hosts (name -> IPv4 address) on one bridge; processes started in them; partitions between them."""

    def __init__(self, prefix: str, hosts: dict[str, str], logs: Path):
        self.prefix = prefix
        self.hosts = dict(hosts)
        self.logs = logs
        self.bridge_namespace = f"{prefix}-net"
        self.processes: list[tuple[str, subprocess.Popen]] = []
        self.made: list[str] = []

    def namespace(self, host: str) -> str:
        return f"{self.prefix}-{host}"

    def address(self, host: str) -> str:
        return self.hosts[host]

    def create(self) -> None:
        self._add_namespace(self.bridge_namespace)
        sh("ip", "-n", self.bridge_namespace, "link", "add", "br0", "type", "bridge")
        sh("ip", "-n", self.bridge_namespace, "link", "set", "br0", "up")
        for index, (host, address) in enumerate(self.hosts.items()):
            namespace = self.namespace(host)
            self._add_namespace(namespace)
            # Both ends are made inside the bridge namespace, then one moves: nothing touches the root one.
            port = f"p{index}"
            sh("ip", "-n", self.bridge_namespace, "link", "add", port, "type", "veth", "peer", "name", "eth0",
               "netns", namespace)
            sh("ip", "-n", self.bridge_namespace, "link", "set", port, "master", "br0", "up")
            sh("ip", "-n", namespace, "addr", "add", f"{address}/{SUBNET_PREFIX}", "dev", "eth0")
            sh("ip", "-n", namespace, "link", "set", "eth0", "up")

    def _add_namespace(self, namespace: str) -> None:
        sh("ip", "netns", "add", namespace)
        self.made.append(namespace)
        sh("ip", "-n", namespace, "link", "set", "lo", "up")

    def run(self, host: str, *argv: str, user: str | None = None, check: bool = True,
            timeout: float = 30.0) -> subprocess.CompletedProcess:
        return sh(*self._command(host, argv, user), check=check, timeout=timeout)

    def spawn(self, host: str, name: str, *argv: str, user: str | None = None,
              env: dict[str, str] | None = None) -> subprocess.Popen:
        """Starts a long-running process in `host`'s namespace, its output in logs/NAME.log."""
        log = open(self.logs / f"{name}.log", "ab")
        process = subprocess.Popen(self._command(host, argv, user), stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True,
                                   env={**os.environ, **(env or {})})
        log.close()
        self.processes.append((name, process))
        return process

    def stop(self, process: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 15.0) -> None:
        """Signals a process this network started (its whole group), then kills what is left after `timeout`."""
        if process.poll() is None:
            self._signal_group(process, sig)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                self._signal_group(process, signal.SIGKILL)
                process.wait(10)
        self.processes = [(n, p) for n, p in self.processes if p is not process]

    @staticmethod
    def _signal_group(process: subprocess.Popen, sig: int) -> None:
        try:
            os.killpg(process.pid, sig)  # start_new_session made the pid its group id
        except ProcessLookupError:
            pass

    def _command(self, host: str, argv: tuple[str, ...], user: str | None) -> list[str]:
        command = ["ip", "netns", "exec", self.namespace(host)]
        if user:
            command += ["runuser", "-u", user, "--"]
        return command + list(argv)

    # --- faults

    def partition(self, host: str, peers: list[str] | None) -> None:
        """Silently drops everything between `host` and `peers` (every other host when None), both ways,
        inside `host`'s namespace: packets vanish and nothing is reset."""
        namespace = self.namespace(host)
        if peers is None:
            match_in, match_out = 'iifname != "lo"', 'oifname != "lo"'
        else:
            addresses = ", ".join(self.address(peer) for peer in peers)
            match_in, match_out = f"ip saddr {{ {addresses} }}", f"ip daddr {{ {addresses} }}"
        rules = (f"table inet {PARTITION_TABLE} {{\n"
                 f"  chain in {{ type filter hook input priority 0; {match_in} drop; }}\n"
                 f"  chain out {{ type filter hook output priority 0; {match_out} drop; }}\n"
                 "}\n")
        subprocess.run(["ip", "netns", "exec", namespace, "nft", "-f", "-"], input=rules, text=True,
                       check=True, capture_output=True, timeout=30)

    def heal(self, host: str) -> None:
        self.run(host, "nft", "delete", "table", "inet", PARTITION_TABLE)

    def link(self, host: str, up: bool) -> None:
        """A hard cut (or its end): the host's interface goes down, as a pulled cable or a powered-off host."""
        self.run(host, "ip", "link", "set", "eth0", "up" if up else "down")

    # --- teardown

    def teardown(self) -> None:
        """Stops every process this network started, then deletes its namespaces; safe to call twice."""
        for _, process in reversed(self.processes):
            if process.poll() is None:
                self._signal_group(process, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for _, process in self.processes:
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self._signal_group(process, signal.SIGKILL)
                process.wait(10)
        self.processes = []
        # Whatever is left in these namespaces was started from them (PostgreSQL, which Patroni starts in a
        # session of its own): it goes too.
        for namespace in self.made:
            for pid in sh("ip", "netns", "pids", namespace, check=False).stdout.split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
        for namespace in reversed(self.made):
            sh("ip", "netns", "del", namespace, check=False)
        self.made = []
