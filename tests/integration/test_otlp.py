#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""OTLP push end to end: autoprof pushes to a receiver run here, whose bodies are decoded with
protoc --decode against the project's own .proto and checked against the pprof of the same
process; a collector answering 503, and one that is down, cost retries, never memory."""

import gzip
import json
import http.server
import os
import re
import ssl
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from aplib import (AUTOPROF, BUILD, ROOT, TMP, Daemon, Skip, check, exit_status, free_port,  # noqa: E402
                   start_target, traces)

PROTO = "opentelemetry/proto/collector/profiles/v1development/profiles_service.proto"
REQUEST = "opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest"


class Receiver:
    """An OTLP/HTTP receiver on loopback; `script` gives the status of each request in turn."""

    def __init__(self, script=(), tls=None, delay=0):
        """tls: an ssl.SSLContext to serve https with; delay: seconds each answer waits."""
        self.requests = []
        self.peers = []  # the client certificate of each https request, or None
        self.script = list(script)
        self.port = free_port()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if tls:
                    outer.peers.append(self.connection.getpeercert())
                status = outer.script.pop(0) if outer.script else 200
                outer.requests.append((self.path, dict(self.headers), body, status))
                time.sleep(delay)
                self.send_response(status)
                if status == 503:
                    self.send_header("Retry-After", "1")
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        if tls:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def accepted(self):
        return [r for r in self.requests if r[3] == 200]


def decode(body, headers):
    if headers.get("Content-Encoding") == "gzip":
        body = gzip.decompress(body)
    r = subprocess.run(["protoc", "--decode=" + REQUEST, "--proto_path=" + os.path.join(ROOT, "otlp"),
                        PROTO], input=body, capture_output=True)
    assert r.returncode == 0, r.stderr.decode()
    return parse_text(r.stdout.decode())


def parse_text(text):
    """protoc's text format into nested dicts of lists: {"field": [value or dict, ...]}."""
    root, stack = {}, []
    cur = root
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line == "}":
            cur = stack.pop()
        elif line.endswith("{"):
            child = {}
            cur.setdefault(line[:-1].strip(), []).append(child)
            stack.append(cur)
            cur = child
        else:
            k, v = line.split(":", 1)
            v = v.strip()
            cur.setdefault(k.strip(), []).append(v[1:-1] if v.startswith('"') else v)
    return root


def resource_attrs(rp, strings):
    out = {}
    for kv in rp.get("resource", [{}])[0].get("attributes", []):
        val = kv.get("value", [{}])[0]
        out[kv["key"][0]] = (val.get("string_value") or val.get("int_value") or [None])[0]
    return out


def samples_of(req, pid, sample_type):
    """Summed values of the profiles of one sample type for one process, and the function names
    of their leaf frames."""
    d = req["dictionary"][0]
    strings = d.get("string_table", [])
    total, leaves = 0, {}
    for rp in req.get("resource_profiles", []):
        if resource_attrs(rp, strings).get("process.pid") != str(pid):
            continue
        for sp in rp["scope_profiles"]:
            for prof in sp.get("profiles", []):
                st = prof["sample_type"][0]
                if strings[int(st.get("type_strindex", ["0"])[0])] != sample_type:
                    continue
                for s in prof.get("samples", []):
                    v = sum(int(x) for x in s.get("values", []))
                    total += v
                    stack = d["stack_table"][int(s.get("stack_index", ["0"])[0])]
                    leaf = d["location_table"][int(stack["location_indices"][0])]
                    fn = d["function_table"][int(leaf["lines"][0].get("function_index", ["0"])[0])]
                    name = strings[int(fn.get("name_strindex", ["0"])[0])]
                    leaves[name] = leaves.get(name, 0) + v
    return total, leaves


def metric(d, name, labels=""):
    v = d.metric(name, labels)
    assert v is not None, "no %s{%s}" % (name, labels)
    return v


