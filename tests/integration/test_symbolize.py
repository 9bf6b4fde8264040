#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Symbolization end to end: programs built the ways the symbolizer has to cope with (DWARF
inlines, C++, Rust, Go, debug links, MiniDebugInfo, perf maps, libc's debug file, stripped
libraries) spin in known functions; each test asserts the exact names and lines a user sees in
`go tool pprof -traces` of the profile the daemon serves. The targets are built by
tests/targets/symbolize/symbolize.mk into $(BUILD)/symtargets/."""

import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from aplib import (BUILD, ROOT, Daemon, Skip, check, exit_status, pprof_tool,  # noqa: E402
                   traces)

SYM = os.path.join(BUILD, "symtargets")
SRC = os.path.join(ROOT, "tests", "targets", "symbolize")
SEP = "-----------+-------------------------------------------------------"
# Share of a target's samples that must show the expected frames: the rest may be the start-up,
# clock_gettime between rounds, or an interrupt taken in a prologue.
SHARE = 0.8

d = Daemon("--profile.retention=2m")
RANGES = {}  # pid -> executable mappings, read while the target ran


def run_and_profile(argv, seconds=2, cwd=None):
    """Runs a target that prints its pid first and spins SECONDS; returns (pid, gzipped
    profile of that pid over its whole life)."""
    p = subprocess.Popen([*argv, str(seconds)], stdout=subprocess.PIPE, text=True, cwd=cwd)
    try:
        pid = int(p.stdout.readline())
        time.sleep(0.5)  # the loader has mapped every library by now
        RANGES[pid] = exec_ranges(pid)
    finally:
        p.stdout.close()
    assert p.wait(timeout=seconds + 30) == 0, "%s exited with %d" % (argv, p.returncode)
    time.sleep(0.3)  # the ingest loop drains the ring every 100 ms
    code, _, body = d.get("/debug/pprof/profile?seconds=%d&pid=%d" % (math.ceil(seconds) + 3, pid))
    assert code == 200, "HTTP %d: %r" % (code, body[:300])
    return pid, body


def profile(name, seconds=2):
    """The profile of target NAME, checked to name every frame in executable memory."""
    pid, body = run_and_profile([os.path.join(SYM, name)], seconds)
    assert_all_named(body, RANGES[pid])
    return body


def lined(data):
    """`go tool pprof -traces -lines`: a list of (count, frames leaf first), each frame
    (function, file or None, line or None). Inline frames keep no mark."""
    out = []
    for block in pprof_tool(data, "-traces", "-lines", "-sample_index=samples").split(SEP)[1:]:
        frames, count = [], None
        for line in block.splitlines():
            if not line.strip() or re.match(r"^\s+\w+:\s", line) and count is None:
                continue  # blank or a label
            m = re.match(r"^\s+(\d+)\s+(\S.*)$", line)
            if m and count is None:
                count, text = int(m.group(1)), m.group(2)
            else:
                text = line.strip()
            text = text.replace(" (inline)", "").strip()
            m = re.match(r"^(.*\S) (\S*):(\d+)$", text)
            frames.append((m.group(1), m.group(2), int(m.group(3))) if m else (text, None, None))
        if count is not None:
            out.append((count, frames))
    return out


def total(t):
    return sum(x[0] for x in t)


def share_where(t, pred, what):
    """Asserts that at least SHARE of the samples satisfy pred(frames); returns the count.
    Samples marked truncated (their walk stopped, "[truncated]" outermost) are not counted:
    a process's first samples are while its files' unwind tables are built (libstdc++'s took
    0.44 s in one CI run), and they are right as far as they go. They may be half at most."""
    def cut(fr):  # frames are names (traces) or (name, file, line) (lined)
        return bool(fr) and (fr[-1][0] if isinstance(fr[-1], tuple) else fr[-1]) == "[truncated]"
    marked = sum(x[0] for x in t if cut(x[-1]))
    t = [x for x in t if not cut(x[-1])]
    n, all_ = sum(x[0] for x in t if pred(x[-1])), total(t)
    assert all_ >= 100 and marked <= all_, "only %d samples (and %d marked truncated)" % (
        all_, marked)
    if n < SHARE * all_:
        miss = sorted((x for x in t if not pred(x[-1])), key=lambda x: -x[0])[:6]
        raise AssertionError("%d of %d samples %s; the most common of the rest: %s" % (
            n, all_, what, [(x[0], x[-1][:6]) for x in miss]))
    return n


def exec_ranges(pid):
    """The executable mappings of a live process, as (start, end) pairs."""
    out = []
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            rng, perms = line.split()[:2]
            if "x" in perms:
                out.append(tuple(int(x, 16) for x in rng.split("-")))
    return out


def assert_all_named(data, ranges, allow_hex=False):
    """No frame is [unknown], and none in the process's executable memory (RANGES, read while it
    ran) is a bare 0x... (allow_hex: JIT code the perf map does not name). A bare 0x... outside
    it (0x3f, 0xffffffffffffffff, a heap address) is what the frame-pointer walk reads past a
    thread's first frame or after code built without frame pointers (the loader, libc): no
    code's address, nothing any symbolizer could name."""
    for count, _, frames in traces(data):
        for f in frames:
            assert f != "[unknown]", "an [unknown] frame in %s" % frames
            if re.match(r"^0x[0-9a-f]+$", f) and any(a <= int(f, 16) < b for a, b in ranges):
                assert allow_hex, "a bare %s in executable memory in %s" % (f, frames)


