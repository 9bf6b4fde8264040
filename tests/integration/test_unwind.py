#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Table unwinding (.eh_frame rules walked in BPF) end to end: programs built without frame
pointers (C, C++ with exceptions, Rust, glibc's syscall wrappers, a GCC leaf), through a signal
frame, into a dlopen()ed library and deeper than a sample holds. Each served stack is compared
with the chain gdb reads from the same binary (`bt` at a breakpoint in the hot leaf), not with
names written down here: the test checks the profiler against an independent unwinder. The
targets are built by tests/targets/unwind/unwind.mk into $(BUILD)/uwtargets/.

All targets run at once against one daemon; each is queried for a window that starts after it
warmed up (uw_dlopen has loaded its library by then). A daemon in --unwind.mode=fp then shows
what frame pointers alone lose on the same binaries."""

import concurrent.futures
import math
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from aplib import (BUILD, check, checked, Daemon, exit_status, metric_values,  # noqa: E402
                   pprof_tool, Skip)

UW = os.path.join(BUILD, "uwtargets")
SEP = "-----------+-------------------------------------------------------"
# Seconds each target runs before its window opens: start-up, the loader, uw_dlopen's 1 s sleep
# and dlopen, and the daemon reading the new mappings (at most once a second).
WARM = 2.5
# Threads that want a CPU in the main run (uw_deep has two, uw_branch three), and as many again as the load
# average says other work on the machine wants. The window is long enough that each target
# thread gets ~400 samples at 99 Hz (a 99 % bound means little on fewer), up to a limit that
# keeps the whole test near a minute.
BUSY = 12
NCPU = os.cpu_count() or 1
LOAD = os.getloadavg()[0]
WINDOW = max(4, min(30, math.ceil(4.0 * (BUSY + LOAD) / NCPU)))
FP_WINDOW = max(4, min(10, math.ceil(4.0 * (2 + LOAD) / NCPU)))

# The chains the targets are written to have, leaf first down to the C main. The tests compare
# with gdb's chain; these only check that gdb agrees with the sources (test_gdb_chains).
DESIGN = {
    "uw_c": ["uw_leaf", "uw_level2", "uw_level1", "main"],
    "uw_cxx": ["cx_leaf", "cx_middle", "cx_outer", "main"],
    # The Rust runtime's frames between uw_rust::main and main are whatever std is.
    "uw_rust": ["uw_rust::rs_leaf", "uw_rust::rs_b", "uw_rust::rs_a", "uw_rust::main"],
    "uw_fpleaf": ["fp_hot_a", "fp_dispatch", "main"],
    "uw_signal": ["sig_hot", "sig_handler", "__restore_rt", "sig_victim", "main"],
    "uw_dlopen": ["dl_leaf", "dl_entry", "dl_caller", "main"],
}
# Where gdb stops to read each chain, and the share of leaf samples that must match it.
LEAF = {"uw_c": "uw_leaf", "uw_cxx": "cx_leaf", "uw_rust": "uw_rust::rs_leaf",
        "uw_fpleaf": "fp_hot_a", "uw_signal": "sig_hot", "uw_dlopen": "dl_leaf"}
SHARE = {"uw_c": 0.99, "uw_cxx": 0.99, "uw_rust": 0.99, "uw_fpleaf": 0.99, "uw_dlopen": 0.95,
         "uw_signal": 0.95}
# glibc's main-thread start under main, as gdb names it after normalization.
START = ["__libc_start_call_main", "__libc_start_main", "_start"]
MIN_SAMPLES = 40


# ---- names -------------------------------------------------------------------------------

def strip_brackets(s, open_, close):
    """Removes every balanced OPEN...CLOSE group of s (a "->" inside is no bracket)."""
    out, depth = [], 0
    for i, ch in enumerate(s):
        if ch == open_:
            depth += 1
        elif ch == close and depth and not (close == ">" and i and s[i - 1] == "-"):
            depth -= 1
        elif not depth:
            out.append(ch)
    return "".join(out)


def norm(name):
    """One spelling for a function as gdb, the daemon's symbolizer and a demangler may write
    it: no C++ parameter list, no generic arguments, no symbol version, one closure notation,
    glibc's __libc_start_main under any of its names, gdb's signal frame as its symbol."""
    if name == "<signal handler called>":
        return "__restore_rt"
    name = name.strip()
    if "@" in name and not name.startswith("<"):
        name = name.split("@")[0]
    name = re.sub(r"\{\{closure\}\}|\{closure#\d+\}", "{closure}", name)
    if name.endswith(")") and not name.startswith("<"):
        name = strip_brackets(name, "(", ")")
    if not name.startswith("<"):
        name = strip_brackets(name, "<", ">").replace("::::", "::").rstrip(":")
    if name.startswith("__libc_start_main"):
        return "__libc_start_main"
    return name


# ---- gdb: the independent chain ----------------------------------------------------------

def gdb_name(text):
    """The function of a gdb `bt` line's text after "#N  [0x... in ]": up to the " (" that
    opens the arguments, outside any <...> or (...) of the name itself."""
    if text.startswith("<signal handler called>"):
        return "<signal handler called>"
    depth = 0
    for i, ch in enumerate(text):
        if ch in "<(":
            if ch == "(" and depth == 0 and i and text[i - 1] == " ":
                return text[:i - 1]
            depth += 1
        elif ch in ">)" and depth and not (ch == ">" and text[i - 1] == "-"):
            depth -= 1
    return text.split(" at ")[0].strip()


def gdb_chain(binary, leaf, *args):
    """gdb's backtrace at the first stop in LEAF, past main, as physical frames (an inlined
    function's frames are folded into the function they are inlined in, as a sampled return
    address is), leaf first, names normalized. gdb prints "0x... in" on the innermost frame
    of each physical frame and nothing on the callers inlined around it."""
    cmd = ["gdb", "-nx", "-batch", "-ex", "set pagination off", "-ex", "set confirm off",
           "-ex", "set breakpoint pending on", "-ex", "set backtrace past-main on",
           "-ex", "set backtrace limit 400", "-ex", "handle SIGPROF nostop noprint pass",
           "-ex", "handle SIGALRM nostop noprint pass", "-ex", "break " + leaf, "-ex", "run",
           "-ex", "bt", "-ex", "kill", "--args", binary, *map(str, args)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                         stdin=subprocess.DEVNULL).stdout
    groups = []
    for line in out.splitlines():
        m = re.match(r"^#(\d+)\s+(0x[0-9a-f]+ in )?(.*)$", line)
        if not m:
            continue
        name = gdb_name(m.group(3))
        if m.group(1) == "0" or m.group(2) or name.startswith("<signal") or \
                (groups and groups[-1][-1].startswith("<signal")):
            groups.append([name])
        else:
            groups[-1].append(name)
    chain = [norm(g[-1]) for g in groups]
    if not chain or chain[0] != norm(leaf):
        raise AssertionError("gdb did not stop in %s:\n%s" % (leaf, out[-3000:]))
    return chain


def cut_at_main(chain):
    """The part of a chain from its leaf down to the outermost "main" (the C main: Rust's
    uw_rust::main is not it), and the rest."""
    i = len(chain) - 1 - chain[::-1].index("main")
    return chain[:i + 1], chain[i + 1:]


# ---- served profiles ---------------------------------------------------------------------

def physical_traces(data):
    """`go tool pprof -traces`: a list of (count, labels, frames leaf first), keeping only
    physical frames: a frame marked (inline) belongs to the next unmarked one."""
    out = []
    for block in pprof_tool(data, "-traces", "-sample_index=samples").split(SEP)[1:]:
        labels, frames, count = {}, [], None
        for line in block.splitlines():
            if not line.strip():
                continue
            m = re.match(r"^\s*(\w+):\s+(.*)$", line)
            if m and count is None:
                labels[m.group(1)] = m.group(2).strip()
                continue
            m = re.match(r"^\s+(\d+)\s+(\S.*)$", line)
            if m and count is None:
                count, text = int(m.group(1)), m.group(2).strip()
            else:
                text = line.strip()
            if not text.endswith(" (inline)"):
                frames.append(text)
        if count is not None:
            out.append((count, labels, frames))
    return out


def kernel_names():
    """The kernel's function names: what a sample may show above its leaf-most user frame."""
    names = set()
    with open("/proc/kallsyms") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[1] in "tTwW":
                names.add(parts[2])
    return names


