"""A process as Linux's /proc shows it (proc(5)): resident memory, descriptors, CPU time, parent, children, state.
Standard library only, so that the bench's plain python3 can import it."""

from __future__ import annotations

import os


def status_kb(pid: int, field: str = "VmRSS") -> int:
    """`field` of /proc/PID/status (VmRSS, VmHWM, ...), in kB."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise LookupError(f"no {field} in /proc/{pid}/status")


def rss_kb(pid: int) -> int:
    return status_kb(pid, "VmRSS")


def rss_bytes(pid: int) -> int:
    return rss_kb(pid) * 1024


def children(pid: int) -> list[int]:
    """PID's children (nginx's workers, say); none when the kernel does not tell."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as listed:
            return [int(child) for child in listed.read().split()]
    except OSError:
        return []


def family_kb(pid: int, field: str = "VmRSS") -> int:
    """The sum of `field` over PID and its children, in kB; one that is gone meanwhile counts nothing."""
    total = 0
    for member in [pid] + children(pid):
        try:
            total += status_kb(member, field)
        except (OSError, LookupError):
            pass
    return total


def fd_count(pid: int) -> int:
    """Descriptors PID holds open."""
    return len(os.listdir(f"/proc/{pid}/fd"))


def stat_fields(pid: int) -> list[str]:
    """/proc/PID/stat from its third field on ([0] the state, [1] the parent, [11] and [12] user and system
    time): split after the command name's last `)`, since the name itself may hold spaces and parentheses."""
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()


def cpu_seconds(pid: int) -> float:
    """User and system CPU time PID has used so far."""
    fields = stat_fields(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def state(pid: int) -> str:
    """One letter: R running, S sleeping, Z zombie, ... (FileNotFoundError once it is reaped)."""
    return stat_fields(pid)[0]


def parent(pid: int) -> int:
    return int(stat_fields(pid)[1])


def cmdline(pid: int) -> str:
    """PID's command line, arguments joined by spaces (a process may rewrite it: PostgreSQL's titles)."""
    with open(f"/proc/{pid}/cmdline", "rb") as line:
        return line.read().replace(b"\0", b" ").decode(errors="replace")
