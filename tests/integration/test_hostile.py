#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Files that other users control, end to end: the real daemon against a program that runs code
in an anonymous page (so autoprof reads its /tmp/perf-PID.map) with a FIFO, a huge line, a
symlink to a root-only file or another user's file planted there; and latency probes asked on a
FIFO, a device, a directory, or a path swapped while the probe is attached. Each must be refused
or bounded, counted in autoprof_file_errors_total{reason}, and never stall the daemon."""

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from aplib import (BUILD, TARGETS, Daemon, Skip, check, exit_status)  # noqa: E402

ANON = os.path.join(TARGETS, "anon_exec")
PROBE_TARGET = os.path.join(BUILD, "probetargets", "probe_target")
NOBODY = 65534
FAMILY = "autoprof_file_errors_total"


def timed(fn, timeout):
    """fn() in a thread; (result, seconds), or (None, None) when it did not return in time."""
    out = {}

    def run():
        try:
            out["r"] = fn()
        except Exception as e:  # noqa: BLE001
            out["r"] = e
        out["t"] = time.time() - t0

    t0 = time.time()
    th = threading.Thread(target=run, daemon=True)
    th.start()
    th.join(timeout)
    if th.is_alive():
        return None, None
    if isinstance(out["r"], Exception):
        raise out["r"]
    return out["r"], out["t"]


def errors(d, reason):
    return d.metric(FAMILY, {"reason": reason}, 0)


class Jit:
    """anon_exec running as uid, with what plant(pid) puts at /tmp/perf-PID.map first."""

    def __init__(self, plant, uid=None, binary=ANON):
        self.proc = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True,
                                     preexec_fn=(lambda: os.setuid(uid)) if uid else None)
        self.pid = int(self.proc.stdout.readline())
        self.map = "/tmp/perf-%d.map" % self.pid
        plant(self.map)
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()

    def close(self):
        self.proc.kill()
        self.proc.wait()
        if os.path.exists(self.map) or os.path.islink(self.map):
            if stat.S_ISFIFO(os.lstat(self.map).st_mode):
                # A daemon stuck opening it (the bug) is let go before the FIFO goes.
                try:
                    fd = os.open(self.map, os.O_WRONLY | os.O_NONBLOCK)
                    os.close(fd)
                except OSError:
                    pass
            os.unlink(self.map)


def folded(d, seconds=2, timeout=20):
    """The folded profile of anon_exec, or an AssertionError when it did not answer."""
    r, _ = timed(lambda: d.get("/debug/pprof/profile?seconds=%d&comm=anon_exec&format=folded"
                               % seconds), timeout)
    assert r is not None, "the profile did not answer within %d s" % timeout
    code, _, body = r
    assert code == 200, (code, body[:300])
    return body.decode()


def test_fifo_perf_map():
    """A FIFO as the perf map: the profile answers, /metrics answers at once, SIGTERM stops."""
    d = Daemon()
    jit = Jit(os.mkfifo)
    try:
        time.sleep(1)
        text = folded(d)
        assert "anon_exec" in text, text[:500]
        r, secs = timed(d.metrics, 5)
        assert r is not None and secs < 1, "/metrics took %s s" % secs
        n = metric_in(r, "not_regular")
        assert n >= 1, "not_regular not counted: %s" % n
    finally:
        rc, secs = timed(d.stop, 15)[0] or (None, None)
        jit.close()
    assert rc == 0 and secs < 2, "SIGTERM: exit %s after %s s" % (rc, secs)


def metric_in(text, reason):
    from aplib import metric_value
    return metric_value(text, FAMILY, {"reason": reason}, 0)


def big_line(path):
    with open(path, "wb") as f:
        f.write(b"7" * (10 << 20))


def test_perf_map_no_newline(d):
    """10 MB without a newline: read through the line buffer, skipped, counted."""
    before = errors(d, "overlong_line")
    jit = Jit(big_line)
    try:
        time.sleep(1)
        folded(d)
        after = errors(d, "overlong_line")
        assert after > before, (before, after)
    finally:
        jit.close()


def test_perf_map_symlink(d, secret_dir):
    """A perf map that is a symlink to a root-only file: never read."""
    secret = os.path.join(secret_dir, "secret.map")
    with open(secret, "w") as f:
        f.write("0 ffffffffffff SECRET_SYMBOL\n")
    os.chmod(secret, 0o600)
    before = errors(d, "symlink")
    jit = Jit(lambda p: os.symlink(secret, p), uid=NOBODY, binary=nobody_copy())
    try:
        time.sleep(1)
        text = folded(d)
        assert "anon_exec" in text, text[:500]
        assert "SECRET_SYMBOL" not in text, text[:500]
        assert errors(d, "symlink") > before
    finally:
        jit.close()


def test_perf_map_owner(d):
    """A perf map owned by another user than the process's: never read."""
    def plant(p):
        with open(p, "w") as f:
            f.write("0 ffffffffffff OTHER_USERS_SYMBOL\n")
        os.chown(p, 1, 1)
    before = errors(d, "owner")
    jit = Jit(plant, uid=NOBODY, binary=nobody_copy())
    try:
        time.sleep(1)
        text = folded(d)
        assert "anon_exec" in text, text[:500]
        assert "OTHER_USERS_SYMBOL" not in text, text[:500]
        assert errors(d, "owner") > before
    finally:
        jit.close()


def test_perf_map_own(d):
    """The process's own perf map is still read (the checks refuse only what they must)."""
    def plant(p):
        with open(p, "w") as f:
            f.write("0 ffffffffffff own_jit_symbol\n")
        os.chown(p, NOBODY, NOBODY)
    jit = Jit(plant, uid=NOBODY, binary=nobody_copy())
    try:
        time.sleep(1)
        text = folded(d)
        assert "own_jit_symbol" in text, text[:500]
    finally:
        jit.close()