def test_push_matches_pprof():
    rx = Receiver()
    d = Daemon("--otlp.endpoint=http://127.0.0.1:%d/" % rx.port, "--otlp.interval=2s",
               "--otlp.headers=X-Scope-OrgID=tenant-1,Authorization=Bearer t0ken")
    try:
        p, pid = start_target("cpu_shares", 3, env={"OTEL_SERVICE_NAME": "checkout"})
        p.wait()
        time.sleep(5)  # two pushes past the target's last complete second
        assert rx.accepted(), "nothing pushed"
        for path, headers, body, _ in rx.accepted():
            assert path == "/v1development/profiles", path
            assert headers["Content-Type"] == "application/x-protobuf", headers
            assert headers.get("Content-Encoding") == "gzip", headers
            assert headers.get("X-Scope-OrgID") == "tenant-1", headers
            assert headers.get("Authorization") == "Bearer t0ken", headers
        reqs = [decode(b, h) for _, h, b, _ in rx.accepted()]
        total, leaves, nanos = 0, {}, 0
        for req in reqs:
            d0 = req["dictionary"][0]
            for table in ("mapping_table", "location_table", "function_table", "stack_table",
                          "attribute_table"):
                if table in d0:  # index 0 is the zero value: an empty message
                    assert d0[table][0] == {}, "%s[0] = %r" % (table, d0[table][0])
            assert d0["string_table"][0] == "", d0["string_table"][:3]
            t, lv = samples_of(req, pid, "samples")
            total += t
            for k, v in lv.items():
                leaves[k] = leaves.get(k, 0) + v
            nanos += samples_of(req, pid, "cpu")[0]
        assert total >= 200, "only %d samples pushed for pid %d" % (total, pid)
        assert nanos == total * 10101010, (nanos, total)
        assert set(leaves) >= {"hot_60", "hot_30", "hot_10"}, leaves
        # The same process in pprof: every one of its samples went out exactly once.
        pprof_traces = traces(d.get("/debug/pprof/profile?seconds=20&pid=%d" % pid)[2])
        pprof_total = sum(c for c, _, _ in pprof_traces)
        # The image the service runs in (not the forked launcher before its exec).
        assert {lab.get("service_name") for _, lab, _ in pprof_traces
                if lab.get("exe") == "cpu_shares"} == {"checkout"}
        assert total == pprof_total, "OTLP %d samples, pprof %d" % (total, pprof_total)
        # Resource and sample attributes.
        # A sample taken between the launcher's fork and its exec is the forked python's,
        # with the same pid: its own resource (seen in CI). The one checked is the image's.
        def image_attrs(r):
            strings = r["dictionary"][0]["string_table"]
            for rp in r["resource_profiles"]:
                a = resource_attrs(rp, strings)
                if a.get("process.pid") == str(pid) and \
                        a.get("process.executable.name") == "cpu_shares":
                    return a
            return None

        req = next((r for r in reqs if samples_of(r, pid, "samples")[0] and image_attrs(r)),
                   None)
        assert req, "no request with a resource of pid %d naming cpu_shares" % pid
        strings = req["dictionary"][0]["string_table"]
        attrs = image_attrs(req)
        assert attrs.get("process.executable.path", "").endswith("/targets/cpu_shares"), attrs
        assert attrs.get("host.name") == os.uname().nodename, attrs
        assert attrs.get("service.name") == "checkout", attrs
        keys = {strings[int(a["key_strindex"][0])] for a in req["dictionary"][0]["attribute_table"][1:]}
        assert {"thread.name", "thread.id", "profile.frame.type",
                "process.executable.build_id.gnu"} <= keys, keys
        assert metric(d, "autoprof_otlp_batches_total", 'outcome="sent"') >= 2
    finally:
        d.stop()
        rx.stop()


def test_heap_inuse():
    """The pushed heap profile carries the memory live at the push: the same bytes as
    /debug/pprof/heap (it used to be 0 in every push: the pusher asked the store for heap rows,
    which only the memory collector holds)."""
    rx = Receiver()
    d = Daemon("--otlp.endpoint=http://127.0.0.1:%d/" % rx.port, "--otlp.interval=1s",
               "--memory.targets=mem_leak")
    p = None
    try:
        p, pid = start_target("mem_leak", 3, 30)
        leaked = int(p.stdout.readline().split()[1])
        time.sleep(3)  # pushes after the last allocation: the live set no longer changes
        n = len(rx.accepted())
        deadline = time.time() + 10
        while len(rx.accepted()) < n + 1 and time.time() < deadline:
            time.sleep(0.2)
        _, h, b, _ = rx.accepted()[-1]
        pushed, leaves = samples_of(decode(b, h), pid, "inuse_space")
        code, _, body = d.get("/debug/pprof/heap?pid=%d&format=folded" % pid)
        assert code == 200, code
        served = sum(int(l.rsplit(" ", 1)[1]) for l in body.decode().splitlines())
        print("  leaked %d, heap %d, pushed inuse_space %d" % (leaked, served, pushed))
        assert served >= 0.5 * leaked, (served, leaked)
        assert pushed == served, (pushed, served, leaves)
        assert max(leaves, key=leaves.get) == "leak_64k", leaves
    finally:
        if p:
            p.kill()
            p.wait()
        d.stop()
        rx.stop()