KERNEL = kernel_names()


def from_leaf(frames, leaf):
    """The normalized frames from LEAF on, if LEAF is the sample's leaf-most user frame (only
    kernel functions above it); else None (a sample in the vDSO or a libc call of the leaf)."""
    names = [norm(f) for f in frames]
    if leaf not in names:
        return None
    i = names.index(leaf)
    if any(f not in KERNEL for f in frames[:i]):
        return None
    return names[i:]


def leaf_chains(data, leaf):
    """(count, from_leaf chain) of each sample of a profile whose leaf-most user frame is
    LEAF."""
    for count, _, frames in physical_traces(data):
        got = from_leaf(frames, leaf)
        if got is not None:
            yield count, got


def detail(msg):
    print("   detail %s" % msg, flush=True)


def common(stacks, n=3):
    """The most common stacks, for a failure message."""
    return [(c, fr[:12]) for c, fr in sorted(stacks, key=lambda x: -x[0])[:n]]


# ---- the run -----------------------------------------------------------------------------

class Target:
    def __init__(self, name, seconds):
        self.name = name
        self.path = os.path.join(UW, name)
        self.proc = subprocess.Popen([self.path, str(seconds)], stdout=subprocess.PIPE,
                                     text=True)
        self.pid = int(self.proc.stdout.readline())
        self.body = None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait(timeout=10)
        self.proc.stdout.close()