def marker_line(src, marker):
    """The line of SRC that holds MARKER (1-based)."""
    with open(os.path.join(SRC, src)) as f:
        hits = [i + 1 for i, line in enumerate(f) if marker in line]
    assert len(hits) == 1, "%s in %s: %s" % (marker, src, hits)
    return hits[0]


def sections(path):
    out = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True, check=True)
    return set(re.findall(r"\]\s+(\.\S+)", out.stdout))


def nm_symbol(path, pattern):
    out = subprocess.run(["nm", path], capture_output=True, text=True, check=True).stdout
    names = [line.split()[-1] for line in out.splitlines() if re.search(pattern, line.split()[-1])]
    assert len(names) == 1, "%s in %s: %s" % (pattern, path, names)
    return names[0]


def inline_want():
    return [("inlined_spin", "inline.c", marker_line("inline.c", "/* INLINE_SPIN */")),
            ("outer_spin", "inline.c", marker_line("inline.c", "/* CALL_INLINE */")),
            ("main", "inline.c", marker_line("inline.c", "/* CALL_OUTER */"))]


def test_inline():
    """-O2 -g: a forced-inline callee is its own frame above its caller, each with its line."""
    body = profile("sym_inline")
    want = inline_want()
    t = lined(body)
    share_where(t, lambda fr: [(f, os.path.basename(p or ""), l) for f, p, l in fr[:3]] == want,
                "are %s" % want)
    for _, fr in t:
        for f, p, _ in fr:
            if f in ("inlined_spin", "outer_spin"):
                assert p == os.path.join(SRC, "inline.c"), "%s in %s" % (f, p)
    # pprof marks the inlined frame as such, and only that one.
    text = pprof_tool(body, "-traces", "-sample_index=samples")
    assert re.search(r"\binlined_spin \(inline\)\n\s+outer_spin\n\s+main\n", text), text[:1500]


def test_cxx():
    """C++: a function template in a namespace is named as c++filt prints it, and its mangled
    name is the Function's system_name."""
    path = os.path.join(SYM, "sym_cxx")
    mangled = nm_symbol(path, r"^_ZN3app4spin")
    want = subprocess.run(["c++filt", mangled], capture_output=True, text=True,
                          check=True).stdout.strip()
    assert "app::spin<int>(int)" in want, want
    body = profile("sym_cxx")
    t = traces(body)
    share_where(t, lambda fr: fr[:2] == [want, "main"], "are %s → main" % want)
    # -raw prints a Location's lines as "function file:line s=START(system_name)" when the system
    # name differs from the name.
    raw = pprof_tool(body, "-raw")
    locs = [l for l in raw.split("Locations")[1].split("Mappings")[0].splitlines() if want in l]
    assert locs, raw[:2000]
    for l in locs:
        assert l.endswith("(%s)" % mangled), "system name of %s: %s" % (want, l)
    mains = [l for l in raw.splitlines() if re.search(r" main \S*cxxspin\.cc:\d+ s=\d+$", l)]
    assert mains, "main's system name should be main itself:\n" + raw[:2000]


def rust_case(name, mangled_pattern):
    path = os.path.join(SYM, name)
    if not os.path.exists(path):
        raise Skip("rustc not found: %s not built" % name)
    mangled = nm_symbol(path, mangled_pattern)
    body = profile(name)
    t = lined(body)
    lo = marker_line("rustspin.rs", "// HOT_START")
    hi = marker_line("rustspin.rs", "// HOT_END")

    def ok(fr):
        names = [f for f, _, _ in fr]
        if "rustspin::hot" not in names or "main" not in names:
            return False
        i = names.index("rustspin::hot")
        f, p, l = fr[i]
        return p == os.path.join(SRC, "rustspin.rs") and lo <= l <= hi
    share_where(t, ok, "have rustspin::hot (rustspin.rs:%d-%d) under main" % (lo, hi))
    for _, _, fr in traces(body):
        for f in fr:
            assert not re.search(r"::h[0-9a-f]{16}\b|^_ZN|^_R|rustspin\[", f), \
                "a frame left mangled or hashed: %r" % f
    raw = pprof_tool(body, "-raw")
    assert re.search(r" rustspin::hot \S+ s=\d+\(%s\)$" % re.escape(mangled), raw, re.M), \
        "no rustspin::hot with system name %s:\n%s" % (mangled, raw[:2000])


