# SPDX-License-Identifier: GPL-2.0-only
"""Headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe: JSON
messages ending in a NUL byte, commands on fd 3, answers and events on fd 4). Standard library
only: no WebDriver, no websocket client, no browser download."""

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")

# The network is closed to tests: these keep Chromium from trying to reach anything on its own.
QUIET_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--disable-default-apps", "--disable-extensions", "--mute-audio",
               "--hide-scrollbars", "--force-device-scale-factor=1")


def find_chromium():
    for name in CHROMIUM_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


class BrowserError(Exception):
    pass


class Browser:
    """One Chromium with one page; evaluate(), wait_for(), click/hover/type, screenshot()."""

    def __init__(self, width=1400, height=1000, log_path=None):
        exe = find_chromium()
        if not exe:
            raise BrowserError("no chromium on PATH (scripts/install-deps.sh installs it)")
        self.profile = tempfile.mkdtemp(prefix="autoprof-chromium-")
        cmd_r, self._cmd_w = os.pipe()
        self._res_r, res_w = os.pipe()

        def to_fds_3_4():
            # The child's fd 3 reads our commands, its fd 4 carries the answers back.
            a, b = os.dup(cmd_r), os.dup(res_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.log = open(log_path or os.devnull, "w")
        self.proc = subprocess.Popen(
            [exe, *QUIET_FLAGS, "--user-data-dir=" + self.profile, "--remote-debugging-pipe",
             "--window-size=%d,%d" % (width, height), "about:blank"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
            preexec_fn=to_fds_3_4, pass_fds=(3, 4))
        os.close(cmd_r)
        os.close(res_w)
        self._buf = b""
        self._next_id = 0
        self.session = None
        try:
            targets = self.call("Target.getTargets")["targetInfos"]
            page = next(t for t in targets if t["type"] == "page")
            self.session = self.call("Target.attachToTarget", targetId=page["targetId"],
                                     flatten=True)["sessionId"]
            self.call("Page.enable")
            self.call("Runtime.enable")
            self.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                      deviceScaleFactor=1, mobile=False)
        except Exception:
            self.close()
            raise

    def _read_message(self, deadline):
        while b"\0" not in self._buf:
            left = deadline - time.time()
            if left <= 0:
                raise BrowserError("no answer from chromium in time")
            ready, _, _ = select.select([self._res_r], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._res_r, 1 << 20)
            if not chunk:
                raise BrowserError("chromium closed the pipe (exit status %s)" % self.proc.poll())
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, timeout=30, **params):
        """One DevTools command, on the page's session once there is one; returns its result."""
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            msg["sessionId"] = self.session
        os.write(self._cmd_w, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") != self._next_id:
                continue  # an event
            if "error" in reply:
                raise BrowserError("%s: %s" % (method, reply["error"]))
            return reply["result"]

    def goto(self, url):
        self.call("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete'")

    def evaluate(self, expression):
        """Value of a JavaScript expression (promises awaited); raises on a thrown exception."""
        r = self.call("Runtime.evaluate", expression=expression, awaitPromise=True,
                      returnByValue=True)
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            raise BrowserError("%s: %s" % (expression[:200],
                                           d.get("exception", {}).get("description", d)))
        return r["result"].get("value")

    def wait_for(self, expression, timeout=30, what=None):
        """Polls until the expression is truthy; returns its value."""
        deadline = time.time() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.time() > deadline:
                raise BrowserError("timed out after %d s waiting for %s" % (timeout,
                                                                           what or expression))
            time.sleep(0.2)

    def mouse_move(self, x, y):
        self.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)

    def click(self, x, y):
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left",
                      clickCount=1)

    def drag(self, x0, y0, x1, y1, steps=8):
        """Presses the left button at (x0, y0), moves to (x1, y1) in steps, releases."""
        self.call("Input.dispatchMouseEvent", type="mousePressed", x=x0, y=y0, button="left",
                  buttons=1, clickCount=1)
        for i in range(1, steps + 1):
            self.call("Input.dispatchMouseEvent", type="mouseMoved", button="left", buttons=1,
                      x=x0 + (x1 - x0) * i / steps, y=y0 + (y1 - y0) * i / steps)
        self.call("Input.dispatchMouseEvent", type="mouseReleased", x=x1, y=y1, button="left",
                  buttons=0, clickCount=1)

    def type_text(self, text):
        """Types into the focused element, as a keyboard's IME would insert it."""
        self.call("Input.insertText", text=text)

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(base64.b64decode(data["data"]))
        return path

    def close(self):
        try:
            os.close(self._cmd_w)
        except OSError:
            pass
        try:
            self.proc.terminate()
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._res_r)
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)
