#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Memory profiling (attach mode) end to end: the real daemon, uprobes on the real glibc of
target programs, heap and allocs read back with go tool pprof, targets through the API."""

import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from aplib import BUILD, Daemon, Skip, check, exit_status, pprof_tool, TARGETS, TMP  # noqa: E402

SHIM = os.path.join(BUILD, "libautoprof_preload.so")

# A 64 KiB mean keeps the estimate of ~500 leaked blocks within a few percent.
d = Daemon("--web.enable-admin-api", "--profile.retention=2m", "--memory.targets=mem_leak,mem_leak_go,mem_mmap",
           "--memory.sample-interval=64KiB")


def request(method, path, body=None):
    code, _, data = d.request(method, path, body)
    return code, data.decode()


def metric(name, labels=""):
    return d.metric(name, labels, default=0.0)


def flat(data, index, cum=False):
    """Leaf function -> value of sample type index, from go tool pprof -top (bytes as B); with
    cum, function -> the value of the stacks it is in."""
    out = {}
    text = pprof_tool(data, "-top", "-nodecount=200", "-sample_index=" + index, "-unit=B")
    for line in text.splitlines():
        m = re.match(r"^\s*([\d.]+)B?\s+[\d.]+%\s+[\d.]+%\s+([\d.]+)B?\s+[\d.]+%\s+(.+)$",
                     line)
        if m:
            name = m.group(3).replace(" (inline)", "").strip()
            out[name] = out.get(name, 0) + float(m.group(2 if cum else 1))
    return out


def profile(path):
    code, headers, body = d.get(path)
    assert code == 200, "%s: HTTP %d %r" % (path, code, body[:300])
    assert headers["Content-Type"].startswith("application/octet-stream"), headers
    return body


def assert_holds_leak(live, fn, leaked):
    """fn holds the live bytes the program leaked (±20 %), ~all the live bytes there are."""
    assert abs(live.get(fn, 0) - leaked) <= 0.2 * leaked, \
        "%s holds %d live bytes, the program leaked %d (%s)" % (fn, live.get(fn, 0), leaked, live)
    assert live.get(fn, 0) >= 0.95 * sum(live.values()), live


def start_leak(seconds, linger, name="mem_leak", env=None, wait=False, exe=None):
    """mem_leak, or exe (copied as name); with wait, it starts allocating on a line on its
    stdin."""
    src = exe or os.path.join(TARGETS, "mem_leak")
    exe = src
    if name != "mem_leak" or src != os.path.join(TARGETS, "mem_leak"):
        os.makedirs(os.path.join(TMP, "leak_copies"), exist_ok=True)
        exe = os.path.join(TMP, "leak_copies", name)
        shutil.copy(src, exe)
    p = subprocess.Popen([exe, str(seconds), str(linger)] + (["wait"] if wait else []),
                         stdin=subprocess.PIPE if wait else None, stdout=subprocess.PIPE,
                         text=True, env=dict(os.environ, **(env or {})))
    return p, int(p.stdout.readline())


def process_entry(pid):
    code, body = request("GET", "/api/v1/targets/memory")
    assert code == 200, (code, body)
    for t in json.loads(body):
        for pr in t["processes"]:
            if pr["pid"] == pid:
                return pr
    return None


def test_heap_and_allocs(env=None, mode="attach", exe=None, obj=None):
    """heap: the leaking function holds ~all live bytes (±20 % of the true total), churn none;
    allocs: churn dominates allocated objects. The target is picked up at exec by its name
    (it allocates once attached: what a process allocates before is invisible, and on a loaded
    machine attaching may take a good part of a second). obj: how the file name of the object
    whose allocator must have been probed begins."""
    p, pid = start_leak(5, 15, env=env, wait=True, exe=exe)
    try:
        wait_attached_then_start(p, pid, mode)
        if obj:
            probed = process_entry(pid)["object"]
            assert os.path.basename(probed).startswith(obj), (probed, obj)
        leaked = int(p.stdout.readline().split()[1])
        time.sleep(0.5)
        heap = profile("/debug/pprof/heap?pid=%d" % pid)
        raw = pprof_tool(heap, "-raw")
        assert "alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes" \
            in raw, raw[:500]
        assert "PeriodType: space bytes" in raw, raw[:300]
        assert "Type: inuse_space" in pprof_tool(heap, "-top", "-nodecount=1"), "default type"
        live = flat(heap, "inuse_space")
        assert_holds_leak(live, "leak_64k", leaked)
        assert live.get("churn", 0) == 0, "churn holds live bytes: %s" % live
        allocs = profile("/debug/pprof/allocs?seconds=15&pid=%d" % pid)
        assert "Type: alloc_space" in pprof_tool(allocs, "-top", "-nodecount=1"), "default type"
        objs = flat(allocs, "alloc_objects")
        assert objs.get("churn", 0) >= 10 * objs.get("leak_64k", 1), objs
        # 200 per round, a round per 64 KiB leaked (~500 rounds in 5 s, fewer on a slow VM:
        # each round sleeps 10 ms, which a busy host stretches)
        rounds = leaked / 65536
        assert 0.6 * 200 * rounds <= objs.get("churn", 0) <= 1.5 * 200 * rounds, (objs, rounds)
        # Complete stacks: the allocating function's caller is main.
        tr = pprof_tool(allocs, "-traces", "-sample_index=alloc_objects")
        assert re.search(r"churn\n\s+main\n", tr), tr[:1500]
        # Labelled by the allocating thread's name (preload records carry none: autoprof reads
        # it).
        # An allocator's constructors allocate before main renames the process: when the
        # probes are in by then (attach at exec is quick), a sample or two carry the old name.
        tags = pprof_tool(allocs, "-tags")
        m = re.search(r"comm: Total[^\n]*\n\s+\S+ \(\s*([\d.]+)%\): leaker\n", tags)
        assert m and float(m.group(1)) >= 99.0, tags[:800]
    finally:
        # A failed check must not leave it allocating under the next test's probes.
        p.kill()
        p.wait()
    return objs


def test_preload(linked=False):
    """The same program under LD_PRELOAD=libautoprof_preload.so (sampling at the daemon's
    64 KiB, from the environment): profiled through the shim's ring (stack copies unwound by
    autoprof), no probe on malloc or free; heap and allocs as in attach mode, attributed to the
    user's functions (no shim frame in any stack). linked: the shim linked into the program
    (libautoprof_preload.a) instead, found in the executable itself."""
    calls = metric("autoprof_memory_calls_total", '{call="alloc"}')
    env = {"AUTOPROF_MEMORY_SAMPLE_INTERVAL": "65536"}
    if not linked:
        env["LD_PRELOAD"] = SHIM
    objs = test_heap_and_allocs(env=env, mode="preload",
                                exe=os.path.join(BUILD, "memtargets", "mem_leak_linked")
                                if linked else None)
    assert metric("autoprof_memory_calls_total", '{call="alloc"}') == calls, \
        "an allocator probe fired in preload mode"
    assert not any(k in ("malloc", "free", "sampled", "ring_alloc", "autoprof_preload_flush")
                   for k in objs), objs
    assert metric("autoprof_memory_calls_total", '{call="free_sampled"}') > 0
    assert metric("autoprof_memory_preload_ring_bytes_total") > 0


def test_other_allocator(name, obj):
    """mem_leak linked with another allocator: its shared library, which defines malloc and free
    before libc does, or its archive, which puts them in the executable. That object is probed
    (not libc, whose allocator the program never calls), with heap and allocs as with glibc's."""
    exe = os.path.join(BUILD, "memtargets", "mem_leak_" + name)
    if not os.path.exists(exe):
        raise Skip("%s not built (its allocator's -dev package missing)" % exe)
    test_heap_and_allocs(exe=exe, obj=obj)


