#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The OpenTelemetry process context (OTEP 4719): a process that publishes service.name in an
OTEL_CTX mapping gets it as its pprof label service_name, with no OTEL_SERVICE_NAME in its
environment; with both, the context wins; a context naming no service leaves the environment's."""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from aplib import TARGETS, Daemon, check, exit_status, traces  # noqa: E402


def start(service, env):
    """build/targets/procctx publishing `service`, with exactly the OTEL variables in env."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    e.update(env)
    p = subprocess.Popen([os.path.join(TARGETS, "procctx"), "6", service],
                         stdout=subprocess.PIPE, text=True, env=e)
    return p, int(p.stdout.readline())


def metric(d, name, labels):
    v = d.metric(name, labels)
    assert v is not None, "no %s{%s}" % (name, labels)
    return v


def service_names(service, env):
    d = Daemon()
    try:
        p, pid = start(service, env)
        # The target publishes its context in main, after autoprof first read its maps at
        # exec: look at samples from once it is running.
        time.sleep(3.5)
        code, _, body = d.get("/debug/pprof/profile?seconds=2&pid=%d" % pid)
        assert code == 200, code
        p.wait()
        spins = [(c, lab) for c, lab, frames in traces(body)
                 if lab.get("exe") == "procctx" and "ctx_spin" in frames]
        assert sum(c for c, _ in spins) >= 50, "only %d samples in ctx_spin" % sum(
            c for c, _ in spins)
        if service:
            assert metric(d, "autoprof_process_context_reads_total", 'result="ok"') >= 1
        assert metric(d, "autoprof_process_context_reads_total", 'result="error"') == 0
        return {lab.get("service_name") for _, lab in spins}
    finally:
        d.stop()


def test_context_only():
    names = service_names("ctx-checkout", {})
    assert names == {"ctx-checkout"}, names


def test_context_wins_over_env():
    names = service_names("ctx-checkout", {"OTEL_SERVICE_NAME": "env-checkout",
                                           "OTEL_RESOURCE_ATTRIBUTES": "service.name=env-attrs"})
    assert names == {"ctx-checkout"}, names


def test_context_without_service_keeps_env():
    names = service_names("", {"OTEL_SERVICE_NAME": "env-checkout"})
    assert names == {"env-checkout"}, names


check("procctx_service_name_from_context", test_context_only)
check("procctx_context_wins_over_environment", test_context_wins_over_env)
check("procctx_context_without_service_keeps_environment", test_context_without_service_keeps_env)
sys.exit(exit_status())