def fetch(d, targets, window):
    for t in targets:
        code, _, body = d.get("/debug/pprof/profile?seconds=%d&pid=%d" % (window, t.pid))
        assert code == 200, "%s: HTTP %d: %r" % (t.name, code, body[:300])
        t.body = body


def run_gdb_all():
    """gdb's chain of every target with a hot leaf, or the reason there is none."""
    if not shutil.which("gdb"):
        return {n: Skip("gdb not found: no independent chain") for n in LEAF}

    def one(name):
        path = os.path.join(UW, name)
        if not os.path.exists(path):
            return Skip("%s not built" % name)
        try:
            # Long enough to reach the leaf (uw_dlopen sleeps 1 s first), short if it never does.
            return gdb_chain(path, LEAF[name], 3)
        except Exception as e:  # reported by the check that needs it
            return e
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        return dict(zip(LEAF, ex.map(one, LEAF)))


MAIN = {}   # name -> Target, in the default (table) mode
FP = {}     # name -> Target, in --unwind.mode=fp
GDB = {}    # name -> gdb chain or the exception that stands for it
STATE = {}


def main_run():
    """Every target at once against one daemon in its default mode; gdb reads the chains while
    they warm up and fill their window."""
    d = Daemon("--profile.retention=2m")
    STATE["daemon"] = d
    names = ["uw_c", "uw_cxx", "uw_fpleaf", "uw_sleep", "uw_signal", "uw_dlopen", "uw_deep",
             "uw_branch"]
    if os.path.exists(os.path.join(UW, "uw_rust")):
        names.append("uw_rust")
    try:
        for n in names:
            MAIN[n] = Target(n, WARM + WINDOW + 20)
        t0 = time.time()
        GDB.update(run_gdb_all())
        # The ingest loop drains the ring every 100 ms: 0.5 s more and the window is full.
        time.sleep(max(0, t0 + WARM + WINDOW + 0.5 - time.time()))
        fetch(d, MAIN.values(), WINDOW)
        STATE["metrics"] = d.get("/metrics")[2].decode()
    finally:
        for t in MAIN.values():
            t.stop()


def fp_run():
    """uw_c and uw_fpleaf against a daemon walking frame pointers only. A daemon from before
    table unwinding rejects --unwind.mode: it is that baseline itself, and so it is used
    as it is."""
    metrics = STATE.get("metrics", "")
    try:
        d = Daemon("--profile.retention=2m", "--unwind.mode=fp")
        STATE["fp_flag"] = True
    except RuntimeError as e:
        if "autoprof_unwind_stacks_total" in metrics or "unknown flag" not in str(e):
            raise
        d = Daemon("--profile.retention=2m")
        STATE["fp_flag"] = False
    try:
        for n in ("uw_c", "uw_fpleaf"):
            FP[n] = Target(n, WARM + FP_WINDOW + 20)
        time.sleep(WARM + FP_WINDOW + 0.5)
        fetch(d, FP.values(), FP_WINDOW)
    finally:
        for t in FP.values():
            t.stop()
        rc, _ = d.stop()
        assert rc == 0, "the fp-mode daemon exited with %d" % rc


# ---- checks ------------------------------------------------------------------------------

def need(name):
    if name not in MAIN:
        raise Skip("%s not built" % name)
    return MAIN[name]


def expected(name):
    g = GDB.get(name)
    if isinstance(g, Exception):
        raise g
    return g


def test_gdb_chains():
    """gdb reads each target's chain as its source means it (and through _start): the targets
    really have the frames the other checks look for."""
    bad = []
    for name, want in DESIGN.items():
        g = GDB.get(name)
        if isinstance(g, Skip):
            if "gdb not found" in str(g):
                raise g
            continue
        if isinstance(g, Exception):
            bad.append("%s: %s" % (name, g))
            continue
        to_main, rest = cut_at_main(g)
        detail("gdb %s: %s" % (name, " → ".join(g)))
        # uw_rust: its own frames, then std's runtime down to the C main.
        mine = to_main[:len(want)] if name == "uw_rust" else to_main
        if mine != want or rest != START:
            bad.append("%s: gdb reads %s, the source means %s ... main then %s" % (
                name, g, want, START))
    assert not bad, "; ".join(bad)


