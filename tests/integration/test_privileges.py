#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Least privilege: the running daemon holds exactly the capabilities README's "Privileges"
lists (effective, permitted and bounding; none inheritable or ambient) in every thread, with
no_new_privs set, and still attaches uprobes at run time; build/autoprof is hardened (PIE,
full RELRO, stack protector, fortified libc calls)."""

import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from aplib import AUTOPROF, BUILD, Daemon, ROOT, check, exit_status  # noqa: E402

# Bit numbers of <linux/capability.h>, for the names a mask decodes into.
CAP_BITS = {
    "CAP_CHOWN": 0, "CAP_DAC_OVERRIDE": 1, "CAP_DAC_READ_SEARCH": 2, "CAP_FOWNER": 3,
    "CAP_FSETID": 4, "CAP_KILL": 5, "CAP_SETGID": 6, "CAP_SETUID": 7, "CAP_SETPCAP": 8,
    "CAP_LINUX_IMMUTABLE": 9, "CAP_NET_BIND_SERVICE": 10, "CAP_NET_BROADCAST": 11,
    "CAP_NET_ADMIN": 12, "CAP_NET_RAW": 13, "CAP_IPC_LOCK": 14, "CAP_IPC_OWNER": 15,
    "CAP_SYS_MODULE": 16, "CAP_SYS_RAWIO": 17, "CAP_SYS_CHROOT": 18, "CAP_SYS_PTRACE": 19,
    "CAP_SYS_PACCT": 20, "CAP_SYS_ADMIN": 21, "CAP_SYS_BOOT": 22, "CAP_SYS_NICE": 23,
    "CAP_SYS_RESOURCE": 24, "CAP_SYS_TIME": 25, "CAP_SYS_TTY_CONFIG": 26, "CAP_MKNOD": 27,
    "CAP_LEASE": 28, "CAP_AUDIT_WRITE": 29, "CAP_AUDIT_CONTROL": 30, "CAP_SETFCAP": 31,
    "CAP_MAC_OVERRIDE": 32, "CAP_MAC_ADMIN": 33, "CAP_SYSLOG": 34, "CAP_WAKE_ALARM": 35,
    "CAP_BLOCK_SUSPEND": 36, "CAP_AUDIT_READ": 37, "CAP_PERFMON": 38, "CAP_BPF": 39,
    "CAP_CHECKPOINT_RESTORE": 40,
}
NAMES = {bit: name for name, bit in CAP_BITS.items()}
PROBE_TARGET = os.path.join(BUILD, "probetargets", "probe_target")


def documented():
    """The kept set as README's Privileges paragraph lists it (one `CAP_X` per table row)."""
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    m = re.search(r"^## Privileges\n(.*?)(?=^## )", text, re.S | re.M)
    assert m, "README.md has no Privileges section"
    caps = set(re.findall(r"^\| `(CAP_[A-Z_]+)`", m.group(1), re.M))
    assert caps, "README's Privileges section lists no capability"
    return caps


def decode(mask):
    value = int(mask, 16)
    return {NAMES.get(bit, "cap_%d" % bit) for bit in range(64) if value >> bit & 1}


def held():
    """What this test runs with: the daemon can keep only that."""
    with open("/proc/self/status") as f:
        return decode(re.search(r"^CapPrm:\s+(\S+)", f.read(), re.M).group(1))


def task_status(pid):
    """{tid: {field: value}} of every thread of pid (one that exits meanwhile, as an HTTP
    connection's does once it is answered, is left out: it holds nothing any more)."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                out[tid] = dict(line.rstrip("\n").split(":\t", 1) for line in f
                                if ":\t" in line)
        except (FileNotFoundError, ProcessLookupError):
            continue
    return out


def test_capabilities(d):
    want = documented() & held()
    tasks = task_status(d.proc.pid)
    assert len(tasks) > 1, "expected the daemon's threads, got %s" % list(tasks)
    for tid, st in tasks.items():
        who = "%s (%s)" % (tid, st["Name"])
        for field in ("CapEff", "CapPrm", "CapBnd"):
            got = decode(st[field])
            assert got == want, "%s %s: extra %s, missing %s" % (
                who, field, sorted(got - want), sorted(want - got))
        assert decode(st["CapInh"]) == set(), (who, "CapInh", st["CapInh"])
        assert decode(st["CapAmb"]) == set(), (who, "CapAmb", st["CapAmb"])
        assert st["NoNewPrivs"].strip() == "1", (who, "NoNewPrivs", st["NoNewPrivs"])
    log = d.logtext()
    m = re.search(r"keeping capabilities (\S+);", log)
    assert m and set(m.group(1).split(",")) == want, log


def test_probe_after_drop(d):
    """A uprobe attached through the API after the drop still counts the calls."""
    p = subprocess.Popen([PROBE_TARGET, "200", "200", "10"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    pid = int(p.stdout.readline())
    try:
        code, _, body = d.request("POST", "/api/v1/probes",
                                  json.dumps({"binary": PROBE_TARGET, "function": "handle"}))
        assert code == 201, (code, body)
        pid_id = json.loads(body)["id"]
        p.stdin.write("run 50\n")
        p.stdin.flush()
        assert p.stdout.readline().startswith("done calls=50"), "probe_target did not run"
        deadline, calls = time.time() + 20, 0
        while time.time() < deadline and calls < 50:
            code, _, body = d.get("/api/v1/probes")
            calls = {x["id"]: x for x in json.loads(body)["probes"]}[pid_id]["calls"]
            time.sleep(0.2)
        assert calls >= 50, "the probe counted %d of 50 calls of pid %d" % (calls, pid)
    finally:
        p.stdin.write("quit\n")
        p.stdin.close()
        p.wait(timeout=10)


def readelf(*args):
    return subprocess.run(["readelf", "-W", *args, AUTOPROF], capture_output=True, text=True,
                          check=True).stdout


def test_hardened_binary():
    assert re.search(r"Type:\s+DYN", readelf("-h")), "not a position-independent executable"
    dyn = readelf("-d")
    assert "BIND_NOW" in dyn and re.search(r"FLAGS_1.*\bPIE\b", dyn), \
        "no BIND_NOW/PIE in the dynamic section (full RELRO needs -z now)"
    assert "GNU_RELRO" in readelf("-l"), "no GNU_RELRO segment"
    syms = readelf("--dyn-syms")
    assert "__stack_chk_fail" in syms, "no stack protector (__stack_chk_fail not imported)"
    assert re.search(r"__\w+_chk@", syms), "no fortified libc call (__*_chk) imported"


check("binary_hardened", test_hardened_binary)
daemon = Daemon("--web.enable-admin-api")
try:
    check("capabilities_are_the_documented_set", test_capabilities, daemon)
    check("probe_attaches_after_drop", test_probe_after_drop, daemon)
finally:
    daemon.stop()
sys.exit(exit_status())
