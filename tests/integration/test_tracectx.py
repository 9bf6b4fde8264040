#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Trace-linked profiles: programs publishing the OTEP 4947 thread context (the variable in the
executable, and in a TLSDESC shared library), Elastic APM's correlation record, or Go pprof labels
switch spans every 200 ms on two threads (goroutines) and log each span; a third has none. Every
trace/span label in the profile must be one the program logged, >= 90 % of the traced threads'
samples carry one, none of the untraced."""

import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from aplib import BUILD, Daemon, check, exit_status, traces  # noqa: E402

d = Daemon()


def run(name, secs=3):
    """Runs a tctargets program; returns (pid, {(trace, span): publishing thread})."""
    out = subprocess.run([os.path.join(BUILD, "tctargets", name), str(secs)], check=True,
                         capture_output=True, text=True).stdout
    pid, spans = spans_of(out)
    assert pid and spans, out[:500]
    time.sleep(0.3)
    return pid, spans


def check_program(name, traced_fn="traced_spin", untraced_fn="untraced_spin"):
    pid, spans = run(name)
    code, _, body = d.get("/debug/pprof/profile?seconds=6&pid=%d" % pid)
    assert code == 200, code
    t = traces(body)
    traced = traced_labelled = untraced = untraced_labelled = 0
    publishers = set()
    for c, lab, fr in t:
        has = "trace_id" in lab
        if has:
            pair = (lab["trace_id"], lab.get("span_id"))
            assert pair in spans, "label %s was never published" % (pair,)
            publishers.add(spans[pair])
        if untraced_fn in fr:
            untraced += c
            untraced_labelled += c if has else 0
        elif traced_fn in fr:
            traced += c
            traced_labelled += c if has else 0
    print("  %s: %d of %d traced samples labelled, %d untraced" % (name, traced_labelled, traced,
                                                                 untraced))
    assert traced >= 50 and untraced >= 20, (traced, untraced)
    # Every traced sample counts, from the program's first span on (the C programs publish it
    # right after exec): a user expects a freshly started service's first requests labelled
    # too, so the test does not wait for autoprof to have learned the process. autoprof finds
    # the executable's variable at the exec event, a library's at the maps read its first
    # samples cause, and says it samples (autoprof_cpus_sampled, which Daemon() waits for) only
    # once exec events no longer wait behind its start-up: a few ms unlabelled. Before that a
    # loaded machine left 10-40 % of tctx_exe's samples, the first check after start, without
    # a label (CI: 359 of 399).
    assert traced_labelled >= 0.9 * traced, "%d of %d traced samples labelled" % (
        traced_labelled, traced)
    assert untraced_labelled == 0, "%d untraced samples labelled" % untraced_labelled
    # Both traced threads (goroutines) are read, not just one.
    assert publishers == set(spans.values()), (publishers, set(spans.values()))

    # trace_id= keeps one trace's samples only.
    counts = {}
    for c, lab, _ in t:
        if "trace_id" in lab:
            counts[lab["trace_id"]] = counts.get(lab["trace_id"], 0) + c
    trace = max(counts, key=counts.get)
    code, _, body = d.get("/debug/pprof/profile?seconds=6&pid=%d&trace_id=%s" % (pid, trace))
    assert code == 200, code
    got = traces(body)
    assert sum(c for c, _, _ in got) == counts[trace], (sum(c for c, _, _ in got), counts[trace])
    assert {lab["trace_id"] for _, lab, _ in got} == {trace}


def test_exemplar():
    """OpenMetrics: the process's CPU counter carries its latest span as an exemplar."""
    p = subprocess.Popen([os.path.join(BUILD, "tctargets", "tctx_exe"), "4"],
                         stdout=subprocess.PIPE, text=True)
    pid = None
    while pid is None:
        f = p.stdout.readline().split()
        if f and f[0] == "PID":
            pid = int(f[1])
    time.sleep(2)
    code, headers, body = d.get("/metrics", {"Accept": "application/openmetrics-text"})
    out = p.communicate()[0]
    spans = {(l.split()[2], l.split()[3]) for l in out.splitlines() if l.startswith("SPAN")}
    assert code == 200 and body.endswith(b"# EOF\n"), code
    text = body.decode()
    assert "# TYPE autoprof_process_cpu_seconds counter" in text
    line = next((l for l in text.splitlines() if l.startswith(
        'autoprof_process_cpu_seconds_total{pid="%d",exe="tctx_exe"}' % pid)), None)
    assert line, "no CPU counter for pid %d" % pid
    m = re.search(r' # \{trace_id="([0-9a-f]{32})",span_id="([0-9a-f]{16})"\} [0-9.e-]+ [0-9.]+$', line)
    assert m, line
    assert (m.group(1), m.group(2)) in spans, "exemplar %s was never published" % (m.groups(),)
    # The text format has no exemplars.
    text = d.get("/metrics")[2].decode()
    assert " # {" not in text


