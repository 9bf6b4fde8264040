#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""GPU memory profiles end to end without a GPU: stand-ins of the CUDA runtime and driver
(tests/targets/gpu/, host memory for device memory, the real names and signatures), programs in
C and in Python (ctypes) that allocate known amounts from known functions through every API, and
the real daemon's gpuheap, gpuallocs and /metrics read back with go tool pprof -raw. Each
program prints what it did; the profiles must say exactly that."""

import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from aplib import BUILD, ROOT, TMP, Daemon, Skip, check, exit_status, pprof_tool  # noqa: E402

GPU = os.path.join(BUILD, "gputargets")
VALUES = ("gpu_alloc_objects", "gpu_alloc_space", "gpu_inuse_objects", "gpu_inuse_space")

# Every tensor recorded, so that PyTorch's level is exact too (gpu_pytorch_sampled samples).
d = Daemon("--profile.retention=2m", "--gpu.pytorch-sample-interval=1B")


def raw(data):
    """`go tool pprof -raw`: a list of (values dict, labels dict, function names leaf first)."""
    text = pprof_tool(data, "-raw")
    head, rest = text.split("Samples:\n", 1)
    samples_text, rest = rest.split("\nLocations\n", 1)
    locs_text = rest.split("\nMappings\n", 1)[0]
    locs, last = {}, None
    for line in locs_text.splitlines():
        m = re.match(r"^\s+(\d+): 0x[0-9a-f]+ M=\d+ (\S+)", line)
        if m:
            last = int(m.group(1))
            locs[last] = [m.group(2)]
        elif last is not None and line.strip():
            locs[last].append(line.split()[0])  # an inlined frame's line
    lines = samples_text.splitlines()
    types = [t.split("/")[0] for t in lines[0].replace("[dflt]", "").split()]
    out = []
    for line in lines[1:]:
        m = re.match(r"^\s+([\d\s]+):\s*([\d\s]*)$", line)
        if m:
            vals = dict(zip(types, map(int, m.group(1).split())))
            frames = [f for i in m.group(2).split() for f in locs[int(i)]]
            out.append([vals, {}, frames])
        elif out and line.strip():
            out[-1][1] = dict(re.findall(r"(\w+):\[([^\]]*)\]", line))
    return out


def by_function(samples, names):
    """Sums each sample's values under the first of names in its stack: {name: {(api, gpu):
    values}}, and the samples in none of them."""
    out, other = {}, []
    for vals, labels, frames in samples:
        fn = next((f for f in frames if f in names), None)
        if fn is None:
            other.append((vals, labels, frames))
            continue
        key = (labels.get("api", ""), labels.get("gpu", ""))
        acc = out.setdefault(fn, {}).setdefault(key, dict.fromkeys(VALUES, 0))
        for k in VALUES:
            acc[k] += vals.get(k, 0)
    return out, other


def expected(truth, fn):
    """The program's own account of fn: {(api, gpu): values}."""
    f = truth["functions"][fn]
    return {(api, f["gpu"]): {"gpu_alloc_objects": c["alloc_objects"],
                              "gpu_alloc_space": c["alloc_bytes"],
                              "gpu_inuse_objects": c["inuse_objects"],
                              "gpu_inuse_space": c["inuse_bytes"]}
            for api, c in f["apis"].items()}


def profile(path):
    code, _, body = d.get(path)
    assert code == 200, "%s: HTTP %d %r" % (path, code, body[:300])
    return body


def metric(name, labels=""):
    return d.metric(name, labels, default=0.0)


def wait_metric(name, at_least, labels="", timeout=10):
    deadline = time.time() + timeout
    while metric(name, labels) < at_least:
        assert time.time() < deadline, "%s{%s} stayed below %s" % (name, labels, at_least)
        time.sleep(0.05)


def compare(got, want, what):
    for fn, per in want.items():
        g = {k: {t: v[t] for t in VALUES if t.startswith(what)} for k, v in got.get(fn, {}).items()}
        w = {k: {t: v[t] for t in VALUES if t.startswith(what)} for k, v in per.items()}
        # A function whose allocations were all freed shows no live rows at all.
        g = {k: v for k, v in g.items() if any(v.values())}
        w = {k: v for k, v in w.items() if any(v.values())}
        assert g == w, "%s %s: profile %s, program %s" % (fn, what, g, w)


