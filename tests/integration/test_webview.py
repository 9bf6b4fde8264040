#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The live web view in headless Chromium: the real daemon profiles cpu_shares (60/30/10), the
page is loaded from the binary, the process is picked as a user would, and the flame graph's
rendered frames are measured. Screenshots go to $BUILD/test-artifacts/webview-*.png."""

import gzip
import http.server
import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from aplib import (BUILD, TARGETS, TMP, Daemon, Skip, check, exit_status,  # noqa: E402
                   gpu_alloc_kept, start_target)
from browser import Browser, BrowserError  # noqa: E402

ARTIFACTS = os.path.join(BUILD, "test-artifacts")
NAMES = ("webview_negotiation", "webview_processes_api", "webview_heap_folded",
         "webview_flamegraph_shares", "webview_live_refresh", "webview_search", "webview_hover",
         "webview_zoom", "webview_probe_histogram", "webview_probe_panel_contract",
         "webview_gpuheap_shares", "webview_timeline_range", "webview_function_table",
         "webview_sandwich", "webview_compare")

d = Daemon("--web.enable-admin-api", "--profile.retention=2m")
if b"web view was not built" in d.get("/", {"Accept": "text/html"})[2]:
    d.stop()
    for name in NAMES:
        print("SKIP %s: the web view was not built into autoprof (no npm at build time)" % name)
    sys.exit(0)
target, pid = start_target("cpu_shares", 180)
browser = Browser(log_path=os.path.join(TMP, "chromium.log"))
base = "http://127.0.0.1:%d" % d.port

# Sums of the rendered widths of every frame with each name (a function may sit in several
# stacks), the root's width, and how many frames are drawn.
MEASURE = """(() => {
    const w = {};
    for (const g of document.querySelectorAll('#%s g.frame')) {
        const name = g.getAttribute('name');
        w[name] = (w[name] || 0) + g.querySelector('rect').getBoundingClientRect().width;
    }
    return w;
})()"""


def post(path, body):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def frame_center(name):
    """Viewport coordinates of the middle of the widest drawn frame with that name."""
    return browser.evaluate("""(() => {
        let best = null;
        for (const g of document.querySelectorAll('#flame g.frame[name="%s"] rect')) {
            const r = g.getBoundingClientRect();
            if (!best || r.width > best.width) best = r;
        }
        return best && [best.x + best.width / 2, best.y + best.height / 2];
    })()""" % name)


def settled(chart):
    """Frame widths of a chart (flame or diff) once they stop changing: d3-flame-graph grows
    new frames over 250 ms after a 125 ms delay."""
    last = None
    for _ in range(50):
        now = browser.evaluate(MEASURE % chart)
        if now and now == last:
            return now
        last = now
        time.sleep(0.3)
    raise AssertionError("%s frame widths never settled: %s" % (chart, last))


def samples_of(p):
    code, _, body = d.get("/api/v1/processes?type=cpu&seconds=60")
    assert code == 200, (code, body)
    return sum(x["samples"] for x in json.loads(body)["processes"] if x["pid"] == p)


def renders():
    return int(browser.evaluate("document.getElementById('flame').dataset.renders || 0"))


def test_negotiation():
    """Browsers get the page, other clients the endpoint list; /debug/ lists endpoints always."""
    code, headers, body = d.get("/", {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert code == 200 and headers["Content-Type"].startswith("text/html"), (code, headers)
    assert b'id="flame"' in body and b"<script>" in body, body[:300]
    assert b"not built" not in body
    code, headers, gz = d.get("/", {"Accept": "text/html", "Accept-Encoding": "gzip"})
    assert headers.get("Content-Encoding") == "gzip" and gzip.decompress(gz) == body, headers
    assert len(gz) < len(body) / 2, (len(gz), len(body))
    for path, accept in (("/", None), ("/debug/", "text/html")):
        code, headers, body = d.get(path, {"Accept": accept} if accept else None)
        assert code == 200 and b"/debug/pprof/profile" in body and b"/api/v1/processes" in body, \
            (path, code, body[:300])


def test_processes_api():
    """/api/v1/processes names the running target with its samples; bad input is a 400."""
    time.sleep(4)
    code, _, body = d.get("/api/v1/processes?type=cpu&seconds=30")
    assert code == 200, (code, body)
    procs = json.loads(body)["processes"]
    mine = [p for p in procs if p["pid"] == pid]
    assert mine and mine[0]["exe"] == "cpu_shares" and mine[0]["samples"] > 100, procs[:5]
    assert all(a["samples"] >= b["samples"] for a, b in zip(procs, procs[1:])), "not sorted"
    code, _, body = d.get("/api/v1/profiles")
    assert code == 200 and [p["name"] for p in json.loads(body)["profiles"]][:2] == \
        ["cpu", "offcpu"] and json.loads(body)["retention_s"] == 120, body
    for t in ("offcpu", "allocs", "heap"):
        code, _, body = d.get("/api/v1/processes?type=" + t)
        assert code == 200 and json.loads(body)["type"] == t, (t, code, body)
    for q, why in (("type=nope", b"type"), ("seconds=0", b"seconds"), ("seconds=999", b"retention"),
                   ("seconds=x", b"seconds")):
        code, _, body = d.get("/api/v1/processes?" + q)
        assert code == 400 and why in body, (q, code, body)


def test_heap_folded():
    """The page reads every profile type as folded stacks: heap answers format=folded too."""
    code, headers, _ = d.get("/debug/pprof/heap?format=folded")
    assert code == 200 and headers["Content-Type"].startswith("text/plain"), (code, headers)
    code, _, body = d.get("/debug/pprof/heap?format=xml")
    assert code == 400 and b"format" in body, (code, body)


def test_flamegraph_shares():
    """Picking cpu_shares in the process list draws hot_60/hot_30/hot_10 at 60/30/10 widths."""
    # Enough samples that ±6 points is well outside chance (900: σ 1.6 points for hot_60), in
    # a 60 s window: on a busy machine cpu_shares may get a fraction of a CPU.
    deadline = time.time() + 100
    while samples_of(pid) < 900:
        assert time.time() < deadline, "cpu_shares has only %d samples in 60 s" % samples_of(pid)
        time.sleep(1)
    browser.goto(base + "/")
    browser.wait_for("!!document.querySelector('#process option[value=\"%d\"]')" % pid, timeout=20,
                     what="pid %d in the process list" % pid)
    browser.wait_for("Number(document.getElementById('flame').dataset.renders || 0) > 0",
                     what="the first flame graph")
    settled("flame")
    windows = browser.evaluate("[...document.getElementById('seconds').options].map(o => o.value)")
    assert windows == ["10", "30", "60", "120"], windows  # none beyond the 2 min retention
    browser.screenshot(os.path.join(ARTIFACTS, "webview-all.png"))
    # Freeze the view (no live refresh re-rendering under the measurement), then pick the process.
    before = renders()
    browser.evaluate("""(() => {
        const live = document.getElementById('live');
        if (live.checked) live.click();
        const win = document.getElementById('seconds');
        win.value = '60';
        win.dispatchEvent(new Event('change'));
        const sel = document.getElementById('process');
        sel.value = '%d';
        sel.dispatchEvent(new Event('change'));
    })()""" % pid)
    browser.wait_for("document.getElementById('status').textContent.includes("
                     "'in pid %d, the last 60 s')" % pid, what="the graph of pid %d" % pid)
    assert renders() > before
    w = settled("flame")
    total = sum(w.get(f, 0) for f in ("hot_60", "hot_30", "hot_10"))
    assert total > 0.9 * w["all"], "hot_* cover %.0f of %.0f px: %s" % (total, w["all"], w)
    shares = {f: 100 * w.get(f, 0) / total for f in ("hot_60", "hot_30", "hot_10")}
    for f, want in (("hot_60", 60), ("hot_30", 30), ("hot_10", 10)):
        assert abs(shares[f] - want) <= 6, "widths %s (want 60/30/10 ±6): %s" % (shares, w)
    assert "cpu_shares" in w and "dispatch" in w and "main" in w, sorted(w)
    # The same view as a pprof file.
    href = browser.evaluate("document.getElementById('download').getAttribute('href')")
    assert href == "/debug/pprof/profile?seconds=60&pid=%d" % pid, href
    # Every other process is gone from the graph.
    assert abs(w["cpu_shares"] - w["all"]) < 2, w
    browser.screenshot(os.path.join(ARTIFACTS, "webview-flamegraph.png"))
    print("   shares by width: " + ", ".join("%s %.1f%%" % kv for kv in shares.items()))


def test_live_refresh():
    """With live on, the graph is redrawn every few seconds with the samples that came since."""
    total = lambda: int(browser.evaluate("document.getElementById('flame').dataset.total"))  # noqa
    first, n = total(), renders()
    browser.evaluate("document.getElementById('live').click()")
    browser.wait_for("Number(document.getElementById('flame').dataset.renders) > %d" % (n + 1),
                     timeout=20, what="two live refreshes")
    assert total() > first, "total stayed at %d samples while cpu_shares ran" % first
    browser.evaluate("document.getElementById('live').click()")  # live off again
    browser.wait_for("!document.body.dataset.refreshing", what="the last refresh to end")
    assert "live=0" in browser.evaluate("location.hash"), browser.evaluate("location.hash")


def test_search():
    """Typing in the search box highlights the matching frames and sums them."""
    settled("flame")
    browser.evaluate("document.getElementById('search').focus()")
    browser.type_text("hot_3")
    fills = browser.wait_for("""(() => {
        const f = {};
        for (const g of document.querySelectorAll('#flame g.frame'))
            f[g.getAttribute('name')] = g.querySelector('rect').getAttribute('fill');
        return f.hot_30 && f.hot_30.toUpperCase() === '#E600E6' && f;
    })()""", what="hot_30 highlighted")
    assert fills["hot_60"].upper() != "#E600E6" and fills["hot_10"].upper() != "#E600E6", fills
    details = browser.evaluate("document.getElementById('details').textContent")
    assert details.startswith("search: ") and "%" in details, details
    browser.screenshot(os.path.join(ARTIFACTS, "webview-search.png"))
    assert "q=hot_3" in browser.evaluate("location.hash")
    browser.evaluate("""(() => { const s = document.getElementById('search');
        s.value = ''; s.dispatchEvent(new Event('input')); })()""")


def test_hover():
    """Hovering a frame shows its name, samples and share in a tooltip."""
    settled("flame")
    x, y = frame_center("hot_60")
    browser.mouse_move(5, 5)
    browser.mouse_move(x, y)
    tip = browser.wait_for("""(() => {
        const tips = document.querySelectorAll('.d3-flame-graph-tip');
        return tips.length === 1 && tips[0].style.display === 'block' && tips[0].textContent;
    })()""", what="one tooltip, shown")
    assert tip.startswith("hot_60: ") and "samples" in tip and "%" in tip, tip
    share = float(tip.rsplit("(", 1)[1].split("%")[0])
    assert 50 <= share <= 70, tip
    browser.screenshot(os.path.join(ARTIFACTS, "webview-hover.png"))
    browser.mouse_move(5, 5)


def test_zoom():
    """Clicking a frame zooms into it (full width); reset zoom brings the whole graph back."""
    before = settled("flame")
    x, y = frame_center("hot_30")
    browser.click(x, y)
    browser.wait_for("""(() => { const r = document.querySelector(
        '#flame g.frame[name="hot_30"] rect').getBoundingClientRect();
        return r.width > 0.95 * document.getElementById('flame').clientWidth; })()""",
                     what="hot_30 zoomed to the full width")
    zoomed = settled("flame")
    assert zoomed.get("hot_60", 0) < 1 and zoomed.get("hot_10", 0) < 1, zoomed
    browser.screenshot(os.path.join(ARTIFACTS, "webview-zoom.png"))
    browser.evaluate("document.getElementById('reset').click()")
    browser.wait_for("""(() => { const r = document.querySelector(
        '#flame g.frame[name="hot_60"] rect'); return r && r.getBoundingClientRect().width > 0;
    })()""", what="hot_60 back after reset zoom")
    after = settled("flame")
    assert abs(after["hot_30"] - before["hot_30"]) < 2, (before, after)


def test_probe_histogram():
    """A probe on hot_30: its latency histogram draws bars and marks p50/p95/p99."""
    code, body = post("/api/v1/probes", {"binary": os.path.join(TARGETS, "cpu_shares"),
                                         "function": "hot_30"})
    if code == 404:
        hidden = browser.evaluate("document.getElementById('probe-panel').hidden")
        assert hidden, "the probe panel shows although /api/v1/probes answers 404"
        raise Skip("probes API not present")
    assert code == 201, (code, body)
    probe = json.loads(body)["id"]
    # Live on: the page asks again every 5 s until calls have been measured.
    browser.goto(base + "/#type=cpu&seconds=30&probe=%d" % probe)
    try:
        bars = browser.wait_for("""(() => {
            if (document.getElementById('probe-panel').hidden) return 0;
            return document.querySelectorAll('#histogram rect.bar').length;
        })()""", timeout=40, what="histogram bars")
    except BrowserError as e:
        # What the page says about it: the panel's summary line and the status bar.
        said = browser.evaluate("""[document.getElementById('probe-panel').hidden,
            document.getElementById('probe-summary').textContent,
            document.body.dataset.refreshing, location.hash]""")
        raise AssertionError("%s; page: %s" % (e, said))
    marks = browser.evaluate("""[...document.querySelectorAll('#histogram line[data-mark]')]
        .map(l => l.dataset.mark)""")
    assert bars >= 1 and {"p50", "p95", "p99"} <= set(marks), (bars, marks)
    settled("diff")
    browser.evaluate("document.getElementById('probe-panel').scrollIntoView()")
    browser.screenshot(os.path.join(ARTIFACTS, "webview-probe.png"))


# The probes API as its contract has it, answered by a stub: the page's probe panel is checked
# whether or not this autoprof has probes yet.
STUB_BUCKETS = [(1000, 5), (2000, 40), (4000, 120), (8000, 60), (16000, 15), (512000, 4)]
STUB = {
    "/api/v1/profiles": {"profiles": [{"name": "cpu", "path": "/debug/pprof/profile",
                                       "help": "", "value_type": "samples", "unit": "count",
                                       "windowed": True, "available": True}]},
    "/api/v1/processes": {"type": "cpu", "seconds": 30, "unit": "count", "processes": []},
    "/api/v1/probes": {"probes": [{"id": 7, "name": "handle", "binary": "/srv/app",
                                   "function": "handle", "location": None, "pid": 0,
                                   "threshold_ns": 10000, "calls": 244,
                                   "capture": [{"name": "len", "where": "rsi", "size": 8,
                                                "signed": False}]}]},
    "/api/v1/probes/7/latency": {
        "id": 7, "name": "handle", "seconds": 30, "count": 244, "sum_ns": 1500000,
        "p50_ns": 3500, "p90_ns": 7000, "p95_ns": 9000, "p99_ns": 300000,
        "ewma": {"p50_ns": 3400, "p90_ns": 7100, "p95_ns": 9100, "p99_ns": 280000},
        "threshold_ns": 10000,
        "buckets": [{"le_ns": le, "count": n} for le, n in STUB_BUCKETS],
        "group_by": "len",
        "groups": [{"value": "64", "count": 200, "mean_ns": 3000, "p50_ns": 2900, "p90_ns": 4000,
                    "p95_ns": 5000, "p99_ns": 6000},
                   {"value": "65536", "count": 44, "mean_ns": 250000, "p50_ns": 240000,
                    "p90_ns": 290000, "p95_ns": 300000, "p99_ns": 310000}]},
}
STUB_FOLDED = {
    None: "app;main;idle 5\n",
    "slow": "app;main;handle;read_disk 80\napp;main;handle;parse 20\n",
    "fast": "app;main;handle;read_disk 10\napp;main;handle;parse 90\n",
}


STUB_REQUESTS = []


class StubHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        STUB_REQUESTS.append(self.path)
        url = urllib.parse.urlparse(self.path)
        q = urllib.parse.parse_qs(url.query)
        if url.path == "/":
            with open(os.path.join(BUILD, "web", "index.html"), "rb") as f:
                self.answer(200, "text/html; charset=utf-8", f.read())
        elif url.path in STUB:
            self.answer(200, "application/json", json.dumps(STUB[url.path]).encode())
        elif url.path == "/debug/pprof/profile":
            self.answer(200, "text/plain", STUB_FOLDED[q.get("latency", [None])[0]].encode())
        else:
            self.answer(404, "text/plain", b"not found\n")

    def answer(self, code, ctype, body):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_probe_panel_contract():
    """Against the probes API's contract: one bar per bucket, heights by count, p50/p95/p99 and
    the slow threshold marked, and the slow-vs-fast graph red where slow calls spend more."""
    stub = http.server.ThreadingHTTPServer(("127.0.0.1", 0), StubHandler)
    threading.Thread(target=stub.serve_forever, daemon=True).start()
    try:
        browser.goto("http://127.0.0.1:%d/#live=0" % stub.server_port)
        bars = browser.wait_for("""(() => {
            const b = [...document.querySelectorAll('#histogram rect.bar')];
            return !document.getElementById('probe-panel').hidden && b.length &&
                b.map(r => Number(r.getAttribute('height')));
        })()""", what="the stub probe's histogram")
        counts = [n for _, n in STUB_BUCKETS]
        assert len(bars) == len(counts), bars
        for h, n in zip(bars, counts):
            assert abs(h / max(bars) - n / max(counts)) < 0.02, (bars, counts)
        marks = browser.evaluate("""Object.fromEntries([...document.querySelectorAll(
            '#histogram line[data-mark]')].map(l => [l.dataset.mark, Number(l.getAttribute('x1'))]))""")
        assert set(marks) == {"p50", "p95", "p99", "slow"}, marks
        assert marks["p50"] < marks["p95"] < marks["slow"] < marks["p99"], marks
        fills = browser.wait_for("""(() => {
            const f = {};
            for (const g of document.querySelectorAll('#diff g.frame'))
                f[g.getAttribute('name')] = g.querySelector('rect').getAttribute('fill');
            return f.read_disk && f.parse && f;
        })()""", what="the differential flame graph")
        rgb = {k: [int(x) for x in v[4:-1].split(",")] for k, v in fills.items()
               if v.startswith("rgb(")}
        r, _, b = rgb["read_disk"]
        assert r > b + 50, "read_disk (slow calls: 80%%, fast: 10%%) is not red: %s" % fills
        r, _, b = rgb["parse"]
        assert b > r + 50, "parse (slow calls: 20%%, fast: 90%%) is not blue: %s" % fills
        w = settled("diff")
        assert abs(w["read_disk"] / w["handle"] - 0.8) < 0.02, w  # widths: the slow calls
        # A probe that captures: its calls per value of the capture picked.
        groups = browser.wait_for("""(() => { const t = document.getElementById('probe-groups');
            return !t.hidden && [...t.querySelectorAll('tbody tr')].map(r =>
                [...r.cells].map(c => c.textContent)); })()""", what="the groups table")
        assert groups == [["64", "200", "3 µs", "2.9 µs", "5 µs", "6 µs"],
                          ["65536", "44", "250 µs", "240 µs", "300 µs", "310 µs"]], groups
        assert browser.evaluate("document.getElementById('probe-groupby').value") == "len"
        # A value picked: the split is asked for its calls only.
        browser.evaluate("document.querySelector('#probe-groups tr[data-value=\"64\"]').click()")
        browser.wait_for("document.getElementById('diff-where').textContent === "
                         "'calls with len=64 only'", what="the split narrowed to len=64")
        assert "where=len%3D64" in browser.evaluate("location.hash")
        deadline = time.time() + 10
        while time.time() < deadline and not any(
                "latency=slow" in r and "where=len%3D64" in r for r in STUB_REQUESTS):
            time.sleep(0.2)
        assert any("latency=slow" in r and "where=len%3D64" in r for r in STUB_REQUESTS), \
            STUB_REQUESTS[-5:]
        browser.evaluate("document.getElementById('probe-panel').scrollIntoView()")
        browser.screenshot(os.path.join(ARTIFACTS, "webview-probe-contract.png"))
    finally:
        stub.shutdown()
        stub.server_close()


def test_gpuheap_shares():
    """GPU memory in the page: the stand-in CUDA program (tests/targets/gpu) keeps known bytes
    in known functions; gpuheap of its pid, opened from the URL as a user shares it, draws each
    function at its share of the live bytes."""
    prog, gpid, truth, kept = gpu_alloc_kept(d)
    try:
        total = sum(kept.values())
        deadline = time.time() + 10
        while d.metric("autoprof_gpu_memory_inuse_bytes", 'pid="%d",gpu="0"' % gpid) is None:
            assert time.time() < deadline, "no live GPU memory for pid %d" % gpid
            time.sleep(0.1)
        browser.goto(base + "/#type=gpuheap&pid=%d&live=0" % gpid)
        browser.wait_for("document.getElementById('status').textContent.includes('now (live "
                         "allocations)')", what="the live GPU memory of pid %d" % gpid)
        w = settled("flame")
        drawn = sum(w.get(f, 0) for f in kept)
        assert drawn > 0.98 * w["all"], (drawn, w)
        for f, n in kept.items():
            share, want = 100 * w.get(f, 0) / drawn, 100.0 * n / total
            assert abs(share - want) <= 0.5, "%s drawn at %.2f %%, holds %.2f %%: %s" % (
                f, share, want, w)
        browser.screenshot(os.path.join(ARTIFACTS, "webview-gpuheap.png"))
        print("   %d functions drawn at their shares of %d live bytes (±0.5 points)" % (
            len(kept), total))
    finally:
        prog.kill()
        prog.wait()


R = {}


def folded_counts(query):
    """{function: (self, total)} and the whole count of a folded pprof answer, computed here."""
    code, _, body = d.get("/debug/pprof/profile?" + query + "&format=folded")
    assert code == 200, body[:200]
    out, whole = {}, 0
    for line in body.decode().splitlines():
        stack, n = line.rsplit(" ", 1)
        n = int(n)
        whole += n
        frames = stack.split(";")[1:]
        for f in set(frames):
            s, t = out.get(f, (0, 0))
            out[f] = (s, t + n)
        s, t = out[frames[-1]]
        out[frames[-1]] = (s + n, t)
    return out, whole


def test_timeline_range():
    """A 4 s spike in spike_fn shows on the timeline; dragging over its bars shows that range:
    spike_fn is drawn at its share of the range's samples, and the URL keeps the range."""
    sp = subprocess.Popen([os.path.join(TARGETS, "spike"), "4"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True)
    R["spike"] = sp
    spid = int(sp.stdout.readline())
    time.sleep(1)
    sp.stdin.write("\n")
    sp.stdin.flush()
    t0 = float(sp.stdout.readline().split()[1])
    t1 = float(sp.stdout.readline().split()[1])
    time.sleep(3)
    browser.goto(base + "/#type=cpu&span=300&live=0")
    # The page is already open: the fragment changes it in place, and the timeline drawn
    # before (gpuheap's) must not be taken for this one.
    browser.wait_for("(() => { const t = document.getElementById('timeline');"
                     " return t.dataset.type === 'cpu' && Number(t.dataset.end) >= %f; })()" % t1,
                     what="the timeline's bars after the spike")
    step = int(browser.evaluate("document.getElementById('timeline').dataset.step"))
    # The bars that lie wholly inside the spike: their left edge and the right edge of the last.
    xs = browser.evaluate("""(() => {
        const bars = [...document.querySelectorAll('#timeline rect.tl-total')]
            .filter(r => Number(r.dataset.time) >= %f && Number(r.dataset.time) + %d <= %f);
        const a = bars[0].getBoundingClientRect(), b = bars[bars.length - 1].getBoundingClientRect();
        return [a.left + 1, b.right - 1, a.top + a.height / 2, bars.length];
    })()""" % (t0, step, t1))
    assert xs[3] >= 1, xs
    # The spike's bars are drawn: the total's, and the spike's own in colour.
    drawn = browser.evaluate("""(() => {
        const t = document.getElementById('timeline');
        const bars = [...t.querySelectorAll('rect.tl-total')]
            .filter(r => Number(r.dataset.time) >= %f && Number(r.dataset.time) + %d <= %f);
        const own = t.querySelector('g.tl-process[data-pid="%d"]');
        return [Math.min(...bars.map(r => Number(r.dataset.value))),
                Math.min(...bars.map(r => r.getBoundingClientRect().height)),
                own ? own.querySelectorAll('rect').length : 0];
    })()""" % (t0, step, t1, spid))
    assert drawn[0] >= 50 and drawn[1] > 20 and drawn[2] >= xs[3], drawn
    top = browser.evaluate("document.getElementById('timeline').getBoundingClientRect().top")
    browser.drag(xs[0], top + 40, xs[1], top + 40)
    browser.wait_for("document.getElementById('status').textContent.includes(' from ')",
                     what="the flame graph of the range")
    h = dict(urllib.parse.parse_qsl(browser.evaluate("location.hash")[1:]))
    start, end = int(h["start"]), int(h["end"])
    assert t0 - step <= start and end <= t1 + step and end - start >= step, (t0, t1, h)
    R["range"] = (start, end)
    counts, whole = folded_counts("start=%d&end=%d" % (start, end))
    R["counts"], R["whole"] = counts, whole
    want = 100.0 * counts["spike_fn"][1] / whole
    assert want > 25, "spike_fn only %.1f %% of the range %s" % (want, counts)
    w = settled("flame")
    drawn = 100 * w.get("spike_fn", 0) / w["all"]
    assert abs(drawn - want) <= 3, "spike_fn drawn at %.1f %%, %.1f %% of the samples" % (
        drawn, want)
    # The process list is the range's: the spike is in it with the range's samples.
    browser.wait_for("!!document.querySelector('#process option[value=\"%d\"]')" % spid,
                     what="the spike's pid in the range's process list")
    sel = browser.evaluate("Number(document.querySelector('#timeline .tl-selection')"
                           ".getAttribute('width'))")
    assert sel > 0
    browser.screenshot(os.path.join(ARTIFACTS, "webview-timeline-range.png"))
    print("   range %d s: spike_fn drawn at %.1f %%, %.1f %% of its samples" % (
        end - start, drawn, want))


def test_function_table():
    """The function table beside the graph: each function's self and total as computed from
    the same answer here; sorted by a header, narrowed by the filter."""
    counts, whole = R["counts"], R["whole"]
    rows = browser.evaluate("""[...document.querySelectorAll('#functions tbody tr')].map(tr =>
        [tr.dataset.name, Number(tr.dataset.self), Number(tr.dataset.total)])""")
    assert rows and rows[0][1] == max(s for s, _ in counts.values()), (rows[:3], counts)
    for name, s, t in rows:
        assert (s, t) == counts[name], (name, s, t, counts.get(name))
    browser.evaluate("document.querySelector('#functions th[data-sort=total]').click()")
    first = browser.evaluate("document.querySelector('#functions tbody tr').dataset.name")
    assert counts[first][1] == max(t for _, t in counts.values()), (first, counts)
    browser.evaluate("""(() => { const f = document.getElementById('fn-filter');
        f.value = 'spike'; f.dispatchEvent(new Event('input')); })()""")
    names = browser.evaluate("[...document.querySelectorAll('#functions tbody tr')]"
                             ".map(tr => tr.dataset.name)")
    assert names and all("spike" in n for n in names), names


def test_sandwich():
    """A click on spike_fn's row: its callers (main, under it) and callees, as wide as it."""
    browser.evaluate("document.querySelector('#functions tbody tr[data-name=spike_fn]').click()")
    browser.wait_for("!document.getElementById('sandwich-panel').hidden", what="the sandwich")
    assert "fn=spike_fn" in browser.evaluate("location.hash")
    up, down = settled("callers"), settled("callees")
    assert abs(up["main"] - up["spike_fn"]) < 1, up
    assert "now" in down or len(down) >= 1, down
    assert abs(down["spike_fn"] - up["spike_fn"]) < 1, (up, down)
    browser.screenshot(os.path.join(ARTIFACTS, "webview-sandwich.png"))


def test_compare():
    """The range against the same span just before it: spike_fn, absent before, is drawn red
    (a larger share), at its width in the range."""
    browser.evaluate("""(() => { const c = document.getElementById('compare');
        c.value = 'before'; c.dispatchEvent(new Event('change')); })()""")
    browser.wait_for("!document.getElementById('compare-panel').hidden", what="the comparison")
    w = settled("cmp")
    assert abs(100 * w["spike_fn"] / w["all"] - 100.0 * R["counts"]["spike_fn"][1] / R["whole"]) <= 3
    fill = browser.evaluate("getComputedStyle(document.querySelector("
                            "'#cmp g.frame[name=spike_fn] rect')).fill")
    r, g, b = [int(x) for x in fill[fill.index("(") + 1:-1].split(",")[:3]]
    assert r > b + 40, fill
    assert "cmp=before" in browser.evaluate("location.hash")
    browser.screenshot(os.path.join(ARTIFACTS, "webview-compare.png"))
    R["spike"].stdin.close()
    R["spike"].wait(timeout=10)


try:
    check("webview_negotiation", test_negotiation)
    check("webview_processes_api", test_processes_api)
    check("webview_heap_folded", test_heap_folded)
    check("webview_flamegraph_shares", test_flamegraph_shares)
    check("webview_live_refresh", test_live_refresh)
    check("webview_search", test_search)
    check("webview_hover", test_hover)
    check("webview_zoom", test_zoom)
    check("webview_probe_histogram", test_probe_histogram)
    check("webview_probe_panel_contract", test_probe_panel_contract)
    check("webview_gpuheap_shares", test_gpuheap_shares)
    check("webview_timeline_range", test_timeline_range)
    check("webview_function_table", test_function_table)
    check("webview_sandwich", test_sandwich)
    check("webview_compare", test_compare)
finally:
    browser.close()
    target.kill()
    target.wait()
    d.stop()
sys.exit(exit_status())
