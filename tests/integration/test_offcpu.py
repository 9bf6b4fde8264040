#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Off-CPU profiling end to end: threads blocked in known places, their waits read back as
offcpu/nanoseconds with go tool pprof and the folded format; spans longer than the window;
settings changed at run time."""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from aplib import Daemon, check, exit_status, pprof_tool, start_target, traces, TMP  # noqa: E402

d = Daemon("--web.enable-admin-api", "--profile.retention=2m", "--offcpu.enabled=true")


def post(path):
    code, _, body = d.request("POST", path, "")
    return code, body


def folded(query):
    """{stack: nanoseconds} from format=folded (root first, ';'-separated)."""
    code, _, body = d.get("/debug/pprof/offcpu?format=folded&" + query)
    assert code == 200, "HTTP %d: %r" % (code, body[:300])
    out = {}
    for line in body.decode().splitlines():
        stack, value = line.rsplit(" ", 1)
        out[stack] = out.get(stack, 0) + int(value)
    return out


def ns_in(stacks, fn):
    return sum(v for s, v in stacks.items() if fn in s.split(";"))


def run_waits(seconds, long_seconds):
    """Starts offcpu_waits; returns (Popen, pid)."""
    return start_target("offcpu_waits", seconds, long_seconds)


def finish(p):
    """Reads the rest of offcpu_waits's output: {name: value}."""
    out = {}
    for line in p.stdout:
        k, v = line.split()
        out[k] = int(v)
    p.wait()
    return out


def test_waits():
    """read() and nanosleep() waits carry their thread's wall time, kernel frames above them;
    a spinning thread contributes nothing."""
    p, pid = run_waits(4, 1)
    out = finish(p)
    time.sleep(0.4)  # drained every 100 ms
    for name, fn, kfn in (("reader", "wait_in_read", "pipe_read"),
                          ("sleeper", "wait_in_nanosleep", "hrtimer_nanosleep")):
        stacks = folded("seconds=15&pid=%d&comm=%s" % (pid, name))
        got, wall = ns_in(stacks, fn), out[name + "_wall"]
        assert abs(got - wall) <= 0.15 * wall, \
            "%s: %d ns off-CPU in %s, wall %d ns: %s" % (name, got, fn, wall, stacks)
        # The kernel's read path: anon_pipe_read since 6.18, pipe_read before.
        kern = sum(v for s, v in stacks.items() if fn in s.split(";") and
                   any(f.endswith(kfn) for f in s.split(";")))
        assert kern >= 0.9 * got, "%s: %d of %d ns under %s: %s" % (name, kern, got, kfn, stacks)
        # Table unwinding keeps the libc wrapper's caller (glibc has no frame pointers): the
        # helper sits right above the wrapper in nearly every stack of the function.
        helper = "read_once" if name == "reader" else "sleep_once"
        direct = sum(v for s, v in stacks.items() if fn in s.split(";") and
                     helper in s.split(";") and
                     s.split(";")[s.split(";").index(helper) + 1] in
                     ("read", "__GI___libc_read", "__libc_read", "__nanosleep", "nanosleep",
                      "__GI___nanosleep"))
        assert direct >= 0.95 * got, "%s: %d of %d ns through %s into libc: %s" % (
            name, direct, got, helper, stacks)
    spin = sum(folded("seconds=15&pid=%d&comm=spinner" % pid).values())
    assert spin <= 0.02 * out["spinner_wall"], "spinner blocked %d ns" % spin

    # The same through pprof: sample types, and kernel frames leafward of the user ones.
    code, _, body = d.get("/debug/pprof/offcpu?seconds=15&pid=%d" % pid)
    assert code == 200 and body[:2] == b"\x1f\x8b", (code, body[:100])
    raw = pprof_tool(body, "-raw")
    assert "PeriodType: offcpu nanoseconds" in raw, raw[:400]
    assert "samples/count offcpu/nanoseconds" in raw, raw[:600]
    seen = set()
    for count, labels, frames in traces(body):
        assert labels.get("pid") == str(pid), labels
        for fn, kfn in (("wait_in_read", "pipe_read"), ("wait_in_nanosleep", "nanosleep")):
            if fn in frames:
                k = [i for i, f in enumerate(frames) if kfn in f]
                assert k and k[0] < frames.index(fn), frames
                seen.add(fn)
    assert seen == {"wait_in_read", "wait_in_nanosleep"}, seen
    top = pprof_tool(body, "-top", "-sample_index=offcpu")
    assert "wait_in_read" in top and "wait_in_nanosleep" in top, top