def settled(path, names, want, what=("gpu_inuse", "gpu_alloc")):
    """The profile at path by function once it says what the program did: events reach the
    store a drain (100 ms) after the calls, later on a loaded machine. Asserts after 10 s."""
    deadline = time.time() + 10
    while True:
        got, other = by_function(raw(profile(path)), names)
        try:
            for w in what:
                compare(got, want, w)
            return got, other
        except AssertionError:
            if time.time() > deadline:
                raise
            time.sleep(0.2)


class Program:
    """A target that prints its pid, waits for a line, works, prints its JSON truth."""

    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True)
        self.pid = int(self.p.stdout.readline())

    def say(self):
        self.p.stdin.write("go\n")
        self.p.stdin.flush()

    def line(self):
        return self.p.stdout.readline().strip()

    def end(self):
        self.say()
        assert self.p.wait(timeout=10) == 0


C = {}


def test_c_exact():
    """gpu_alloc.c through every API: live and allocated objects and bytes per function, API
    and device are exactly what it did; failed calls and the driver calls the runtime makes
    underneath add nothing."""
    failed0 = metric("autoprof_gpu_calls_total", 'outcome="failed"')
    prog = Program([os.path.join(GPU, "gpu_alloc")])
    C["prog"] = prog
    # Linked: both stand-ins are mapped at exec and probed from the maps read then.
    wait_metric("autoprof_gpu_libraries", 2)
    prog.say()
    truth = json.loads(prog.line())
    C["truth"] = truth
    names = set(truth["functions"])
    want = {fn: expected(truth, fn) for fn in names if fn != "failing"}
    heap, other = settled("/debug/pprof/gpuheap?pid=%d" % prog.pid, names, want)
    assert not other, "samples outside the program's functions: %s" % other[:3]
    assert "failing" not in heap, heap["failing"]
    allocs, _ = settled("/debug/pprof/gpuallocs?seconds=30&pid=%d" % prog.pid, names, want,
                        ("gpu_alloc",))
    for per in allocs.values():
        for v in per.values():
            assert not v["gpu_inuse_objects"] and not v["gpu_inuse_space"], allocs
    # Two calls failed (a runtime one, whose driver call failed inside it, and a driver one).
    assert metric("autoprof_gpu_calls_total", 'outcome="failed"') - failed0 == 2
    assert metric("autoprof_gpu_calls_total", 'outcome="nested"') > 0
    print("   %d functions, %d allocations, %d bytes live: exact" % (
        len(want), sum(f["alloc_objects"] for f in truth["functions"].values()),
        sum(f["inuse_bytes"] for f in truth["functions"].values())))


def test_c_metrics():
    """autoprof_gpu_memory_inuse_bytes{pid,exe,gpu} per device, "" for the thread that chose
    none; the folded gpuheap is live bytes by stack."""
    prog, truth = C["prog"], C["truth"]
    per_gpu = {}
    for f in truth["functions"].values():
        per_gpu[f["gpu"]] = per_gpu.get(f["gpu"], 0) + f["inuse_bytes"]
    for gpu, n in per_gpu.items():
        if not n:
            continue
        got = metric("autoprof_gpu_memory_inuse_bytes",
                     'pid="%d",exe="gpu_alloc",gpu="%s"' % (prog.pid, gpu))
        assert got == n, "gpu %r: metric %s, program %d" % (gpu, got, n)
    code, _, folded = d.get("/debug/pprof/gpuheap?pid=%d&format=folded" % prog.pid)
    assert code == 200
    lines = folded.decode().split("\n")
    total = sum(int(l.rsplit(" ", 1)[1]) for l in lines if l)
    assert total == sum(per_gpu.values()), (total, per_gpu)
    assert any(";main;rt_keep " in l for l in lines), lines[:5]


