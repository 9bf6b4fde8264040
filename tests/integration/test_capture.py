#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Variables captured by latency probes, read from the binary's DWARF: capture_target's
handle(struct req *r, unsigned long len) burns len microseconds, built at -O0 and at -O2 -g.
group_by=len shows the latency growing with len; a line probe inside handle captures the local
`total`, whose values the program prints, and they match; at -O2 `twice`, dead at that line,
is reported optimized out, never invented; names, members and types that cannot be read are
refused with 400 naming them."""

import json
import re
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from aplib import BUILD, ROOT, Daemon, check, exit_status, pprof_tool  # noqa: E402

SOURCE = os.path.join(ROOT, "tests", "targets", "probes", "capture_target.c")
with open(SOURCE) as f:
    LINE = next(n for n, t in enumerate(f, 1) if "CAPTURE_LINE" in t)
LENS = (100, 400, 1600)

d = Daemon("--web.enable-admin-api", "--profile.retention=2m")


class Target:
    def __init__(self, opt):
        self.exe = os.path.join(BUILD, "probetargets", "capture_" + opt)
        self.p = subprocess.Popen([self.exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True)
        self.pid = int(self.p.stdout.readline())

    def run(self, n):
        """n calls of handle(); the totals it printed."""
        self.p.stdin.write("run %d\n" % n)
        self.p.stdin.flush()
        totals = []
        for line in self.p.stdout:
            if line.startswith("done"):
                return totals
            totals.append(int(line.split("=")[1]))
        raise AssertionError("capture_target exited")

    def stop(self):
        self.p.stdin.write("quit\n")
        self.p.stdin.close()
        self.p.wait(timeout=10)


def add(exe, capture, **where):
    code, _, body = d.request("POST", "/api/v1/probes",
                              json.dumps(dict(binary=exe, capture=capture, **where)))
    return code, json.loads(body)


def remove_all():
    code, _, body = d.get("/api/v1/probes")
    for p in json.loads(body)["probes"]:
        d.request("DELETE", "/api/v1/probes/%d" % p["id"])


def groups(probe, by, calls=24):
    """The probe's calls grouped by a capture, once all `calls` have reached autoprof (its
    ring is drained on a timer)."""
    deadline = time.time() + 15
    while True:
        code, _, body = d.get("/api/v1/probes/%d/latency?seconds=120&group_by=%s" % (probe, by))
        assert code == 200, (code, body)
        doc = json.loads(body)
        if doc["count"] >= calls or time.time() > deadline:
            break
        time.sleep(0.3)
    assert doc["group_by"] == by, doc
    return {g["value"]: g for g in doc["groups"]}


def check_build(opt):
    t = Target(opt)
    try:
        code, fn = add(t.exe, ["len", "r->id", "r->kind"], function="handle")
        assert code == 201, fn
        code, line = add(t.exe, ["total", "twice", "handled"],
                         location="capture_target.c:%d" % LINE)
        assert code == 201, line
        totals = t.run(24)
        # The function probe: one group per len, each slower than the last, about len us.
        by_len = groups(fn["id"], "len")
        assert sorted(by_len) == sorted(str(n) for n in LENS), by_len
        for n in LENS:
            g = by_len[str(n)]
            assert g["count"] == 8, g
            assert n * 1000 <= g["p50_ns"] < n * 1000 * 1.5 + 300000, (n, g)
        by_kind = groups(fn["id"], "r->kind")
        assert {k: g["count"] for k, g in by_kind.items()} == {"0": 8, "1": 8, "2": 8}, by_kind
        by_id = groups(fn["id"], "r->id")
        assert sum(g["count"] for g in by_id.values()) == 24 and len(by_id) == 24, by_id
        # The line probe: the local's values are the program's, one hit each.
        by_total = groups(line["id"], "total")
        assert {int(v): g["count"] for v, g in by_total.items()} == {t: 1 for t in totals}, \
            (by_total, totals)
        # A variable of static storage: the calls so far, one each.
        by_handled = groups(line["id"], "handled")
        assert sorted(int(v) for v in by_handled) == list(range(1, 25)), by_handled
        by_twice = groups(line["id"], "twice")
        if opt == "O0":
            assert {v: g["count"] for v, g in by_twice.items()} == \
                {str(2 * n): 8 for n in LENS}, by_twice
        else:
            assert list(by_twice) == ["optimized out"] and by_twice["optimized out"]["count"] \
                == 24, by_twice
        code, _, body = d.get("/api/v1/probes")
        listed = {p["id"]: p for p in json.loads(body)["probes"]}
        where = {c["name"]: c["where"] for c in listed[line["id"]]["capture"]}
        assert (where["twice"].startswith("optimized out")) == (opt == "O2"), where
    finally:
        remove_all()
        t.stop()


def test_O0():
    """-O0: parameters at the entry where the ABI passes them, locals at their frame slots."""
    check_build("O0")


def test_O2():
    """-O2 -g: location lists; what the compiler dropped is optimized out."""
    check_build("O2")


def tags(query):
    """`go tool pprof -tags` of a CPU profile: {value: samples} of label arg.len."""
    code, _, body = d.get("/debug/pprof/profile?seconds=60&" + query)
    assert code == 200, (code, body)
    out, key = {}, None
    for line in pprof_tool(body, "-tags", "-sample_index=samples").splitlines():
        m = re.match(r"^\s*([\w.>-]+): Total", line)
        if m:
            key = m.group(1)
            continue
        m = re.match(r"^\s*([\d.]+) \(\s*[\d.]+%\): (.*)$", line)
        if m and key == "arg.len":
            out[m.group(2).strip()] = int(float(m.group(1)))
    return out


def test_labels_where():
    """Samples inside the calls carry arg.len; where=len>1000 keeps the 1600 us calls only."""
    t = Target("O2")
    try:
        code, fn = add(t.exe, ["len", "r->id"], function="handle", pid=t.pid)
        assert code == 201, fn
        t.run(3000)
        time.sleep(1)
        by_len = tags("probe=%d" % fn["id"])
        total = sum(by_len.values())
        assert set(by_len) == {"100", "400", "1600"} and total >= 60, by_len
        # Samples by the CPU time of each kind of call: 1600 of every 2100 us.
        assert 0.6 < by_len["1600"] / total < 0.9, by_len
        slow = tags("probe=%d&where=len%%3E1000" % fn["id"])
        assert list(slow) == ["1600"] and slow["1600"] == by_len["1600"], (slow, by_len)
        rest = tags("probe=%d&where=len%%3C%%3D400" % fn["id"])
        assert set(rest) == {"100", "400"} and sum(rest.values()) == total - by_len["1600"], rest
        for query, want in (("where=len%3E1", "needs probe=ID"),
                            ("probe=%d&where=nosuch%%3E1" % fn["id"], 'captures no "nosuch"'),
                            ("probe=%d&where=len~1" % fn["id"], "is not NAME OP NUMBER"),
                            ("probe=%d&where=len%%3Eabc" % fn["id"], "is not NAME OP NUMBER")):
            code, _, body = d.get("/debug/pprof/profile?seconds=60&" + query)
            assert code == 400 and want.encode() in body, (query, code, body)
    finally:
        remove_all()
        t.stop()


def test_refused():
    """Each capture that cannot be read gets 400 naming it and why."""
    exe = os.path.join(BUILD, "probetargets", "capture_O0")
    cases = [
        (["nosuch"], dict(function="handle"), '"nosuch": no variable'),
        (["r->nosuch"], dict(function="handle"), "no member \"nosuch\""),
        (["total"], dict(function="handle"), "a local variable, not set yet"),
        (["r.id"], dict(function="handle"), 'on a pointer: write "->id"'),
        (["len->id"], dict(function="handle"), "not a pointer to a struct"),
        (["*r"], dict(function="handle"), "is not NAME"),
        (["a", "b", "c", "d", "e"], dict(function="handle"), "at most 4"),
        (["len", "len"], dict(function="handle"), "twice"),
        (["len"], dict(function="main"), '"len": no variable'),
        (["handled.x"], dict(function="handle"), "not a member of a struct"),
    ]
    for capture, where, want in cases:
        code, body = add(exe, capture, **where)
        assert code == 400 and want in body["error"], (capture, code, body)
    code, _, body = d.get("/api/v1/probes")
    assert json.loads(body)["probes"] == []
    code, p = add(exe, ["len"], function="handle")
    assert code == 201, p
    code, _, body = d.get("/api/v1/probes/%d/latency?group_by=twice" % p["id"])
    assert code == 400 and b"not a capture" in body, (code, body)
    remove_all()


try:
    check("capture_O0", test_O0)
    check("capture_O2", test_O2)
    check("capture_refused", test_refused)
    check("capture_labels_where", test_labels_where)
finally:
    d.stop()
sys.exit(exit_status())