def test_gpu_pushed():
    """GPU memory goes out in the push too: gpu_inuse_space the bytes the program keeps (the
    stand-in CUDA of tests/targets/gpu), its samples carrying api and gpu attributes."""
    rx = Receiver()
    d = Daemon("--otlp.endpoint=http://127.0.0.1:%d/" % rx.port, "--otlp.interval=1s")
    p = subprocess.Popen([os.path.join(BUILD, "gputargets", "gpu_alloc")], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        pid = int(p.stdout.readline())
        deadline = time.time() + 10
        while (d.metric("autoprof_gpu_libraries") or 0) < 2:
            assert time.time() < deadline, "CUDA stand-ins not probed"
            time.sleep(0.1)
        p.stdin.write("go\n")
        p.stdin.flush()
        truth = json.loads(p.stdout.readline())
        kept = sum(f["inuse_bytes"] for f in truth["functions"].values())
        time.sleep(1.5)  # the seconds of the allocations settle before they are pushed
        n = len(rx.accepted())
        deadline = time.time() + 10
        while len(rx.accepted()) < n + 1 and time.time() < deadline:
            time.sleep(0.2)
        _, h, b, _ = rx.accepted()[-1]
        req = decode(b, h)
        pushed, leaves = samples_of(req, pid, "gpu_inuse_space")
        assert pushed == kept, (pushed, kept, leaves)
        assert leaves.get("rt_keep") == truth["functions"]["rt_keep"]["inuse_bytes"], leaves
        dic = req["dictionary"][0]
        strings = dic.get("string_table", [])
        keys = {strings[int(a.get("key_strindex", ["0"])[0])]
                for a in dic.get("attribute_table", [])}
        assert {"api", "gpu"} <= keys, keys
        print("  kept %d bytes, pushed gpu_inuse_space %d" % (kept, pushed))
    finally:
        p.kill()
        p.wait()
        d.stop()
        rx.stop()


def test_process_context_resource():
    """service.name published in the OTEP 4719 process context is the resource's, over the
    environment's (tests/targets/common/procctx.c)."""
    rx = Receiver()
    d = Daemon("--otlp.endpoint=http://127.0.0.1:%d" % rx.port, "--otlp.interval=1s")
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        env["OTEL_SERVICE_NAME"] = "env-checkout"
        p = subprocess.Popen([os.path.join(BUILD, "targets", "procctx"), "4", "ctx-checkout"],
                             stdout=subprocess.PIPE, text=True, env=env)
        pid = int(p.stdout.readline())
        p.wait()
        time.sleep(2.5)
        names = []
        for _, h, b, _ in rx.accepted():
            req = decode(b, h)
            strings = req["dictionary"][0]["string_table"]
            for rp in req.get("resource_profiles", []):
                attrs = resource_attrs(rp, strings)
                if attrs.get("process.pid") == str(pid):
                    names.append(attrs.get("service.name"))
        # Its first samples may predate the context (published in main, after exec).
        assert names and names[-1] == "ctx-checkout", names
        assert set(names) <= {"ctx-checkout", "env-checkout"}, names
    finally:
        d.stop()
        rx.stop()


def cgroup_roots():
    """(the cgroup v2 mount, a v1 hierarchy's mount: name=systemd's if any), None where none."""
    v2 = v1 = None
    with open("/proc/self/mounts") as f:
        for line in f:
            _, where, fstype, opts = line.split()[:4]
            if fstype == "cgroup2" and not v2:
                v2 = where
            elif fstype == "cgroup" and (not v1 or "name=systemd" in opts.split(",")):
                v1 = where
    return v2, v1


def container_id_of(text):
    """The container ID autoprof reads from a cgroup file's text: its last run of exactly 64
    lowercase hex digits."""
    ids = re.findall(r"(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])", text)
    return ids[-1] if ids else None


def test_container_id():
    """container.id is the 64-hex name of the cgroup a process runs in, as a container runtime
    names it (docker-<id>.scope): processes started one after another in one cgroup (the first
    reads /proc/PID/cgroup, the next find its cgroups' key cached), one in another cgroup, one
    left where the test runs; then a v1 cgroup renamed: the next process in it carries the new
    name's ID, not the cached one."""
    v2, v1 = cgroup_roots()
    if not v2 and not v1:
        raise Skip("no cgroup hierarchy mounted")
    root = v2 or v1
    ids = {k: os.urandom(32).hex() for k in "ABCD"}
    made = []

    def mkcg(base, name):
        path = os.path.join(base, "autoprof-test-%d" % os.getpid(), name)
        os.makedirs(path)
        made.append(path)
        return path

    def run(cg):
        """cpu_shares for half a second, moved into cgroup cg (None: left here) before its
        exec, as a runtime starts a container's process; returns its pid once it exited."""
        def move():
            with open(os.path.join(cg, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))

        p = subprocess.Popen([os.path.join(BUILD, "targets", "cpu_shares"), "0.5"],
                             stdout=subprocess.PIPE, text=True, preexec_fn=move if cg else None)
        pid = int(p.stdout.readline())
        p.wait()
        assert p.returncode == 0, p.returncode
        return pid

    rx = Receiver()
    d = Daemon("--otlp.endpoint=http://127.0.0.1:%d/" % rx.port, "--otlp.interval=1s")
    try:
        cached = d.metric("autoprof_container_id_lookups_total", '{source="cache"}') or 0
        a = mkcg(root, "docker-%s.scope" % ids["A"])
        b = mkcg(root, "cri-containerd-%s.scope" % ids["B"])
        want = {}
        for _ in range(3):
            want[run(a)] = ids["A"]
        want[run(b)] = ids["B"]
        with open("/proc/self/cgroup") as f:
            want[run(None)] = container_id_of(f.read())
        if v1:
            c = mkcg(v1, "docker-%s.scope" % ids["C"])
            want[run(c)] = ids["C"]
            renamed = os.path.join(os.path.dirname(c), "docker-%s.scope" % ids["D"])
            os.rename(c, renamed)
            made[made.index(c)] = renamed
            want[run(renamed)] = ids["D"]
        time.sleep(2.5)  # a push past the last one's samples
        got, seen = {}, {}
        for _, h, body, _ in rx.accepted():
            req = decode(body, h)
            strings = req["dictionary"][0]["string_table"]
            for rp in req.get("resource_profiles", []):
                attrs = resource_attrs(rp, strings)
                pid = int(attrs.get("process.pid", 0))
                if pid in want:
                    seen.setdefault(pid, set()).add((attrs.get("process.executable.name"),
                                                     attrs.get("container.id")))
                # Samples of the forked child before its exec (preexec_fn moving it) ran the
                # test's Python in the test's cgroup, and say so: only the program's count.
                if pid in want and attrs.get("process.executable.name") == "cpu_shares":
                    got.setdefault(pid, set()).add(attrs.get("container.id"))
        assert got == {pid: {cid} for pid, cid in want.items()}, (got, want, seen)
        # The runs in one cgroup after the first found it by its key.
        assert d.metric("autoprof_container_id_lookups_total", '{source="cache"}') >= cached + 2
        if v1:
            assert d.metric("autoprof_container_id_flushes_total") >= 1
    finally:
        d.stop()
        rx.stop()
        for path in reversed(made):
            os.rmdir(path)
        for path in {os.path.dirname(p) for p in made}:
            os.rmdir(path)


def test_503_retried():
    rx = Receiver(script=[503, 503, 503])
    d = Daemon("--otlp.endpoint=http://127.0.0.1:%d" % rx.port, "--otlp.interval=1s")
    try:
        time.sleep(7)
        assert metric(d, "autoprof_otlp_retries_total") >= 3
        assert len(rx.accepted()) >= 1, [r[3] for r in rx.requests]
        assert metric(d, "autoprof_otlp_batches_total", 'outcome="dropped_rejected"') == 0
        assert metric(d, "autoprof_otlp_batches_total", 'outcome="dropped_queue_full"') == 0
        sent = metric(d, "autoprof_otlp_batches_total", 'outcome="sent"')
        queued = metric(d, "autoprof_otlp_batches_total", 'outcome="queued"')
        waiting = metric(d, "autoprof_otlp_queue_batches")
        assert sent + waiting == queued, (sent, waiting, queued)
    finally:
        d.stop()
        rx.stop()


def test_links():
    """Samples taken inside a span carry it as a Link; links are spans the program published."""
    rx = Receiver()
    d = Daemon("--otlp.endpoint=http://127.0.0.1:%d" % rx.port, "--otlp.interval=1s")
    try:
        out = subprocess.run([os.path.join(BUILD, "tctargets", "tctx_exe"), "3"], check=True,
                             capture_output=True, text=True).stdout
        pid = int(next(l.split()[1] for l in out.splitlines() if l.startswith("PID")))
        spans = {(l.split()[2], l.split()[3]) for l in out.splitlines() if l.startswith("SPAN")}
        time.sleep(3)
        linked = unlinked = 0
        for _, h, b, _ in rx.accepted():
            req = decode(b, h)
            dic = req["dictionary"][0]
            links = dic.get("link_table", [])
            assert links and links[0] == {}, "link_table[0] must be the zero link"
            for rp in req.get("resource_profiles", []):
                if resource_attrs(rp, dic["string_table"]).get("process.pid") != str(pid):
                    continue
                for sp in rp["scope_profiles"]:
                    for prof in sp.get("profiles", []):
                        for smp in prof.get("samples", []):
                            li = int(smp.get("link_index", ["0"])[0])
                            if not li:
                                unlinked += 1
                                continue
                            link = links[li]
                            pair = (octal_hex(link["trace_id"][0]), octal_hex(link["span_id"][0]))
                            assert pair in spans, "link %s was never published" % (pair,)
                            linked += 1
        assert linked >= 10, (linked, unlinked)
        assert unlinked >= 1, "the untraced thread's samples must have no link"
    finally:
        d.stop()
        rx.stop()


def octal_hex(s):
    """protoc prints bytes as a C-escaped string; back to lower-case hex."""
    raw = s.encode("latin-1").decode("unicode_escape").encode("latin-1")
    return raw.hex()


def rss_kib(pid, kind="RssAnon"):
    """Anonymous memory by default: the queue lives there, while file pages of debug files that
    libdw maps grow as more addresses are symbolized and say nothing about the outage."""
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(kind + r":\s+(\d+)", f.read()).group(1))