def test_cxx_new():
    """mem_leak built as C++ (new[] and delete[], which libstdc++'s operator new passes on to
    malloc): samples belong to leak_64k and churn, not to operator new (its frames, and
    operator new[]'s, lead the stacks and are dropped), as in C; delete[] frees."""
    objs = test_heap_and_allocs(exe=os.path.join(BUILD, "memtargets", "mem_leak_cxx"))
    assert not any(k.startswith("operator new") for k in objs), objs


def test_rust():
    """A Rust program on its default allocator (Vec's memory through __rust_alloc and
    __rdl_alloc to malloc): the bytes leak_64k kept are live under it (±20 %), nothing under
    churn, which allocated more; no stack leads with the allocator shims (they tail-call malloc
    here, and are dropped where they do not): the leaf is the allocating code, inlined into
    leak_64k and churn."""
    exe = os.path.join(BUILD, "memtargets", "mem_leak_rs")
    if not os.path.exists(exe):
        raise Skip("%s not built (no rustc)" % exe)
    p, pid = start_leak(5, 15, wait=True, exe=exe)
    try:
        wait_attached_then_start(p, pid, "attach")
        leaked = int(p.stdout.readline().split()[1])
        time.sleep(0.5)
        heap = profile("/debug/pprof/heap?pid=%d" % pid)
        live = flat(heap, "inuse_space", cum=True)
        assert abs(live.get("mem_leak_rs::leak_64k", 0) - leaked) <= 0.2 * leaked, \
            (leaked, live)
        assert live.get("mem_leak_rs::churn", 0) == 0, live
        allocs = profile("/debug/pprof/allocs?seconds=15&pid=%d" % pid)
        objs = flat(allocs, "alloc_objects", cum=True)
        assert objs.get("mem_leak_rs::churn", 0) >= 10 * objs.get("mem_leak_rs::leak_64k", 1), \
            objs
        leaves = flat(allocs, "alloc_objects")
        assert not [k for k in leaves if "rust_alloc" in k or "rdl_alloc" in k], leaves
    finally:
        p.kill()
        p.wait()