def leaf_chain_case(name):
    """The share of NAME's samples whose leaf-most user frame is its hot leaf that carry gdb's
    chain exactly, down to _start."""
    t = need(name)
    want = expected(name)
    leaf = want[0]
    total = match = 0
    bad = []
    for count, got in leaf_chains(t.body, leaf):
        total += count
        if got == want:
            match += count
        else:
            bad.append((count, got))
    share = match / total if total else 0.0
    detail("%s: %d of %d %s samples (%.2f %%) read %s; %s s window" % (
        name, match, total, leaf, 100 * share, " → ".join(want), WINDOW))
    for c, fr in common(bad):
        detail("%s: %d samples read %s" % (name, c, " → ".join(fr)))
    assert total >= MIN_SAMPLES, "%s: only %d samples in %s" % (name, total, leaf)
    assert share >= SHARE[name], "%s: %d of %d samples (%.2f %%) have the chain gdb reads, " \
        "want %.0f %%" % (name, match, total, 100 * share, 100 * SHARE[name])


def test_c():
    leaf_chain_case("uw_c")


def test_cxx():
    leaf_chain_case("uw_cxx")


def test_rust():
    if "uw_rust" not in MAIN:
        raise Skip("rustc not found: uw_rust not built")
    leaf_chain_case("uw_rust")


def test_fpleaf():
    leaf_chain_case("uw_fpleaf")


def test_dlopen():
    leaf_chain_case("uw_dlopen")


def test_signal():
    """Through the signal frame: sig_hot → sig_handler → __restore_rt → sig_victim → main, as
    gdb reads it (its "<signal handler called>" is __restore_rt)."""
    leaf_chain_case("uw_signal")


def test_sleep():
    """In the kernel's nanosleep, then glibc's wrappers (no frame pointers), then the program:
    kernel frames → *clock_nanosleep* → *nanosleep* → sl_waiter → main → glibc's start."""
    t = need("uw_sleep")
    total = match = kern = kern_match = 0
    bad = []
    for count, _, frames in physical_traces(t.body):
        names = [norm(f) for f in frames]
        cn = [i for i, f in enumerate(names) if "clock_nanosleep" in f]
        if not cn:
            continue
        # The kernel's __x64_sys_clock_nanosleep comes first: glibc's is the outermost.
        i = cn[-1]
        if any(f not in KERNEL for f in frames[:i]):
            continue  # not a sample in glibc's clock_nanosleep or the kernel under it
        total += count
        in_kernel = any(re.search(r"do_nanosleep|hrtimer_nanosleep|sys_clock_nanosleep|"
                                  r"entry_SYSCALL", f) for f in names[:i])
        kern += count if in_kernel else 0
        rest = names[i + 1:]
        ok = len(rest) >= 3 and "nanosleep" in rest[0] and "clock_nanosleep" not in rest[0] \
            and rest[1:] == ["sl_waiter", "main"] + START
        match += count if ok else 0
        kern_match += count if ok and in_kernel else 0
        if not ok:
            bad.append((count, names[i:]))
    share = match / total if total else 0.0
    detail("uw_sleep: %d of %d samples with clock_nanosleep (%.2f %%) read clock_nanosleep → "
           "nanosleep → sl_waiter → main → %s; %d of %d from the kernel" % (
               match, total, 100 * share, " → ".join(START), kern_match, kern))
    for c, fr in common(bad):
        detail("uw_sleep: %d samples read %s" % (c, " → ".join(fr)))
    assert total >= MIN_SAMPLES, "only %d samples in clock_nanosleep" % total
    assert kern >= 0.3 * total, "only %d of %d samples in the kernel: the target does not " \
        "burn CPU in nanosleep" % (kern, total)
    assert share >= 0.95, "%d of %d samples (%.2f %%) have the chain" % (match, total,
                                                                          100 * share)
    assert kern_match >= 0.95 * kern, "%d of %d kernel samples continue into the chain" % (
        kern_match, kern)