def test_collector_down_bounded():
    port = free_port()  # nothing listens there
    # Room for every batch of the outage (about 13 of 4-8 KiB, gzipped, with how busy the host
    # is): at 64 KiB only 8 of the bigger ones fit, and the count below hung on the host's load.
    d = Daemon("--otlp.endpoint=http://127.0.0.1:%d" % port, "--otlp.interval=1s",
               "--otlp.queue-size=256KiB", "--otlp.timeout=1s")
    try:
        p, _ = start_target("cpu_shares", 14)
        time.sleep(4)
        # Load what symbolizing costs once (kallsyms, libc's DWARF) before measuring: a
        # whole-host profile has kernel frames, which a spinning target may not show for a while.
        assert d.get("/debug/pprof/profile?seconds=4")[0] == 200
        rss0, file0 = rss_kib(d.proc.pid), rss_kib(d.proc.pid, "RssFile")
        sym0 = metric(d, "autoprof_symbolizer_cache_bytes")
        time.sleep(9)
        # Pushes symbolize every process of the host: what the symbolizer loads meanwhile is
        # accounted by it and is not the outage's doing.
        sym = (metric(d, "autoprof_symbolizer_cache_bytes") - sym0) / 1024
        grown = rss_kib(d.proc.pid) - rss0 - max(0, int(sym))
        print("RssAnon grew %d KiB beyond the symbolizer's %d KiB, RssFile %d KiB" % (
            grown, sym, rss_kib(d.proc.pid, "RssFile") - file0))
        p.wait()
        assert metric(d, "autoprof_otlp_failures_total", 'kind="network"') >= 1
        assert metric(d, "autoprof_otlp_queue_bytes") <= 256 * 1024
        # Held for the collector's return (dropping the oldest when full is a unit test's job:
        # these gzipped batches are a few KiB each).
        assert metric(d, "autoprof_otlp_queue_batches") >= 8
        # The symbolizer's count is of its tables: libdw's and malloc's own around a load
        # come on top (CI's host, busier, loaded 19 MiB in the window once: 2.7 MiB more).
        assert grown < 2048 + 0.15 * max(0, sym), "RSS grew %d KiB during the outage" % grown
        rc, secs = d.stop()
        assert rc == 0 and secs < 2, (rc, secs)
    finally:
        d.stop()


