#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Go code unwound from its own .gopclntab stack deltas: gospin (tests/targets/gounwind)
has main.main -> main.goHot -> main.spin, where spin is a leaf Go compiles without a frame
(tests/targets/gounwind/gounwind.mk checks with go tool objdump), a frame-pointer walk from
which skips goHot. A goroutine runs goWorker -> goHot -> spin too. Built by each Go toolchain
present (Debian's 1.19, backports' 1.22 and 1.23), plain and stripped (-s -w), all profiled at
once by one daemon; each served stack is read back with go tool pprof -traces. gocgo (cgo, built
the same ways) crosses between Go and C both ways: Go calling C (the C on the system stack,
walked by .eh_frame, then back to the goroutine's stack through runtime.asmcgocall) and C
calling Go back (crosscall2, runtime.cgocallback)."""

import math
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from aplib import BUILD, check, Daemon, exit_status, traces, Skip  # noqa: E402

GT = os.path.join(BUILD, "gotargets")
VERSIONS = ["1.19", "1.22", "1.23"]
WARM = 2.0
NCPU = os.cpu_count() or 1
LOAD = os.getloadavg()[0]
# 6 gospin of two busy threads each, 6 gocgo of one: ~250 spin samples each at 99 Hz.
WINDOW = max(5, min(25, math.ceil(3.0 * (18 + LOAD) / NCPU)))
SHARE = 0.99
MIN_SAMPLES = 40
TARGETS = {}  # name -> (Popen, stacks or exception)


def names():
    out = []
    for v in VERSIONS:
        for suffix in ("", "-stripped"):
            for prog in ("gospin", "gocgo"):
                n = "%s-%s%s" % (prog, v, suffix)
                if os.path.exists(os.path.join(GT, n)):
                    out.append(n)
    return out


def run_all():
    d = Daemon("--profile.retention=2m")
    procs = {}
    try:
        for n in names():
            procs[n] = subprocess.Popen([os.path.join(GT, n), str(int(WARM + WINDOW + 20))])
        time.sleep(WARM + WINDOW + 0.5)
        for n, p in procs.items():
            code, _, body = d.get("/debug/pprof/profile?seconds=%d&pid=%d" % (WINDOW, p.pid))
            TARGETS[n] = traces(body) if code == 200 else AssertionError("HTTP %d" % code)
    finally:
        for p in procs.values():
            p.terminate()
            p.wait(timeout=10)
        d.stop()


def stacks(name, leaf):
    if name not in TARGETS:
        raise Skip("%s not built (no such Go toolchain)" % name)
    if isinstance(TARGETS[name], Exception):
        raise TARGETS[name]
    # The symbol table names ABI0 symbols (goexit's), .gopclntab the function; cgo's
    # wrappers have the package's hash in their names.
    out = [(c, [re.sub(r"^_cgo(exp)?_[0-9a-f]+_", r"_cgo\1_", f.replace(".abi0", ""))
                for f in fr]) for c, _, fr in TARGETS[name] if fr and leaf in (None, fr[0])]
    total = sum(c for c, _ in out)
    if total < MIN_SAMPLES:
        raise AssertionError("%s: %d samples in %s" % (name, total, leaf))
    return out, total


def common(st, n=3):
    return [(c, fr[:8]) for c, fr in sorted(st, key=lambda x: -x[0])[:n]]


def share(name, leaf, good, what):
    st, total = stacks(name, leaf)
    ok = sum(c for c, fr in st if good(fr))
    print("   detail %s: %d/%d %s samples %s (%.1f %%)" % (name, ok, total, leaf, what,
                                                          100.0 * ok / total), flush=True)
    assert ok >= SHARE * total, "%s: %d/%d %s; most common: %s" % (
        name, ok, total, what, common(st))


def test_caller(name):
    """spin's caller goHot is there, and goHot's own caller under it."""
    share(name, "main.spin",
          lambda fr: len(fr) > 2 and fr[1] == "main.goHot" and fr[2] in ("main.main",
                                                                          "main.goWorker"),
          "under main.goHot under main.main/main.goWorker")
    st, _ = stacks(name, "main.spin")
    assert any(fr[1:3] == ["main.goHot", "main.main"] for _, fr in st), common(st)
    assert any(fr[1:3] == ["main.goHot", "main.goWorker"] for _, fr in st), common(st)


def test_goexit(name):
    """Both goroutines' stacks end at runtime.goexit, main's through runtime.main."""
    share(name, "main.spin", lambda fr: fr[-1] == "runtime.goexit", "ending at runtime.goexit")
    share(name, "main.spin",
          lambda fr: fr[2:] in (["main.main", "runtime.main", "runtime.goexit"],
                                ["main.goWorker", "runtime.goexit"]),
          "whole from goexit")


def test_framed(name):
    """The leaf with a frame, for contrast: frame pointers had it right already."""
    share(name, "main.spinFramed",
          lambda fr: fr[1:] == ["main.goWarm", "main.main", "runtime.main", "runtime.goexit"],
          "under main.goWarm under main.main")


GO_UNDER_C = ["runtime.asmcgocall", "runtime.cgocall"]
GO_MAIN = ["main.main", "runtime.main", "runtime.goexit"]
C_NAMES = {"c_leaf", "c_hot", "c_calls_go", "goBack", "_cgo_Cfunc_c_hot", "_cgo_Cfunc_c_calls_go"}


def cgo_share(name, marker, want, what):
    """Samples with marker in their stack are want, whole from wherever in it they were taken
    (the leaf's caller or its wrapper: a suffix of want), kernel frames left out. Stripped,
    the C functions may have no name (.gopclntab knows Go code only): any stands for one;
    and goBack, inlined into its export wrapper, is named by DWARF only."""
    stripped = name.endswith("-stripped")
    if stripped:
        want = ["?" if f in C_NAMES else f for f in want if f != "main.goBack"]
    st, _ = stacks(name, None)
    st = [(c, fr) for c, fr in st if marker in fr]
    total = sum(c for c, _ in st)
    assert total >= MIN_SAMPLES, "%s: %d samples under %s" % (name, total, marker)

    def norm(fr):
        fr = ["?" if stripped and (f in C_NAMES or "+0x" in f) else f for f in fr]
        while fr and fr[0] not in want:
            fr = fr[1:]
        return fr

    def good(fr):
        return 0 < len(fr) and fr == want[len(want) - len(fr):]
    ok = sum(c for c, fr in st if good(norm(fr)))
    print("   detail %s: %d/%d samples under %s %s (%.1f %%)" % (
        name, ok, total, marker, what, 100.0 * ok / total), flush=True)
    assert ok >= SHARE * total, "%s: %d/%d %s; most common: %s" % (
        name, ok, total, what, [(c, norm(fr)) for c, fr in common(st, 2)])


def test_go_calls_c(name):
    """C's frames (.eh_frame, system stack), then Go's (.gopclntab, goroutine stack), whole."""
    want = (["c_leaf", "c_hot", "_cgo_Cfunc_c_hot"] + GO_UNDER_C +
            ["main._Cfunc_c_hot", "main.goCallsC"] + GO_MAIN)
    cgo_share(name, "main.goCallsC", want, "whole through asmcgocall")


def test_c_calls_go(name):
    """Go called back from C called from Go: every frame of the three, down to goexit."""
    want = (["main.spin", "main.goBack", "_cgoexp_goBack", "runtime.cgocallbackg1",
             "runtime.cgocallbackg", "runtime.cgocallbackg", "runtime.cgocallback",
             "crosscall2", "goBack", "c_calls_go", "_cgo_Cfunc_c_calls_go"] + GO_UNDER_C +
            ["main._Cfunc_c_calls_go", "main.goViaC"] + GO_MAIN)
    cgo_share(name, "main.goViaC", want, "whole through cgocallback and asmcgocall")


def main():
    run_all()
    for n in [n % v for v in VERSIONS for n in ("gospin-%s", "gospin-%s-stripped")]:
        check("caller_of_frameless_leaf[%s]" % n, test_caller, n)
        check("goroutines_end_at_goexit[%s]" % n, test_goexit, n)
        check("framed_leaf[%s]" % n, test_framed, n)
    for n in [n % v for v in VERSIONS for n in ("gocgo-%s", "gocgo-%s-stripped")]:
        check("go_calls_c[%s]" % n, test_go_calls_c, n)
        check("c_calls_go[%s]" % n, test_c_calls_go, n)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