def test_c_exit():
    """Process exit drops its live set (gpuheap, the metric); its allocations stay in
    gpuallocs."""
    prog, truth = C["prog"], C["truth"]
    prog.end()
    deadline = time.time() + 5
    while True:
        samples = raw(profile("/debug/pprof/gpuheap?pid=%d" % prog.pid))
        live = sum(v.get("gpu_inuse_space", 0) for v, _, _ in samples)
        if not live:
            break
        assert time.time() < deadline, "%d bytes still live after exit" % live
        time.sleep(0.1)
    assert metric("autoprof_gpu_memory_inuse_bytes", 'pid="%d"' % prog.pid) == 0
    allocs = raw(profile("/debug/pprof/gpuallocs?seconds=60&pid=%d" % prog.pid))
    assert sum(v["gpu_alloc_objects"] for v, _, _ in allocs) == \
        sum(f["alloc_objects"] for f in truth["functions"].values())


def test_python_dlopen():
    """A Python program loads its CUDA (copies: files never probed before) with ctypes after it
    started: the dlopen has them probed, and the live profile names the Python functions."""
    libdir = os.path.join(TMP, "gpu_pylib")
    shutil.rmtree(libdir, ignore_errors=True)
    shutil.copytree(os.path.join(GPU, "lib"), libdir)
    libs0 = metric("autoprof_gpu_libraries")
    prog = Program(["python3", os.path.join(ROOT, "tests", "targets", "gpu", "gpu_alloc.py"),
                    libdir])
    time.sleep(0.3)
    assert metric("autoprof_gpu_libraries") == libs0, "probed before it was loaded"
    prog.say()
    assert prog.line() == "loaded"
    wait_metric("autoprof_gpu_libraries", libs0 + 1)
    prog.say()
    truth = json.loads(prog.line())
    names = set(truth["functions"])
    want = {fn: expected(truth, fn) for fn in names}
    heap, _ = settled("/debug/pprof/gpuheap?pid=%d" % prog.pid, names, want)
    # The driver copy came with cudaSetDevice, after the wait: probed at its dlopen too.
    wait_metric("autoprof_gpu_libraries", libs0 + 2)
    prog.end()


def test_pytorch_usdt():
    """PyTorch's caching allocator (a stand-in with its pytorch:malloc/free USDT probes, loaded
    with ctypes after start): tensors as api="pytorch" under the Python functions that made
    them, beside the segments (api="runtime") those calls made it take; both exact."""
    libdir = os.path.join(TMP, "gpu_torchlib")
    shutil.rmtree(libdir, ignore_errors=True)
    shutil.copytree(os.path.join(GPU, "lib"), libdir)
    libs0 = metric("autoprof_gpu_libraries")
    prog = Program(["python3", os.path.join(ROOT, "tests", "targets", "gpu", "torch_alloc.py"),
                    libdir])
    prog.say()
    assert prog.line() == "loaded"
    # libc10_cuda.so and the runtime it links; the driver comes at the first call.
    wait_metric("autoprof_gpu_libraries", libs0 + 2)
    prog.say()
    truth = json.loads(prog.line())
    names = set(truth["functions"])
    want = {fn: expected(truth, fn) for fn in names}
    heap, _ = settled("/debug/pprof/gpuheap?pid=%d" % prog.pid, names, want)
    per_api = {}
    for per in heap.values():
        for (api, _), v in per.items():
            per_api[api] = per_api.get(api, 0) + v["gpu_inuse_space"]
    assert per_api == {"pytorch": truth["allocated"], "runtime": truth["reserved"]}, \
        (per_api, truth["allocated"], truth["reserved"])
    print("   tensors %d bytes live (memory_allocated), segments %d (memory_reserved): exact" % (
        truth["allocated"], truth["reserved"]))
    prog.end()


