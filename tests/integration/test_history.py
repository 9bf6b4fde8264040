#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Profiles on disk (storage.*): a program spikes in spike_fn for a few seconds; after memory
has let the spike go (profile.retention=10s) and autoprof was restarted (SIGTERM or kill -9),
start= and end= around the spike still show spike_fn, read back with go tool pprof, and an
earlier range does not; /api/v1/timeline draws the spike; a store over its budget drops its
oldest files; hostile directories and files are refused or skipped and counted; a full disk
stops the writes, not the profiling."""

import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from aplib import TARGETS, TMP, Daemon, Skip, check, exit_status, gpu_alloc_kept, traces  # noqa: E402

H = os.path.join(TMP, "history")
HZ = 99


def args(path=H, *more):
    return ("--storage.path=" + path, "--storage.flush-interval=1s", "--profile.retention=10s",
            *more)


class Spike:
    """build/targets/spike: idle, then spike_fn for `seconds`, then idle; the wall-clock
    times of both changes."""

    def __init__(self, seconds):
        self.p = subprocess.Popen([os.path.join(TARGETS, "spike"), str(seconds)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.pid = int(self.p.stdout.readline())
        self.started = time.time()

    def run(self):
        self.p.stdin.write("\n")
        self.p.stdin.flush()
        self.t0 = float(self.p.stdout.readline().split()[1])
        self.t1 = float(self.p.stdout.readline().split()[1])

    def end(self):
        self.p.stdin.close()
        self.p.wait(timeout=10)


def shares(d, start, end, pid):
    """(samples in spike_fn, all samples) of pid in [start, end), from the pprof read back by
    go tool pprof."""
    code, _, body = d.get("/debug/pprof/profile?start=%.3f&end=%.3f&pid=%d" % (start, end, pid))
    assert code == 200, body[:200]
    tr = traces(body)
    return (sum(c for c, _, frames in tr if "spike_fn" in frames), sum(c for c, _, _ in tr))


S = {}


def test_restart_keeps_spike():
    """A 5 s spike, gone from memory and autoprof restarted: [spike start, end] is spike_fn,
    the 3 s before it holds none."""
    shutil.rmtree(H, ignore_errors=True)
    d = Daemon(*args())
    sp = Spike(5)
    time.sleep(3)
    before = time.time() - 2.5
    sp.run()
    S["spike"] = sp
    # Memory keeps 10 s: 12 s later only the disk has it.
    time.sleep(12)
    rc, _ = d.stop()
    assert rc == 0, d.logtext()[-2000:]
    d2 = Daemon(*args())
    S["d"] = d2
    spike, total = shares(d2, sp.t0, sp.t1, sp.pid)
    want = HZ * (sp.t1 - sp.t0)
    assert spike >= 0.8 * want and spike >= 0.95 * total, (spike, total, want)
    spike_before, _ = shares(d2, before, sp.t0 - 1, sp.pid)
    assert spike_before == 0, spike_before
    # The same range by RFC 3339, whole seconds around it.
    iso = lambda t: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))  # noqa: E731
    code, _, body = d2.get("/debug/pprof/profile?start=%s&end=%s&pid=%d&format=folded" % (
        iso(sp.t0 - 1), iso(sp.t1 + 2), sp.pid))
    folded = body.decode()
    n = sum(int(l.rsplit(" ", 1)[1]) for l in folded.splitlines() if "spike_fn" in l)
    assert code == 200 and n >= 0.8 * want, (code, n, folded[:300])
    assert d2.metric("autoprof_history_records_read_total") > 0
    # The processes of the range, from disk: the spike with its samples.
    code, _, body = d2.get("/api/v1/processes?type=cpu&start=%.3f&end=%.3f" % (sp.t0, sp.t1))
    procs = {p["pid"]: p for p in json.loads(body)["processes"]}
    assert code == 200 and procs[sp.pid]["exe"] == "spike", procs
    assert procs[sp.pid]["samples"] >= 0.8 * want, procs[sp.pid]
    print("   spike_fn %d of %d samples (%.0f expected) after the restart; 0 before it" % (
        spike, total, want))


def test_timeline():
    """/api/v1/timeline by the second: the spike's steps carry the program's samples, the
    steps before it none."""
    d, sp = S["d"], S["spike"]
    code, _, body = d.get("/api/v1/timeline?type=cpu&start=%d&end=%d&step=1" % (
        int(sp.t0) - 3, int(sp.t1) + 2))
    assert code == 200, body
    tl = json.loads(body)
    assert tl["step"] == 1 and len(tl["times"]) == len(tl["total"])
    mine = next((p for p in tl["processes"] if p["pid"] == sp.pid), None)
    assert mine, [(p["pid"], p["exe"]) for p in tl["processes"]]
    assert mine["exe"] == "spike"
    inside = sum(v for t, v in zip(tl["times"], mine["values"]) if sp.t0 <= t < int(sp.t1))
    # Before the spike, once its own start (exec, the loader: a sample or two) is over, and
    # a step clear of it: a record's second starts at the monotonic clock's, up to 1 s off the
    # wall clock's, so the record before the spike may hold its first samples.
    outside = sum(v for t, v in zip(tl["times"], mine["values"])
                  if sp.started + 1 <= t and t + 2 <= sp.t0)
    want = HZ * (int(sp.t1) - int(sp.t0) - 1)
    assert inside >= 0.8 * want and outside == 0, (inside, outside, mine["values"])
    assert all(tot >= v for tot, v in zip(tl["total"], mine["values"]))
    # Default step over the last hour: whole flushes.
    code, _, body = d.get("/api/v1/timeline?type=cpu")
    assert code == 200 and json.loads(body)["step"] >= 1
    for bad in ("step=0", "step=x", "start=yesterday", "type=nope", "pid=-1"):
        code, _, _ = d.get("/api/v1/timeline?" + bad)
        assert code == 400, bad
    print("   %d samples in the spike's steps, 0 before" % inside)


def test_kill9():
    """kill -9 a second after a spike: at most the last flush is lost; the store opens
    cleanly after, and a record cut or damaged on disk is counted and skipped."""
    S["d"].stop()
    d = Daemon(*args())
    sp = Spike(3)
    sp.run()
    time.sleep(2.5)
    d.proc.send_signal(signal.SIGKILL)
    d.proc.wait()
    d2 = Daemon(*args())
    spike, total = shares(d2, sp.t0, sp.t1, sp.pid)
    want = HZ * (sp.t1 - sp.t0)
    assert spike >= 0.8 * want, (spike, total, want)
    sp.end()
    S["spike"].end()
    d2.stop()
    # A torn record at the end of the newest file, and a damaged one at the start of a copy.
    files = sorted(glob.glob(os.path.join(H, "*.aph")))
    with open(files[-1], "ab") as f:
        f.write(b"APH1" + b"\x00" * 40)
    data = open(files[0], "rb").read()
    with open(os.path.join(H, "100.aph"), "wb") as f:
        f.write(data[:50] + b"\xff" * 10 + data[60:])
    d3 = Daemon(*args())
    spike2, _ = shares(d3, sp.t0, sp.t1, sp.pid)
    assert spike2 == spike, (spike2, spike)
    assert d3.metric("autoprof_history_records_damaged_total") >= 2
    d3.stop()
    print("   spike_fn %d of %.0f after kill -9; 2 damaged records skipped" % (spike, want))


def test_budget():
    """Over storage.max-bytes, the oldest files go first (counted); the newest stay."""
    real = sorted(glob.glob(os.path.join(H, "*.aph")))
    size = sum(os.path.getsize(f) for f in real)
    n = 0
    while size < 600 * 1024:
        src = real[n % len(real)]
        shutil.copy(src, os.path.join(H, "%d.aph" % (1000 + n)))
        size += os.path.getsize(src)
        n += 1
    d = Daemon(*args(H, "--storage.max-bytes=256KiB"))
    removed = d.metric("autoprof_history_files_removed_total", 'reason="budget"')
    kept = d.metric("autoprof_history_bytes")
    assert removed > 0 and kept <= 256 * 1024, (removed, kept)
    left = sorted(glob.glob(os.path.join(H, "*.aph")))
    assert os.path.join(H, "1000.aph") not in left, left[:3]
    assert real[-1] in left, (real[-1], left)
    d.stop()
    print("   %d files over the budget removed, %d bytes kept" % (removed, kept))


def test_hostile_directory():
    """A symlinked directory, one others may write, one another autoprof holds: refused with a
    reason, profiles kept in memory; a FIFO and a symlink among the files are skipped."""
    link = os.path.join(TMP, "history-link")
    os.symlink(H, link)
    open_dir = os.path.join(TMP, "history-open")
    os.mkdir(open_dir)
    os.chmod(open_dir, 0o777)
    for path, why in ((link, "symlink"), (open_dir, "writable by it alone")):
        d = Daemon(*args(path))
        assert d.metric("autoprof_history_enabled") == 0
        assert why in d.logtext(), d.logtext()[-1000:]
        code, _, _ = d.get("/debug/pprof/profile?seconds=1")
        assert code == 200
        d.stop()
    os.mkfifo(os.path.join(H, "5.aph"))
    os.symlink("/etc/passwd", os.path.join(H, "6.aph"))
    d = Daemon(*args())
    assert d.metric("autoprof_history_enabled") == 1
    d2 = Daemon(*args())
    assert d2.metric("autoprof_history_enabled") == 0
    assert "another autoprof" in d2.logtext()
    d2.stop()
    d.stop()


def test_heap_past():
    """What was live then: a program keeps known GPU memory (the CUDA stand-ins), exits, and
    after a restart gpuheap of a range while it lived shows exactly what it kept, up to the
    last moment the daemon held it live (not a later set stamped earlier); a range after its
    exit, nothing live."""
    d = Daemon(*args())
    prog, _, truth, kept = gpu_alloc_kept(d)
    t0 = time.time()
    time.sleep(3)  # flushes with the live set in them
    prog.stdin.close()
    prog.wait(timeout=10)
    t1 = time.time()
    # The last moment the daemon still held it live: a range ending then shows it, though the
    # next flushes (a second or less later) wrote sets without it.
    seen = t1
    while time.time() < t1 + 10:
        _, _, body = d.get("/debug/pprof/gpuheap?format=folded")
        if not any(line.rsplit(" ", 1)[0].endswith(";" + f) and int(line.rsplit(" ", 1)[1])
                   for line in body.decode().splitlines() for f in kept):
            break
        seen = time.time()
        time.sleep(0.05)
    time.sleep(12)  # gone from memory
    d.stop()
    d = Daemon(*args())

    def live(start, end):
        code, _, body = d.get("/debug/pprof/gpuheap?start=%.3f&end=%.3f&format=folded" % (
            start, end))
        assert code == 200, body[:200]
        out = {}
        for line in body.decode().splitlines():
            stack, n = line.rsplit(" ", 1)
            fn = next((f for f in stack.split(";") if f in truth), None)
            if fn and int(n):
                out[fn] = out.get(fn, 0) + int(n)
        return out

    # A failed check must not leave this daemon profiling the tests after this one.
    try:
        then = live(t0 + 1, t1 - 0.5)
        assert then == kept, (then, kept)
        last = live(seen - 0.5, seen)
        assert last == kept, ("live until %.2f s after the exit" % (seen - t1), last, kept)
        after = live(t1 + 3, t1 + 10)
        assert not after, after
        # Freed since its last set: the empty set written at the next flush ends it.
        gone = live(seen + 1.4, seen + 1.5)
        assert not gone, ("freed %.2f s after the exit" % (seen - t1), gone)
    finally:
        d.stop()
    print("   %d functions, %d bytes live then: exact, until freed %.2f s after the exit; none "
          "after" % (len(kept), sum(kept.values()), seen - t1))


def test_disk_full():
    """A full disk: writes fail and are counted, profiling goes on in memory."""
    mnt = os.path.join(TMP, "full")
    os.mkdir(mnt)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", mnt]).returncode:
        raise Skip("cannot mount a tmpfs")
    try:
        path = os.path.join(mnt, "h")
        os.mkdir(path, 0o700)
        with open(os.path.join(mnt, "filler"), "wb", buffering=0) as f:
            try:
                while True:
                    f.write(b"\0" * 4096)
            except OSError:
                pass
        d = Daemon(*args(path))
        sp = Spike(2)
        sp.run()
        deadline = time.time() + 10
        while time.time() < deadline and not d.metric("autoprof_history_write_errors_total"):
            time.sleep(0.5)
        assert d.metric("autoprof_history_write_errors_total") > 0
        code, _, body = d.get("/debug/pprof/profile?seconds=8&pid=%d" % sp.pid)
        assert code == 200 and any("spike_fn" in f for _, _, f in traces(body))
        sp.end()
        d.stop()
    finally:
        subprocess.run(["umount", mnt])


if __name__ == "__main__":
    check("history_restart_keeps_spike", test_restart_keeps_spike)
    check("history_timeline", test_timeline)
    check("history_kill9", test_kill9)
    check("history_budget", test_budget)
    check("history_hostile_directory", test_hostile_directory)
    check("history_heap_past", test_heap_past)
    check("history_disk_full", test_disk_full)
    sys.exit(exit_status())