def openssl(*args):
    subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=TMP)


def make_pki():
    """A CA, a server certificate for 127.0.0.1 and a client certificate it signed, in TMP."""
    if os.path.exists(os.path.join(TMP, "client.pem")):
        return
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
            "/CN=autoprof-test-ca", "-keyout", "ca.key", "-out", "ca.pem")
    for name, ext in (("server", "subjectAltName=IP:127.0.0.1"),
                      ("client", "extendedKeyUsage=clientAuth")):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=autoprof-" + name,
                "-keyout", name + ".key", "-out", name + ".csr")
        with open(os.path.join(TMP, name + ".ext"), "w") as f:
            f.write(ext + "\n")
        openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                "-CAcreateserial", "-days", "1", "-extfile", name + ".ext", "-out", name + ".pem")


def tls_context():
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(TMP, "server.pem"), os.path.join(TMP, "server.key"))
    # Asked for, not required: a client without a certificate still gets through.
    ctx.verify_mode = ssl.CERT_OPTIONAL
    ctx.load_verify_locations(os.path.join(TMP, "ca.pem"))
    return ctx


def test_tls_headers_file():
    """https with --otlp.ca-file: the push arrives, with the client certificate of
    --otlp.cert-file/--otlp.key-file and the headers of --otlp.headers-file besides
    --otlp.headers; without the CA file the collector's certificate is refused."""
    make_pki()
    headers = os.path.join(TMP, "otlp-headers")
    with open(headers, "w") as f:
        f.write("# token from a secret\nAuthorization: Bearer s3cret\n")
    rx = Receiver(tls=tls_context())
    d = Daemon("--otlp.endpoint=https://127.0.0.1:%d" % rx.port, "--otlp.interval=1s",
               "--otlp.headers=X-Scope-OrgID=tenant-1", "--otlp.headers-file=" + headers,
               "--otlp.ca-file=" + os.path.join(TMP, "ca.pem"),
               "--otlp.cert-file=" + os.path.join(TMP, "client.pem"),
               "--otlp.key-file=" + os.path.join(TMP, "client.key"))
    try:
        deadline = time.time() + 15
        while time.time() < deadline and not rx.accepted():
            time.sleep(0.2)
        assert rx.accepted(), "nothing arrived over https: %s" % d.logtext()[-2000:]
        _, hdrs, _, _ = rx.accepted()[0]
        assert hdrs.get("Authorization") == "Bearer s3cret", hdrs
        assert hdrs.get("X-Scope-OrgID") == "tenant-1", hdrs
        with open("/proc/%d/cmdline" % d.proc.pid, "rb") as f:
            assert b"s3cret" not in f.read()
        peer = rx.peers[0]
        assert peer and ("commonName", "autoprof-client") in [x[0] for x in peer["subject"]], \
            peer
    finally:
        d.stop()
        rx.stop()

    rx = Receiver(tls=tls_context())
    d = Daemon("--otlp.endpoint=https://127.0.0.1:%d" % rx.port, "--otlp.interval=1s")
    try:
        time.sleep(4)
        assert not rx.requests, "a collector signed by an unknown CA was trusted"
        assert metric(d, "autoprof_otlp_failures_total", 'kind="network"') >= 1
    finally:
        d.stop()
        rx.stop()


