#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Drill-down in the web view, in headless Chromium: probe_target (handle(): 200 us of work,
every tenth call 2 ms more in slow_path()) runs under the real daemon; a user clicks its handle
frame, times it, reads the histogram and the slow/fast split, opens the source view, probes a
line inside the slow calls and removes the probes, all from the page. Then what the source view
will not read: nothing without the admin API, no file not named like source, no FIFO.
Screenshots go to $BUILD/test-artifacts/drill-*.png."""

import json
import os
import re
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from aplib import BUILD, ROOT, TMP, Daemon, check, exit_status  # noqa: E402
from browser import Browser  # noqa: E402

ARTIFACTS = os.path.join(BUILD, "test-artifacts")
TARGET = os.path.join(BUILD, "probetargets", "probe_target")
SOURCE = os.path.join(ROOT, "tests", "targets", "probes", "probe_target.c")
NAMES = ("drill_time_function", "drill_source_view", "drill_line_probe", "drill_remove_probes",
         "drill_admin_off", "drill_source_refused")

d = Daemon("--web.enable-admin-api", "--profile.retention=2m")
if b"web view was not built" in d.get("/", {"Accept": "text/html"})[2]:
    d.stop()
    for name in NAMES:
        print("SKIP %s: the web view was not built into autoprof (no npm at build time)" % name)
    sys.exit(0)

with open(SOURCE) as f:
    SOURCE_LINES = f.read().split("\n")
PROBE_LINE = next(n for n, t in enumerate(SOURCE_LINES, 1) if "PROBE_LINE" in t)


class Target:
    """probe_target making calls without pause; the quantiles it measured itself, per batch."""

    def __init__(self):
        self.p = subprocess.Popen([TARGET, "200", "2000", "10"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        self.pid = int(self.p.stdout.readline())
        self.p95 = []
        self.stopping = False
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self):
        while not self.stopping:
            self.p.stdin.write("run 200\n")
            self.p.stdin.flush()
            line = self.p.stdout.readline()
            m = re.search(r"p95=(\d+)", line)
            if not m:
                return
            self.p95.append(int(m.group(1)))

    def stop(self):
        self.stopping = True
        self.thread.join(timeout=10)
        self.p.stdin.write("quit\n")
        self.p.stdin.close()
        self.p.wait(timeout=10)


target = Target()
browser = Browser(log_path=os.path.join(TMP, "chromium-drill.log"))
R = {}


def probes(daemon=None):
    code, _, body = (daemon or d).get("/api/v1/probes")
    assert code == 200, (code, body)
    return json.loads(body)["probes"]


# Viewport coordinates of the middle of the widest drawn frame of a name, once it is drawn.
FRAME_AT = """(() => {
    let best = null;
    for (const g of document.querySelectorAll('#flame g.frame[name="%s"] rect')) {
        const r = g.getBoundingClientRect();
        if (!best || r.width > best.width) best = r;
    }
    return best && best.width > 2 && [best.x + best.width / 2, best.y + best.height / 2];
})()"""


def click_frame(base, name):
    """Opens the view of the target and clicks the widest frame called name."""
    browser.goto(base + "/#type=cpu&seconds=30&pid=%d" % target.pid)
    browser.wait_for(FRAME_AT % name, timeout=45, what="a %s frame drawn" % name)
    # d3-flame-graph grows frames in over 250 ms: click where it settled.
    time.sleep(0.8)
    x, y = browser.evaluate(FRAME_AT % name)
    browser.click(x, y)
    browser.wait_for("""!document.getElementById('frame-actions').hidden &&
        document.getElementById('frame-name').textContent === '%s'""" % name,
                     what="the actions of the clicked frame")


def test_time_function():
    """Click handle, "time this function": one probe on handle in probe_target's binary, its
    histogram with p95 where the program's own p95 is, and the split showing slow_path."""
    base = "http://127.0.0.1:%d" % d.port
    click_frame(base, "handle")
    # Capturing handle's parameter i (the call's number) too.
    browser.evaluate("document.getElementById('time-capture').value = 'i'")
    browser.evaluate("document.getElementById('time-fn').click()")
    listed = browser.wait_for("""(() => { const t = document.querySelectorAll(
        '#probe-list tbody tr'); return t.length && [...t].map(r => r.dataset.probe); })()""",
                              what="the new probe in the page's list")
    got = probes()
    assert len(got) == 1 and [str(got[0]["id"])] == listed, (got, listed)
    p = got[0]
    assert (p["binary"], p["function"], p["pid"]) == (TARGET, "handle", target.pid), p
    assert [c["name"] for c in p["capture"]] == ["i"], p
    R["fn"] = p["id"]
    assert "probe=%d" % p["id"] in browser.evaluate("location.hash")
    # The live page asks again every 5 s: wait for a few hundred calls in its summary.
    browser.wait_for("""(() => { const m = document.getElementById('probe-summary')
        .textContent.match(/^(\\d+) calls/); return m && Number(m[1]) >= 300; })()""",
                     timeout=45, what="300 calls in the probe's summary")
    code, _, body = d.get("/api/v1/probes/%d/latency?seconds=30" % p["id"])
    lat = json.loads(body)
    own = sorted(target.p95[-10:])[len(target.p95[-10:]) // 2]
    assert 0.75 < lat["p95_ns"] / own < 1.33, (lat["p95_ns"], own)
    # What the page shows is what the API said.
    page_p95 = browser.evaluate("""[...document.querySelectorAll('#histogram text')]
        .map(t => t.textContent).find(t => t.startsWith('p95 '))""")
    summary = browser.evaluate("document.getElementById('probe-summary').textContent")
    assert page_p95 and page_p95.split(" ", 1)[1] in summary, (page_p95, summary)
    assert 1.5e6 < lat["p95_ns"] < 4e6, lat
    # The split: slow_path is only in slow calls, drawn red (a larger share of slow calls).
    browser.wait_for("!!document.querySelector('#diff g.frame[name=slow_path] rect')",
                     timeout=30, what="slow_path in the slow/fast flame graph")
    fill = browser.evaluate("getComputedStyle(document.querySelector("
                            "'#diff g.frame[name=slow_path] rect')).fill")
    r, g, b = [int(x) for x in fill[fill.index("(") + 1:-1].split(",")[:3]]
    assert r > b + 40, fill
    # The calls by the value of i: thousands of values, so power-of-two ranges, all calls in.
    groups = browser.wait_for("""(() => { const t = document.getElementById('probe-groups');
        return !t.hidden && [...t.querySelectorAll('tbody tr')].map(r =>
            [r.cells[0].textContent, Number(r.cells[1].textContent)]); })()""",
                              what="the calls grouped by i")
    assert all(re.match(r"^\d+\.\.\d+$", v) for v, _ in groups), groups
    browser.evaluate("document.getElementById('probe-panel').scrollIntoView()")
    browser.screenshot(os.path.join(ARTIFACTS, "drill-time.png"))


def test_source_view():
    """"source": handle's lines with their shares, the file's own text around them."""
    browser.evaluate("document.getElementById('show-source').click()")
    rows = browser.wait_for("""(() => { const rows = [...document.querySelectorAll(
        '#source-lines tbody tr')]; return rows.length > 5 && rows.map(r => [
        Number(r.dataset.line), r.className, r.querySelector('td.code').textContent,
        r.querySelector('td.total').textContent]); })()""", what="the source view's lines")
    assert "src=handle" in browser.evaluate("location.hash")
    for n, _, text, _ in rows:
        assert text == SOURCE_LINES[n - 1], (n, text, SOURCE_LINES[n - 1])
    hot = {n: float(total.strip(" %")) for n, cls, _, total in rows if cls == "hot"}
    # The calls of fast_work() and slow_path() take handle's time, about half each (its
    # prologue's line, a few samples, may be there too).
    fast_line = next(n for n, t in enumerate(SOURCE_LINES, 1) if "\tfast_work();" in t)
    assert {n for n, v in hot.items() if v > 5} == {fast_line, PROBE_LINE + 1}, \
        (hot, fast_line, PROBE_LINE)
    code, _, body = d.get("/api/v1/source?function=handle&seconds=30&pid=%d" % target.pid)
    src = json.loads(body)
    loc = src["locations"][0]
    assert loc["binary"] == TARGET and loc["file"] == SOURCE and not loc["inlined"], loc
    share = {l["line"]: 100.0 * l["total"] / src["profile_total"] for l in loc["lines"]}
    assert 35 < share[fast_line] < 65 and 35 < share[PROBE_LINE + 1] < 65, share
    browser.evaluate("document.getElementById('source-panel').scrollIntoView()")
    browser.screenshot(os.path.join(ARTIFACTS, "drill-source.png"))


def test_line_probe():
    """A line probe on the slow branch, only inside handle's slow calls, from the source view."""
    browser.evaluate("""(() => { const c = document.getElementById('source-inside');
        if (!c.checked) c.click(); })()""")
    browser.evaluate("document.querySelector('#source-lines button[data-line=\"%d\"]').click()"
                     % PROBE_LINE)
    try:
        browser.wait_for("document.querySelectorAll('#probe-list tbody tr').length === 2",
                         what="the line probe in the page's list")
    except Exception as e:
        raise AssertionError("%s; the page says: %s" % (e, browser.evaluate(
            "document.getElementById('source-status').textContent")))
    line = [p for p in probes() if p["id"] != R["fn"]]
    assert len(line) == 1, line
    line = line[0]
    assert line["placement"] == "line" and line["location"] == "%s:%d" % (SOURCE, PROBE_LINE), line
    assert line["inside"] == {"probe": R["fn"], "latency": "slow"}, line
    R["line"] = line["id"]
    deadline = time.time() + 30
    while time.time() < deadline and not [p for p in probes() if p["id"] == R["line"]][0]["calls"]:
        time.sleep(1)
    assert [p for p in probes() if p["id"] == R["line"]][0]["calls"] > 0
    text = browser.evaluate("document.querySelector('#probe-list tr[data-probe=\"%d\"]')"
                            ".textContent" % R["line"])
    assert "slow calls of #%d" % R["fn"] in text, text


def test_remove_probes():
    """Each probe's remove button: gone from the page and from the API."""
    for pid in (R["line"], R["fn"]):
        browser.evaluate("document.querySelector('#probe-list button[data-remove=\"%d\"]')"
                         ".click()" % pid)
        browser.wait_for("!document.querySelector('#probe-list tr[data-probe=\"%d\"]')" % pid,
                         what="probe %d gone from the list" % pid)
    assert probes() == [], probes()


def test_admin_off():
    """Without the admin API the page says how to time a function, and shows no source text
    nor probe buttons; the refusal is counted."""
    d2 = Daemon("--profile.retention=2m")
    try:
        click_frame("http://127.0.0.1:%d" % d2.port, "handle")
        browser.evaluate("document.getElementById('time-fn').click()")
        said = browser.wait_for("document.getElementById('frame-status').textContent",
                                what="why the function cannot be timed")
        assert "--web.enable-admin-api" in said, said
        browser.evaluate("document.getElementById('show-source').click()")
        why = browser.wait_for("document.getElementById('source-error').textContent",
                               what="why there is no source text")
        assert "--web.enable-admin-api" in why, why
        assert not browser.evaluate("document.querySelector('#source-lines button')")
        assert browser.evaluate("document.querySelectorAll('#source-lines tbody tr').length") >= 2
        assert probes(d2) == []
        assert d2.metric("autoprof_source_reads_total", 'result="admin_api_off"') >= 1
    finally:
        d2.stop()


SPIN = r"""
#include <stdio.h>
#include <unistd.h>
volatile unsigned long sink;
__attribute__((noinline)) void spin_here(void)
{
	for (unsigned long i = 0; i < 400000000UL; i++)
		sink += i;
}
int main(void)
{
	printf("%d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		spin_here();
}
"""


def spin_source(d, path):
    """Builds SPIN from path (a file of that name), runs it 3 s under d: its source view."""
    with open(path, "w") as f:
        f.write(SPIN)
    exe = path + ".bin"
    subprocess.run(["gcc", "-O0", "-g", "-x", "c", path, "-o", exe], check=True)
    p = subprocess.Popen([exe], stdout=subprocess.PIPE, text=True)
    pid = int(p.stdout.readline())
    try:
        time.sleep(3)
        return pid, p, exe
    except BaseException:
        p.kill()
        raise


def test_source_refused():
    """Source text only from a file named like source, never from a FIFO; counted."""
    work = os.path.join(TMP, "drill")
    os.makedirs(work, exist_ok=True)
    for name, want, result in (("secret.conf", "not named like source code", "not_source"),
                               ("fifo.c", "not a regular file", "unreadable")):
        path = os.path.join(work, name)
        before = d.metric("autoprof_source_reads_total", 'result="%s"' % result)
        pid, p, _ = spin_source(d, path)
        try:
            if name == "fifo.c":
                os.unlink(path)
                os.mkfifo(path)
            t0 = time.time()
            code, _, body = d.get("/api/v1/source?function=spin_here&seconds=10&pid=%d" % pid)
            took = time.time() - t0
        finally:
            p.kill()
            p.wait()
        assert code == 200, (code, body)
        loc = json.loads(body)["locations"][0]
        assert loc["file"] == path and "source" not in loc, loc
        assert want in loc["source_error"], loc
        assert took < 5, took
        assert d.metric("autoprof_source_reads_total", 'result="%s"' % result) == before + 1
    assert d.metric("autoprof_file_errors_total", 'reason="not_regular"') >= 1


try:
    check("drill_time_function", test_time_function)
    check("drill_source_view", test_source_view)
    check("drill_line_probe", test_line_probe)
    check("drill_remove_probes", test_remove_probes)
    check("drill_admin_off", test_admin_off)
    check("drill_source_refused", test_source_refused)
finally:
    browser.close()
    target.stop()
    d.stop()
sys.exit(exit_status())
