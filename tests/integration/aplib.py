# SPDX-License-Identifier: GPL-2.0-only
"""Helpers for autoprof's integration tests: run the real daemon, fetch from it, read the
answers back with independent tools (go tool pprof, promtool), and report PASS/FAIL lines
that tests/run.sh tallies."""

import base64
import gzip
import json
import os
import re
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
AUTOPROF = os.path.join(BUILD, "autoprof")
TARGETS = os.path.join(BUILD, "targets")
TMP = tempfile.mkdtemp(prefix="autoprof-it-")

_failed = 0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# A sample line: name, labels (quoted values may hold braces), value; an OpenMetrics exemplar
# or a timestamp after the value is left alone.
_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)'
                     r'(?:\{((?:[^"}]|"(?:[^"\\]|\\.)*")*)\})?\s+(\S+)')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_labels(spec):
    """Labels as a dict from a dict, 'a="x",b="y"' (braces or not) or a list of 'a="x"'."""
    if isinstance(spec, dict):
        return dict(spec)
    if isinstance(spec, (list, tuple)):
        spec = ",".join(spec)
    return dict(_LABEL.findall(spec or ""))


def metric_values(text, name, labels=""):
    """The values of metric name's samples in Prometheus text whose labels include labels
    (parse_labels), in order."""
    want = parse_labels(labels)
    out = []
    for line in text.splitlines():
        m = _SAMPLE.match(line)
        if not m or m.group(1) != name:
            continue
        have = dict(_LABEL.findall(m.group(2) or ""))
        if all(have.get(k) == v for k, v in want.items()):
            out.append(float(m.group(3)))
    return out


def metric_value(text, name, labels="", default=None):
    """The first of metric_values, or default when there is none."""
    values = metric_values(text, name, labels)
    return values[0] if values else default


