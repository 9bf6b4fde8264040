#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Latency probes end to end: the real daemon, uprobes on a real test program whose handle() is
fast but every tenth call also runs slow_path(); probes through the API, latency histograms,
flame graphs of slow vs fast calls (folded and pprof read back with go tool pprof), a line probe,
a probe narrowed to the slow calls of another, /metrics, and detaching."""

import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from aplib import (AUTOPROF, BUILD, Daemon, ROOT, Skip, TMP, check, exit_status,  # noqa: E402
                   pprof_tool)

TARGET = os.path.join(BUILD, "probetargets", "probe_target")
SOURCE = os.path.join(ROOT, "tests", "targets", "probes", "probe_target.c")
FAST_US, SLOW_US = 200, 4000
# Calls above this are slow: a power of two, so that it is a bucket bound of the histogram. A fast
# call is rightly slow when the machine stalled it past this, and on a VM the stall draws samples
# (the sampling timer expires while the vCPU is stolen and fires as it resumes, inside the
# stretched call), so the bound sits ~1.9 ms above a fast call: with 0.85 ms, stolen time on a
# loaded CI machine once put 120 fast_work samples into the slow flame graph.
THRESHOLD_NS = 1 << 21

d = Daemon("--web.enable-admin-api", "--profile.retention=2m")


def request(method, path, body=None):
    code, headers, data = d.request(method, path, body)
    return code, headers.get("Content-Type", ""), data.decode()


added = []


def add(**spec):
    spec.setdefault("binary", TARGET)
    code, ctype, body = request("POST", "/api/v1/probes", json.dumps(spec))
    assert code == 201 and ctype.startswith("application/json"), (code, body)
    added.append(json.loads(body)["id"])
    return added[-1]


def cleanup():
    """Removes what a test added, passed or not, so that the next one starts clean."""
    while added:
        request("DELETE", "/api/v1/probes/%d" % added.pop())


def latency(pid_id, seconds=120, want=None):
    """The latency answer; with want, once its count reached want (the ingest thread of a
    daemon that just started may drain its rings late on this loaded machine), 20 s at most."""
    deadline = time.time() + 20
    while True:
        code, _, body = request("GET", "/api/v1/probes/%d/latency?seconds=%d" % (pid_id, seconds))
        assert code == 200, (code, body)
        lat = json.loads(body)
        if want is None or lat["count"] >= want or time.time() > deadline:
            return lat
        time.sleep(0.2)


def settle(d_, n):
    """Waits until the daemon listed n calls in all (see latency()), 10 s at most."""
    deadline = time.time() + 10
    while time.time() < deadline:
        listed = json.loads(d_.get("/api/v1/probes")[2])["probes"]
        if sum(p["calls"] for p in listed) >= n:
            return
        time.sleep(0.2)


def probes():
    code, _, body = request("GET", "/api/v1/probes")
    assert code == 200, (code, body)
    return {p["id"]: p for p in json.loads(body)["probes"]}


def slow_line():
    with open(SOURCE) as f:
        for n, line in enumerate(f, 1):
            if "PROBE_LINE" in line:
                return n
    raise AssertionError("no PROBE_LINE in " + SOURCE)


class Target:
    """probe_target, driven through its stdin."""

    def __init__(self, fast_us=FAST_US, slow_us=SLOW_US):
        self.p = subprocess.Popen([TARGET, str(fast_us), str(slow_us), "10"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.pid = int(self.p.stdout.readline())

    def run(self, n):
        """n calls of handle(); returns how many took the slow branch."""
        self.p.stdin.write("run %d\n" % n)
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        m = re.match(r"done calls=(\d+) slow=(\d+)", line)
        assert m and int(m.group(1)) == n, m
        # The quantiles of the calls' durations as the program timed them itself.
        self.quantiles = {k + "_ns": int(v) for k, v in re.findall(r"(p\d\d)=(\d+)", line)}
        return int(m.group(2))

    def alive(self):
        return self.p.poll() is None

    def stop(self):
        if self.alive():
            self.p.stdin.write("quit\n")
            self.p.stdin.close()
            self.p.wait(timeout=10)


def metric(name, labels):
    return d.metric(name, labels)


def folded(query):
    code, headers, body = d.get("/debug/pprof/profile?" + query)
    assert code == 200, (query, code, body[:300])
    out = {}
    for line in body.decode().splitlines():
        stack, n = line.rsplit(" ", 1)
        out[stack] = out.get(stack, 0) + int(n)
    return out


def share(stacks, fn):
    total = sum(stacks.values())
    return sum(n for s, n in stacks.items() if fn in s.split(";")) / total if total else 0.0


def test_api():
    """Add by function and by line (201 with an id), list them, refuse bad requests with 400
    and a JSON reason, delete (204, then 404)."""
    a = add(function="handle", name="api-handle")
    b = add(location="probe_target.c:%d" % slow_line())
    listed = probes()
    assert listed[a]["name"] == "api-handle" and listed[a]["function"] == "handle", listed[a]
    assert listed[a]["location"] is None and listed[a]["pid"] == 0, listed[a]
    assert listed[a]["binary"] == TARGET and listed[a]["calls"] == 0, listed[a]
    assert listed[b]["function"] is None and listed[b]["name"].startswith("probe_target.c:"), \
        listed[b]
    bad = [
        "{not json",
        json.dumps({"binary": TARGET}),
        json.dumps({"binary": "/nonexistent/app", "function": "handle"}),
        json.dumps({"binary": TARGET, "function": "no_such_function"}),
        json.dumps({"binary": TARGET, "location": "probe_target.c"}),
        json.dumps({"binary": TARGET, "location": "no_such_file.c:10"}),
        json.dumps({"binary": TARGET, "location": "probe_target.c:100000"}),
        json.dumps({"binary": TARGET, "function": "handle", "threshold": "fast"}),
        json.dumps({"binary": TARGET, "function": "handle", "inside": {"probe": 999}}),
        json.dumps({"binary": TARGET, "function": "handle", "inside": {"probe": b}}),
        json.dumps({"binary": TARGET, "function": "handle", "bogus": 1}),
    ]
    for body in bad:
        code, ctype, text = request("POST", "/api/v1/probes", body)
        assert code == 400 and ctype.startswith("application/json"), (body, code, text)
        assert json.loads(text)["error"], text
    assert set(probes()) == set(listed), "a refused request left a probe"
    for pid_id in (a, b):
        code, _, text = request("DELETE", "/api/v1/probes/%d" % pid_id)
        assert code == 204 and not text, (code, text)
    assert request("DELETE", "/api/v1/probes/%d" % a)[0] == 404
    assert request("DELETE", "/api/v1/probes/x")[0] == 400
    assert request("GET", "/api/v1/probes/%d/latency" % a)[0] == 404
    assert a not in probes() and b not in probes()


def test_latency():
    """Every call counted; p50 and p90 among the fast calls, p95 and p99 among the slow; the
    calls above the slow/fast boundary are the slow ones (plus fast ones the loaded machine
    preempted); the threshold in effect defaults to the p95."""
    t = Target()
    try:
        pid_id = add(function="handle", name="lat-handle", pid=t.pid)
        slow = t.run(1000)
        lat = latency(pid_id, want=1000)
    finally:
        t.stop()
    assert slow == 100, slow
    assert lat["count"] == 1000, (lat["count"], [
        l for l in d.get("/metrics")[2].decode().splitlines() if "autoprof_probe_" in l and
        not l.startswith(("#", "autoprof_probe_latency_seconds_bucket"))])
    assert sum(b["count"] for b in lat["buckets"]) == 1000, lat["buckets"]
    les = [b["le_ns"] for b in lat["buckets"]]
    assert les == sorted(les), les
    # p90 sits at the boundary (10 % slow): a fast call preempted on this loaded machine moves
    # it, so only the quantiles clear of it are checked.
    assert lat["p50_ns"] < SLOW_US * 1000 / 2 <= SLOW_US * 1000 * 0.8 <= lat["p95_ns"], lat
    assert lat["p50_ns"] <= lat["p90_ns"] <= lat["p95_ns"] <= lat["p99_ns"], lat
    above = sum(b["count"] for b in lat["buckets"] if b["le_ns"] > THRESHOLD_NS)
    assert slow <= above <= slow + 60, (above, slow, lat["buckets"])
    assert lat["sum_ns"] >= 1000 * FAST_US * 1000 + slow * SLOW_US * 1000, lat["sum_ns"]
    for q in ("p50_ns", "p90_ns", "p95_ns", "p99_ns"):
        assert lat["ewma"][q] > 0, lat["ewma"]
    assert lat["threshold_ns"] >= SLOW_US * 1000 * 0.8, lat["threshold_ns"]
    assert probes()[pid_id]["threshold_ns"] == lat["threshold_ns"]
    assert probes()[pid_id]["calls"] == 1000


def test_split_profiles():
    """latency=slow is dominated by slow_path; latency=fast holds none of it; format=diff has
    both as sample types; the plain profile is unchanged (no sample counted twice); a line probe
    in the slow branch counts exactly the slow calls."""
    t = Target()
    try:
        pid_id = add(function="handle", name="split-handle", threshold="%dns" % THRESHOLD_NS)
        line_id = add(location="probe_target.c:%d" % slow_line(), name="slow-branch")
        slow = t.run(5000)
        lat = latency(pid_id, want=5000)
        time.sleep(1.0)
        q = "probe=%d&seconds=120&pid=%d" % (pid_id, t.pid)
        slow_stacks = folded(q + "&latency=slow&format=folded")
        fast_stacks = folded(q + "&latency=fast&format=folded")
        plain = folded("seconds=120&pid=%d&format=folded" % t.pid)
        code, _, diff = d.get("/debug/pprof/profile?" + q + "&format=diff")
        hits = latency(line_id)["count"]
        assert t.alive()
    finally:
        t.stop()
    assert hits == slow, (hits, slow)
    n_slow, n_fast = sum(slow_stacks.values()), sum(fast_stacks.values())
    assert n_slow >= 20 and n_fast >= 20, (n_slow, n_fast)
    stretched = sum(b["count"] for b in lat["buckets"] if b["le_ns"] > THRESHOLD_NS) - slow
    assert share(slow_stacks, "slow_path") > 0.6, (stretched, n_fast, slow_stacks)
    assert share(fast_stacks, "slow_path") == 0, fast_stacks
    assert share(fast_stacks, "fast_work") > 0.8, fast_stacks
    # Every labelled sample is a copy of one in the plain profile, which is not inflated by them.
    in_handle = sum(n for s, n in plain.items() if "handle" in s.split(";"))
    assert n_slow + n_fast <= sum(plain.values()), (n_slow, n_fast, plain)
    assert 0.9 * in_handle - 5 <= n_slow + n_fast <= in_handle * 1.1 + 5, \
        (n_slow, n_fast, in_handle)
    assert code == 200
    raw = pprof_tool(diff, "-raw").replace("[dflt]", "")
    assert "slow_samples/count slow_cpu/nanoseconds fast_samples/count fast_cpu/nanoseconds" \
        in raw, raw[:400]
    top = pprof_tool(diff, "-top", "-sample_index=slow_samples", "-cum", "-nodecount=50")
    assert "slow_path" in top, top
    top = pprof_tool(diff, "-top", "-sample_index=fast_samples", "-cum", "-nodecount=50")
    assert "slow_path" not in top and "fast_work" in top, top
    for query, why in (("probe=99999&latency=slow", "unknown probe"),
                       ("probe=%d&latency=medium" % pid_id, "bad latency"),
                       ("latency=slow", "latency without probe"),
                       ("probe=abc", "bad probe id")):
        code, _, body = d.get("/debug/pprof/profile?" + query)
        assert code == 400, (why, code, body)
    code, _, body = d.get("/debug/pprof/offcpu?probe=%d" % pid_id)
    assert code == 400, (code, body)


def test_default_split():
    """Without a threshold, the slow calls are those above the p95 of recent calls, exactly:
    with every tenth call in a tight cluster at 2.4 ms and the others at 0.2 ms, about half of
    the cluster. The p95 used to be interpolated inside a histogram bucket 19 % wide, which
    landed above the whole cluster: latency=slow held 1 sample while ~1,000 were taken in slow
    calls."""
    t = Target(FAST_US, 2200)
    try:
        pid_id = add(function="handle", name="default-split", pid=t.pid)
        slow = t.run(6000)
        latency(pid_id, seconds=60, want=6000)
        # A second on, the threshold is worked out afresh when asked, from the same calls.
        time.sleep(1.1)
        lat = latency(pid_id, seconds=60)
        q = "probe=%d&seconds=60&pid=%d" % (pid_id, t.pid)
        slow_stacks = folded(q + "&latency=slow&format=folded")
        fast_stacks = folded(q + "&latency=fast&format=folded")
    finally:
        t.stop()
    assert slow == 600, slow
    # Every call of the minute is kept: the quantiles are exact, within 1 % of the program's
    # own timing of its calls (which a loaded machine stretches: the known answer is that, not
    # 2.4 ms), and the p95 is among the slow calls.
    assert lat["exact"] is True and lat["count"] == 6000, lat
    own = t.quantiles
    # The program's clock also holds the probes' traps (a few us) and any preemption between
    # its clock reads and the call: the tail (p99) is checked looser.
    for k, tol in (("p50_ns", 0.01), ("p95_ns", 0.01), ("p99_ns", 0.05)):
        assert abs(lat[k] - own[k]) <= tol * own[k] + 20000, (k, lat[k], own[k])
    # (p90 sits at the boundary: every tenth call is slow.)
    assert lat["p50_ns"] < 2.4e6 * 0.5 < 2.4e6 * 0.97 <= lat["p95_ns"] <= lat["p99_ns"], lat
    # The threshold in effect is the p95 of the same calls.
    assert lat["threshold_ns"] == lat["p95_ns"], lat
    in_slow = sum(n for s, n in slow_stacks.items() if "slow_path" in s.split(";"))
    in_fast = sum(n for s, n in fast_stacks.items() if "slow_path" in s.split(";"))
    print("  %d slow_path samples in slow calls, %d in fast ones; slow: %d samples" % (
        in_slow, in_fast, sum(slow_stacks.values())))
    # Not all: a loaded machine stretches some fast calls past the p95 (CI under the whole
    # suite: 21 of 27 samples, 0.78).
    assert share(slow_stacks, "slow_path") >= 0.7, slow_stacks
    assert in_slow + in_fast >= 40, (in_slow, in_fast)
    # The slower half of the cluster holds more than half its time when the machine stretches
    # some calls, never (nearly) all of it nor (nearly) none. (CI under the whole suite read
    # 0.17 and 0.28: its stretched fast calls raise the p95 into the cluster's top.)
    assert 0.1 <= in_slow / (in_slow + in_fast) <= 0.9, (in_slow, in_fast)


def test_nested():
    """A probe on fast_work narrowed to the slow calls of handle counts exactly those calls: it
    runs in every call of handle, but only the slow ones keep it."""
    t = Target()
    try:
        outer = add(function="handle", name="outer", threshold="%dns" % THRESHOLD_NS)
        inner = add(function="fast_work", name="inner",
                    inside={"probe": outer, "latency": "slow"})
        slow = t.run(2000)
        o = latency(outer, want=2000)
        time.sleep(0.5)
        i = latency(inner)
    finally:
        t.stop()
    assert o["count"] == 2000, o["count"]
    outer_slow = sum(b["count"] for b in o["buckets"] if b["le_ns"] > THRESHOLD_NS)
    assert outer_slow >= slow, (outer_slow, slow)
    assert i["count"] == outer_slow, (i["count"], outer_slow)
    assert probes()[inner]["calls"] == outer_slow


def test_metrics():
    """The histogram in /metrics, cumulative, with the probe's name; promtool lints it."""
    t = Target()
    try:
        pid_id = add(function="handle", name="metrics-handle")
        t.run(500)
        latency(pid_id, want=500)
        code, _, body = d.get("/metrics")
    finally:
        t.stop()
    text = body.decode()
    labels = ['probe="metrics-handle"', 'id="%d"' % pid_id]
    buckets = [(float(re.search(r'le="([^"]+)"', l).group(1)), float(l.rsplit(" ", 1)[1]))
               for l in text.splitlines()
               if l.startswith("autoprof_probe_latency_seconds_bucket{") and
               all(x in l for x in labels)]
    assert len(buckets) > 10, text[-2000:]
    counts = [c for _, c in buckets]
    assert counts == sorted(counts) and buckets[-1][0] == float("inf"), buckets
    assert metric("autoprof_probe_latency_seconds_count", labels) == 500
    assert buckets[-1][1] == 500
    total = metric("autoprof_probe_latency_seconds_sum", labels)
    assert 500 * FAST_US * 1e-6 <= total <= 60, total
    path = os.path.join(TMP, "metrics-probes.txt")
    with open(path, "wb") as f:
        f.write(body)
    r = subprocess.run("promtool check metrics < " + path, shell=True, capture_output=True,
                       text=True)
    if r.returncode == 127:
        raise Skip("promtool not installed")
    assert r.returncode == 0 and not (r.stdout + r.stderr).strip(), r.stdout + r.stderr