def test_deep():
    """Depth 300 (main thread): >= 100 deep_rec under deep_leaf, ending in [truncated]. Depth
    60 (the other thread): complete, deep_leaf → 61 deep_rec → thread60 → start_thread → the
    thread's clone."""
    t = need("uw_deep")
    deep = [0, 0]
    shallow = [0, 0]
    bad_deep, bad_shallow = [], []
    for count, labels, frames in physical_traces(t.body):
        got = from_leaf(frames, "deep_leaf")
        if got is None:
            continue
        if labels.get("tid") == str(t.pid):
            ok = len(got) >= 101 and got[1:101] == ["deep_rec"] * 100 and \
                got[-1] == "[truncated]"
            deep[0] += count
            deep[1] += count if ok else 0
            if not ok:
                bad_deep.append((count, got if len(got) <= 8 else got[:3] + ["..."] + got[-4:]))
        else:
            recs = got.count("deep_rec")
            ok = "[truncated]" not in got and got[1:62] == ["deep_rec"] * 61 and recs == 61 \
                and got[62:64] == ["thread60", "start_thread"] and \
                got[-1].lstrip("_") in ("clone3", "clone")
            shallow[0] += count
            shallow[1] += count if ok else 0
            if not ok:
                bad_shallow.append((count, got if len(got) <= 8 else
                                    got[:2] + ["... %d deep_rec ..." % recs] + got[-5:]))
    detail("uw_deep depth 300: %d of %d samples end in [truncated] after >= 100 deep_rec" %
           (deep[1], deep[0]))
    detail("uw_deep depth 60: %d of %d samples complete (61 deep_rec → thread60 → start_thread"
           " → clone3)" % (shallow[1], shallow[0]))
    for c, fr in common(bad_deep) + common(bad_shallow):
        detail("uw_deep: %d samples read %s" % (c, " → ".join(fr)))
    assert deep[0] >= MIN_SAMPLES and shallow[0] >= MIN_SAMPLES, \
        "too few samples: %d deep, %d shallow" % (deep[0], shallow[0])
    assert deep[1] >= 0.95 * deep[0], "depth 300: %d of %d samples as wanted" % tuple(deep[::-1])
    assert shallow[1] >= 0.95 * shallow[0], "depth 60: %d of %d samples complete" % \
        tuple(shallow[::-1])


# uw_branch: each thread's true chain below br_leaf (its name says which), to the thread start.
BRANCH = {
    "br_a": ["br_leaf", "br_mid", "br_a", "br_run", "start_thread"],
    "br_b": ["br_leaf", "br_mid", "br_b", "br_run", "start_thread"],
    "br_c": ["br_leaf", "br_mid", "br_a", "br_c", "br_run", "start_thread"],
}


def possible_cpus():
    """The kernel's possible CPUs (what per-CPU BPF maps are sized by): "0-3,8"."""
    n = 0
    with open("/sys/devices/system/cpu/possible") as f:
        for part in f.read().strip().split(","):
            lo, _, hi = part.partition("-")
            n += int(hi or lo) - int(lo) + 1
    return n


def metric_sum(text, name):
    return sum(metric_values(text, name))


def test_walk_cache():
    """Three threads reach br_leaf through the same return address in br_mid from different
    stacks, so the walk cache's entry for it (one stack at a time) keeps being left at br_mid's
    caller or at br_a's: >= 99 % of each thread's br_leaf samples carry that thread's own
    chain, down to start_thread and clone3, and the cache did serve frames."""
    t = need("uw_branch")
    bad = []
    per = {name: [0, 0] for name in BRANCH}
    for count, labels, frames in physical_traces(t.body):
        name = labels.get("comm", "").strip("[]")  # the thread's name
        want = BRANCH.get(name)
        got = from_leaf(frames, "br_leaf")
        if got is None or want is None:
            continue
        ok = got[:len(want)] == want and len(got) == len(want) + 1 and \
            got[-1].lstrip("_") in ("clone3", "clone")
        per[name][0] += count
        per[name][1] += count if ok else 0
        if not ok:
            bad.append((count, [name + ":"] + got))
    for name, (total, match) in per.items():
        detail("uw_branch %s: %d of %d br_leaf samples read %s → clone3" % (
            name, match, total, " → ".join(BRANCH[name])))
    for c, fr in common(bad):
        detail("uw_branch: %d samples read %s" % (c, " → ".join(fr)))
    text = STATE.get("metrics", "")
    cached = metric_sum(text, "autoprof_unwind_frames_cached_total")
    frames = metric_sum(text, "autoprof_unwind_frames_total")
    cache_bytes = metric_sum(text, "autoprof_unwind_cache_bytes")
    detail("frames from the walk cache: %d of %d; caches %d bytes" % (cached, frames, cache_bytes))
    for name, (total, match) in per.items():
        assert total >= MIN_SAMPLES, "%s: only %d br_leaf samples" % (name, total)
        assert match >= 0.99 * total, "%s: %d of %d samples have its chain" % (
            name, match, total)
    # The targets repeat their stacks: most frames above the leaves come from the cache.
    assert cached >= 0.1 * frames > 0, "%d of %d frames from the walk cache" % (cached, frames)
    # The on-CPU sampler's cache alone: 128 entries of 400 bytes for each possible CPU.
    want = 128 * 400 * possible_cpus()
    assert cache_bytes == want, "autoprof_unwind_cache_bytes %d, want %d" % (cache_bytes, want)


