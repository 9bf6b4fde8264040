#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Web security: read-only by default (--web.enable-admin-api), no cross-site or DNS-rebinding
request changes anything, TLS and basic auth from --web.config.file (also scraped by the real
Prometheus), a bad web config exits 2, and slow clients cannot take /metrics down. Each test
makes the attack, then checks it was refused and counted."""

import crypt
import json
import os
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from aplib import AUTOPROF, TMP, Daemon, check, exit_status, free_port, metric_value  # noqa: E402

SEC = os.path.join(TMP, "websec")
os.makedirs(SEC, exist_ok=True)


def rejected(d, reason):
    return d.metric("autoprof_http_rejected_total", 'reason="%s"' % reason, default=0.0)


def memory_targets(d):
    code, _, body = d.get("/api/v1/targets/memory")
    assert code == 200, (code, body)
    return json.loads(body)


def test_read_only_by_default():
    d = Daemon()
    try:
        code, _, body = d.get("/api/v1/status")
        assert code == 200 and json.loads(body)["admin_api"] is False, (code, body)
        before = memory_targets(d)
        for method, path, body in (("POST", "/api/v1/probes", '{"binary": "/bin/true", '
                                                              '"function": "main"}'),
                                   ("POST", "/api/v1/targets/memory", '{"exe": "websec_*"}'),
                                   ("DELETE", "/api/v1/targets/memory/1", None),
                                   ("DELETE", "/api/v1/probes/1", None),
                                   ("POST", "/debug/offcpu/config?enabled=true", "")):
            code, _, text = d.request(method, path, body)
            assert code == 403 and b"--web.enable-admin-api" in text, (method, path, code, text)
        assert memory_targets(d) == before, memory_targets(d)
        code, _, body = d.get("/api/v1/probes")
        assert code != 200 or json.loads(body)["probes"] == [], body
        code, _, body = d.get("/debug/offcpu/config")
        assert code != 200 or json.loads(body)["enabled"] is False, body
        assert rejected(d, "admin_disabled") == 5, d.metrics()
        # Reading still works.
        assert d.get("/metrics")[0] == 200
    finally:
        d.stop()


def test_cross_site_refused():
    d = Daemon("--web.enable-admin-api")
    try:
        body = '{"exe": "websec_*"}'
        base = "http://127.0.0.1:%d" % d.port
        attacks = (
            ({"Origin": "http://evil.example"}, 403),
            ({"Origin": "null"}, 403),
            ({"Origin": base.replace("http:", "https:")}, 403),
            ({"Sec-Fetch-Site": "cross-site"}, 403),
            ({"Sec-Fetch-Site": "same-site"}, 403),
            ({"Content-Type": "text/plain"}, 415),
            ({"Content-Type": "application/x-www-form-urlencoded"}, 415),
            ({"Content-Type": "multipart/form-data; boundary=x"}, 415),
        )
        for headers, want in attacks:
            code, _, text = d.request("POST", "/api/v1/targets/memory", body, headers)
            assert code == want, (headers, code, text)
        assert memory_targets(d) == [], memory_targets(d)
        assert rejected(d, "cross_site") == 5 and rejected(d, "content_type") == 3, d.metrics()
        # What the page itself sends: same origin, JSON.
        code, _, text = d.request("POST", "/api/v1/targets/memory", body,
                                  {"Origin": base, "Sec-Fetch-Site": "same-origin"})
        assert code == 200, (code, text)
        tid = json.loads(text)["id"]
        # A DELETE without a body needs no Content-Type.
        req = urllib.request.Request(base + "/api/v1/targets/memory/%d" % tid, method="DELETE")
        with urllib.request.urlopen(req, timeout=10) as r:
            assert r.status == 200
        assert memory_targets(d) == [], memory_targets(d)
    finally:
        d.stop()


def raw_request(port, host, path="/metrics", method="GET"):
    """Status code of a request whose Host header is host (urllib would set its own)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(("%s %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
                   "Content-Length: 2\r\nConnection: close\r\n\r\n{}" %
                   (method, path, host)).encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    return int(data.split(b" ", 2)[1]), data


def test_dns_rebinding_refused():
    d = Daemon("--web.enable-admin-api")
    try:
        for host in ("evil.example", "evil.example:%d" % d.port, "127.0.0.1.evil.example",
                     "[::2]:%d" % d.port, "localhost.evil.example"):
            code, data = raw_request(d.port, host)
            assert code == 421 and b"loopback" in data, (host, data[:300])
            code, _ = raw_request(d.port, host, "/api/v1/targets/memory", "POST")
            assert code == 421, (host, code)
        for host in ("localhost:%d" % d.port, "127.0.0.1:%d" % d.port, "127.1.2.3",
                     "LOCALHOST", "[::1]:%d" % d.port):
            code, data = raw_request(d.port, host)
            assert code == 200, (host, data[:300])
        assert rejected(d, "host") == 10, d.metrics()
        assert memory_targets(d) == []
    finally:
        d.stop()


def test_health_ready_metrics():
    d = Daemon()
    try:
        code, _, body = d.get("/-/healthy")
        assert code == 200 and b"Healthy" in body, (code, body)
        # Ready may follow /metrics by the start-up scan's unwind tables.
        deadline = time.time() + 30
        while True:
            code, _, body = d.get("/-/ready")
            if code == 200 or time.time() > deadline:
                break
            time.sleep(0.05)
        assert code == 200 and b"Ready" in body, (code, body)
        r = subprocess.run(["promtool", "check", "metrics"], input=d.get("/metrics")[2],
                           capture_output=True, timeout=30)
        assert r.returncode == 0, r.stdout + r.stderr
    finally:
        d.stop()


def test_ready_before_start():
    """/-/ready answers 503 while autoprof still loads its samplers, then 200."""
    d = Daemon(wait=False)
    try:
        seen = set()
        deadline = time.time() + 30
        while time.time() < deadline and 200 not in seen:
            try:
                code = d.get("/-/ready")[0]
                seen.add(code)
                if code == 503:
                    assert d.get("/-/healthy")[0] == 200
            except OSError:
                pass
            time.sleep(0.02)
        assert seen == {503, 200}, seen
    finally:
        d.stop()


# ---- TLS and basic auth ---------------------------------------------------------------------

def openssl(*args):
    subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)


