#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Java allocation profiles without an agent (HotSpot's AllocTracer, probed in libjvm.so).

Two JVMs run Alloc (tests/targets/java, built by java.mk), whose allocHot allocates byte[]
worth 3x the bytes allocCold allocates as Strings (the JVM's own count says so too). One
is made a memory target through the API while it runs: no restart, no -javaagent, no JVMTI.

- The target's allocs profile (read back with go tool pprof): the allocated class is the leaf
  (byte[] under allocHot; java.lang.String and its byte[] under allocCold), the Java callers
  above it, bytes at 3:1 +-20 %, the window's bytes within 25 % of the JVM's own count of
  them, objects consistent with the objects' sizes.
- The other JVM, no target, shows nothing.
- A JVM made a target by its launcher's name (--memory.targets), from its exec on: the JVM's
  reports are probed once libjvm.so is loaded, not the launcher's malloc before it.
- A JVM whose libjvm.so lacks its symbol table (a stripped copy, run with -XXaltjvm) is not
  profiled, and says why: in the log and in /metrics; nothing is probed in its stead.
"""

import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from aplib import after_setup, BUILD, check, Daemon, exit_status, Skip, TMP, traces  # noqa: E402

JAVA_DIR = os.path.join(BUILD, "javatargets")
RUN_S = 25
WINDOW_S = 10
STATE = {}
HOT_OBJ = 3120  # a byte[3104] with its header: what allocHot allocates


def start_alloc(*jvm_args, java="java", seconds=RUN_S):
    # allocHot and allocCold kept out of main: the JIT's perf map names the method code was
    # compiled for, not the ones inlined into it.
    p = subprocess.Popen([java, "-XX:+PreserveFramePointer", "-XX:CompileCommand=quiet",
                          "-XX:CompileCommand=dontinline,Alloc::alloc*", *jvm_args,
                          "-cp", JAVA_DIR, "Alloc", str(seconds)],
                         stdout=subprocess.PIPE, text=True, cwd=TMP)
    return p, int(p.stdout.readline())


def jdk_copy(name, strip):
    """A JDK of links to the real one's files, but for a copy of the launcher as bin/javalloc
    (a target by its name from its exec on) and, with strip, a copy of libjvm.so without its
    .symtab (the JVM finds its home from libjvm.so's own path). Returns its root."""
    real = os.path.dirname(os.path.dirname(os.path.realpath(shutil.which("java"))))
    root = os.path.join(TMP, name)
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(os.path.join(root, "lib", "server"))
    os.makedirs(os.path.join(root, "bin"))
    shutil.copy(os.path.join(real, "bin", "java"), os.path.join(root, "bin", "javalloc"))
    for sub, skip in (("", ("lib", "bin")), ("lib", ("server",)),
                      (os.path.join("lib", "server"), ("libjvm.so",) if strip else ())):
        for entry in os.listdir(os.path.join(real, sub)):
            if entry not in skip:
                os.symlink(os.path.join(real, sub, entry), os.path.join(root, sub, entry))
    if strip:
        subprocess.run(["strip", "--strip-all", "-o",
                        os.path.join(root, "lib", "server", "libjvm.so"),
                        os.path.join(real, "lib", "server", "libjvm.so")], check=True)
    return root


def wait_processes(d, pid, timeout=15):
    """The target's processes once pid is attached, or the last answer."""
    deadline = time.time() + timeout
    while True:
        code, _, body = d.request("GET", "/api/v1/targets/memory")
        targets = json.loads(body) if code == 200 else []
        procs = [p for t in targets for p in t["processes"] if p["pid"] == pid]
        if (procs and procs[0]["attached"]) or time.time() > deadline:
            return procs
        time.sleep(0.2)


def run():
    if not shutil.which("java") or not os.path.exists(os.path.join(JAVA_DIR, "Alloc.class")):
        raise Skip("no JDK (java, javac)")
    launcher = os.path.join(jdk_copy("jdk-launcher", False), "bin", "javalloc")
    d = Daemon("--web.enable-admin-api", "--profile.retention=2m", "--memory.targets=javalloc")
    jvms = []
    try:
        target, tpid = start_alloc()
        jvms.append(target)
        other, opid = start_alloc()
        jvms.append(other)
        stripped, spid = start_alloc(
            "-XXaltjvm=" + os.path.join(jdk_copy("jdk-stripped", True), "lib", "server"))
        jvms.append(stripped)
        # Made a target while it runs.
        time.sleep(1)
        for pid in (tpid, spid):
            code, _, body = d.request("POST", "/api/v1/targets/memory", json.dumps({"pid": pid}))
            if code not in (200, 201):
                raise AssertionError("target pid %d: HTTP %d %r" % (pid, code, body))
        STATE["procs"] = wait_processes(d, tpid)
        attached = time.time()
        STATE["stripped_procs"] = wait_processes(d, spid, timeout=3)
        # A window wholly after the attach, past the JIT's warm-up.
        time.sleep(max(0, attached + 3 + WINDOW_S - time.time()))
        STATE["window"] = (time.time() - WINDOW_S, time.time())
        for name, pid in (("target", tpid), ("other", opid)):
            code, _, body = d.get("/debug/pprof/allocs?seconds=%d&pid=%d" % (WINDOW_S, pid))
            if code != 200:
                raise AssertionError("allocs of pid %d: HTTP %d %r" % (pid, code, body[:200]))
            STATE[name] = {ix: traces(body, ix) for ix in ("alloc_space", "alloc_objects")}
        STATE["metrics"] = d.get("/metrics")[2].decode()
        STATE["log"] = d.logtext()
        # What it allocated, by its own count each second (it ends by itself).
        out = target.communicate(timeout=RUN_S * 2)[0]
        STATE["said"] = [tuple(int(x) for x in line.split()[1:]) for line in out.splitlines()
                         if line.startswith("at ")]
        # A target by its name from its exec on: the launcher maps no libjvm.so yet, and its
        # malloc is not taken for the JVM's allocations.
        exe, epid = start_alloc(java=launcher, seconds=8)
        jvms.append(exe)
        STATE["exe_procs"] = wait_processes(d, epid)
        time.sleep(5)
        code, _, body = d.get("/debug/pprof/allocs?seconds=5&pid=%d" % epid)
        STATE["exe"] = traces(body, "alloc_space") if code == 200 else []
    finally:
        for p in jvms:
            p.kill()
            p.wait()
        d.stop()


def caller(frames):
    """The first Alloc method of a stack (allocHot, allocCold, main), or None."""
    return next((f for f in frames if f.startswith("Alloc.")), None)


def by_caller(tr):
    """caller -> {leaf class: value}."""
    out = {}
    for v, _, f in tr:
        c = caller(f)
        if c and f:
            leaves = out.setdefault(c, {})
            leaves[f[0]] = leaves.get(f[0], 0) + v
    return out


def test_attached():
    procs = STATE["procs"]
    if not procs or not procs[0]["attached"] or procs[0]["mode"] != "java" or \
            not procs[0]["object"].endswith("/libjvm.so"):
        raise AssertionError("target JVM: %s" % procs)


def test_classes_under_callers():
    space = by_caller(STATE["target"]["alloc_space"])
    hot, cold = space.get("Alloc.allocHot", {}), space.get("Alloc.allocCold", {})
    total_hot, total_cold = sum(hot.values()), sum(cold.values())
    if not total_hot or not total_cold:
        leaves = sorted({f[0] for _, _, f in STATE["target"]["alloc_space"] if f})[:20]
        raise AssertionError("allocHot %d B, allocCold %d B; leaves %s" %
                             (total_hot, total_cold, leaves))
    # allocHot allocates byte[] only; allocCold a String and its byte[] each time.
    if hot.get("byte[]", 0) < 0.98 * total_hot:
        raise AssertionError("allocHot's leaves: %s" % hot)
    if not cold.get("java.lang.String") or \
            cold.get("java.lang.String", 0) + cold.get("byte[]", 0) < 0.98 * total_cold:
        raise AssertionError("allocCold's leaves: %s" % cold)
    ratio = total_hot / total_cold
    print("   allocHot %d B (%s), allocCold %d B (%s): %.2f" %
          (total_hot, hot, total_cold, cold, ratio))
    if not 2.4 <= ratio <= 3.6:
        raise AssertionError("allocHot:allocCold bytes = %.2f, want 3 +-20 %%" % ratio)


def test_bytes_as_counted():
    """The estimate of the window's bytes, against the JVM's own count in it (interpolated
    between its once-a-second counts)."""
    said = STATE["said"]
    t0, t1 = STATE["window"]

    def at(t):
        ms = t * 1000
        for (a, ha, ca), (b, hb, cb) in zip(said, said[1:]):
            if a <= ms <= b:
                return (ha + ca) + (hb + cb - ha - ca) * (ms - a) / (b - a)
        raise AssertionError("%.0f not within the counts %s..%s" % (ms, said[0], said[-1]))
    counted = at(t1) - at(t0)
    est = sum(v for v, _, _ in STATE["target"]["alloc_space"])
    print("   estimated %d B in %d s, the JVM counted %d: %.2f" %
          (est, WINDOW_S, counted, est / counted))
    if not 0.75 <= est / counted <= 1.25:
        raise AssertionError("estimated %d B, the JVM counted %d" % (est, counted))


def test_objects_by_size():
    """alloc_objects: the bytes over the object's size (allocHot's byte[3104]: 3,120 bytes)."""
    space = by_caller(STATE["target"]["alloc_space"]).get("Alloc.allocHot", {})
    objs = by_caller(STATE["target"]["alloc_objects"]).get("Alloc.allocHot", {})
    b, o = space.get("byte[]", 0), objs.get("byte[]", 0)
    if not o or not 0.9 <= b / o / HOT_OBJ <= 1.1:
        raise AssertionError("allocHot: %d B in %d objects, want %d B each" % (b, o, HOT_OBJ))


def test_exe_target_from_exec():
    procs = STATE["exe_procs"]
    if not procs or not procs[0]["attached"] or procs[0]["mode"] != "java":
        raise AssertionError("javalloc, a target from its exec: %s" % procs)
    # The program's own allocations (its JVM's start-up, loading classes, makes others).
    leaves = {f[0] for _, _, f in STATE["exe"] if f and caller(f) in ("Alloc.allocHot",
                                                                   "Alloc.allocCold")}
    if not leaves or not leaves <= {"byte[]", "java.lang.String"}:
        raise AssertionError("javalloc's leaves: %s" % leaves)


def test_other_jvm_nothing():
    if STATE["other"]["alloc_space"]:
        raise AssertionError("a JVM that is no target has %d stacks" %
                             len(STATE["other"]["alloc_space"]))


def test_stripped_not_profiled():
    m = STATE["metrics"]
    procs = STATE["stripped_procs"]
    if procs and procs[0]["attached"]:
        raise AssertionError("a JVM without AllocTracer's symbols was attached: %s" % procs)
    line = [x for x in m.splitlines() if x.startswith("autoprof_memory_jvms_unprobed")]
    if not line or float(line[0].split()[-1]) < 1:
        raise AssertionError("autoprof_memory_jvms_unprobed: %s" % line)
    if "has no AllocTracer in its symbol table" not in STATE["log"]:
        raise AssertionError("the log does not say why the JVM is not profiled")


def test_metrics():
    m = STATE["metrics"]
    for name, want in (("autoprof_memory_java_processes", 1),
                       ("autoprof_memory_java_classes_unnamed_total", 0)):
        line = [x for x in m.splitlines() if x.startswith(name + " ")]
        if not line or float(line[0].split()[-1]) != want:
            raise AssertionError("%s: %s, want %d" % (name, line, want))


checked = after_setup(run)


check("java_alloc_target_attached", checked(test_attached))
check("java_alloc_classes_under_callers", checked(test_classes_under_callers))
check("java_alloc_bytes_as_counted", checked(test_bytes_as_counted))
check("java_alloc_objects_by_size", checked(test_objects_by_size))
check("java_alloc_exe_target_from_exec", checked(test_exe_target_from_exec))
check("java_alloc_other_jvm_nothing", checked(test_other_jvm_nothing))
check("java_alloc_stripped_not_profiled", checked(test_stripped_not_profiled))
check("java_alloc_metrics", checked(test_metrics))
sys.exit(exit_status())