def test_rust_v0():
    rust_case("rustspin-v0", r"^_RNv.*8rustspin3hot$")


def test_rust_legacy():
    rust_case("rustspin-legacy", r"^_ZN8rustspin3hot17h[0-9a-f]{16}E$")


def go_case(name, stripped):
    path = os.path.join(SYM, name)
    assert (".symtab" in sections(path)) != stripped, "%s: .symtab %s" % (
        name, "present" if stripped else "missing")
    body = profile(name)
    t = lined(body)
    src = os.path.join(SRC, "gohot", "main.go")
    lo = marker_line("gohot/main.go", "// HOT_START")
    hi = marker_line("gohot/main.go", "// HOT_END")
    call = marker_line("gohot/main.go", "sink = hotLoop(sink)")
    share_where(t, lambda fr: len(fr) >= 3 and [f for f, _, _ in fr[:3]] ==
                ["main.hotLoop", "main.main", "runtime.main"] and fr[0][1] == src and
                lo <= fr[0][2] <= hi and fr[1][1:] == (src, call),
                "are main.hotLoop (main.go:%d-%d) → main.main (main.go:%d) → runtime.main" % (
                    lo, hi, call))


def test_go():
    go_case("sym_go", stripped=False)


def test_go_stripped():
    go_case("sym_go_stripped", stripped=True)


def test_debuglink():
    """A stripped binary with .gnu_debuglink to a debug file beside it: a static function's name
    and line resolve."""
    path = os.path.join(SYM, "sym_debuglink")
    secs = sections(path)
    assert ".gnu_debuglink" in secs and ".symtab" not in secs and ".debug_info" not in secs, secs
    assert os.path.exists(path + ".debug")
    body = profile("sym_debuglink")
    want = ("local_spin", os.path.join(SRC, "localspin.c"),
            marker_line("localspin.c", "/* LOCAL_SPIN */"))
    share_where(lined(body), lambda fr: fr[0] == want and fr[1][0] == "main" and
                fr[2][0] == "__libc_start_call_main", "are %s:%d → main" % (want[0], want[2]))


def test_minidebuginfo():
    """MiniDebugInfo: a static function is named although the binary has no .symtab."""
    path = os.path.join(SYM, "sym_minidebug")
    secs = sections(path)
    assert ".gnu_debugdata" in secs and ".symtab" not in secs and ".debug_info" not in secs, secs
    assert "local_spin" not in subprocess.run(["nm", "-D", path], capture_output=True,
                                              text=True).stdout
    body = profile("sym_minidebug")
    share_where(traces(body), lambda fr: fr[:2] == ["local_spin", "main"],
                "are local_spin → main")


def test_perf_map():
    """node --perf-basic-prof: JIT code is named from /tmp/perf-PID.map."""
    node = shutil.which("node")
    if not node:
        raise Skip("node not found")
    cwd = tempfile.mkdtemp(prefix="autoprof-node-")  # node writes isolate-*.log there
    pid = None
    try:
        p = subprocess.Popen([node, "--perf-basic-prof", os.path.join(SRC, "hot.js"), "3"],
                             stdout=subprocess.PIPE, text=True, cwd=cwd)
        pid = int(p.stdout.readline())
        time.sleep(0.5)
        ranges = exec_ranges(pid)
        p.stdout.close()
        assert p.wait(timeout=60) == 0, "node exited with %d" % p.returncode
        time.sleep(0.3)
        assert os.path.exists("/tmp/perf-%d.map" % pid), "node wrote no perf map"
        code, _, body = d.get("/debug/pprof/profile?seconds=7&pid=%d" % pid)
        assert code == 200, code
        t = traces(body)
        hot = sum(c for c, _, fr in t if any("autoprofHotLoop" in f for f in fr))
        # The start-up (a few hundred ms of V8) takes some of the rest; so may up to a second of
        # code in a page that became executable after the daemon last read the process's maps
        # (re-read at most once a second): those addresses stay 0x... though the map names them.
        assert hot >= 0.4 * total(t), "%d of %d samples name autoprofHotLoop: %s" % (
            hot, total(t), sorted(t, key=lambda x: -x[0])[:3])
        # Code the map does not cover may stay 0x..., never [unknown].
        assert_all_named(body, ranges, allow_hex=True)
    finally:
        if pid is not None and os.path.exists("/tmp/perf-%d.map" % pid):
            os.unlink("/tmp/perf-%d.map" % pid)
        shutil.rmtree(cwd, ignore_errors=True)