class Daemon:
    """build/autoprof on a free loopback port, stopped with SIGTERM, keeping profiles in memory
    only unless args set --storage.path. With tls_ca (a CA file)
    it is reached over https, with auth ((user, password)) with basic auth; wait=False returns
    before it answers."""

    def __init__(self, *args, tls_ca=None, auth=None, wait=True):
        self.tls_ca = tls_ca
        self.auth = auth
        self.port = free_port()
        self.log = open(os.path.join(TMP, "autoprof-%d.log" % self.port), "w+")
        # Memory only unless a test names a directory: daemons of tests must not share the
        # default /var/lib/autoprof (nor leave data there).
        if not any(a.startswith("--storage.path") for a in args):
            args = ("--storage.path=", *args)
        self.proc = subprocess.Popen(
            [AUTOPROF, "--web.listen-address=127.0.0.1:%d" % self.port, *args],
            stdout=self.log, stderr=subprocess.STDOUT)
        if not wait:
            return
        deadline = time.time() + 20
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("autoprof exited with %d:\n%s" % (self.proc.returncode, self.logtext()))
            try:
                code, _, body = self.get("/metrics")
                if code == 200 and b"autoprof_cpus_sampled" in body:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError("autoprof did not come up:\n" + self.logtext())

    def logtext(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def get(self, path, headers=None):
        return self.request("GET", path, headers=headers)

    def request(self, method, path, body=None, headers=None):
        """(status, headers, body bytes) of one request; body: a str sent as it is. Requests
        other than GET and HEAD are sent as JSON unless headers say otherwise, as the routes
        that change state accept nothing else."""
        headers = dict(headers or {})
        if method not in ("GET", "HEAD") and not any(k.lower() == "content-type" for k in headers):
            headers["Content-Type"] = "application/json"
        if self.auth and "Authorization" not in headers:
            headers["Authorization"] = "Basic " + base64.b64encode(
                ("%s:%s" % self.auth).encode()).decode()
        ctx = None
        if self.tls_ca:
            ctx = ssl.create_default_context(cafile=self.tls_ca)
        req = urllib.request.Request("%s://127.0.0.1:%d%s" % ("https" if self.tls_ca else "http",
                                                              self.port, path), method=method,
                                     data=body.encode() if body is not None else None,
                                     headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=30, context=ctx) as r:
                return r.status, dict(r.headers), r.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()

    def metrics(self):
        """/metrics as text."""
        code, _, body = self.get("/metrics")
        assert code == 200, "/metrics: HTTP %d" % code
        return body.decode()

    def metric(self, name, labels="", default=None):
        """metric_value of the daemon's /metrics now."""
        return metric_value(self.metrics(), name, labels, default)

    def stop(self):
        """SIGTERM; returns (exit status, seconds it took)."""
        if self.proc.poll() is not None:
            return self.proc.returncode, 0.0
        t = time.time()
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        return rc, time.time() - t


def run_target(name, *args):
    """Runs a test target to completion; returns its stdout."""
    return subprocess.run([os.path.join(TARGETS, name), *map(str, args)], check=True,
                          capture_output=True, text=True).stdout


def start_target(name, *args, env=None):
    """Starts a test target that prints its pid first; returns (Popen, pid). env: extra
    environment variables."""
    p = subprocess.Popen([os.path.join(TARGETS, name), *map(str, args)], stdout=subprocess.PIPE,
                         text=True, env=dict(os.environ, **env) if env else None)
    return p, int(p.stdout.readline())


def gpu_alloc_kept(d):
    """Starts $BUILD/gputargets/gpu_alloc (the CUDA stand-ins' program) once d has probed the
    stand-ins, lets it allocate, and returns (Popen, pid, {function: truth}, {function: bytes
    it keeps live}); it exits when its stdin is closed."""
    prog = subprocess.Popen([os.path.join(BUILD, "gputargets", "gpu_alloc")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    pid = int(prog.stdout.readline())
    deadline = time.time() + 10
    while (d.metric("autoprof_gpu_libraries") or 0) < 2:
        if time.time() > deadline:
            prog.kill()
            raise AssertionError("the CUDA stand-ins were not probed")
        time.sleep(0.1)
    prog.stdin.write("go\n")
    prog.stdin.flush()
    truth = json.loads(prog.stdout.readline())["functions"]
    return prog, pid, truth, {f: v["inuse_bytes"] for f, v in truth.items() if v["inuse_bytes"]}


def pprof_tool(data, *args):
    """go tool pprof ARGS on a profile, offline (no symbolization, no network)."""
    path = os.path.join(TMP, "profile-%d.pb.gz" % time.monotonic_ns())
    with open(path, "wb") as f:
        f.write(data)
    env = dict(os.environ, HOME=TMP, PPROF_TMPDIR=TMP)
    r = subprocess.run(["go", "tool", "pprof", "-symbolize=none", *args, path], env=env,
                       capture_output=True, text=True)
    if r.returncode:
        raise AssertionError("go tool pprof %s failed: %s" % (" ".join(args), r.stderr))
    return r.stdout


def traces(data, index="samples"):
    """Parses `go tool pprof -traces -sample_index=INDEX`: a list of
    (value, labels dict, frames leaf first); bytes in B."""
    out = []
    text = pprof_tool(data, "-traces", "-sample_index=" + index,
                      *(["-unit=B"] if index.endswith("space") else []))
    for block in text.split("-----------+-------------------------------------------------------")[1:]:
        labels, frames, count = {}, [], None
        for line in block.splitlines():
            if not line.strip():
                continue
            m = re.match(r"^\s*(\w+):\s+(.*)$", line)
            if m and count is None:
                labels[m.group(1)] = m.group(2).strip()
                continue
            m = re.match(r"^\s*(\d+)B?\s+(\S.*)$", line)
            if m and count is None:
                count = int(m.group(1))
                frames.append(m.group(2).strip())
            else:
                frames.append(line.strip())
        if count is not None:
            out.append((count, labels, [f.replace(" (inline)", "") for f in frames]))
    return out


def marker_line(marker, script):
    """The line of script (1-based) holding marker, a comment tests put at a known call."""
    with open(script) as f:
        for n, line in enumerate(f, 1):
            if marker in line:
                return n
    raise AssertionError("no %s in %s" % (marker, script))


def folded_stacks(d, path):
    """(frames root first, value) of each line of a folded profile fetched from path."""
    code, _, body = d.get(path)
    if code != 200:
        raise AssertionError("%s: HTTP %d: %r" % (path, code, body[:300]))
    out = []
    for line in body.decode().splitlines():
        stack, value = line.rsplit(" ", 1)
        out.append((stack.split(";"), int(value)))
    return out


def start_memory_target(d, p, label):
    """Makes p, a target program waiting for a line on stdin, a memory target by its pid, and
    lets it go on ("go\\n") once attached; p.started says it did."""
    code, _, body = d.request("POST", "/api/v1/targets/memory", json.dumps({"pid": p.pid}))
    if code != 200:
        raise AssertionError("%s: POST target: HTTP %d %r" % (label, code, body))
    deadline = time.time() + 10
    attached = None
    while time.time() < deadline and not attached:
        _, _, body = d.get("/api/v1/targets/memory")
        attached = [pr for t in json.loads(body) for pr in t["processes"]
                    if pr["pid"] == p.pid and pr["attached"]]
        time.sleep(0.1)
    if not attached or attached[0]["mode"] != "attach":
        raise AssertionError("%s: pid %d not attached: %s" % (label, p.pid, body))
    p.stdin.write("go\n")
    p.stdin.flush()
    p.started = True


def check(name, fn, *args):
    """Runs one test; prints PASS/FAIL/SKIP."""
    global _failed
    try:
        fn(*args)
        print("PASS %s" % name, flush=True)
    except Skip as e:
        print("SKIP %s: %s" % (name, e), flush=True)
    except Exception as e:
        _failed += 1
        detail = "".join(traceback.format_exception_only(type(e), e)).strip().replace("\n", " | ")
        print("FAIL %s: %s" % (name, detail[:2000]), flush=True)
        traceback.print_exc(file=sys.stdout)


class Skip(Exception):
    pass


def checked(err, fn):
    """fn as a check that fails at once, naming err, when the setup it needs failed."""
    def run():
        if err is not None:
            raise AssertionError("setup failed: %s" % err)
        fn()
    return run


def after_setup(setup):
    """Runs setup once, for a file whose checks all read what it gathered; returns how to wrap
    each check: one raises what setup raised (a Skip skips it), else runs."""
    try:
        setup()
        err = None
    except Exception as e:  # reported by every check (Skip too)
        err = e

    def needs(fn):
        def run():
            if err is not None:
                raise err
            fn()
        return run
    return needs


def exit_status():
    return 1 if _failed else 0


def gunzip(data):
    return gzip.decompress(data)