def test_go():
    """A Go program through its runtime's sampled path (runtime.mProf_Malloc; frees when the
    sweeper frees a profiled object): heap attributes the live bytes to the leaking function
    (the runtime's frames left out) within ±20 % of its leaked total, nothing live to churn
    once it collected; allocs dominated by churn; scaled by the program's own MemProfileRate
    (64 KiB, set in main), not memory.sample-interval."""
    calls = metric("autoprof_memory_calls_total", '{call="alloc"}')
    p = subprocess.Popen([os.path.join(BUILD, "memtargets", "mem_leak_go"), "5", "15"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        pid = int(p.stdout.readline())
        wait_attached_then_start(p, pid, "go")
        leaked = int(p.stdout.readline().split()[1])
        time.sleep(0.5)
        heap = profile("/debug/pprof/heap?pid=%d" % pid)
        live = flat(heap, "inuse_space")
        assert_holds_leak(live, "main.leak64k", leaked)
        assert live.get("main.churn", 0) <= 0.01 * leaked, "churn holds live bytes: %s" % live
        objs = flat(profile("/debug/pprof/allocs?seconds=20&pid=%d" % pid), "alloc_objects")
        assert objs.get("main.churn", 0) >= 10 * objs.get("main.leak64k", 1), objs
        # ~200 per 10 ms for 5 s
        assert 50000 <= objs.get("main.churn", 0) <= 150000, objs
        tr = pprof_tool(heap, "-traces", "-sample_index=inuse_space")
        assert re.search(r"main\.leak64k\n\s+main\.main\n", tr), tr[:1500]
        # The program's allocations start at the Go function that allocated; the runtime's own
        # (the GC's workers allocate too) have only runtime frames, and keep them.
        for block in re.split(r"\n-+\+-+\n", tr):
            assert "main." not in block or "mallocgc" not in block, block
        assert metric("autoprof_memory_calls_total", '{call="alloc"}') == calls, \
            "an allocator probe fired for a Go program"
    finally:
        p.kill()
        p.wait()


def wait_attached_then_start(p, pid, mode):
    """Waits until autoprof attached pid, then lets it start (a line on its stdin)."""
    deadline = time.time() + 10
    pr = None
    while time.time() < deadline:
        pr = process_entry(pid)
        if pr and pr["attached"]:
            break
        time.sleep(0.1)
    assert pr and pr["attached"] and pr["mode"] == mode, pr
    p.stdin.write("go\n")
    p.stdin.flush()


def test_mmap(env=None, mode="attach"):
    """Big anonymous mappings the program makes itself are allocations: heap holds the leaked
    mappings of map_leak (±20 %), none of map_churn (unmapped); malloc's own mapping of a 1 MiB
    block counts once, as malloc_big's malloc."""
    p = subprocess.Popen([os.path.join(TARGETS, "mem_mmap"), "4", "15"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                         env=dict(os.environ, **(env or {})))
    try:
        pid = int(p.stdout.readline())
        wait_attached_then_start(p, pid, mode)
        leaked = int(p.stdout.readline().split()[1])
        time.sleep(0.5)
        heap = profile("/debug/pprof/heap?pid=%d" % pid)
        live = flat(heap, "inuse_space")
        assert abs(live.get("map_leak", 0) - leaked) <= 0.2 * leaked, \
            "map_leak holds %d live bytes, the program leaked %d (%s)" % (
                live.get("map_leak", 0), leaked, live)
        assert live.get("map_churn", 0) == 0, live
        assert live.get("malloc_big", 0) == 0, live
        allocs = flat(profile("/debug/pprof/allocs?seconds=20&pid=%d" % pid), "alloc_space")
        # 4 x 256 KiB per round against map_leak's 1: the churned mappings were seen
        assert 3 * allocs.get("map_leak", 1) <= allocs.get("map_churn", 0) \
            <= 5 * allocs.get("map_leak", 1), allocs
        # 1 MiB per round, counted once (not again as malloc's own mmap)
        assert 3 * allocs.get("map_leak", 1) <= allocs.get("malloc_big", 0) \
            <= 5 * allocs.get("map_leak", 1), allocs
    finally:
        p.kill()
        p.wait()


def cgroup2_root():
    """Where cgroup v2 is mounted (the unified hierarchy), or None."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            sep = fields.index("-")
            if fields[sep + 1] == "cgroup2":
                return fields[4]
    return None


def in_cgroup(cg, seconds, linger=0, name="mem_cg_target"):
    """mem_leak (copied as name) started in cgroup cg, waiting for a line on stdin: a shell
    moves itself in, then execs."""
    exe = os.path.join(TMP, name)
    if not os.path.exists(exe):
        shutil.copy(os.path.join(TARGETS, "mem_leak"), exe)
    p = subprocess.Popen(["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$1" "$2" "$3" wait',
                          cg, exe, str(seconds), str(linger)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    return p, int(p.stdout.readline())


def test_cgroup():
    """A cgroup target: processes already in the cgroup (at POST) and those that exec in it are
    profiled; the same program outside it is not; DELETE detaches."""
    root = cgroup2_root()
    if not root or not os.access(root, os.W_OK):
        raise Skip("no writable cgroup v2 hierarchy")
    cg = os.path.join(root, "autoprof-it-%d" % os.getpid())
    os.mkdir(cg)
    procs = []
    try:
        before, pid_before = in_cgroup(cg, 30)
        procs.append(before)
        outside = subprocess.Popen([os.path.join(TMP, "mem_cg_target"), "30", "0"],
                                   stdout=subprocess.PIPE, text=True)
        procs.append(outside)
        pid_outside = int(outside.stdout.readline())
        code, body = request("POST", "/api/v1/targets/memory", json.dumps({"cgroup": cg}))
        assert code == 200, (code, body)
        tid = json.loads(body)["id"]
        wait_attached(pid_before)
        leak, pid = in_cgroup(cg, 4, 15)
        procs.append(leak)
        wait_attached_then_start(leak, pid, "attach")
        leaked = int(leak.stdout.readline().split()[1])
        time.sleep(0.5)
        live = flat(profile("/debug/pprof/heap?pid=%d" % pid), "inuse_space")
        assert abs(live.get("leak_64k", 0) - leaked) <= 0.2 * leaked, (leaked, live)
        assert process_entry(pid_outside) is None, "a process outside the cgroup was attached"
        targets = json.loads(request("GET", "/api/v1/targets/memory")[1])
        t = [t for t in targets if t["id"] == tid]
        assert t and t[0]["cgroup"] == cg, targets
        assert {pr["pid"] for pr in t[0]["processes"]} == {pid_before, pid}, t
        code, _ = request("DELETE", "/api/v1/targets/memory/%d" % tid)
        assert code == 200
        wait_attached(pid_before, want=False)
    finally:
        for p in procs:
            p.kill()
            p.wait()
        for _ in range(50):
            try:
                os.rmdir(cg)
                break
            except OSError:
                time.sleep(0.1)


def test_exit_leaves_nothing():
    """A target that exits drops its live set and its attachment (metrics)."""
    p, pid = start_leak(2, 0)
    p.wait()
    deadline = time.time() + 5
    while time.time() < deadline:
        if (metric("autoprof_memory_live_allocations") == 0 and
                metric("autoprof_memory_processes", '{state="attached"}') == 0):
            break
        time.sleep(0.2)
    assert metric("autoprof_memory_live_allocations") == 0, "live allocations left: %d; %s" % (
        metric("autoprof_memory_live_allocations"), request("GET", "/api/v1/targets/memory")[1])
    assert metric("autoprof_memory_processes", '{state="attached"}') == 0, "still attached"
    assert metric("autoprof_memory_attaches_total", '{result="ok"}') >= 1


def wait_attached(pid, want=True, timeout=5):
    deadline = time.time() + timeout
    while time.time() < deadline:
        code, body = request("GET", "/api/v1/targets/memory")
        assert code == 200, (code, body)
        attached = any(pr["pid"] == pid and pr["attached"]
                       for t in json.loads(body) for pr in t["processes"])
        if attached == want:
            return json.loads(body)
        time.sleep(0.1)
    raise AssertionError("pid %d attached != %s: %s" % (pid, want, body))


def samples(pid, seconds):
    return sum(flat(profile("/debug/pprof/allocs?seconds=%d&pid=%d" % (seconds, pid)),
                    "alloc_objects").values())


def test_api_targets():
    """Targets added and removed at run time start and stop being profiled."""
    p, pid = start_leak(30, 0, name="mem_api_target")
    try:
        time.sleep(0.5)
        assert samples(pid, 2) == 0, "profiled before being a target"
        code, body = request("POST", "/api/v1/targets/memory", json.dumps({"pid": pid}))
        assert code == 200, (code, body)
        tid = json.loads(body)["id"]
        targets = wait_attached(pid)
        assert any(t["id"] == tid and t.get("pid") == pid for t in targets), targets
        time.sleep(2)
        assert samples(pid, 2) > 0, "no samples after POST"
        code, body = request("DELETE", "/api/v1/targets/memory/%d" % tid)
        assert code == 200, (code, body)
        wait_attached(pid, want=False)
        time.sleep(1.5)
        assert samples(pid, 1) == 0, "still profiled after DELETE"
        # By executable name, for a process already running.
        code, body = request("POST", "/api/v1/targets/memory", '{"exe": "mem_api_*"}')
        assert code == 200, (code, body)
        tid = json.loads(body)["id"]
        wait_attached(pid)
        code, _ = request("DELETE", "/api/v1/targets/memory/%d" % tid)
        assert code == 200
        wait_attached(pid, want=False)
        assert metric("autoprof_memory_targets") == 3, "only memory.targets (3 patterns) is left"
    finally:
        p.kill()
        p.wait()


def spawn_with_pid(pid, argv):
    """argv started as process pid (the kernel's next pid set through ns_last_pid), or None."""
    for _ in range(50):
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(pid - 1))
        q = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        if q.pid == pid:
            return q
        q.kill()
        q.wait()
    return None


def test_pid_target_is_one_process():
    """A pid target follows the process it named, not the next one given its pid."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    code, text = request("POST", "/api/v1/targets/memory", json.dumps({"pid": gone.pid}))
    assert code == 400 and "no such process" in text, (code, text)
    p, pid = start_leak(30, 0, name="mem_pid_reuse")
    code, body = request("POST", "/api/v1/targets/memory", json.dumps({"pid": pid}))
    assert code == 200, (code, body)
    tid = json.loads(body)["id"]
    try:
        wait_attached(pid)
        p.kill()
        p.wait()
        wait_attached(pid, want=False)
        exe = os.path.join(TMP, "leak_copies", "mem_pid_reuse")
        q = spawn_with_pid(pid, [exe, "30", "0"])
        if q is None:
            raise Skip("pid %d was not given again" % pid)
        try:
            assert int(q.stdout.readline()) == pid
            time.sleep(3)
            entry = process_entry(pid)
            assert entry is None, "a new process with the old pid is profiled: %r" % entry
            assert samples(pid, 2) == 0, "the new process with the old pid has samples"
            code, body = request("GET", "/api/v1/targets/memory")
            assert any(t["id"] == tid and t["processes"] == [] for t in json.loads(body)), body
        finally:
            q.kill()
            q.wait()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        request("DELETE", "/api/v1/targets/memory/%d" % tid)


def test_api_bad_input():
    for body, why in (("", "JSON"), ("{", "JSON"), ('{"pid": 0}', "pid"),
                      ('{"pid": "x"}', "pid"), ('{"exe": ""}', "exe"),
                      ('{"cgroup": "/x"}', "cgroup"), ('{"pid": 1} trailing', "JSON")):
        code, text = request("POST", "/api/v1/targets/memory", body)
        assert code == 400 and why in text, (body, code, text)
    code, _ = request("DELETE", "/api/v1/targets/memory/999999")
    assert code == 404, code
    code, _ = request("DELETE", "/api/v1/targets/memory/abc")
    assert code == 400, code
    code, _ = request("PUT", "/api/v1/targets/memory")
    assert code == 405, code
    code, _, _ = d.get("/debug/pprof/heap?pid=abc")
    assert code == 400, code
    # Targets are bounded: each is matched at every exec. The API says so when full.
    listed = json.loads(request("GET", "/api/v1/targets/memory")[1])
    added = []
    try:
        for i in range(64 - len(listed)):
            code, text = request("POST", "/api/v1/targets/memory", '{"exe": "nothing-%d"}' % i)
            assert code == 200, (i, code, text)
            added.append(json.loads(text)["id"])
        code, text = request("POST", "/api/v1/targets/memory", '{"exe": "one-too-many"}')
        assert code == 400 and "at most 64 memory targets" in text, (code, text)
    finally:
        for i in added:
            request("DELETE", "/api/v1/targets/memory/%d" % i)
    # A bad memory.targets entry: exit 2 naming the key, before anything is attached.
    for bad, why in (("cgroup:/nonexistent-autoprof", "is not a directory"),
                     ("cgroup:/proc", "no cgroup file system"), ("/usr/bin/x", "glob"),
                     (",".join("t%d" % i for i in range(64)), "at most 64 targets")):
        r = subprocess.run([os.path.join(BUILD, "autoprof"), "--memory.targets=mem_leak," + bad],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 2 and "memory.targets" in r.stderr and why in r.stderr, \
            (bad, r.returncode, r.stderr)


check("memory_heap_and_allocs", test_heap_and_allocs)
for name, obj in (("jemalloc", "libjemalloc.so.2"), ("mimalloc", "libmimalloc.so.2"),
                  ("jemalloc_static", "mem_leak"), ("tcmalloc_static", "mem_leak")):
    check("memory_allocator_" + name, test_other_allocator, name, obj)
check("memory_cxx_new", test_cxx_new)
check("memory_rust", test_rust)
check("memory_go", test_go)
check("memory_mmap", test_mmap)
check("memory_mmap_preload", test_mmap,
      {"LD_PRELOAD": SHIM, "AUTOPROF_MEMORY_SAMPLE_INTERVAL": "65536"}, "preload")
check("memory_cgroup", test_cgroup)
check("memory_preload", test_preload)
check("memory_preload_linked", test_preload, True)
check("memory_exit_leaves_nothing", test_exit_leaves_nothing)
check("memory_api_targets", test_api_targets)
check("memory_pid_target_is_one_process", test_pid_target_is_one_process)
check("memory_api_bad_input", test_api_bad_input)
d.stop()
sys.exit(exit_status())