_copy = []


def nobody_copy():
    """anon_exec where nobody may run it."""
    if not _copy:
        dirname = tempfile.mkdtemp(prefix="autoprof-hostile-")
        os.chmod(dirname, 0o755)
        path = os.path.join(dirname, "anon_exec")
        shutil.copy(ANON, path)
        os.chmod(path, 0o755)
        _copy.append(path)
    return _copy[0]


def post_probe(d, binary, function="handle", timeout=10):
    r, _ = timed(lambda: d.request("POST", "/api/v1/probes",
                                   json.dumps({"binary": binary, "function": function})),
                 timeout)
    assert r is not None, "POST /api/v1/probes on %s did not answer in %d s" % (binary, timeout)
    code, _, body = r
    return code, body.decode()


def test_probe_not_regular(d, workdir):
    """A probe on a FIFO, a device, a directory: 400 with the reason, at once."""
    fifo = os.path.join(workdir, "probe.fifo")
    os.mkfifo(fifo)
    before = errors(d, "not_regular")
    for path in (fifo, "/dev/zero", workdir):
        code, body = post_probe(d, path)
        assert code == 400 and "not a regular file" in body, (path, code, body)
    assert errors(d, "not_regular") >= before + 3


def link_paths():
    """The paths of the uprobe_multi links bpftool lists."""
    out = subprocess.run(["bpftool", "-j", "link", "show"], capture_output=True, text=True)
    paths = []
    for link in json.loads(out.stdout or "[]"):
        if link.get("type") == "uprobe_multi" and "path" in link:
            paths.append(link["path"])
    return paths


def test_probe_attach_checked_file(d, workdir):
    """The file attached is the file checked: the path flips between two copies of the binary
    while probes are added, and every probe must sit on the copy that was read (the one with
    the function), never on the other (a copy without it: its symbols stripped)."""
    if not shutil.which("bpftool"):
        raise Skip("no bpftool")
    good = os.path.join(workdir, "good")
    bad = os.path.join(workdir, "bad")
    shutil.copy(PROBE_TARGET, good)
    subprocess.run(["strip", "-s", PROBE_TARGET, "-o", bad], check=True)
    # Same size as good, so that the offsets fit it too: the kernel would attach there.
    with open(bad, "ab") as f:
        f.truncate(os.path.getsize(good))
    link = os.path.join(workdir, "target")
    stop = threading.Event()

    def flip():
        i = 0
        while not stop.is_set():
            tmp = link + ".tmp"
            os.symlink(good if i % 2 == 0 else bad, tmp)
            os.rename(tmp, link)
            i += 1

    os.symlink(good, link)
    th = threading.Thread(target=flip, daemon=True)
    th.start()
    ids, wrong, seen = [], [], 0
    try:
        for _ in range(40):
            code, body = post_probe(d, link)
            if code != 201:
                continue
            ids.append(json.loads(body)["id"])
            paths = [p for p in link_paths() if p.startswith(workdir)]
            seen += len(paths)
            wrong += [p for p in paths if p != good]
            for i in ids:
                d.request("DELETE", "/api/v1/probes/%d" % i)
            ids = []
    finally:
        stop.set()
        th.join()
        for i in ids:
            d.request("DELETE", "/api/v1/probes/%d" % i)
    assert not wrong, "probes attached to a file that was not checked: %s" % wrong[:3]
    assert seen >= 5, "too few probes attached to tell: %d links seen" % seen
    print("   %d uprobe links seen, all on the checked file" % seen)


if not os.path.exists(ANON):
    print("SKIP hostile: %s not built" % ANON)
    sys.exit(0)
check("hostile_fifo_perf_map", test_fifo_perf_map)
d = Daemon("--web.enable-admin-api")
secret_dir = tempfile.mkdtemp(prefix="autoprof-secret-")
os.chmod(secret_dir, 0o700)
workdir = tempfile.mkdtemp(prefix="autoprof-probe-")
try:
    check("hostile_perf_map_no_newline", test_perf_map_no_newline, d)
    check("hostile_perf_map_symlink", test_perf_map_symlink, d, secret_dir)
    check("hostile_perf_map_owner", test_perf_map_owner, d)
    check("hostile_perf_map_own", test_perf_map_own, d)
    check("hostile_probe_not_regular", test_probe_not_regular, d, workdir)
    if os.path.exists(PROBE_TARGET):
        check("hostile_probe_attach_checked_file", test_probe_attach_checked_file, d, workdir)
    r, _ = timed(d.metrics, 10)
    from aplib import TMP
    path = os.path.join(TMP, "hostile-metrics.txt")
    with open(path, "w") as f:
        f.write(r or "")
    res = subprocess.run(["promtool", "check", "metrics"], stdin=open(path),
                         capture_output=True, text=True)
    if res.returncode:
        print("FAIL hostile_promtool: %s" % (res.stdout + res.stderr)[:1000])
        sys.exit(1)
    print("PASS hostile_promtool")
finally:
    rc, _ = timed(d.stop, 15)[0] or (None, None)
    shutil.rmtree(secret_dir, ignore_errors=True)
    shutil.rmtree(workdir, ignore_errors=True)
    for p in _copy:
        shutil.rmtree(os.path.dirname(p), ignore_errors=True)
if rc != 0:
    print("FAIL hostile_sigterm: autoprof exited with %s" % rc)
    sys.exit(1)
sys.exit(exit_status())