def test_bad_ids():
    for q in ("trace_id=xyz", "trace_id=" + "0" * 31, "span_id=" + "g" * 16):
        code, _, body = d.get("/debug/pprof/profile?" + q)
        assert code == 400 and q.split("=")[0].encode() in body, (q, code, body)


def start(name, secs):
    return subprocess.Popen([os.path.join(BUILD, "tctargets", name), str(secs)],
                            stdout=subprocess.PIPE, text=True)


def spans_of(out):
    """A tctargets program's output: (pid, {(trace, span): publishing thread})."""
    pid, spans = None, {}
    for line in out.splitlines():
        f = line.split()
        if f[0] == "PID":
            pid = int(f[1])
        elif f[0] == "SPAN":
            spans[(f[2], f[3])] = f[1]
    return pid, spans


# Each start leaves main() about a millisecond before the maps are read again (sample/proc.c):
# measured 2 samples of ~3,900 unlabelled in 60 starts. With the re-reads at 1 and 4 ms gone
# (left to the first samples), 8 of 12 starts lost one; with the flag set under the unwind
# tables' lock (the 3 ms re-read), 1 start in 6.
# CI under the whole suite: 1 and 3 of ~400 (main()'s first millisecond, stretched), 5 of 390
# once (2026-11-29, tctx_lib): a bound of 2 %, which a context lost for good (every sample of a
# run, ~65) still fails by far.
STARTUP_ROUNDS = 6
STARTUP_MISSES = 8


def test_startup():
    """Programs started the moment a new daemon first answers /metrics (its start-up scan and
    tables still in progress, each program learned from its exec on): their spans are read from
    their first samples, the variable in the executable and the one in a library alike."""
    d2 = Daemon()
    try:
        runs = []
        for _ in range(STARTUP_ROUNDS):
            procs = [(n, start(n, 1)) for n in ("tctx_exe", "tctx_lib")]
            for n, p in procs:
                runs.append((n,) + spans_of(p.communicate(timeout=30)[0]))
        time.sleep(0.5)
        bad = []
        for name in ("tctx_exe", "tctx_lib"):
            traced = labelled = 0
            for n, pid, spans in runs:
                if n != name:
                    continue
                code, _, body = d2.get("/debug/pprof/profile?seconds=30&pid=%d" % pid)
                assert code == 200, code
                for c, lab, fr in traces(body):
                    if "traced_spin" not in fr:
                        continue
                    traced += c
                    if "trace_id" in lab:
                        assert (lab["trace_id"], lab.get("span_id")) in spans, lab
                        labelled += c
            print("  startup %s: %d of %d traced samples labelled in %d runs of 1 s" % (
                name, labelled, traced, STARTUP_ROUNDS))
            if traced < 30 or traced - labelled > STARTUP_MISSES:
                bad.append("%s: %d of %d" % (name, labelled, traced))
        assert not bad, "; ".join(bad)
    finally:
        d2.stop()


check("context_in_executable", check_program, "tctx_exe")
check("context_in_tlsdesc_library", check_program, "tctx_lib")
check("elastic_correlation_record", check_program, "tctx_elastic")
for go in ("tctx_go", "tctx_go_cgo", "tctx_go_stripped"):
    check("go_pprof_labels_" + go[5:], check_program, go, "main.labelledSpin",
          "main.unlabelledSpin")
check("bad_trace_and_span_ids_400", test_bad_ids)
check("openmetrics_exemplar_is_a_published_span", test_exemplar)
check("context_from_first_sample_at_start", test_startup)
d.stop()
sys.exit(exit_status())