def make_pki():
    """A CA, a server certificate for 127.0.0.1, a client certificate from the same CA and one
    from another CA."""
    p = lambda name: os.path.join(SEC, name)  # noqa: E731
    if os.path.exists(p("other-client.pem")):
        return p
    for ca in ("ca", "other-ca"):
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                "-nodes", "-keyout", p(ca + ".key"), "-out", p(ca + ".pem"), "-days", "2",
                "-subj", "/CN=autoprof test " + ca)
    ext = p("server.ext")
    with open(ext, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    for name, ca in (("server", "ca"), ("client", "ca"), ("other-client", "other-ca")):
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", p(name + ".key"), "-out", p(name + ".csr"), "-subj", "/CN=" + name)
        openssl("x509", "-req", "-in", p(name + ".csr"), "-CA", p(ca + ".pem"), "-CAkey",
                p(ca + ".key"), "-CAcreateserial", "-out", p(name + ".pem"), "-days", "2",
                *(["-extfile", ext] if name == "server" else []))
    return p


def web_config(name, text):
    path = os.path.join(SEC, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def curl(*args):
    r = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}",
                        "--max-time", "10", *args], capture_output=True, text=True, timeout=30)
    return r.returncode, r.stdout, r.stderr


def wait_up(d, *curl_args):
    deadline = time.time() + 20
    while time.time() < deadline:
        if d.proc.poll() is not None:
            raise AssertionError("autoprof exited %d: %s" % (d.proc.returncode, d.logtext()))
        rc, code, _ = curl(*curl_args, "http%s://127.0.0.1:%d/-/ready" %
                           ("s" if "--cacert" in curl_args else "", d.port))
        if rc == 0 and code == "200":
            return
        time.sleep(0.2)
    raise AssertionError("autoprof did not come up: " + d.logtext())


HASHED = {}


def bcrypt(password):
    if password not in HASHED:
        HASHED[password] = crypt.crypt(password, crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 10))
    return HASHED[password]


def test_basic_auth():
    cfg = web_config("auth.yml", "basic_auth_users:\n  scraper: %s\n  other: %s\n" %
                     (bcrypt("s3cret pw"), bcrypt("other")))
    d = Daemon("--web.config.file=" + cfg, wait=False)
    try:
        wait_up(d, "-u", "scraper:s3cret pw")
        url = "http://127.0.0.1:%d/metrics" % d.port
        for creds in ([], ["-u", "scraper:wrong"], ["-u", "nobody:s3cret pw"],
                      ["-u", "other:s3cret pw"], ["-u", "scraper:"]):
            r = subprocess.run(["curl", "-sS", "-i", "--max-time", "10", *creds, url],
                               capture_output=True, text=True, timeout=30)
            head = r.stdout.split("\r\n\r\n")[0]
            assert head.startswith("HTTP/1.1 401") and "WWW-Authenticate: Basic" in head, \
                (creds, head)
        rc, code, err = curl("-u", "scraper:s3cret pw", url)
        assert rc == 0 and code == "200", (rc, code, err)
        d.auth = ("scraper", "s3cret pw")
        assert rejected(d, "auth") >= 5, d.metrics()
    finally:
        d.stop()


