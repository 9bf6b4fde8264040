#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Start-up errors: a bad config names the key and the line and exits 2 before anything is
attached; missing privileges name the capability; a busy port fails before attaching."""

import os
import socket
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from aplib import AUTOPROF, ROOT, TMP, check, exit_status, free_port  # noqa: E402


def loaded_progs():
    out = subprocess.run(["bpftool", "prog", "show"], capture_output=True, text=True).stdout
    return sum(1 for line in out.splitlines() if "oncpu_sample" in line or "proc_exec" in line)


def run(*args, **kw):
    return subprocess.run([AUTOPROF, *args], capture_output=True, text=True, timeout=20, **kw)


def test_bad_config():
    path = os.path.join(TMP, "bad.yaml")
    with open(path, "w") as f:
        f.write("web:\n  listen-address: \":0\"\nprofile:\n  frequency: 0\n")
    before = loaded_progs()
    r = run("--config.file=" + path)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "%s:4: profile.frequency:" % path in r.stderr, r.stderr
    assert loaded_progs() == before


def test_unknown_key():
    path = os.path.join(TMP, "unknown.yaml")
    with open(path, "w") as f:
        f.write("profile:\n  retention: 5m\n  frequncy: 99\n")
    r = run("--config.file=" + path)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "%s:3: profile.frequncy:" % path in r.stderr, r.stderr


def test_bad_flag():
    r = run("--profile.retention=forever")
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "--profile.retention:" in r.stderr, r.stderr


def test_example_config_loads():
    """config/autoprof.yaml (what `make run` uses) is valid: --help after it parses it."""
    r = run("--config.file=" + os.path.join(ROOT, "config", "autoprof.yaml"), "--version")
    assert r.returncode == 0, r.stderr
    assert "autoprof version" in r.stdout, r.stdout


def test_missing_capability():
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                        AUTOPROF, "--web.listen-address=127.0.0.1:%d" % free_port()],
                       capture_output=True, text=True, timeout=20)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert "missing capability CAP_BPF" in r.stderr, r.stderr


def test_port_in_use():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        before = loaded_progs()
        r = run("--web.listen-address=127.0.0.1:%d" % s.getsockname()[1])
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert "cannot listen on" in r.stderr, r.stderr
    assert loaded_progs() == before


check("bad_config_exits_2_naming_key_and_line", test_bad_config)
check("unknown_config_key", test_unknown_key)
check("bad_flag_exits_2", test_bad_flag)
check("example_config_loads", test_example_config_loads)
check("missing_capability_named", test_missing_capability)
check("port_in_use_fails_before_attaching", test_port_in_use)
sys.exit(exit_status())