def test_bad_secret_files():
    """A headers file that is missing or malformed, or an unreadable CA file, stops autoprof
    with exit status 2 naming the key, before anything is attached."""
    bad = os.path.join(TMP, "bad-headers")
    with open(bad, "w") as f:
        f.write("Authorization Bearer x\n")
    for arg, key in (("--otlp.headers-file=/nonexistent/headers", "--otlp.headers-file"),
                     ("--otlp.headers-file=" + bad, "--otlp.headers-file"),
                     ("--otlp.ca-file=/nonexistent/ca.pem", "--otlp.ca-file")):
        r = subprocess.run([AUTOPROF, "--otlp.endpoint=http://127.0.0.1:1", arg],
                           capture_output=True, text=True, timeout=20)
        assert r.returncode == 2 and key + ":" in r.stderr, (arg, r.returncode, r.stderr)


def test_sigterm_flushes_last_push():
    """SIGTERM with the collector up: the seconds not pushed yet arrive before the exit (the
    interval is an hour, so that push is the shutdown's)."""
    rx = Receiver()
    d = Daemon("--otlp.endpoint=http://127.0.0.1:%d" % rx.port, "--otlp.interval=1h",
               "--otlp.shutdown-timeout=3s")
    try:
        p, pid = start_target("cpu_shares", 3)
        p.wait()
        time.sleep(1)
        assert not rx.requests, "pushed before the shutdown"
        rc, secs = d.stop()
        assert rc == 0 and secs < 4, (rc, secs)
        assert len(rx.accepted()) == 1, [r[3] for r in rx.requests]
        path, headers, body, _ = rx.accepted()[0]
        total, _ = samples_of(decode(body, headers), pid, "cpu")
        assert total > 0, "the last push has no samples of pid %d" % pid
    finally:
        d.stop()
        rx.stop()