def test_pytorch_sampled():
    """At the default sampling of tensors (512 KiB between samples, per thread), 2,000 tensors
    of 64 KiB kept are estimated within 25 % from the ~250 sampled, scaled as heap samples
    are; the segments under them stay exact."""
    libdir = os.path.join(TMP, "gpu_torchlib_sampled")
    shutil.rmtree(libdir, ignore_errors=True)
    shutil.copytree(os.path.join(GPU, "lib"), libdir)
    sampled = Daemon("--profile.retention=2m")
    code = ("import ctypes, os, sys\n"
            "lib = ctypes.CDLL(os.path.join(%r, 'libc10_cuda.so'))\n"
            "alloc = lib.c10_alloc\n"
            "alloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t, ctypes.c_int]\n"
            "lib.c10_reserved.restype = lib.c10_allocated.restype = ctypes.c_size_t\n"
            "print(os.getpid(), flush=True); sys.stdin.readline()\n"
            "def many_tensors():\n"
            "    p = ctypes.c_void_p()\n"
            "    for _ in range(2000):\n"
            "        assert alloc(ctypes.byref(p), 64 << 10, 0) == 0\n"
            "many_tensors()\n"
            "print(lib.c10_allocated(), lib.c10_reserved(), flush=True)\n"
            "sys.stdin.readline()\n" % libdir)
    prog = subprocess.Popen(["python3", "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    try:
        pid = int(prog.stdout.readline())
        deadline = time.time() + 10
        while (sampled.metric("autoprof_gpu_libraries") or 0) < 2:
            assert time.time() < deadline, "the copies were not probed"
            time.sleep(0.1)
        prog.stdin.write("\n")
        prog.stdin.flush()
        allocated, reserved = map(int, prog.stdout.readline().split())
        deadline = time.time() + 10
        while True:
            code_, _, body = sampled.get("/debug/pprof/gpuheap?pid=%d" % pid)
            assert code_ == 200
            per_api = {}
            for vals, labels, _ in raw(body):
                api = labels.get("api", "")
                per_api[api] = per_api.get(api, 0) + vals.get("gpu_inuse_space", 0)
            if per_api.get("runtime") == reserved or time.time() > deadline:
                break
            time.sleep(0.2)
        assert per_api.get("runtime") == reserved, (per_api, reserved)
        est = per_api.get("pytorch", 0)
        assert abs(est - allocated) <= 0.25 * allocated, (est, allocated)
        made = sampled.metric("autoprof_gpu_pytorch_tensors_total", 'state="made"')
        print("   %d tensors, %d bytes kept: estimated %d (%+.1f %%); segments %d exact" % (
            made, allocated, est, 100.0 * (est - allocated) / allocated, reserved))
    finally:
        prog.kill()
        prog.wait()
        sampled.stop()


REAL_CUDART = "/usr/local/cuda/lib64/libcudart.so"


def test_real_runtime():
    """The real CUDA runtime where the machine has one (no GPU: every call fails): its functions
    are found and probed by name, and a cudaMalloc that returns an error records nothing."""
    if not os.path.exists(REAL_CUDART):
        raise Skip("no CUDA toolkit at %s" % REAL_CUDART)
    libs0 = metric("autoprof_gpu_libraries")
    failed0 = metric("autoprof_gpu_calls_total", 'outcome="failed"')
    code = ("import ctypes, sys, time\n"
            "rt = ctypes.CDLL(%r)\n"
            "malloc = rt.cudaMalloc\n"
            "print(1, flush=True); sys.stdin.readline()\n"
            "p = ctypes.c_void_p()\n"
            "print(malloc(ctypes.byref(p), 1 << 20), flush=True)\n"
            "sys.stdin.readline()\n" % REAL_CUDART)
    prog = subprocess.Popen(["python3", "-c", code], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert prog.stdout.readline().strip() == "1"
        wait_metric("autoprof_gpu_libraries", libs0 + 1)
        prog.stdin.write("\n")
        prog.stdin.flush()
        rc = int(prog.stdout.readline())
        assert rc != 0, "cudaMalloc succeeded without a GPU?"
        wait_metric("autoprof_gpu_calls_total", failed0 + 1, 'outcome="failed"')
        samples = raw(profile("/debug/pprof/gpuheap?pid=%d" % prog.pid))
        assert not samples, samples[:3]
        print("   %s: probed, cudaMalloc returned %d, nothing recorded" % (
            os.path.realpath(REAL_CUDART), rc))
    finally:
        prog.kill()
        prog.wait()


def test_not_cuda():
    """A library named like the runtime without its functions is counted and left alone."""
    fake = os.path.join(TMP, "libcudart.so.99")
    src = os.path.join(TMP, "notcuda.c")
    with open(src, "w") as f:
        f.write("int cudaMallocLater(void) { return 0; }\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-Wl,--build-id", src, "-o", fake], check=True)
    failed0 = metric("autoprof_gpu_attach_failures_total")
    libs0 = metric("autoprof_gpu_libraries")
    # Loaded, then reached (ctypes looks the function up with dlsym): what has its maps read.
    r = subprocess.run(["python3", "-c", "import ctypes, time; ctypes.CDLL(%r).cudaMallocLater; "
                        "time.sleep(1)" % fake], timeout=30)
    assert r.returncode == 0
    wait_metric("autoprof_gpu_attach_failures_total", failed0 + 1)
    assert metric("autoprof_gpu_libraries") == libs0
    code, _, _ = d.get("/-/healthy")
    assert code == 200


def test_dlsym_storm():
    """A process that changes its mappings and calls dlsym in a loop (20,000 times in ~1 s) has
    its maps read a few times a 50 ms gate, not at its pace."""
    code = ("import ctypes, mmap, time\n"
            "libc = ctypes.CDLL(None)\n"
            "dlsym = libc.dlsym\n"
            "dlsym.restype, dlsym.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_char_p]\n"
            "keep = []\n"
            "t = time.time()\n"
            "for i in range(20000):\n"
            "    prot = mmap.PROT_READ | (mmap.PROT_WRITE if i % 2 else 0)\n"
            "    keep.append(mmap.mmap(-1, 4096, prot=prot))  # a mapping of its own\n"
            "    dlsym(None, b'cudaMalloc')  # a watched name: NULL, yet reported\n"
            "print(time.time() - t, flush=True)\n")
    reads0 = metric("autoprof_maps_rereads_dlopen_total")
    r = subprocess.run(["python3", "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    took = float(r.stdout)
    time.sleep(0.3)
    reads = metric("autoprof_maps_rereads_dlopen_total") - reads0
    # One report a gate (and its two re-reads counted apart), plus the start-up's.
    bound = took / 0.05 + 10
    assert reads <= bound, "%d reports in %.2f s (at most %d)" % (reads, took, bound)
    print("   20000 dlsym calls with new mappings in %.2f s: %d reports" % (took, reads))


def test_profile_list():
    """The profile picker lists both types, collected."""
    code, _, body = d.get("/api/v1/profiles")
    assert code == 200
    got = {p["name"]: p for p in json.loads(body)["profiles"]}
    assert got["gpuheap"]["available"] and got["gpuallocs"]["available"], got
    assert got["gpuheap"]["path"] == "/debug/pprof/gpuheap"
    assert got["gpuheap"]["value_type"] == "gpu_inuse_space"
    assert got["gpuallocs"]["value_type"] == "gpu_alloc_space"
    assert not got["gpuheap"]["windowed"] and got["gpuallocs"]["windowed"]


def test_disabled():
    """--gpu.enabled=false: no probes, and the endpoints say why."""
    off = Daemon("--gpu.enabled=false")
    try:
        for path in ("/debug/pprof/gpuheap", "/debug/pprof/gpuallocs?seconds=5"):
            code, _, body = off.get(path)
            assert code == 503 and b"gpu.enabled" in body, (path, code, body)
        assert off.metric("autoprof_gpu_libraries", "", default=None) is None
    finally:
        off.stop()


for name, fn in (("gpu_c_exact", test_c_exact), ("gpu_c_metrics", test_c_metrics),
                 ("gpu_c_exit", test_c_exit), ("gpu_python_dlopen", test_python_dlopen),
                 ("gpu_pytorch_usdt", test_pytorch_usdt),
                 ("gpu_pytorch_sampled", test_pytorch_sampled),
                 ("gpu_real_runtime_failed_call", test_real_runtime),
                 ("gpu_not_cuda_counted", test_not_cuda), ("gpu_dlsym_storm_bounded", test_dlsym_storm),
                 ("gpu_profile_list", test_profile_list),
                 ("gpu_disabled", test_disabled)):
    if fn in (test_c_metrics, test_c_exit) and "truth" not in C:
        continue
    check(name, fn)
if "prog" in C and C["prog"].p.poll() is None:
    C["prog"].p.kill()
rc, _ = d.stop()
if rc:
    print("FAIL daemon_exit: exit %d" % rc)
    sys.exit(1)
sys.exit(exit_status())
