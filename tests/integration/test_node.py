#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Node.js frames by name: node writes its perf map itself (--perf-basic-prof) and autoprof
reads it, splitting V8's "JS:*hotFn /path/hot.js:5:15" into the function (hotFn) and its file
and line. tests/targets/node/hot.js runs hotFn and coldFn at 3:1.

- --perf-basic-prof: hotFn and coldFn by name with their file and line, about 3:1.
- With --interpreted-frames-native-stack too, the interpreted callers have their own code
  addresses in the map: hotFn's caller is the script's top level, under node's module loader
  (Module._compile); without it they all are Builtins_InterpreterEntryTrampoline."""

import concurrent.futures
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from aplib import (  # noqa: E402
    after_setup, check, Daemon, exit_status, pprof_tool, ROOT, Skip, TMP, traces)

SCRIPT = os.path.join(ROOT, "tests", "targets", "node", "hot.js")
RUN_S = 10
STATE = {}


def run_node(d, *flags):
    p = subprocess.Popen(["node", "--perf-basic-prof", *flags, SCRIPT, str(RUN_S)],
                         stdout=subprocess.PIPE, text=True, cwd=TMP)
    pid = int(p.stdout.readline())
    try:
        p.wait(timeout=RUN_S * 4)
        code, _, body = d.get("/debug/pprof/profile?seconds=%d&pid=%d" % (RUN_S * 3, pid))
        if code != 200:
            raise AssertionError("profile of pid %d: HTTP %d" % (pid, code))
        return body
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        # node's own map: node never removes it.
        if os.path.exists("/tmp/perf-%d.map" % pid):
            os.unlink("/tmp/perf-%d.map" % pid)


def run():
    if not shutil.which("node"):
        raise Skip("no node")
    d = Daemon()
    try:
        # Both at once: two busy processes share the CPUs, the test takes RUN_S.
        with concurrent.futures.ThreadPoolExecutor(2) as ex:
            basic = ex.submit(run_node, d)
            interp = ex.submit(run_node, d, "--interpreted-frames-native-stack")
            STATE["basic"], STATE["interp"] = basic.result(), interp.result()
    finally:
        d.stop()


def test_names_files_ratio():
    top = pprof_tool(STATE["basic"], "-top", "-lines", "-nodecount=200")
    flat = {}
    for m in re.finditer(r"^\s*([\d.]+)(m?s)\s.*?\s(hotFn|coldFn) (\S+):(\d+)\s*$", top, re.M):
        secs = float(m.group(1)) / (1000 if m.group(2) == "ms" else 1)
        if m.group(4) != SCRIPT:
            raise AssertionError("%s in file %r, want %s" % (m.group(3), m.group(4), SCRIPT))
        flat[m.group(3)] = flat.get(m.group(3), 0) + secs
    hot, cold = flat.get("hotFn", 0), flat.get("coldFn", 0)
    if cold < 0.2:
        raise AssertionError("hotFn %.2fs, coldFn %.2fs with their file:\n%s" % (hot, cold, top[:2000]))
    if not 2.0 <= hot / cold <= 4.5:
        raise AssertionError("hotFn:coldFn = %.2f:%.2f s, want about 3" % (hot, cold))
    print("   hotFn:coldFn = %.2f:%.2f s = %.2f, in %s" % (hot, cold, hot / cold, SCRIPT))


def test_interpreted_callers():
    tr = traces(STATE["interp"])
    hot = [(c, f) for c, _, f in tr if f and f[0] == "hotFn"]
    total = sum(c for c, _ in hot)
    named = sum(c for c, f in hot if len(f) > 2 and f[1] == "(anonymous)"
                and "Module._compile" in f)
    if not total or named < 0.8 * total:
        raise AssertionError("%d of %d hotFn samples under the script and Module._compile; "
                             "e.g. %s" % (named, total, [f[:6] for _, f in hot][:2]))
    print("   %d of %d hotFn samples under (anonymous) < Module._compile" % (named, total))


checked = after_setup(run)


check("node_names_files_ratio", checked(test_names_files_ratio))
check("node_interpreted_callers", checked(test_interpreted_callers))
sys.exit(exit_status())