def test_delete_detaches():
    """After DELETE the target's calls are no longer seen (the BPF call counter stands still)
    and the target runs on, answering."""
    t = Target()
    try:
        pid_id = add(function="handle", name="detach-handle", pid=t.pid)
        t.run(200)
        assert latency(pid_id, want=200)["count"] == 200
        code, _, _ = request("DELETE", "/api/v1/probes/%d" % pid_id)
        assert code == 204
        before = metric("autoprof_probe_events_total", ['outcome="call"'])
        assert t.run(300) == 30
        time.sleep(1.0)
        after = metric("autoprof_probe_events_total", ['outcome="call"'])
        assert after == before, (before, after)
        assert t.alive()
        assert metric("autoprof_probe_latency_seconds_count", ['id="%d"' % pid_id]) is None
        assert t.run(10) == 1
    finally:
        t.stop()
    assert t.p.returncode == 0, t.p.returncode


def test_config():
    """probes.attach: probes attached at start; one that names no function exits 2 before
    attaching anything, naming the key."""
    r = subprocess.run([AUTOPROF, "--web.listen-address=127.0.0.1:0",
                        "--probes.attach=%s:no_such_function" % TARGET],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "probes" in r.stderr and "no_such_function" in r.stderr, \
        (r.returncode, r.stderr)
    r = subprocess.run([AUTOPROF, "--probes.attach=relative:handle"], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 2 and "probes.attach" in r.stderr, (r.returncode, r.stderr)
    d2 = Daemon("--probes.attach=%s:handle,%s:probe_target.c:%d" % (TARGET, TARGET,
                                                                      slow_line()))
    try:
        t = Target()
        try:
            slow = t.run(300)
            settle(d2, 300 + slow)
        finally:
            t.stop()
        code, _, body = d2.get("/api/v1/probes")
        listed = json.loads(body)["probes"]
        assert [p["name"] for p in listed] == ["handle", "probe_target.c:%d" % slow_line()], \
            listed
        events = [l for l in d2.get("/metrics")[2].decode().splitlines()
                  if l.startswith("autoprof_probe_events_total")]
        assert [p["calls"] for p in listed] == [300, slow], (listed, events,
                                                              d2.logtext()[-3000:])
    finally:
        rc, _ = d2.stop()
    assert rc == 0, rc


if not os.path.exists(TARGET):
    print("SKIP probes: %s not built (make %s)" % (TARGET, os.path.relpath(TARGET, ROOT)))
    sys.exit(0)
for name, fn in (("probes_api", test_api), ("probes_latency", test_latency),
                 ("probes_split_profiles", test_split_profiles),
                 ("probes_default_split", test_default_split), ("probes_nested", test_nested),
                 ("probes_metrics", test_metrics),
                 ("probes_delete_detaches", test_delete_detaches),
                 ("probes_config", test_config)):
    check(name, fn)
    cleanup()
rc, _ = d.stop()
if rc != 0:
    print("FAIL probes_sigterm: autoprof exited with %d" % rc)
    sys.exit(1)
sys.exit(exit_status())