def test_metric():
    """The walk's outcomes are counted: autoprof_unwind_stacks_total, with a result label."""
    text = STATE.get("metrics", "")
    lines = [l for l in text.splitlines() if l.startswith("autoprof_unwind_stacks_total{")]
    detail("unwind metrics: %s" % (lines or "none"))
    # What the tables held, for diagnosing a failed chain (an eviction falls back to frame
    # pointers for the evicted files).
    detail("tables: %s" % [l for l in text.splitlines() if l.startswith((
        "autoprof_unwind_table_bytes", "autoprof_unwind_table_evictions_total",
        "autoprof_unwind_files", "autoprof_unwind_tables_too_big_total"))])
    assert lines, "no autoprof_unwind_stacks_total in /metrics"
    assert all('result="' in l for l in lines), lines
    assert sum(float(l.rsplit(" ", 1)[1]) for l in lines) > 0, lines


def frame_pointer_setup(binary, function):
    """Whether FUNCTION in BINARY sets up a frame pointer (mov %rsp,%rbp)."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "--disassemble=" + function,
                          binary], capture_output=True, text=True, check=True).stdout
    return bool(re.search(r"\bmov\s+%rsp,%rbp\b", out))


def fp_baseline(name, leaf, lost):
    """In --unwind.mode=fp, most of NAME's leaf samples miss the chain to main: frame pointers
    cannot walk what the table walk does. Skipped if the compiler kept frame pointers in
    LOST, the functions a frame-pointer walk would lose."""
    if not STATE.get("fp_flag"):
        detail("the daemon has no --unwind.mode: it walks frame pointers only, used as is")
    kept = [f for f in lost if frame_pointer_setup(FP[name].path, f)]
    if kept:
        raise Skip("%s: the compiler set up frame pointers in %s" % (name, kept))
    want, _ = cut_at_main(expected(name))
    total = full = 0
    seen = {}
    for count, got in leaf_chains(FP[name].body, leaf):
        total += count
        full += count if got[:len(want)] == want else 0
        key = " → ".join(got[:6])
        seen[key] = seen.get(key, 0) + count
    detail("fp mode, %s: %d of %d %s samples carry %s" % (name, full, total, leaf,
                                                          " → ".join(want)))
    for k, c in sorted(seen.items(), key=lambda x: -x[1])[:3]:
        detail("fp mode, %s: %d samples read %s" % (name, c, k))
    assert total >= MIN_SAMPLES, "only %d samples in %s" % (total, leaf)
    assert full < 0.5 * total, "%d of %d samples carry the whole chain with frame pointers " \
        "only" % (full, total)
    return seen, total


def test_fp_mode_c():
    fp_baseline("uw_c", "uw_leaf", ["uw_leaf", "uw_level2", "uw_level1"])


def test_fp_mode_fpleaf():
    """GCC's leaf keeps no frame: frame pointers read fp_hot_a → main, fp_dispatch lost."""
    seen, total = fp_baseline("uw_fpleaf", "fp_hot_a", ["fp_hot_a"])
    skipped = sum(c for k, c in seen.items() if k.startswith("fp_hot_a → main"))
    assert skipped >= 0.8 * total, "%d of %d samples read fp_hot_a → main" % (skipped, total)


# ---- first moments -----------------------------------------------------------------------

# Rounds of short-lived targets started from the moment the daemon first answers /metrics: its
# start-up scan is still building tables then, and each new process has none of its own yet.
STARTUP_ROUNDS = 6
STARTUP_SECS = 0.6
STARTUP = {}  # name -> [Target], each fetched with its own profile
# Complete: all but a process's first moments (its exec seen, its tables built), which end in
# [truncated], never wrong. Their share grows with the machine's load: 2-3 % of these 0.6 s
# lives on an idle 2-CPU machine, up to 20 % when other work starves the daemon as much as
# the targets. The bound catches tables that never come, not a slow machine.
STARTUP_SHARE = 0.75
STARTUP_MIN_SAMPLES = 20


