#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""On-CPU profiling end to end: the real daemon, real BPF, real target programs, read back with
go tool pprof and promtool."""

import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import aplib  # noqa: E402
from aplib import (Daemon, check, exit_status, pprof_tool, run_target, start_target,  # noqa: E402
                   traces, TARGETS, TMP)

d = Daemon("--profile.retention=2m")


def profile(query):
    code, headers, body = d.get("/debug/pprof/profile?" + query)
    assert code == 200, "HTTP %d: %r" % (code, body[:300])
    return headers, body


def test_shares():
    """60/30/10 within 5 points at 99 Hz over 10 s, with complete stacks and labels."""
    p, pid = start_target("cpu_shares", 10)
    p.wait()
    time.sleep(0.3)  # the ingest loop drains the ring every 100 ms
    headers, body = profile("seconds=13&pid=%d" % pid)
    assert headers["Content-Type"].startswith("application/octet-stream"), headers
    assert body[:2] == b"\x1f\x8b", "not gzip"
    t = traces(body)
    total = sum(c for c, _, _ in t)
    # 10 s on one CPU at 99 Hz is 990 samples; the machine may steal some.
    assert 700 <= total <= 1100, "total samples %d" % total
    by_leaf = {}
    complete = 0
    # A tick between the launcher's fork and its exec is the child still running python: its
    # name then is the launcher's (a slow exec on a loaded host lets one in now and then).
    launcher = os.path.basename(sys.executable)[:15]
    pre_exec = sum(c for c, lab, _ in t if lab.get("comm") == launcher)
    assert pre_exec <= 0.02 * total, "%d of %d samples before the exec" % (pre_exec, total)
    for count, labels, frames in t:
        assert labels.get("pid") == str(pid), labels
        assert labels.get("tid") == str(pid), labels
        if labels.get("comm") == launcher:
            continue
        assert labels.get("comm") == "cpu_shares", labels
        assert labels.get("exe") == "cpu_shares", labels
        by_leaf[frames[0]] = by_leaf.get(frames[0], 0) + count
        if frames[:3] in (["hot_60", "dispatch", "main"], ["hot_30", "dispatch", "main"],
                          ["hot_10", "dispatch", "main"]):
            complete += count
    shares = {f: 100.0 * by_leaf.get(f, 0) / total for f in ("hot_60", "hot_30", "hot_10")}
    for f, want in (("hot_60", 60), ("hot_30", 30), ("hot_10", 10)):
        assert abs(shares[f] - want) <= 5, "shares %s (want 60/30/10 ±5)" % shares
    assert complete >= 0.95 * total, "%d of %d samples have leaf→dispatch→main" % (complete, total)
    # Period and sample types as Go's CPU profiles have them.
    raw = pprof_tool(body, "-raw")
    assert "PeriodType: cpu nanoseconds" in raw, raw[:400]
    assert "Period: 10101010" in raw, raw[:400]
    assert "samples/count cpu/nanoseconds" in raw, raw[:600]
    # The executable's mapping carries its file name and GNU build ID.
    bid = subprocess.run(["readelf", "-n", os.path.join(os.path.dirname(__file__), "..", "..",
                                                        os.environ.get("BUILD", "build"),
                                                        "targets", "cpu_shares")],
                         capture_output=True, text=True).stdout.split("Build ID:")[1].split()[0]
    assert any("[FN]" in line and "/targets/cpu_shares " + bid in line
               for line in raw.splitlines()), "no mapping with build ID %s:\n%s" % (bid, raw[-800:])


def test_kernel_frames():
    """A syscall-heavy program shows kernel frames above its own."""
    run_target("syscall_heavy", 3)
    time.sleep(0.3)
    _, body = profile("seconds=5&comm=syscall_heavy")
    t = traces(body)
    total = sum(c for c, _, _ in t)
    assert total >= 100, "only %d samples" % total
    # In the system call: the read path, or where its entry enables interrupts (on a
    # paravirtualized VM the timer's tick lands there: pvm_irq_enable under do_syscall_64).
    kernel = sum(c for c, _, fr in t if "do_syscall_64" in fr)
    assert kernel >= 0.5 * total, "%d of %d samples in the kernel's read system call" % (
        kernel, total)
    read = sum(c for c, _, fr in t if "ksys_read" in fr or "vfs_read" in fr)
    assert read >= 0.2 * total, "%d of %d samples in the kernel's read path" % (read, total)
    # Kernel frames sit above (leafward of) the user frames of the same stack.
    for c, _, fr in t:
        if "vfs_read" in fr and "main" in fr:
            assert fr.index("vfs_read") < fr.index("main"), fr
            break
    else:
        raise AssertionError("no stack with both vfs_read and main")


def test_pid_filter():
    """pid= keeps exactly the processes asked for; comm= matches the process name."""
    a, pa = start_target("cpu_shares", 3)
    b, pb = start_target("cpu_shares", 3)
    a.wait()
    b.wait()
    time.sleep(0.3)
    t = traces(profile("seconds=5&pid=%d" % pa)[1])
    pids = {lab["pid"] for _, lab, _ in t}
    assert pids == {str(pa)}, pids
    t = traces(profile("seconds=5&pid=%d,%d" % (pa, pb))[1])
    pids = {lab["pid"] for _, lab, _ in t}
    assert pids == {str(pa), str(pb)}, pids
    t = traces(profile("seconds=5&comm=cpu_shares")[1])
    assert {lab["exe"] for _, lab, _ in t} == {"cpu_shares"}
    assert {str(pa), str(pb)} <= {lab["pid"] for _, lab, _ in t}


def test_short_lived():
    """A process that lives 100 ms is symbolized although it is gone when asked about."""
    for _ in range(3):
        run_target("short_lived", 100)
    time.sleep(0.3)
    code, _, body = d.get("/debug/pprof/profile?seconds=5&comm=short_lived&format=folded")
    assert code == 200, code
    lines = body.decode().splitlines()
    total = sum(int(l.rsplit(" ", 1)[1]) for l in lines)
    named = sum(int(l.rsplit(" ", 1)[1]) for l in lines
                if l.startswith("short_lived;") and ";main;short_lived_spin" in l)
    assert total >= 10, "only %d samples: %s" % (total, lines)
    assert named >= 0.9 * total, "%d of %d samples named main;short_lived_spin: %s" % (
        named, total, lines)


def assert_cpu_shares_named(p, pid):
    """Once cpu_shares process p (3 s) is done, nearly all its samples name its functions."""
    p.wait()
    time.sleep(0.3)
    t = traces(profile("seconds=5&pid=%d" % pid)[1])
    total = sum(c for c, _, _ in t)
    named = sum(c for c, _, fr in t if fr[0] in ("hot_60", "hot_30", "hot_10") and "main" in fr)
    assert total >= 150, "only %d samples" % total
    assert named >= 0.95 * total, "%d of %d samples named" % (named, total)


def test_deleted_binary():
    """A binary deleted after it started still symbolizes (through /proc/PID/map_files)."""
    path = os.path.join(TMP, "deleted_target")
    shutil.copy(os.path.join(TARGETS, "cpu_shares"), path)
    p = subprocess.Popen([path, "3"], stdout=subprocess.PIPE, text=True)
    pid = int(p.stdout.readline())
    os.unlink(path)
    assert_cpu_shares_named(p, pid)


def test_rewritten_binary():
    """A binary rewritten in place (same inode, as `cp` over it does) after a process ran it:
    the next process's frames are named from the new contents, not from what was read of the
    old ones (which stored frames still hold); counted in /metrics."""
    path = os.path.join(TMP, "rewritten_target")
    shutil.copy(os.path.join(TARGETS, "deep_stack"), path)
    before = metric_value(d.get("/metrics")[2].decode(),
                          "autoprof_symbolizer_files_rewritten_total")
    p = subprocess.Popen([path, "1"], stdout=subprocess.PIPE, text=True)
    pid = int(p.stdout.readline())
    p.wait()
    time.sleep(0.3)
    t = traces(profile("seconds=3&pid=%d" % pid)[1])
    assert any(fr and fr[0] == "spin_at_bottom" for _, _, fr in t), t[:3]
    ino = os.stat(path).st_ino
    shutil.copyfile(os.path.join(TARGETS, "cpu_shares"), path)
    assert os.stat(path).st_ino == ino, "copyfile made a new inode"
    p = subprocess.Popen([path, "3"], stdout=subprocess.PIPE, text=True)
    pid = int(p.stdout.readline())
    assert_cpu_shares_named(p, pid)
    after = metric_value(d.get("/metrics")[2].decode(),
                         "autoprof_symbolizer_files_rewritten_total")
    assert after >= before + 1, (before, after)


def test_mount_namespace():
    """A process whose binary exists only in its own mount namespace symbolizes."""
    script = ("mkdir -p /mnt/autoprof-ns && mount -t tmpfs none /mnt/autoprof-ns && "
              "cp %s /mnt/autoprof-ns/ns_target && exec /mnt/autoprof-ns/ns_target 3"
              % os.path.join(TARGETS, "cpu_shares"))
    p = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                         stdout=subprocess.PIPE, text=True)
    pid = int(p.stdout.readline())
    assert not os.path.exists("/mnt/autoprof-ns/ns_target"), "the mount leaked to the host"
    assert_cpu_shares_named(p, pid)


def test_deep_stack():
    """Stacks deeper than the walk keep 127 user frames and count as truncated."""
    before = metric_value(d.get("/metrics")[2].decode(), "autoprof_stacks_truncated_total")
    p, pid = start_target("deep_stack", 2)
    p.wait()
    time.sleep(0.3)
    t = traces(profile("seconds=4&pid=%d" % pid)[1])
    total = sum(c for c, _, _ in t)
    assert total >= 100, "only %d samples" % total
    # The leaf is the spin loop, or clock_gettime in the vDSO now and then.
    in_spin = [(c, fr) for c, _, fr in t if fr[0] == "spin_at_bottom"]
    assert sum(c for c, _ in in_spin) >= 0.8 * total, "%d of %d samples in the spin loop" % (
        sum(c for c, _ in in_spin), total)
    # A sample taken before the daemon has built deep_stack's unwind table (its first moments)
    # stops at its leaf, marked: right or truncated, never wrong. Every other one keeps 127.
    full = startup = 0
    for c, fr in in_spin:
        user = [f for f in fr if f in ("recurse", "spin_at_bottom")]
        if len(user) < 127 and fr[-1] == "[truncated]" and len(user) == len(fr) - 1:
            startup += c
            continue
        assert len(user) == 127, "%d user frames: %s" % (len(user), fr[:5])
        full += c
    assert full >= 0.97 * (full + startup), "%d of %d deep samples keep 127 frames" % (
        full, full + startup)
    after = metric_value(d.get("/metrics")[2].decode(), "autoprof_stacks_truncated_total")
    assert after - before >= full, "truncated counter moved %d for %d deep samples" % (
        after - before, full)


def test_bad_requests():
    """Bad parameters get a 400 with a reason; unknown paths a 404."""
    for q, why in (("seconds=0", "seconds"), ("seconds=-5", "seconds"), ("seconds=abc", "seconds"),
                   ("seconds=1.5", "seconds"), ("seconds=121", "retention"),
                   ("seconds=99999999999999999999", "seconds"), ("pid=abc", "pid"),
                   ("pid=1,,x", "pid"), ("pid=0", "pid"), ("format=xml", "format"),
                   ("comm=", "comm")):
        code, headers, body = d.get("/debug/pprof/profile?" + q)
        assert code == 400, "%s: HTTP %d" % (q, code)
        assert headers["Content-Type"].startswith("text/plain"), headers
        assert why in body.decode(), "%s: %r" % (q, body)
    code, _, _ = d.get("/debug/pprof/nothing")
    assert code == 404, code
    code, _, _ = d.get("/debug/pprof/profile?seconds=120")
    assert code == 200, code


def test_index():
    code, headers, body = d.get("/")
    assert code == 200 and headers["Content-Type"].startswith("text/html"), (code, headers)
    for path in (b"/debug/pprof/profile", b"/metrics"):
        assert path in body, body


def metric_value(text, name, labels=""):
    v = aplib.metric_value(text, name, labels)
    assert v is not None, "no %s{%s} in /metrics" % (name, labels)
    return v


def test_metrics():
    """/metrics lints clean with promtool and counts what happened."""
    code, headers, body = d.get("/metrics")
    assert code == 200 and headers["Content-Type"].startswith("text/plain; version=0.0.4"), headers
    path = os.path.join(TMP, "metrics.txt")
    with open(path, "wb") as f:
        f.write(body)
    with open(path, "rb") as f:
        r = subprocess.run(["promtool", "check", "metrics"], stdin=f, capture_output=True, text=True)
    assert r.returncode == 0 and not r.stdout.strip() and not r.stderr.strip(), r.stdout + r.stderr
    text = body.decode()
    assert metric_value(text, "autoprof_samples_total", 'profile="cpu"') > 1000
    assert metric_value(text, "autoprof_samples_stored_total", 'profile="cpu"') > 1000
    assert metric_value(text, "autoprof_samples_dropped_total", 'profile="cpu",reason="ringbuf_full"') == 0
    assert metric_value(text, "autoprof_store_stacks") > 0
    assert metric_value(text, "autoprof_processes_tracked") > 0
    assert metric_value(text, "autoprof_symbolizer_lookups_total", 'result="hit"') > 0
    # bpf.ringbuf-size auto: a second of 1 KiB samples at 99 Hz on every CPU, a power of two
    # from 256 KiB up.
    want = 256 << 10
    while want < os.cpu_count() * 99 * 1024:
        want <<= 1
    assert metric_value(text, "autoprof_bpf_ringbuf_size_bytes", 'ring="oncpu"') == want
    # The off-CPU profiler is off at start: its ring is the quiet size.
    assert metric_value(text, "autoprof_bpf_ringbuf_size_bytes", 'ring="offcpu"') == 256 << 10
    # Unwind tables take chunks as they grow: what the host's tables use, not the budget.
    used = metric_value(text, "autoprof_unwind_table_bytes")
    made = metric_value(text, "autoprof_unwind_table_allocated_bytes")
    cap = metric_value(text, "autoprof_unwind_table_capacity_bytes")
    assert used <= made < cap / 2, (used, made, cap)
    assert metric_value(text, "autoprof_http_requests_total", 'handler="profile",code="400"') >= 11
    assert metric_value(text, "autoprof_build_info") == 1
    assert metric_value(text, "autoprof_cpus_sampled") == os.cpu_count()
    code, headers, body = d.get("/metrics", {"Accept": "application/openmetrics-text"})
    assert headers["Content-Type"].startswith("application/openmetrics-text"), headers
    assert body.endswith(b"# EOF\n"), body[-100:]


def test_sigterm():
    """SIGTERM detaches everything and exits 0 within a second."""
    rc, secs = d.stop()
    assert rc == 0, "exit %d:\n%s" % (rc, d.logtext()[-2000:])
    assert secs < 1.0, "took %.2f s" % secs
    progs = subprocess.run(["bpftool", "prog", "show"], capture_output=True, text=True).stdout
    assert "oncpu_sample" not in progs, "a BPF program was left loaded"


check("shares_60_30_10", test_shares)
check("kernel_frames", test_kernel_frames)
check("pid_and_comm_filters", test_pid_filter)
check("short_lived_process_symbolized", test_short_lived)
check("deleted_binary_symbolized", test_deleted_binary)
check("rewritten_binary_symbolized", test_rewritten_binary)
check("other_mount_namespace_symbolized", test_mount_namespace)
check("deep_stack_127_frames", test_deep_stack)
check("bad_requests_400", test_bad_requests)
check("index_page", test_index)
check("metrics_promtool", test_metrics)
check("sigterm_exits_within_1s", test_sigterm)
sys.exit(exit_status())