def libc_debug_file(binary):
    """libc's path as BINARY loads it, and its debug file under /usr/lib/debug/.build-id."""
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    m = re.search(r"libc\.so\.6 => (\S+)", out)
    assert m, out
    notes = subprocess.run(["readelf", "-n", m.group(1)], capture_output=True, text=True).stdout
    bid = re.search(r"Build ID: ([0-9a-f]+)", notes)
    assert bid, notes
    return m.group(1), "/usr/lib/debug/.build-id/%s/%s.debug" % (bid.group(1)[:2], bid.group(1)[2:])


def test_libc_local_symbols():
    """libc's local symbols come from its debug file: the memset variant the samples land in,
    and __libc_start_call_main under main."""
    path = os.path.join(SYM, "sym_libc")
    libc, debug = libc_debug_file(path)
    if not os.path.exists(debug):
        raise Skip("no libc debug file %s (libc6-dbg)" % debug)
    dynsym = subprocess.run(["nm", "-D", libc], capture_output=True, text=True).stdout
    assert "__libc_start_call_main" not in dynsym, "__libc_start_call_main is exported here"
    body = profile("sym_libc")
    t = traces(body)
    # memset keeps no frame pointer; the unwind tables keep its caller fill all the same.
    share_where(t, lambda fr: len(fr) >= 4 and re.match(r"^__memset_\w+$", fr[0]) and
                fr[1:4] == ["fill", "main", "__libc_start_call_main"],
                "are __memset_* → fill → main → __libc_start_call_main")
    # Above main is libc's caller, or the mark of a walk that stopped before libc's table was
    # built (the process's first moments).
    for _, _, fr in t:
        if "main" in fr and fr.index("main") + 1 < len(fr):
            assert fr[fr.index("main") + 1] in ("__libc_start_call_main", "[truncated]"), fr


def test_stripped_library():
    """A function in no symbol table at all keeps libanon.so+0xOFFSET."""
    lib = os.path.join(SYM, "libanon.so")
    secs = sections(lib)
    assert ".symtab" not in secs and ".debug_info" not in secs and ".gnu_debuglink" not in secs, secs
    body = profile("sym_anon")
    t = traces(body)
    share_where(t, lambda fr: re.match(r"^libanon\.so\+0x[0-9a-f]+$", fr[0]) and
                fr[1:3] == ["main", "__libc_start_call_main"], "are libanon.so+0x... → main")
    # The address is the file offset, past the one exported function (which precedes it).
    spinner = re.search(r"([0-9a-f]+)\s+(\d+)\s+FUNC\s+GLOBAL\s+DEFAULT\s+\d+\s+anon_get_spinner",
                        subprocess.run(["readelf", "--dyn-syms", "-W", lib], capture_output=True,
                                       text=True).stdout)
    assert spinner, "anon_get_spinner not exported"
    end = int(spinner.group(1), 16) + int(spinner.group(2))
    offs = {int(fr[0].split("+")[1], 16) for _, _, fr in t if fr[0].startswith("libanon.so+")}
    assert offs and min(offs) >= end, "offsets %s inside anon_get_spinner (ends 0x%x)" % (
        sorted(map(hex, offs)), end)
    assert "anon_get_spinner" not in {f for _, _, fr in t for f in fr}


def test_debuginfo_let_go():
    """A small file's DWARF is copied whole at the symbolizer's sweeps (every 10 s) and libdw
    let go: the programs named above counted such releases. A new run of the inline program is
    named as before, inlined frames and lines, from the copies."""
    assert d.metric("autoprof_symbolizer_dwarf_releases_total") >= 1, d.metrics()[:3000]
    assert d.metric("autoprof_symbolizer_dwarf_reopens_total") is not None
    want = inline_want()
    share_where(lined(profile("sym_inline")),
                lambda fr: [(f, os.path.basename(p or ""), l) for f, p, l in fr[:3]] == want,
                "are %s after a release" % want)


check("inline_frames_with_lines", test_inline)
check("cxx_template_demangled", test_cxx)
check("rust_v0_demangled", test_rust_v0)
check("rust_legacy_demangled", test_rust_legacy)
check("go_unstripped", test_go)
check("go_stripped_gopclntab", test_go_stripped)
check("debuglink_local_function_and_line", test_debuglink)
check("minidebuginfo_local_function", test_minidebuginfo)
check("perf_map_jit_named", test_perf_map)
check("libc_local_symbols_from_debug_file", test_libc_local_symbols)
check("stripped_library_file_offset", test_stripped_library)
check("debuginfo_let_go_names_kept", test_debuginfo_let_go)
rc, _ = d.stop()
if rc:
    print("FAIL daemon_exit: exit %d" % rc)
    sys.exit(1)
sys.exit(exit_status())