# A frame the symbolizer could not name: the last a walk wrote before it stopped at a library
# the process mapped after its maps were read (it exited before they were read again).
UNNAMED = re.compile(r"^(0x[0-9a-f]+|\S+\+0x[0-9a-f]+)$")


# Then, their tables built, many processes of a few tens of ms each, one after another (a
# busy host's exec churn): most of each life passes before the daemon has read its maps, and
# all of it is walked through the kernel's mappings of files whose tables are built.
CHURN_PROCS = 30
CHURN_SECS = 0.05
CHURN = {}  # name -> [Target]
CHURN_SHARE = 0.99


def startup_run():
    d = Daemon("--profile.retention=2m")
    try:
        for _ in range(STARTUP_ROUNDS):
            round_ = [Target(n, STARTUP_SECS) for n in ("uw_c", "uw_fpleaf")]
            for t in round_:
                STARTUP.setdefault(t.name, []).append(t)
            for t in round_:
                t.proc.wait(timeout=30)
        for _ in range(CHURN_PROCS):
            for n in ("uw_c", "uw_fpleaf"):
                t = Target(n, CHURN_SECS)
                CHURN.setdefault(n, []).append(t)
                t.proc.wait(timeout=30)
        # Drained every 100 ms: the last samples are in after that.
        time.sleep(1)
        for ts in list(STARTUP.values()) + list(CHURN.values()):
            fetch(d, ts, 30)
    finally:
        for ts in list(STARTUP.values()) + list(CHURN.values()):
            for t in ts:
                t.stop()
        d.stop()


def startup_case(name, runs=STARTUP, secs=STARTUP_SECS, min_share=STARTUP_SHARE, what="startup"):
    """From a process's first sample: each hot leaf sample carries gdb's chain, or a prefix of
    it that ends in [truncated]; never another chain (a caller skipped, a guess past a frame
    whose table was not built yet, the leaf alone unmarked)."""
    if name not in runs:
        raise Skip("%s not built" % name)
    want = expected(name)
    leaf = want[0]
    total = complete = cut = 0
    wrong, cuts = [], []
    for t in runs[name]:
        for count, got in leaf_chains(t.body, leaf):
            total += count
            if got == want:
                complete += count
            elif got[-1] == "[truncated]" and len(got) <= len(want) and all(
                    g == w or UNNAMED.match(g) for g, w in zip(got[:-1], want)):
                cut += count
                cuts.append((count, got))
            else:
                wrong.append((count, got))
    nwrong = sum(c for c, _ in wrong)
    share = complete / total if total else 0.0
    detail("%s %s: %d %s samples in %d processes of %.2f s: %d complete (%.2f %%), "
           "%d truncated, %d wrong" % (what, name, total, leaf, len(runs[name]), secs,
                                       complete, 100 * share, cut, nwrong))
    for c, fr in common(wrong):
        detail("%s %s: %d samples read %s" % (what, name, c, " → ".join(fr)))
    for c, fr in common(cuts):
        detail("%s %s: %d samples cut at %s" % (what, name, c, " → ".join(fr)))
    assert total >= STARTUP_MIN_SAMPLES, "%s: only %d samples in %s" % (name, total, leaf)
    assert not nwrong, "%s: %d of %d samples read a chain gdb does not" % (name, nwrong, total)
    assert share >= min_share, "%s: %d of %d samples (%.2f %%) complete, want %.0f %%" % (
        name, complete, total, 100 * share, 100 * min_share)


# ---- no room ----------------------------------------------------------------------------

# A table budget glibc's table does not fit in: the walk must stop at libc, marked, where frame
# pointers would guess (glibc keeps none).
NOROOM = {}  # name -> [Target]
NOROOM_SECS = 4


def noroom_run():
    d = Daemon("--profile.retention=2m", "--unwind.memory-limit=64KiB")
    try:
        for n in ("uw_c", "uw_fpleaf"):
            NOROOM[n] = [Target(n, NOROOM_SECS + 10)]
        time.sleep(NOROOM_SECS + 0.5)
        fetch(d, [ts[0] for ts in NOROOM.values()], NOROOM_SECS)
        STATE["noroom"] = sum(metric_values(d.get("/metrics")[2].decode(),
                                            "autoprof_unwind_stacks_total",
                                            'result="truncated_noroom"'))
    finally:
        for ts in NOROOM.values():
            ts[0].stop()
        rc, _ = d.stop()
        assert rc == 0, "the 64KiB daemon exited with %d" % rc


