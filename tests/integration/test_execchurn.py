#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Stacks under exec churn: a posix_spawn loop of programs that live well under a millisecond
(their whole life is the loader, main's return and exit), as CI runners and shells make them.
Every sample of those programs is one a user can trust:

- complete: it reaches _start (the program's, or the loader's entry before its first
  instruction ran, or its _dl_start_user once _dl_start returned), the clone3 the vfork child
  starts in before its exec, or says why there is no user stack at all: [exec] (in execve,
  past the end of the old image, whose registers the thread still holds) or [exiting] (in
  exit, past the release of its memory);
- or marked [truncated], or unnamed (raw addresses: gone before its maps were read);
- never ending in a named frame that is not an outermost one.

At least CHURN_COMPLETE of them are complete, and both markers are seen in the kernel paths
they stand for.

Then the same churn of distinct binaries (each its own build ID, as a host's many programs
are): after a first run of each, their executables are quiet (nothing of them was needed at
exec), and their execs wake nobody and read nothing. Their samples are as trustworthy, named
by their own files: learned while they lived, or by the mappings their exits reported.

Then quiet programs that live long enough to be sampled in their own code (150 ms each, named
past the 15 bytes of a comm): their samples come as files and offsets from BPF's own tables,
and name them, whole, with no read of their maps; one that lives past a second is learned all
the same.

Then fork churn: a program forks children that spin a millisecond in a known function, then exit
or, every other one, exec a command (as a shell's children do). Each child is walked by its
parent's table from its first instant and, gone long before its samples are read, named by its
parent's maps and name (the image it ran then, exec or not): its samples read
ec_fork: _start → main → ec_child_spin, complete and named."""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from aplib import TMP, check, checked, Daemon, exit_status, metric_value  # noqa: E402

COPIES = 20  # distinct files: each its own table, as distinct binaries are
SECONDS = 6
RATE = 400  # spawns a second, at most
CHURN_COMPLETE = 0.90
MIN_SAMPLES = 60
# (clone3 and clone: the vfork child posix_spawn makes starts there, before its exec.)
ROOTS = ("_start", "_dl_start_user", "[exec]", "[exiting]", "clone3", "__clone3", "clone",
         "__clone")
STATE = {}


def build():
    src = os.path.join(TMP, "ec_true.c")
    with open(src, "w") as f:
        f.write("int main(void) { return 0; }\n")
    first = os.path.join(TMP, "ec_true0")
    subprocess.run(["cc", "-O2", "-o", first, src], check=True)
    paths = [first]
    for i in range(1, COPIES):
        p = os.path.join(TMP, "ec_true%d" % i)
        with open(first, "rb") as a, open(p, "wb") as b:
            b.write(a.read())
        os.chmod(p, 0o755)
        paths.append(p)
    return paths


# The C programs' clock: CLOCK_MONOTONIC, in seconds.
NOW_C = r"""
#include <stdlib.h>
#include <time.h>
static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}
"""

FORK_SRC = NOW_C + r"""
#include <sys/wait.h>
#include <unistd.h>
__attribute__((noinline)) void ec_child_spin(double s)
{
	double end = now() + s;
	while (now() < end)
		;
}
int main(int argc, char **argv)
{
	double end = now() + atof(argv[1]);
	while (now() < end) {
		pid_t pid = fork();
		if (pid == 0) {
			static char *const argv_true[] = { "true", 0 };

			ec_child_spin(0.001);
			/* Every other child execs a command after its spin, as a shell's do. */
			if (getpid() & 1)
				execv("/bin/true", argv_true);
			_exit(0);
		}
		waitpid(pid, NULL, 0);
		usleep(2000);
	}
	return 0;
}
"""
FORK_SECONDS = 5
FORK_COMPLETE = 0.95


def build_distinct(source="int main(void) { return 0; }\n", name="ec_q", copies=COPIES,
                   first_id=1):
    """copies binaries of one program, each linked with its own build ID: distinct files to
    the symbolizer (copies of one file share its dso, and are never quiet)."""
    src = os.path.join(TMP, name + ".c")
    with open(src, "w") as f:
        f.write(source)
    obj = os.path.join(TMP, name + ".o")
    subprocess.run(["cc", "-O2", "-c", "-o", obj, src], check=True)
    paths = []
    for i in range(copies):
        p = os.path.join(TMP, "%s%d" % (name, i))
        subprocess.run(["cc", "-o", p, obj, "-Wl,--build-id=0x%040x" % (first_id + i)],
                       check=True)
        paths.append(p)
    return paths


SPIN_SRC = NOW_C + r"""
__attribute__((noinline)) void ec_quiet_spin(double s)
{
	double end = now() + s;
	while (now() < end)
		;
}
int main(int argc, char **argv)
{
	ec_quiet_spin(argc > 1 ? atof(argv[1]) : 0.15);
	return 0;
}
"""
SPIN_PREFIX = "ec_quiet_spinner"  # past a comm's 15 bytes: a name by comm would be cut
SPIN_COPIES = 8
SPIN_SECONDS = 5
SPIN_LONG = 1.5  # past proctab's QUIET_LEARN_AFTER_NS: learned all the same


def spin_runs(paths, seconds, arg=None):
    n = 0
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        path = paths[n % len(paths)]
        subprocess.run([path] + ([arg] if arg else []), check=True, timeout=30)
        n += 1
    return n


def build_fork():
    src = os.path.join(TMP, "ec_fork.c")
    with open(src, "w") as f:
        f.write(FORK_SRC)
    path = os.path.join(TMP, "ec_fork")
    subprocess.run(["cc", "-O2", "-o", path, src], check=True)
    return path


def folded_since(d, t0):
    """The folded profile of what was sampled since t0, once the last drain is in."""
    time.sleep(0.5)
    code, _, body = d.get("/debug/pprof/profile?seconds=%d&format=folded" %
                          (int(time.time() - t0) + 1))
    assert code == 200, "HTTP %d: %r" % (code, body[:300])
    return body.decode()


def quiet_metrics(d):
    m = d.metrics()
    return {k: metric_value(m, *(k if isinstance(k, tuple) else (k,)), default=0)
            for k in QUIET_METRICS}


def churn(paths, seconds):
    """posix_spawn (vfork and exec, as glibc does it) in a paced loop: the spawns made."""
    n = 0
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        pid = os.posix_spawn(paths[n % len(paths)], [paths[n % len(paths)]], {})
        os.waitpid(pid, 0)
        n += 1
        ahead = n / RATE - (time.monotonic() - t0)
        if ahead > 0:
            time.sleep(ahead)
    return n


def run():
    paths = build()
    d = Daemon("--profile.retention=2m")
    try:
        # Their tables built first, as on a host that has run them before.
        churn(paths, 1)
        time.sleep(1)
        t0 = time.time()
        STATE["spawns"] = churn(paths, SECONDS)
        STATE["folded"] = folded_since(d, t0)
        quiet = build_distinct()
        churn(quiet, 1)  # learned once each, and quiet once they exit
        time.sleep(1)
        before = quiet_metrics(d)
        t0 = time.time()
        STATE["quiet_spawns"] = churn(quiet, SECONDS)
        STATE["quiet_folded"] = folded_since(d, t0)
        after = quiet_metrics(d)
        STATE["quiet"] = {k: after[k] - before[k] for k in QUIET_METRICS}
        spin = build_distinct(SPIN_SRC, SPIN_PREFIX, SPIN_COPIES, 0x100)
        for path in spin:  # learned once each, and quiet once they exit
            subprocess.run([path, "0.01"], check=True, timeout=30)
        time.sleep(1)
        before = quiet_metrics(d)
        t0 = time.time()
        STATE["spin_runs"] = spin_runs(spin, SPIN_SECONDS)
        STATE["spin_folded"] = folded_since(d, t0)
        after = quiet_metrics(d)
        STATE["spin"] = {k: after[k] - before[k] for k in QUIET_METRICS}
        before = after
        spin_runs(spin[:1], 0.1, str(SPIN_LONG))
        time.sleep(0.5)
        after = quiet_metrics(d)
        STATE["spin_long"] = {k: after[k] - before[k] for k in QUIET_METRICS}
        fork = build_fork()
        # Its table built first too: a binary never seen ends its walks [truncated] while it
        # is built (test_unwind's startup checks), which is not this check's matter.
        subprocess.run([fork, "1"], check=True, timeout=60)
        time.sleep(1)
        t0 = time.time()
        subprocess.run([fork, str(FORK_SECONDS)], check=True, timeout=60)
        STATE["fork_folded"] = folded_since(d, t0)
        STATE["inherited"] = d.metric("autoprof_maps_inherited_total", default=0)
        STATE["fork_tables"] = d.metric("autoprof_unwind_fork_tables_total", default=0)
        STATE["before_exec"] = d.metric("autoprof_stacks_before_exec_total", default=0)
    finally:
        d.stop()


QUIET_METRICS = ("autoprof_quiet_execs_total",
                 ("autoprof_quiet_processes_named_total", 'how="exit_maps"'),
                 ("autoprof_quiet_processes_named_total", 'how="learned"'),
                 "autoprof_maps_reads_total",
                 "autoprof_quiet_samples_described_total",
                 "autoprof_process_exit_mappings_unsaid_total")


def classify(folded="folded", prefix="ec_true"):
    kinds = {"complete": [], "truncated": [], "unnamed": [], "other": []}
    for line in STATE[folded].splitlines():
        stack, n = line.rsplit(" ", 1)
        fr = stack.split(";")
        if not fr[0].startswith(prefix) or len(fr) < 2:
            continue
        if "[truncated]" in fr:
            k = "truncated"
        elif fr[1] in ROOTS:
            k = "complete"
        elif fr[1].startswith("0x"):
            k = "unnamed"
        else:
            k = "other"
        kinds[k].append((int(n), fr))
    return kinds


def total(rows):
    return sum(n for n, _ in rows)


def test_trustworthy():
    kinds = classify()
    counts = {k: total(v) for k, v in kinds.items()}
    all_ = sum(counts.values())
    print("# %d spawns, %d samples of them: %s" % (
        STATE["spawns"], all_, ", ".join("%s %d" % kv for kv in counts.items())))
    assert all_ >= MIN_SAMPLES, "only %d samples of the churn" % all_
    bad = sorted(kinds["other"], key=lambda r: -r[0])[:3]
    assert not bad, "stacks that end in a frame that is not outermost, unmarked: %s" % [
        ";".join(fr[:8]) for _, fr in bad]
    share = counts["complete"] / all_
    cut = sorted(kinds["truncated"], key=lambda r: -r[0])[:3]
    assert share >= CHURN_COMPLETE, "%.1f %% complete, want %.0f %%; cut most: %s" % (
        100 * share, 100 * CHURN_COMPLETE, [";".join(fr[:8]) for _, fr in cut])


def markers(root, kernel_fn):
    rows = [(n, fr) for n, fr in classify()["complete"] if fr[1] == root]
    assert rows, "no sample says %s" % root
    # (A kernel stack of one frame is one the kernel's unwinder could not walk, in a
    # retpoline thunk's first instructions: there is no path to check it against.)
    off = [fr for _, fr in rows if kernel_fn not in fr and len(fr) > 3]
    assert not off, "%s outside %s: %s" % (root, kernel_fn, ";".join(off[0][:8]))


def test_exec_marked():
    markers("[exec]", "__x64_sys_execve")


def test_exiting_marked():
    markers("[exiting]", "do_exit")


def test_no_exec_cut():
    """In execve, the old image's registers are never shown as a cut stack of it."""
    cut = [fr for _, fr in classify()["truncated"] if "__x64_sys_execve" in fr and
           "load_elf_binary" in fr]
    assert not cut, "cut in the exec: %s" % ";".join(cut[0][:8])


def test_quiet():
    """Quiet execs: counted, nothing read for most, stacks as trustworthy, own names."""
    q = STATE["quiet"]
    kinds = classify("quiet_folded", "ec_q")
    counts = {k: total(v) for k, v in kinds.items()}
    all_ = sum(counts.values())
    names = {fr[0] for rows in kinds.values() for _, fr in rows}
    print("# quiet churn: %d spawns, %d quiet execs, named learned %d and by exit maps %d, %d "
          "exits unsaid, %d maps reads; %d samples: %s; %d names" % (
              STATE["quiet_spawns"], q["autoprof_quiet_execs_total"],
              q[("autoprof_quiet_processes_named_total", 'how="learned"')],
              q[("autoprof_quiet_processes_named_total", 'how="exit_maps"')],
              q["autoprof_process_exit_mappings_unsaid_total"],
              q["autoprof_maps_reads_total"], all_,
              ", ".join("%s %d" % kv for kv in counts.items()), len(names)))
    assert q["autoprof_quiet_execs_total"] >= 0.9 * STATE["quiet_spawns"], q
    # Samples of processes gone before the next drain: named by their exits' mappings.
    assert q[("autoprof_quiet_processes_named_total", 'how="exit_maps"')] > 0, q
    assert q["autoprof_maps_reads_total"] <= 0.5 * STATE["quiet_spawns"], q
    # Most are never sampled: their exits say nothing (and their stacks above stay whole).
    assert q["autoprof_process_exit_mappings_unsaid_total"] >= 0.5 * STATE["quiet_spawns"], q
    assert all_ >= MIN_SAMPLES, "only %d samples of the quiet churn" % all_
    bad = sorted(kinds["other"], key=lambda r: -r[0])[:3]
    assert not bad, "stacks that end in a frame that is not outermost, unmarked: %s" % [
        ";".join(fr[:8]) for _, fr in bad]
    unnamed = sorted(kinds["unnamed"], key=lambda r: -r[0])[:3]
    assert counts["unnamed"] <= 0.03 * all_, (counts, [";".join(fr[:8]) for _, fr in unnamed])
    share = counts["complete"] / all_
    cut = sorted(kinds["truncated"], key=lambda r: -r[0])[:3]
    assert share >= CHURN_COMPLETE, "%.1f %% complete, want %.0f %%; cut most: %s" % (
        100 * share, 100 * CHURN_COMPLETE, [";".join(fr[:8]) for _, fr in cut])
    # Each named by its own file (a file of one build ID shares nothing with another's).
    assert names <= {"ec_q%d" % i for i in range(COPIES)} and len(names) >= COPIES // 2, names


def test_quiet_spinners():
    """Quiet programs sampled in their own code while they live: named by BPF's file frames,
    whole, by their own (long) names, with no maps read; one alive past a second is learned."""
    q = STATE["spin"]
    # (By a prefix a comm keeps: a process named by its comm is caught below.)
    kinds = classify("spin_folded", SPIN_PREFIX[:15])
    counts = {k: total(v) for k, v in kinds.items()}
    hot = {"whole": 0, "other": []}
    for n, fr in kinds["complete"] + kinds["truncated"] + kinds["unnamed"] + kinds["other"]:
        if "ec_quiet_spin" not in fr:
            continue
        spin_at = fr.index("ec_quiet_spin")
        # (Below it, clock_gettime and the vDSO's: walked by BPF's table too.)
        if fr[1:4] == ["_start", "__libc_start_main", "__libc_start_call_main"] and \
                fr[spin_at - 1] == "main" and "[truncated]" not in fr:
            hot["whole"] += n
        else:
            hot["other"].append((n, fr))
    spun = hot["whole"] + total(hot["other"])
    names = {fr[0] for rows in kinds.values() for _, fr in rows}
    print("# quiet spinners: %d runs, %d quiet execs, %d maps reads, %d samples described "
          "with nothing read; %d samples in ec_quiet_spin, %d whole; %s; names %s; past %.1f s: "
          "%d learned" % (STATE["spin_runs"], q["autoprof_quiet_execs_total"],
                          q["autoprof_maps_reads_total"],
                          q["autoprof_quiet_samples_described_total"], spun, hot["whole"],
                          ", ".join("%s %d" % kv for kv in counts.items()), sorted(names),
                          SPIN_LONG,
                          STATE["spin_long"][("autoprof_quiet_processes_named_total",
                                              'how="learned"')]))
    assert q["autoprof_quiet_execs_total"] >= 0.9 * STATE["spin_runs"], q
    assert spun >= 50, "only %d samples in ec_quiet_spin" % spun
    # Sampled while they live, yet not read: before, each was learned at its first samples.
    assert q["autoprof_quiet_samples_described_total"] > 0, q
    assert q["autoprof_maps_reads_total"] <= 0.2 * STATE["spin_runs"], q
    assert hot["whole"] >= 0.95 * spun, "%d of %d whole; e.g. %s" % (
        hot["whole"], spun, [";".join(fr[:8]) for _, fr in hot["other"][:3]])
    assert names <= {"%s%d" % (SPIN_PREFIX, i) for i in range(SPIN_COPIES)}, names
    assert STATE["spin_long"][("autoprof_quiet_processes_named_total", 'how="learned"')] >= 1, \
        STATE["spin_long"]


def test_forked_children():
    spin = whole = unnamed = every = 0
    bad = []
    for line in STATE["fork_folded"].splitlines():
        stack, n = line.rsplit(" ", 1)
        fr = stack.split(";")
        every += int(n)
        if len(fr) > 1 and fr[1].startswith("0x"):
            unnamed += int(n)
        if "ec_child_spin" not in fr:
            continue
        spin += int(n)
        if fr[0] == "ec_fork" and fr[1:4] == ["_start", "__libc_start_main",
                                             "__libc_start_call_main"] and "main" in fr:
            whole += int(n)
        else:
            bad.append(";".join(fr[:8]))
    print("# forked children: %d samples in ec_child_spin, %d whole and named; %d maps "
          "inherited, %d tables copied at fork, %d stacks named before an exec" % (
              spin, whole, STATE["inherited"], STATE["fork_tables"], STATE["before_exec"]))
    assert spin >= 20, "only %d samples of the children" % spin
    # A child's samples before its exec are its parent's image, not raw addresses of its new one.
    assert unnamed <= 0.03 * every, "%d of %d samples unnamed" % (unnamed, every)
    assert STATE["fork_tables"] > 0, "no table copied at fork"
    assert STATE["before_exec"] > 0, "no stack of a child that exec'd named by its parent"
    assert whole >= FORK_COMPLETE * spin, "%d of %d whole; e.g. %s" % (whole, spin, bad[:3])


err = None
try:
    run()
except Exception as e:  # noqa: BLE001
    err = e


check("churn_stacks_complete_or_marked", checked(err, test_trustworthy))
check("churn_exec_marked", checked(err, test_exec_marked))
check("churn_exiting_marked", checked(err, test_exiting_marked))
check("churn_exec_never_cut", checked(err, test_no_exec_cut))
check("quiet_execs_trustworthy", checked(err, test_quiet))
check("quiet_spinners_named_unread", checked(err, test_quiet_spinners))
check("fork_children_whole_and_named", checked(err, test_forked_children))
sys.exit(exit_status())