def test_tls():
    p = make_pki()
    cfg = web_config("tls.yml", "tls_server_config:\n  cert_file: server.pem\n"
                     "  key_file: server.key\nhttp_server_config:\n  headers:\n"
                     "    Strict-Transport-Security: max-age=31536000\n"
                     "    X-Content-Type-Options: nosniff\n")
    d = Daemon("--web.config.file=" + cfg, wait=False)
    try:
        wait_up(d, "--cacert", p("ca.pem"))
        url = "https://127.0.0.1:%d/metrics" % d.port
        rc, code, err = curl("--cacert", p("ca.pem"), url)
        assert rc == 0 and code == "200", (rc, code, err)
        r = subprocess.run(["curl", "-sS", "-i", "--max-time", "10", "--cacert", p("ca.pem"),
                            url.replace("metrics", "nothing")], capture_output=True, text=True)
        assert "Strict-Transport-Security: max-age=31536000" in r.stdout and \
            "X-Content-Type-Options: nosniff" in r.stdout, r.stdout[:500]
        # Plain HTTP to the TLS port gets no answer.
        rc, code, err = curl(url.replace("https:", "http:"))
        assert rc != 0 or code != "200", (rc, code, err)
        # Nor does a client that does not trust the certificate.
        rc, code, err = curl(url)
        assert rc != 0, (rc, code, err)
        # TLS 1.1 is below the default min_version.
        rc, code, err = curl("--cacert", p("ca.pem"), "--tls-max", "1.1", url)
        assert rc != 0, (rc, code, err)
    finally:
        d.stop()


def test_tls_client_cert():
    p = make_pki()
    cfg = web_config("mtls.yml", "tls_server_config:\n  cert_file: %s\n  key_file: %s\n"
                     "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: %s\n"
                     % (p("server.pem"), p("server.key"), p("ca.pem")))
    d = Daemon("--web.config.file=" + cfg, wait=False)
    mine = ["--cert", p("client.pem"), "--key", p("client.key")]
    try:
        wait_up(d, "--cacert", p("ca.pem"), *mine)
        url = "https://127.0.0.1:%d/metrics" % d.port
        rc, code, err = curl("--cacert", p("ca.pem"), *mine, url)
        assert rc == 0 and code == "200", (rc, code, err)
        rc, code, err = curl("--cacert", p("ca.pem"), url)
        assert rc != 0 or code != "200", ("no client certificate", rc, code, err)
        rc, code, err = curl("--cacert", p("ca.pem"), "--cert", p("other-client.pem"), "--key",
                             p("other-client.key"), url)
        assert rc != 0 or code != "200", ("certificate of another CA", rc, code, err)
    finally:
        d.stop()


def test_prometheus_scrapes_tls_and_auth():
    p = make_pki()
    cfg = web_config("prom-web.yml", "tls_server_config:\n  cert_file: server.pem\n"
                     "  key_file: server.key\nbasic_auth_users:\n  prometheus: %s\n" %
                     bcrypt("scrape-pw"))
    d = Daemon("--web.config.file=" + cfg, wait=False)
    prom = None
    try:
        wait_up(d, "--cacert", p("ca.pem"), "-u", "prometheus:scrape-pw")
        pw = web_config("prom-password", "scrape-pw")
        prom_port = free_port()
        prom_cfg = web_config("prometheus.yml", """global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: autoprof
    scheme: https
    tls_config:
      ca_file: %s
    basic_auth:
      username: prometheus
      password_file: %s
    static_configs:
      - targets: ['127.0.0.1:%d']
""" % (p("ca.pem"), pw, d.port))
        prom_log = open(os.path.join(SEC, "prometheus.log"), "w")
        prom = subprocess.Popen(["prometheus", "--config.file=" + prom_cfg,
                                 "--storage.tsdb.path=" + os.path.join(SEC, "tsdb-%d" % prom_port),
                                 "--web.listen-address=127.0.0.1:%d" % prom_port],
                                stdout=prom_log, stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        last = None
        while time.time() < deadline:
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/api/v1/query?query=up" %
                                            prom_port, timeout=5) as r:
                    last = json.load(r)["data"]["result"]
                if last and last[0]["value"][1] == "1":
                    break
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.5)
        assert last and last[0]["value"][1] == "1", last
        # The scrapes were authenticated: counted under their handler, none refused.
        d.tls_ca, d.auth = p("ca.pem"), ("prometheus", "scrape-pw")
        text = d.metrics()
        assert metric_value(text, "autoprof_http_requests_total",
                            'handler="metrics",code="200"', 0) >= 1, \
            [line for line in text.splitlines() if "http_requests" in line]
    finally:
        if prom:
            prom.terminate()
            try:
                prom.wait(timeout=10)
            except subprocess.TimeoutExpired:
                prom.kill()
        d.stop()


