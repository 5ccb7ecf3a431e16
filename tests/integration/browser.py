#!/usr/bin/env python3
"""browser.py - a tiny Chrome DevTools Protocol client for the integration
tests (python3 stdlib only): starts headless chromium with
--remote-debugging-pipe (commands on its fd 3, answers on its fd 4, each
message JSON ended by a NUL byte), so nothing listens on the network.

    with Browser(workdir) as b:
        b.open("file:///...svg")          # waits for the load event
        b.eval("document.title")          # a JavaScript value
        b.click(x, y)                     # a real mouse click
        b.click(x, y, "text")             # ... answering the prompt it opens
        png = b.screenshot()              # PNG bytes
        b.watch()                         # before open: record errors, requests
        b.problems(), b.requests()        # ... what was recorded
    pixels(png) -> (width, height, rows of (r, g, b, a))

Every wait is bounded: a step that takes longer than `timeout` raises."""
import base64
import json
import os
import select
import shutil
import subprocess
import time
import zlib


class Browser:
    def __init__(self, workdir, timeout=60, width=1200, height=600):
        self.timeout = timeout
        self.size = (width, height)
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        if not chromium:
            raise RuntimeError("chromium not found: apt-get install chromium (tools/deps.sh)")
        profile = os.path.join(workdir, "chromium-profile")
        args = [chromium, "--headless", "--no-sandbox", "--disable-gpu",
                "--remote-debugging-pipe", "--user-data-dir=" + profile,
                "--no-first-run", "--disable-background-networking", "--disable-sync",
                "--disable-extensions", "--disable-component-update",
                "--hide-scrollbars", "--window-size=%d,%d" % self.size, "about:blank"]
        self.log = open(os.path.join(workdir, "chromium.log"), "wb")
        # fd 3 <- our stdin pipe, fd 4 -> our stdout pipe
        self.proc = subprocess.Popen(
            ["sh", "-c", 'exec "$@" 3<&0 4>&1 0</dev/null 1>&2', "sh"] + args,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log)
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None

    def __enter__(self):
        target = self.call("Target.createTarget", {"url": "about:blank"}, session=False)
        self.session = self.call("Target.attachToTarget",
                                 {"targetId": target["targetId"], "flatten": True},
                                 session=False)["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": self.size[0], "height": self.size[1],
                   "deviceScaleFactor": 1, "mobile": False})
        return self

    def __exit__(self, *exc):
        try:
            self.call("Browser.close", session=False)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()

    # ---- the protocol ----
    def _read_message(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("chromium did not answer in %d s" % self.timeout)
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed the pipe (see chromium.log)")
                self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None, session=True):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        self.proc.stdin.write(json.dumps(msg).encode() + b"\0")
        self.proc.stdin.flush()
        return self.next_id

    def reply(self, id, method=""):
        deadline = time.monotonic() + self.timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def call(self, method, params=None, session=True):
        return self.reply(self.send(method, params, session), method)

    def wait_event(self, method):
        deadline = time.monotonic() + self.timeout
        while True:
            for i, m in enumerate(self.events):
                if m["method"] == method:
                    return self.events.pop(i)
            m = self._read_message(deadline)
            if "method" in m:
                self.events.append(m)

    # ---- what tests use ----
    def open(self, url):
        self.events = [m for m in self.events if m["method"] != "Page.loadEventFired"]
        self.call("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired")

    def eval(self, expression):
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in r:
            raise RuntimeError("JavaScript failed: %s" % r["exceptionDetails"])
        return r["result"].get("value")

    def click(self, x, y, prompt_answer=None):
        """A left click at (x, y); with prompt_answer, the click opens a
        window.prompt (which holds the click's own reply back until it is
        answered) and that text answers it."""
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            id = self.send("Input.dispatchMouseEvent",
                           {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1})
            if kind != "mouseReleased" or prompt_answer is None:
                self.reply(id, kind)
        if prompt_answer is not None:
            self.wait_event("Page.javascriptDialogOpening")
            self.call("Page.handleJavaScriptDialog",
                      {"accept": True, "promptText": prompt_answer})
            self.reply(id, "mouseReleased")

    def watch(self):
        """Record from now on what the page does wrong (exceptions,
        console and browser errors, a blocked fetch) and every request."""
        self.call("Log.enable")
        self.call("Network.enable")

    def _drain(self):
        self.eval("0")   # its reply comes after every event sent before it

    def problems(self):
        """Exceptions thrown, console.error/assert calls and error entries
        of the browser's log (a resource refused, a CSP violation)."""
        self._drain()
        out = []
        for m in self.events:
            p = m.get("params", {})
            if m["method"] == "Runtime.exceptionThrown":
                out.append(p["exceptionDetails"].get("text", "exception"))
            elif m["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console.%s" % p["type"])
            elif m["method"] == "Log.entryAdded" and p["entry"].get("level") == "error":
                out.append(p["entry"].get("text", "log error"))
        return out

    def requests(self):
        """The URL of every request the browser sent (the page's own too)."""
        self._drain()
        return [m["params"]["request"]["url"] for m in self.events
                if m["method"] == "Network.requestWillBeSent"]

    def screenshot(self):
        return base64.b64decode(self.call("Page.captureScreenshot", {"format": "png"})["data"])


def pixels(png):
    """Decodes an 8-bit, non-interlaced RGB or RGBA PNG (what chromium
    writes): (width, height, rows of (r, g, b, a) tuples)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, head = 8, b"", None
    while pos < len(png):
        n = int.from_bytes(png[pos:pos + 4], "big")
        kind, data = png[pos + 4:pos + 8], png[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            head = data
        elif kind == b"IDAT":
            idat += data
        pos += 12 + n
    w, h = int.from_bytes(head[0:4], "big"), int.from_bytes(head[4:8], "big")
    depth, ctype, interlace = head[8], head[9], head[12]
    assert depth == 8 and ctype in (2, 6) and interlace == 0, "unexpected PNG kind"
    bpp = 4 if ctype == 6 else 3
    raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 255
        rows.append([tuple(line[i:i + bpp]) + ((255,) if bpp == 3 else ())
                     for i in range(0, stride, bpp)])
        prev = line
    return w, h, rows