def noroom_case(name):
    """Right or truncated where a table has no room: never frame pointers' guess."""
    if name not in NOROOM:
        raise Skip("%s not built" % name)
    startup_case(name, NOROOM, NOROOM_SECS, 0.0, "noroom")
    assert STATE.get("noroom", 0) > 0, "no walk stopped at a table without room"


READY = {}  # name -> Target started before the daemon, fetched from /-/ready on


def ready_run():
    """uw_c and uw_fpleaf run before the daemon starts; from the moment /-/ready says 200, the
    processes found at start have their tables: their samples are complete from then on."""
    for n in ("uw_c", "uw_fpleaf"):
        READY[n] = Target(n, 30)
    d = Daemon("--profile.retention=2m", wait=False)
    try:
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                if d.get("/-/ready")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.02)
        else:
            raise AssertionError("/-/ready never answered 200:\n" + d.logtext()[-2000:])
        t_ready = time.time()
        time.sleep(max(0, t_ready + 3 - time.time()))
        fetch(d, READY.values(), 3)
    finally:
        for t in READY.values():
            t.stop()
        d.stop()


def ready_case(name):
    t = READY[name]
    want = expected(name)
    leaf = want[0]
    total = complete = 0
    other = []
    for count, got in leaf_chains(t.body, leaf):
        total += count
        if got == want:
            complete += count
        else:
            other.append((count, got))
    detail("ready %s: %d of %d %s samples since /-/ready complete" % (name, complete, total,
                                                                     leaf))
    for c, fr in common(other):
        detail("ready %s: %d samples read %s" % (name, c, " → ".join(fr)))
    assert total >= MIN_SAMPLES, "%s: only %d samples in %s" % (name, total, leaf)
    assert complete >= 0.99 * total, "%s: %d of %d samples complete since /-/ready" % (
        name, complete, total)


def phase(fn):
    """Runs a setup phase; a failure there fails the checks that need it, each with the
    reason."""
    try:
        fn()
        return None
    except Exception as e:  # noqa: BLE001
        return e


t_start = time.time()
err = phase(main_run)
check("gdb_reads_target_chains", checked(err, test_gdb_chains))
check("table_c_omit_frame_pointer", checked(err, test_c))
check("table_cxx_exceptions", checked(err, test_cxx))
check("table_rust_no_frame_pointers", checked(err, test_rust))
check("table_gcc_leaf_without_frame", checked(err, test_fpleaf))
check("table_kernel_into_glibc_nanosleep", checked(err, test_sleep))
check("table_signal_frame", checked(err, test_signal))
check("table_dlopen_library", checked(err, test_dlopen))
check("table_deep_truncated_and_complete", checked(err, test_deep))
check("walk_cache_follows_each_stack", checked(err, test_walk_cache))
check("unwind_metric", checked(err, test_metric))


def test_daemon_exit():
    d = STATE.get("daemon")
    if d is None:
        raise Skip("no daemon started")
    rc, _ = d.stop()
    assert rc == 0, "the daemon exited with %d:\n%s" % (rc, d.logtext()[-2000:])


check("daemon_exit_clean", test_daemon_exit)
err_fp = err or phase(fp_run)
check("fp_mode_c_loses_chain", checked(err_fp, test_fp_mode_c))
check("fp_mode_gcc_leaf_loses_caller", checked(err_fp, test_fp_mode_fpleaf))
err_start = err or phase(startup_run)
check("startup_c_right_or_truncated", checked(err_start, lambda: startup_case("uw_c")))
check("startup_fpleaf_right_or_truncated",
      checked(err_start, lambda: startup_case("uw_fpleaf")))
for _n in ("uw_c", "uw_fpleaf"):
    check("churn_%s_short_lives_complete" % _n[3:],
          checked(err_start, lambda n=_n: startup_case(n, CHURN, CHURN_SECS, CHURN_SHARE, "churn")))
err_room = err or phase(noroom_run)
check("noroom_c_right_or_truncated", checked(err_room, lambda: noroom_case("uw_c")))
check("noroom_fpleaf_right_or_truncated", checked(err_room, lambda: noroom_case("uw_fpleaf")))
err_ready = err or phase(ready_run)
check("ready_c_tables_built", checked(err_ready, lambda: ready_case("uw_c")))
check("ready_fpleaf_tables_built", checked(err_ready, lambda: ready_case("uw_fpleaf")))
detail("%.1f s in all (windows %d s and %d s, %d CPUs, load %.1f before)" % (
    time.time() - t_start, WINDOW, FP_WINDOW, NCPU, LOAD))
sys.exit(exit_status())