def test_bad_web_config():
    p = make_pki()
    cases = (
        ("unknown.yml", "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
         "  cipher_suites: [TLS_AES_128_GCM_SHA256]\n", "tls_server_config.cipher_suites"),
        ("top.yml", "basic_auth:\n  a: b\n", "basic_auth"),
        ("plain.yml", "basic_auth_users:\n  scraper: hunter2\n", "basic_auth_users.scraper"),
        ("enum.yml", "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
         "  client_auth_type: RequireClientCert\n", "tls_server_config.client_auth_type"),
        ("version.yml", "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
         "  min_version: TLS13\n  max_version: TLS12\n", "tls_server_config.min_version"),
        ("nokey.yml", "tls_server_config:\n  cert_file: server.pem\n",
         "tls_server_config.key_file"),
        ("missingkey.yml", "tls_server_config:\n  cert_file: server.pem\n"
         "  key_file: no-such.key\n", "tls_server_config.key_file"),
        ("wrongkey.yml", "tls_server_config:\n  cert_file: server.pem\n  key_file: ca.key\n",
         "tls_server_config.key_file"),
        ("noca.yml", "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
         "  client_auth_type: RequireAndVerifyClientCert\n", "tls_server_config.client_ca_file"),
        ("header.yml", "http_server_config:\n  headers:\n    'Bad Header': x\n",
         "http_server_config.headers.Bad Header"),
    )
    assert os.path.exists(p("server.pem"))
    for name, text, key in cases:
        cfg = web_config(name, text)
        t = time.time()
        r = subprocess.run([AUTOPROF, "--web.listen-address=127.0.0.1:%d" % free_port(),
                            "--web.config.file=" + cfg], capture_output=True, text=True,
                           timeout=20)
        took = time.time() - t
        assert r.returncode == 2, (name, r.returncode, r.stderr)
        assert key + ":" in r.stderr and "--web.config.file" in r.stderr, (name, r.stderr)
        # Before anything was loaded or bound.
        assert "listening" not in r.stderr and took < 2, (name, took, r.stderr)
    r = subprocess.run([AUTOPROF, "--web.config.file=" + os.path.join(SEC, "absent.yml")],
                       capture_output=True, text=True, timeout=20)
    assert r.returncode == 2 and "absent.yml" in r.stderr, (r.returncode, r.stderr)


# ---- bounded HTTP ---------------------------------------------------------------------------

def test_slow_clients():
    d = Daemon()
    slow = []
    try:
        for _ in range(64):
            s = socket.socket()
            s.bind(("127.0.0.2", 0))
            s.settimeout(5)
            s.connect(("127.0.0.1", d.port))
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Ag")
            slow.append(s)
        time.sleep(0.5)
        t = time.time()
        code, _, body = d.get("/metrics")
        took = time.time() - t
        assert code == 200 and took < 1, (code, took)
        # Those past the per-address limit were closed at once; the rest still wait.
        closed = 0
        for s in slow:
            s.settimeout(0.05)
            try:
                closed += s.recv(1) == b""
            except ConnectionResetError:
                closed += 1
            except socket.timeout:
                pass
        assert closed == 64 - 16, closed
        assert metric_value(body.decode(), "autoprof_http_rejected_total",
                            'reason="connection_limit"') == 48, body.decode()[-2000:]
    finally:
        for s in slow:
            s.close()
        d.stop()


ONLY = os.environ.get("WEBSEC_ONLY", "")


def check(name, fn, _check=check):  # noqa: F811
    if not ONLY or name in ONLY.split(","):
        _check(name, fn)


check("read_only_by_default", test_read_only_by_default)
check("cross_site_refused", test_cross_site_refused)
check("dns_rebinding_refused", test_dns_rebinding_refused)
check("health_ready_metrics", test_health_ready_metrics)
check("ready_before_start", test_ready_before_start)
check("basic_auth", test_basic_auth)
check("tls", test_tls)
check("tls_client_cert", test_tls_client_cert)
check("prometheus_scrapes_tls_and_auth", test_prometheus_scrapes_tls_and_auth)
check("bad_web_config", test_bad_web_config)
check("slow_clients", test_slow_clients)
sys.exit(exit_status())
