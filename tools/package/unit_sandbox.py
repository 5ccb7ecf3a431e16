#!/usr/bin/python3
"""unit_sandbox.py - runs a command in the sandbox a systemd unit promises,
where systemd is not PID 1 (tests/integration/t_package_service.sh).

  unit_sandbox.py caps UNIT            the unit's CapabilityBoundingSet= as
                                       setpriv's --bounding-set argument
  unit_sandbox.py run UNIT -- CMD...   CMD under the unit's seccomp filters

UNIT's drop-ins (UNIT.d/*.conf) count, as systemd reads them.

The filters are built as systemd 252 builds them: SystemCallFilter='s sets,
each resolved by `systemd-analyze syscall-filter` (nested sets too), allowed
and everything else failing with SystemCallErrorNumber=; then
MemoryDenyWriteExecute='s rules (no mapping both writable and executable,
no mprotect to executable) and RestrictAddressFamilies= (socket() of another
family: EAFNOSUPPORT), as filters of their own.  The other seccomp-based
directives (RestrictNamespaces, LockPersonality, Protect{Clock,Hostname,...})
deny calls of namespaces, personality, clocks and modules, which memprof
never makes; they are not reproduced.  Run it under setpriv with the
bounding set (caps) so that CMD gets exactly the unit's capabilities.
"""
import errno
import os
import socket
import subprocess
import sys

import seccomp


def service_settings(unit):
    """[Service]'s settings of UNIT and its drop-ins (UNIT.d/*.conf, in
    order, as systemd reads them): each key's values, an empty assignment
    resetting the list."""
    settings = {}
    dropins = os.path.join(unit + ".d")
    files = [unit] + (sorted(os.path.join(dropins, f) for f in os.listdir(dropins)
                             if f.endswith(".conf")) if os.path.isdir(dropins) else [])
    for path in files:
        read_settings(path, settings)
    return settings


def read_settings(path, settings):
    section = None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                section = line
                continue
            if section == "[Service]" and "=" in line:
                key, value = line.split("=", 1)
                if value:
                    settings.setdefault(key, []).append(value)
                else:
                    settings[key] = []


def resolve(name, seen):
    """The system calls of a name: itself, or a set's, recursively."""
    if not name.startswith("@"):
        return {name}
    if name in seen:
        return set()
    seen.add(name)
    out = subprocess.run(["systemd-analyze", "syscall-filter", name], check=True,
                         capture_output=True, text=True).stdout
    calls = set()
    for line in out.splitlines()[1:]:
        word = line.strip()
        if word and not word.startswith("#"):
            calls |= resolve(word, seen)
    return calls


def syscall_filter(settings):
    words = " ".join(settings.get("SystemCallFilter", [])).split()
    if not words:
        return None
    if any(w.startswith("~") for w in words):
        sys.exit("unit_sandbox: deny lists (SystemCallFilter=~...) are not handled")
    err = settings.get("SystemCallErrorNumber", ["EPERM"])[-1]
    f = seccomp.SyscallFilter(defaction=seccomp.ERRNO(getattr(errno, err)))
    seen = set()
    for name in sorted(set().union(*(resolve(w, seen) for w in words))):
        try:
            f.add_rule(seccomp.ALLOW, name)
        except (RuntimeError, ValueError, OSError):
            pass    # not a call of this architecture, as systemd skips it
    return f


def mdwe_filter():
    f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    wx = 0x2 | 0x4    # PROT_WRITE | PROT_EXEC
    f.add_rule(seccomp.ERRNO(errno.EPERM), "mmap", seccomp.Arg(2, seccomp.MASKED_EQ, wx, wx))
    for call in ("mprotect", "pkey_mprotect"):
        f.add_rule(seccomp.ERRNO(errno.EPERM), call, seccomp.Arg(2, seccomp.MASKED_EQ, 0x4, 0x4))
    f.add_rule(seccomp.ERRNO(errno.EPERM), "shmat",
               seccomp.Arg(2, seccomp.MASKED_EQ, 0o100000, 0o100000))    # SHM_EXEC
    return f


def families_filter(settings):
    names = " ".join(settings.get("RestrictAddressFamilies", [])).split()
    if not names:
        return None
    allowed = {int(getattr(socket, n)) for n in names}
    f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for fam in range(0, 46):    # AF_MAX on Linux 6.x
        if fam not in allowed:
            f.add_rule(seccomp.ERRNO(errno.EAFNOSUPPORT), "socket", seccomp.Arg(0, seccomp.EQ, fam))
    return f


def main(argv):
    if len(argv) == 3 and argv[1] == "caps":
        caps = " ".join(service_settings(argv[2]).get("CapabilityBoundingSet", [])).split()
        print("-all," + ",".join("+" + c.lower().removeprefix("cap_") for c in caps))
        return 0
    if len(argv) >= 5 and argv[1] == "run" and argv[3] == "--":
        settings = service_settings(argv[2])
        # The allow list last: it may not allow seccomp() itself.
        filters = [families_filter(settings)]
        if settings.get("MemoryDenyWriteExecute", ["no"])[-1] == "yes":
            filters.append(mdwe_filter())
        filters.append(syscall_filter(settings))
        for f in filters:
            if f is not None:
                f.load()
        os.execvp(argv[4], argv[4:])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