def test_sigterm_bounded():
    """SIGTERM with a collector that hangs, or is down: exit within otlp.shutdown-timeout
    + 1 s."""
    rx = Receiver(delay=30)
    for endpoint in ("http://127.0.0.1:%d" % rx.port, "http://127.0.0.1:%d" % free_port()):
        d = Daemon("--otlp.endpoint=" + endpoint, "--otlp.interval=1h",
                   "--otlp.shutdown-timeout=2s", "--otlp.timeout=60s")
        try:
            time.sleep(1.5)
            rc, secs = d.stop()
            assert rc == 0 and secs < 3, (endpoint, rc, secs)
        finally:
            d.stop()
    assert rx.requests, "the hanging collector got no request"
    rx.stop()


def test_libcurl_only_when_pushing():
    """libcurl (and its OpenSSL, Kerberos, LDAP... tree) is loaded by the first pusher, not
    linked: an agent that does not push OTLP maps none of it."""
    def maps_libcurl(d):
        with open("/proc/%d/maps" % d.proc.pid) as f:
            return "libcurl.so" in f.read()

    d = Daemon()
    try:
        assert not maps_libcurl(d), "libcurl mapped without --otlp.endpoint"
    finally:
        d.stop()
    rx = Receiver()
    d = Daemon("--otlp.endpoint=http://127.0.0.1:%d/" % rx.port, "--otlp.interval=1s")
    try:
        assert maps_libcurl(d), "libcurl not mapped while pushing"
        deadline = time.time() + 10
        while not rx.accepted() and time.time() < deadline:
            time.sleep(0.2)
        assert rx.accepted(), "nothing pushed through the loaded libcurl"
    finally:
        d.stop()
        rx.stop()


check("otlp_push_matches_pprof", test_push_matches_pprof)
check("otlp_heap_inuse_is_the_live_heap", test_heap_inuse)
check("otlp_gpu_memory_pushed", test_gpu_pushed)
check("otlp_process_context_service_name", test_process_context_resource)
check("otlp_container_id_from_cgroup", test_container_id)
check("otlp_503_retried_nothing_lost", test_503_retried)
check("otlp_links_are_published_spans", test_links)
check("otlp_collector_down_bounded", test_collector_down_bounded)
check("otlp_tls_client_cert_headers_file", test_tls_headers_file)
check("otlp_bad_secret_files_exit_2", test_bad_secret_files)
check("otlp_sigterm_flushes_last_push", test_sigterm_flushes_last_push)
check("otlp_sigterm_bounded", test_sigterm_bounded)
check("otlp_libcurl_only_when_pushing", test_libcurl_only_when_pushing)
sys.exit(exit_status())