def test_long_span():
    """A wait longer than the window gives the window the part of it inside the window; the
    parts add up to the whole wait, counted once."""
    p, pid = run_waits(5, 3.5)
    line = p.stdout.readline().split()
    assert line[0] == "long_end", line
    end = int(line[1])
    time.sleep(0.3)
    for _ in range(5):
        before = time.monotonic_ns()
        stacks = folded("seconds=2&pid=%d&comm=longwait" % pid)
        after = time.monotonic_ns()
        if before // 10**9 == after // 10**9:
            break
    # seconds=2: the current second and the one before it.
    window_start = (before // 10**9 - 1) * 10**9
    got, want = ns_in(stacks, "long_block"), end - window_start
    assert want > 0, "the wait ended before the window"
    assert abs(got - want) <= 0.05 * want + 2e6, "%d ns in the window, want %d" % (got, want)
    finish(p)
    time.sleep(0.3)
    whole = ns_in(folded("seconds=20&pid=%d&comm=longwait" % pid), "long_block")
    assert abs(whole - 3.5e9) <= 0.02 * 3.5e9, "%d ns in all, want 3.5 s" % whole
    code, _, body = d.get("/debug/pprof/offcpu?seconds=20&pid=%d&comm=longwait" % pid)
    count = sum(c for c, _, fr in traces(body) if "long_block" in fr)
    assert count == 1, "the wait counted %d times" % count


def metric(name, labels=""):
    v = d.metric(name, labels)
    assert v is not None, "no %s{%s} in /metrics" % (name, labels)
    return v


def test_runtime_config():
    """Settings change at once without a restart; bad values get 400 naming the parameter."""
    code, body = d.get("/debug/offcpu/config")[0], d.get("/debug/offcpu/config")[2]
    assert code == 200 and b'"enabled":true' in body and b'"min_block_ns":50000' in body, body
    for query, param in (("min_block=soon", "min_block"), ("sample_probability=2",
                                                          "sample_probability"),
                         ("sample_probability=-1", "sample_probability"),
                         ("enabled=maybe", "enabled"), ("min_block=2h", "min_block"), ("", "")):
        code, body = post("/debug/offcpu/config?" + query)
        assert code == 400 and body.decode().startswith(param), (query, code, body)
    code, _, body = d.get("/debug/offcpu/config?enabled=0")
    assert code == 400, (code, body)

    # Off: nothing recorded, and the program is detached.
    code, body = post("/debug/offcpu/config?enabled=false")
    assert code == 200 and b'"enabled":false' in body, body
    assert metric("autoprof_offcpu_enabled") == 0
    p, pid = run_waits(1, 0.5)
    finish(p)
    time.sleep(0.3)
    assert not folded("seconds=5&pid=%d" % pid), "recorded while disabled"

    # A minimum block time above every wait: all filtered in BPF, counted.
    short = metric("autoprof_offcpu_spans_filtered_total", 'reason="short"')
    code, body = post("/debug/offcpu/config?enabled=1&min_block=1s")
    assert code == 200 and b'"min_block_ns":1000000000' in body, body
    p, pid = run_waits(1, 0.5)
    finish(p)
    time.sleep(0.3)
    assert not folded("seconds=5&pid=%d&comm=sleeper" % pid), "a 20 ms wait passed 1s"
    assert metric("autoprof_offcpu_spans_filtered_total", 'reason="short"') > short + 20

    # Half the spans sampled out.
    code, body = post("/debug/offcpu/config?min_block=50us&sample_probability=0.5")
    assert code == 200 and b'"sample_probability":0.500000' in body, body
    p, pid = run_waits(2, 0.5)
    out = finish(p)
    time.sleep(0.3)
    got = ns_in(folded("seconds=5&pid=%d&comm=sleeper" % pid), "wait_in_nanosleep")
    assert 0.25 * out["sleeper_wall"] <= got <= 0.75 * out["sleeper_wall"], got
    code, body = post("/debug/offcpu/config?sample_probability=1")
    assert code == 200, body


def test_bad_requests():
    """The profile endpoint's parameters are checked as /debug/pprof/profile's are."""
    for q, why in (("seconds=abc", "seconds"), ("seconds=0", "seconds"), ("pid=x", "pid"),
                   ("format=svg", "format"), ("trace_id=zz", "trace_id")):
        code, _, body = d.get("/debug/pprof/offcpu?" + q)
        assert code == 400 and body.decode().startswith(why), (q, code, body)


def test_metrics():
    """/metrics lints clean with promtool and counts the spans."""
    code, _, body = d.get("/metrics")
    path = os.path.join(TMP, "metrics-offcpu.txt")
    with open(path, "wb") as f:
        f.write(body)
    r = subprocess.run("promtool check metrics < " + path, shell=True, capture_output=True,
                       text=True)
    assert r.returncode == 0 and not (r.stdout + r.stderr).strip(), r.stdout + r.stderr
    assert metric("autoprof_offcpu_spans_total") > 0
    assert metric("autoprof_offcpu_spans_stored_total") > 0
    assert metric("autoprof_offcpu_spans_dropped_total", 'reason="ringbuf_full"') == 0
    assert metric("autoprof_bpf_ringbuf_size_bytes", 'ring="offcpu"') == 1 << 20


def test_sigterm():
    """SIGTERM detaches the sched_switch program too."""
    rc, secs = d.stop()
    assert rc == 0 and secs < 1.0, (rc, secs)
    # A program that scheduled task works is freed after an RCU tasks-trace grace period.
    deadline = time.time() + 5
    while True:
        progs = subprocess.run(["bpftool", "prog", "show"], capture_output=True,
                               text=True).stdout
        if "offcpu_switch" not in progs:
            break
        assert time.time() < deadline, "a BPF program was left loaded"
        time.sleep(0.1)


check("waits_attributed_to_functions", test_waits)
check("long_span_split_at_window", test_long_span)
check("runtime_config", test_runtime_config)
check("bad_requests_400", test_bad_requests)
check("metrics_promtool", test_metrics)
check("sigterm_detaches", test_sigterm)
sys.exit(exit_status())
