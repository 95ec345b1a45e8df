#!/usr/bin/env python3
"""The timeline of `cudnnspy report --chrome`, opened in a real viewer: speedscope in headless Chromium.

usage: viewer.py --cache DIR --artifacts DIR               (meson passes these and the paths in the environment)
       viewer.py --cache DIR --artifacts DIR --trace FILE  (the viewer's checks on FILE only, by hand)

Exit 0 pass, 1 fail, 77 skip. Three processes run under the spy against the fake cuDNN (two of eight threads,
one of them failing, and one single-threaded), `cudnnspy report --chrome` writes their trace, and the test

- serves speedscope's static site and the trace on 127.0.0.1 (http.server, a free port) and opens
  index.html#profileURL=trace.json in headless Chromium, driven over the DevTools protocol (a websocket client
  here, in the standard library);
- checks, first, that speedscope imported the file as a Trace Event Format profile with no error, alert,
  exception or console warning;
- checks that the trace keeps to the Trace Event Format (the fields, phases and metadata events it defines);
- checks what speedscope shows: the toolbar's profile name and count; the profile list (one per thread: its
  name, made of the process and thread names of the metadata events, and the time it shows); and the profiles
  as speedscope itself exports them (its Export button): the calls opened on each, their functions, one per
  complete event of that thread;
- keeps a screenshot of the page, ARTIFACTS/speedscope.png;
- and loads a truncated copy of the trace, which speedscope must be seen to refuse (the checks can fail).

speedscope is fetched once with `npm pack speedscope@VERSION` (the package alone: no dependencies, no install
scripts), checked against the pinned sha512, and its dist/release/ unpacked into the cache. Skipped (77) without
Chromium, or without a copy of speedscope when npm is missing or cannot reach its registry.
"""
import base64
import hashlib
import http.server
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_report as tr  # noqa: E402  (its helpers: check, clean_env, dump_lines, the paths from meson)
from test_report import Failed, Skip, check  # noqa: E402

SPEEDSCOPE = "speedscope@1.25.0"
SPEEDSCOPE_SHA512 = "cpf9HWTZf1ijLXBJrk87Ve/54tnYx6rlf0gUThvn3ook6h63hLXVOQiMf44PT+XoV503cPfvfiT5gP5vojp6Ag=="
# The window the page is drawn in, and so the screenshot's size.
WIDTH, HEIGHT = 1280, 720
# How long a page may take to show its profile, or Chromium to start: a bound on a hang, not a measure.
LOAD_LIMIT_S = 120


def log(*a):
    print(*a, flush=True)


# ---- speedscope, fetched once into the cache ----

def speedscope_site(cache):
    """The directory of speedscope's static site (index.html and what it loads)."""
    env_dir = os.environ.get("SPEEDSCOPE_DIR")
    if env_dir:
        check(os.path.isfile(os.path.join(env_dir, "index.html")), "SPEEDSCOPE_DIR=%s has an index.html" % env_dir)
        return env_dir
    site = os.path.join(cache, SPEEDSCOPE.replace("@", "-"))
    if os.path.isfile(os.path.join(site, "index.html")):
        return site
    npm = shutil.which("npm")
    if not npm:
        raise Skip("npm is not installed, and speedscope is not in %s (dev.sh test installs npm; or set "
                   "SPEEDSCOPE_DIR to speedscope's dist/release)" % cache)
    os.makedirs(cache, exist_ok=True)
    work = tempfile.mkdtemp(prefix="fetch.", dir=cache)
    try:
        log("$ npm pack %s --pack-destination %s" % (SPEEDSCOPE, work))
        try:
            p = subprocess.run([npm, "pack", SPEEDSCOPE, "--pack-destination", work, "--loglevel=error", "--no-fund",
                                "--no-audit"], cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               # npm's own cache beside ours, not in $HOME.
                               env=dict(os.environ, npm_config_cache=os.path.join(cache, "npm")),
                               universal_newlines=True, timeout=300)
        except subprocess.TimeoutExpired:
            raise Skip("npm pack %s took over 300 s (no registry reachable?)" % SPEEDSCOPE)
        tgz = os.path.join(work, SPEEDSCOPE.replace("@", "-") + ".tgz")
        if p.returncode != 0 or not os.path.isfile(tgz):
            raise Skip("npm could not fetch %s (exit %d): %s" % (SPEEDSCOPE, p.returncode,
                                                                 " / ".join(p.stderr.strip().splitlines()[:3])[:600]))
        with open(tgz, "rb") as f:
            got = base64.b64encode(hashlib.sha512(f.read()).digest()).decode()
        check(got == SPEEDSCOPE_SHA512, "%s from npm has the pinned sha512 (%s), not %s" % (SPEEDSCOPE,
                                                                                             SPEEDSCOPE_SHA512, got))
        out = os.path.join(work, "site")
        os.mkdir(out)
        n = 0
        with tarfile.open(tgz, "r:gz") as t:
            for m in t.getmembers():
                # Only the flat dist/release/ directory, plain files with plain names.
                rel = m.name[len("package/dist/release/"):] if m.name.startswith("package/dist/release/") else None
                if rel is None:
                    continue
                check(m.isfile() and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", rel), "a plain file", m.name)
                with t.extractfile(m) as src, open(os.path.join(out, rel), "wb") as dst:
                    shutil.copyfileobj(src, dst)
                n += 1
        check(os.path.isfile(os.path.join(out, "index.html")), "%s has dist/release/index.html" % SPEEDSCOPE)
        try:
            os.rename(out, site)
        except OSError:
            # Another run put it there first.
            check(os.path.isfile(os.path.join(site, "index.html")), "speedscope in %s" % site)
        log("speedscope: %d files in %s" % (n, site))
    finally:
        shutil.rmtree(work, True)
    return site


# ---- a DevTools protocol client: a websocket (RFC 6455, text frames) and the commands ----

class WebSocket:
    def __init__(self, url):
        m = re.fullmatch(r"ws://127\.0\.0\.1:(\d+)(/[!-~]*)", url)
        check(m, "a local DevTools websocket", url)
        self.sock = socket.create_connection(("127.0.0.1", int(m.group(1))), timeout=LOAD_LIMIT_S)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n"
                           % (m.group(2), m.group(1), key)).encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            self._more()
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        check(head.split(b"\r\n")[0].split()[1:2] == [b"101"], "the websocket handshake", head[:200])
        want = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest())
        check(want.lower() in head.lower(), "Sec-WebSocket-Accept", head[:400])

    def _more(self):
        c = self.sock.recv(1 << 16)
        if not c:
            raise Failed("the DevTools websocket closed (Chromium died?)")
        self.buf += c

    def _take(self, n):
        while len(self.buf) < n:
            self._more()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def send(self, text):
        data = text.encode()
        n = len(data)
        if n < 126:
            head = struct.pack("!BB", 0x81, 0x80 | n)
        elif n < 1 << 16:
            head = struct.pack("!BBH", 0x81, 0x80 | 126, n)
        else:
            head = struct.pack("!BBQ", 0x81, 0x80 | 127, n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i & 3] for i, b in enumerate(data))
        self.sock.sendall(head + mask + masked)

    def recv(self):
        """One text message (fragments joined; pings and pongs passed over)."""
        msg = b""
        while True:
            b0, b1 = self._take(2)
            n = b1 & 0x7f
            if n == 126:
                n = struct.unpack("!H", self._take(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._take(8))[0]
            check(n < 1 << 30, "a websocket frame under 1 GiB", n)
            mask = self._take(4) if b1 & 0x80 else None
            payload = self._take(n)
            if mask:
                payload = bytes(b ^ mask[i & 3] for i, b in enumerate(payload))
            op = b0 & 0x0f
            if op == 8:
                raise Failed("Chromium closed the DevTools websocket")
            if op in (9, 10):
                continue
            msg += payload
            if b0 & 0x80:
                return msg.decode("utf-8", "replace")


class Page:
    """One Chromium tab over the DevTools protocol: commands, and the page's console, exceptions and dialogs."""

    def __init__(self, url):
        self.ws = WebSocket(url)
        self.next_id = 0
        self.console = []	# (type, text)
        self.exceptions = []
        self.dialogs = []

    def _event(self, m):
        method, p = m.get("method"), m.get("params", {})
        if method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
            self.console.append((p.get("type"), text))
        elif method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            self.exceptions.append(d.get("exception", {}).get("description") or d.get("text"))
        elif method == "Page.javascriptDialogOpening":
            # An alert blocks the page: note it and dismiss it (its answer is not waited for).
            self.dialogs.append(p.get("message"))
            self.next_id += 1
            self.ws.send(json.dumps({"id": self.next_id, "method": "Page.handleJavaScriptDialog",
                                     "params": {"accept": True}}))

    def call(self, method, optional=False, **params):
        """Runs METHOD; its error fails the test, or is only returned when OPTIONAL."""
        self.next_id += 1
        want = self.next_id
        self.ws.send(json.dumps({"id": want, "method": method, "params": params}))
        while True:
            m = json.loads(self.ws.recv())
            if "method" in m:
                self._event(m)
            elif m.get("id") == want:
                if "error" in m and optional:
                    return {"error": m["error"]}
                check("error" not in m, "DevTools %s" % method, m.get("error"))
                return m.get("result", {})

    def js(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        check("exceptionDetails" not in r, "the page evaluates %s" % expr[:80], r.get("exceptionDetails"))
        return r.get("result", {}).get("value")

    def wait_for(self, expr, what):
        """Polls EXPR until it is true (a dialog or an exception ends the wait too)."""
        end = time.monotonic() + LOAD_LIMIT_S
        while time.monotonic() < end:
            v = self.js(expr)
            if v or self.dialogs or self.exceptions:
                return v
            time.sleep(0.25)
        raise Failed("%s: not within %d s" % (what, LOAD_LIMIT_S))

    def click(self, x, y):
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def click_text(self, selector, text):
        """A real mouse click at the middle of the last (innermost) shown SELECTOR element whose text is TEXT, or
        matches it when TEXT is a compiled regular expression."""
        pattern = text.pattern if hasattr(text, "pattern") else "^" + re.escape(text) + "$"
        r = self.js("""(() => {
            const re = new RegExp(%s);
            const e = [...document.querySelectorAll(%s)].filter(e => e.offsetParent !== null &&
                re.test(e.textContent.trim())).pop();
            if (!e) return null;
            const b = e.getBoundingClientRect();
            return [b.left + b.width / 2, b.top + b.height / 2];
        })()""" % (json.dumps(pattern), json.dumps(selector)))
        check(r, "the page shows %r (%s)" % (text, selector), self.js("document.body.innerText"))
        self.click(r[0], r[1])

    def key(self, key, vk, text=""):
        self.call("Input.dispatchKeyEvent", type="keyDown" if text else "rawKeyDown", key=key, code=key,
                  windowsVirtualKeyCode=vk, text=text)
        self.call("Input.dispatchKeyEvent", type="keyUp", key=key, code=key, windowsVirtualKeyCode=vk)

    def pick_profile(self, title, name):
        """Picks profile NAME as a user would: the list opened from the toolbar (whose text is TITLE), its name
        typed into the list's filter, Enter."""
        shown_rows = """[...document.querySelectorAll("tbody tr")].filter(r => r.offsetParent !== null).length"""
        if not self.js(shown_rows):
            self.click_text("span", title)
        self.wait_for(shown_rows, "the profile list opens")
        self.js("""document.querySelector("input[placeholder='Filter...']").focus()""")
        self.call("Input.insertText", text=name)
        # The best match comes first, and Enter picks it.
        self.wait_for("""(() => {
            const r = [...document.querySelectorAll("tbody tr")].find(r => r.offsetParent !== null);
            return r && r.children[1].innerText.trim() === %s;
        })()""" % json.dumps(name), "the filter puts %s first" % name)
        # Which row Enter picks is set by an effect of the list, run in the animation frame after it is drawn.
        self.js("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 0))))")
        self.key("Enter", 13, "\r")

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", format="png")["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))


class Browser:
    def __init__(self, exe, tmp):
        self.profile = os.path.join(tmp, "chromium-profile")
        os.mkdir(self.profile)
        self.log_path = os.path.join(tmp, "chromium.log")
        argv = [exe, "--headless", "--no-sandbox", "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
                "--user-data-dir=" + self.profile, "--no-first-run", "--no-default-browser-check",
                "--disable-extensions", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-dev-shm-usage", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
                "--window-size=%d,%d" % (WIDTH, HEIGHT), "about:blank"]
        log("$ " + " ".join(argv))
        self.logf = open(self.log_path, "w")
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.logf, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        end = time.monotonic() + LOAD_LIMIT_S
        port = None
        while time.monotonic() < end and self.proc.poll() is None:
            try:
                with open(port_file) as f:
                    port = int(f.read().split()[0])
                break
            except (OSError, ValueError, IndexError):
                time.sleep(0.1)
        check(port, "Chromium started (exit %s)" % self.proc.poll(), self.log_tail())
        self.port = port

    def log_tail(self):
        self.logf.flush()
        with open(self.log_path, errors="replace") as f:
            # Without its complaints of a machine without D-Bus.
            return "".join(ln for ln in f if "dbus" not in ln)[-3000:]

    def new_page(self):
        req = urllib.request.Request("http://127.0.0.1:%d/json/new?about:blank" % self.port, method="PUT")
        with urllib.request.urlopen(req, timeout=60) as r:
            target = json.load(r)
        page = Page(target["webSocketDebuggerUrl"])
        for domain in ("Runtime", "Page"):
            page.call(domain + ".enable")
        page.call("Emulation.setDeviceMetricsOverride", width=WIDTH, height=HEIGHT, deviceScaleFactor=1, mobile=False)
        # The Export button's download: kept in the page, not written anywhere.
        page.call("Page.setDownloadBehavior", optional=True, behavior="deny")
        return page

    def close(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.logf.close()


class Server:
    """speedscope's files and the traces, on 127.0.0.1 and a free port, for as long as the test runs."""

    def __init__(self, root):
        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *a, **k):
                super().__init__(*a, directory=root, **k)

            def log_message(self, *a):
                pass
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


# ---- the trace ----

PHASES = {
    # Keys each phase may have, of those the Trace Event Format defines; "M" events' names and their args' keys.
    "X": {"name", "cat", "ph", "ts", "dur", "pid", "tid", "args", "tts", "tdur", "sf", "stack", "esf", "estack", "id"},
    "i": {"name", "cat", "ph", "ts", "pid", "tid", "args", "s", "tts", "sf", "stack"},
    "M": {"name", "ph", "pid", "tid", "args", "ts", "cat"},
}
METADATA = {"process_name": "name", "process_labels": "labels", "process_sort_index": "sort_index",
            "thread_name": "name", "thread_sort_index": "sort_index"}


def check_format(trace):
    """The trace keeps to the Trace Event Format's JSON object form, its fields and its metadata events."""
    check(isinstance(trace, dict) and isinstance(trace.get("traceEvents"), list), "{\"traceEvents\": [...]}")
    extra = set(trace) - {"traceEvents", "displayTimeUnit", "systemTraceEvents", "otherData", "stackFrames",
                          "samples", "controllerTraceDataKey"}
    check(not extra, "only the format's top-level keys", extra)
    check(trace.get("displayTimeUnit", "ms") in ("ms", "ns"), "displayTimeUnit ms or ns", trace.get("displayTimeUnit"))
    check(isinstance(trace.get("otherData", {}), dict), "otherData an object")
    named_p, named_t, used = set(), set(), set()
    for e in trace["traceEvents"]:
        check(isinstance(e, dict) and e.get("ph") in PHASES, "a known phase (X, i, M)", e)
        keys = set(e)
        check(keys <= PHASES[e["ph"]], "only the format's fields for ph %s" % e["ph"], keys - PHASES[e["ph"]], e)
        check(isinstance(e.get("name"), str) and e["name"], "a name", e)
        check(type(e.get("pid")) is int, "an integer pid", e)
        check("tid" not in e or type(e["tid"]) is int, "an integer tid", e)
        check(isinstance(e.get("args", {}), dict), "args an object", e)
        if e["ph"] == "M":
            check(e["name"] in METADATA and set(e["args"]) == {METADATA[e["name"]]},
                  "a metadata event the format defines, with its one argument", e)
            if e["name"].startswith("thread_"):
                check("tid" in e, "a thread's metadata has its tid", e)
            if e["name"] == "process_name":
                check(isinstance(e["args"]["name"], str) and e["pid"] not in named_p, "one process_name a pid", e)
                named_p.add(e["pid"])
            if e["name"] == "thread_name":
                check(isinstance(e["args"]["name"], str) and (e["pid"], e["tid"]) not in named_t,
                      "one thread_name a thread", e)
                named_t.add((e["pid"], e["tid"]))
            if e["name"].endswith("sort_index"):
                check(type(e["args"]["sort_index"]) is int, "an integer sort_index", e)
            continue
        check("tid" in e and isinstance(e.get("cat"), str), "tid and cat", e)
        check(isinstance(e.get("ts"), (int, float)) and not isinstance(e["ts"], bool) and e["ts"] >= 0,
              "ts a number of µs, not negative", e)
        if e["ph"] == "X":
            check(isinstance(e.get("dur"), (int, float)) and e["dur"] > 0, "dur a positive number of µs", e)
        else:
            check(e.get("s") in ("g", "p", "t"), "an instant's scope g, p or t", e)
        used.add((e["pid"], e["tid"]))
    check({p for p, _ in used} <= named_p, "every process with events has its process_name", used, named_p)
    check(used <= named_t, "every thread with events has its thread_name", used - named_t)


def expected_profiles(trace):
    """What speedscope makes of the trace: a profile per (pid, tid) with complete events, in (pid, tid) order,
    named "PROCESS (pid P), THREAD (tid T)" from the metadata; its events, and the time they cover."""
    ev = trace["traceEvents"]
    pname = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    tname = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    xs = {}
    for e in ev:
        if e["ph"] == "X":
            xs.setdefault((e["pid"], e["tid"]), []).append(e)
    out = []
    for key in sorted(xs):
        pid, tid = key
        events = sorted(xs[key], key=lambda e: (e["ts"], -e["dur"]))
        # The time shown is that of the outermost events (a call inside another is counted once).
        busy, end = 0.0, None
        for e in events:
            if end is None or e["ts"] >= end:
                busy += e["dur"]
                end = e["ts"] + e["dur"]
            elif e["ts"] + e["dur"] > end:
                busy += e["ts"] + e["dur"] - end
                end = e["ts"] + e["dur"]
        out.append({"key": key, "name": "%s (pid %d), %s (tid %d)" % (pname[pid], pid, tname[key], tid),
                    "fns": sorted(e["name"] for e in events), "busy_us": busy})
    return out


def shown_us(text):
    """speedscope's time: "83.39µs", "1.20ms", "2.00s", ..."""
    m = re.fullmatch(r"([0-9.]+)(ns|µs|ms|s)", text.strip())
    check(m, "a time as speedscope shows it", text)
    return float(m.group(1)) * {"ns": 1e-3, "µs": 1.0, "ms": 1e3, "s": 1e6}[m.group(2)]


# ---- the viewer ----

PROFILE_TITLE = r"\((\d+)\/(\d+)\)"	# a JavaScript regular expression


def open_trace(browser, port, name):
    """Opens speedscope on /NAME in a new tab and waits until it shows a profile, an error or an alert."""
    page = browser.new_page()
    url = "http://127.0.0.1:%d/index.html#profileURL=%s" % (port, name)
    log("open %s" % url)
    page.call("Page.navigate", url=url)
    page.wait_for("""(() => {
        const t = document.body ? document.body.innerText : "";
        return /%s/.test(t) || t.includes("Something went wrong");
    })()""" % PROFILE_TITLE, "speedscope shows %s" % name)
    # The import is done once the toolbar shows; what it logs and throws has come by now.
    page.js("new Promise(r => setTimeout(r, 300))")
    return page


def import_errors(page):
    """What says that speedscope could not import the file, or not cleanly."""
    errs = ["alert: %s" % d for d in page.dialogs]
    errs += ["exception: %s" % x for x in page.exceptions]
    errs += ["console.%s: %s" % (t, s) for t, s in page.console if t in ("error", "warning", "assert")]
    if "Something went wrong" in (page.js("document.body.innerText") or ""):
        errs.append("the page: Something went wrong")
    if not any(t == "log" and s == "Importing as Trace Event Format profile" for t, s in page.console):
        errs.append("speedscope did not log 'Importing as Trace Event Format profile'")
    return errs


def opened_cleanly(browser, port, name, artifacts):
    """speedscope on /NAME, whatever the file holds: what it says of the file comes before the checks here."""
    page = open_trace(browser, port, name)
    errs = import_errors(page)
    if errs:
        page.screenshot(os.path.join(artifacts, "speedscope.png"))
    check(not errs, "speedscope imports %s cleanly" % name, "\n".join(errs))
    return page


def read_trace(path):
    with open(path, "rb") as f:
        try:
            return json.loads(f.read().decode("utf-8"))
        except ValueError as e:
            raise Failed("%s is not JSON: %s" % (path, e))


def check_viewer(page, trace, artifacts):
    """What speedscope shows of TRACE, opened in PAGE."""
    want = expected_profiles(trace)
    check(want, "the trace has complete events")
    # The toolbar: the first profile's name, and how many there are.
    title = page.js("""(() => {
        const s = [...document.querySelectorAll("span")].find(e => /^%s$/.test(e.textContent.trim()));
        return s ? s.parentElement.textContent.trim() : null;
    })()""" % PROFILE_TITLE)
    check(title == "%s (1/%d)" % (want[0]["name"], len(want)), "the toolbar shows %r (1/%d)" % (want[0]["name"],
                                                                                               len(want)), title)
    # The profile list, opened with a click on the toolbar's name: a row per thread, and its time.
    page.click_text("span", title)
    rows = page.wait_for("""(() => {
        const t = [...document.querySelectorAll("table")].find(t => t.offsetParent !== null &&
            t.querySelector("th") && t.querySelector("th").parentElement.textContent.includes("Total Weight"));
        return t ? [...t.querySelectorAll("tbody tr")].map(r => [...r.children].map(c => c.innerText.trim())) : null;
    })()""", "the profile list opens")
    check(rows and len(rows) == len(want), "the list shows %d profiles" % len(want), rows)
    for i, (row, w) in enumerate(zip(rows, want)):
        check(row[0] == str(i + 1) and row[1] == w["name"], "row %d: %s" % (i + 1, w["name"]), row)
        got = shown_us(row[2])
        check(abs(got - w["busy_us"]) <= 0.01 * w["busy_us"] + 0.01, "row %d: %.3f µs of calls (the durations)"
              % (i + 1, w["busy_us"]), row)
    # speedscope's own export of what it imported (the Export button's file, taken in the page).
    page.js("""window.__exported = []; {
        const make = URL.createObjectURL.bind(URL);
        URL.createObjectURL = b => { window.__exported.push(b); return make(b); };
    }""")
    page.click_text("div", re.compile("Export$"))
    text = page.wait_for("window.__exported.length ? window.__exported[0].text() : null", "the export")
    exported = json.loads(text)
    check(str(exported.get("exporter", "")).startswith("speedscope@"), "speedscope's export", exported.get("exporter"))
    frames = exported["shared"]["frames"]
    profiles = exported["profiles"]
    check([p["name"] for p in profiles] == [w["name"] for w in want], "the exported profiles, one per thread",
          [p["name"] for p in profiles])
    total = 0
    for p, w in zip(profiles, want):
        check(p["type"] == "evented" and p["unit"] == "microseconds", "an evented profile in µs", p["type"], p["unit"])
        opened = [frames[e["frame"]]["name"] for e in p["events"] if e["type"] == "O"]
        closed = [e for e in p["events"] if e["type"] == "C"]
        check(len(opened) == len(closed) == len(w["fns"]), "%s: %d calls opened and closed, one per complete event"
              % (w["name"], len(w["fns"])), len(opened), len(closed))
        # A frame is the event's name and its args as JSON.
        fns = sorted(f.split(" {", 1)[0] for f in opened)
        check(fns == w["fns"], "%s: the functions of its events" % w["name"], fns, w["fns"])
        total += len(opened)
    log("speedscope shows %d profiles, %d calls" % (len(profiles), total))
    # A screenshot of the thread with the most calls, picked in the list as a user would.
    busiest = max(range(len(want)), key=lambda i: (len(want[i]["fns"]), -i))
    if busiest != 0:
        page.pick_profile(title, want[busiest]["name"])
    shown = page.wait_for("""(() => {
        const s = [...document.querySelectorAll("span")].find(e => /^%s$/.test(e.textContent.trim()));
        return s && s.textContent.trim() === "(%d/%d)" ? s.parentElement.textContent.trim() : null;
    })()""" % (PROFILE_TITLE, busiest + 1, len(want)), "the picked profile shows")
    check(shown == "%s (%d/%d)" % (want[busiest]["name"], busiest + 1, len(want)), "the picked profile's name", shown)
    page.js("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    shot = os.path.join(artifacts, "speedscope.png")
    page.screenshot(shot)
    with open(shot, "rb") as f:
        head = f.read(24)
    check(head[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack("!II", head[16:24]) == (WIDTH, HEIGHT),
          "a %dx%d PNG screenshot" % (WIDTH, HEIGHT), head)
    # The flame chart is drawn with WebGL (SwiftShader here): speedscope says when it has a context.
    check(any(t == "log" and s.startswith("WebGL initialized") for t, s in page.console), "speedscope has WebGL",
          page.console)
    log("screenshot: %s" % shot)
    errs = import_errors(page)
    check(not errs, "no error while it was used", "\n".join(errs))
    return total


def check_refused(browser, port, name):
    """A broken trace: the checks must see that speedscope could not import it."""
    page = open_trace(browser, port, name)
    errs = import_errors(page)
    log("speedscope on %s: %s" % (name, "; ".join(errs)))
    check(errs, "speedscope is seen to refuse %s" % name)


# ---- the run ----

def run_job(d):
    """Three processes under the spy: ranks 0 and 1 of eight threads each (rank 1's cudnnSetTensor4dDescriptor
    fails), rank 2 on its main thread."""
    tr.need_spy()
    job = os.path.join(d, "job")
    os.mkdir(job)
    base = {"CUDNNSPY_TRACE": "*"}
    runs = [([tr.THREADS, "3"], {"RANK": "0"}, 0),
            ([tr.THREADS, "2"], {"RANK": "1", "FAKECUDNN_STATUS": "cudnnSetTensor4dDescriptor=2000",
                                 "FAKECUDNN_MESSAGE": "n <= 0"}, 1),
            ([tr.HOST_CALLS, "2"], {"RANK": "2"}, 0)]
    for argv, extra, code in runs:
        e = tr.clean_env({"LD_PRELOAD": tr.PRELOAD, "LD_LIBRARY_PATH": tr.FAKE9, "CUDNNSPY_OUTPUT": job,
                          "CUDNNSPY_STDERR": "none"})
        e.update(tr.record_format())
        e.update(base)
        e.update(extra)
        p = subprocess.run(argv, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        # threads exits 1 when calls failed, as rank 1's do.
        check(p.returncode == code, "%s exited %d, not %d" % (argv, p.returncode, code), p.stderr)
    files = sorted(os.path.join(job, f) for f in os.listdir(job) if ".cudnnspy." in f)
    check(len(files) == 3, "three record files", files)
    threads = {}
    for f in files:
        recs = [json.loads(ln) for ln in tr.dump_lines(f)]
        pid = [r for r in recs if r.get("event") == "header"][0]["pid"]
        threads[pid] = {r["tid"] for r in recs if r.get("event") in ("call", "failure")}
    check(sorted(len(t) for t in threads.values()) == [1, 8, 8], "threads per process: 8, 8 and 1", threads)
    trace_path = os.path.join(d, "trace.json")
    p = tr.report(["--chrome", trace_path, job])
    tr.ok(p)
    check(p.stdout.startswith("cudnnspy report: 3 processes"), "the report of three processes", p.stdout[:300])
    return trace_path, threads


def main():
    args = sys.argv[1:]
    opts = {}
    while args and args[0] in ("--cache", "--artifacts", "--trace") and len(args) >= 2:
        opts[args[0]] = args[1]
        args = args[2:]
    if args or "--cache" not in opts or "--artifacts" not in opts:
        print(__doc__.split("\n\n")[1])
        return 2
    d = tr.tmpdir()
    browser = server = None
    try:
        log("== viewer: %s" % __doc__.split("\n")[0])
        exe = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
        if os.environ.get("CHROMIUM"):
            check(os.access(exe, os.X_OK), "CHROMIUM=%s is a program" % exe)
        if not exe:
            raise Skip("Chromium is not installed (Debian: apt-get install chromium; dev.sh test installs it)")
        site = speedscope_site(os.path.abspath(opts["--cache"]))
        artifacts = os.path.abspath(opts["--artifacts"])
        os.makedirs(artifacts, exist_ok=True)
        root = os.path.join(d, "www")
        shutil.copytree(site, root)
        if "--trace" in opts:
            # By hand: any file, speedscope's verdict first.
            shutil.copy(opts["--trace"], os.path.join(root, "trace.json"))
            server = Server(root)
            browser = Browser(exe, d)
            page = opened_cleanly(browser, server.port, "trace.json", artifacts)
            trace = read_trace(opts["--trace"])
            check_format(trace)
            check_viewer(page, trace, artifacts)
        else:
            if not tr.EXE or not os.access(tr.EXE, os.X_OK):
                raise Failed("REPORT_EXE is not set or not executable")
            trace_path, threads = run_job(d)
            shutil.copy(trace_path, os.path.join(root, "trace.json"))
            shutil.copy(trace_path, os.path.join(artifacts, "trace.json"))
            with open(trace_path, "rb") as f:
                data = f.read()
            # Broken: cut in the middle of the events.
            with open(os.path.join(root, "truncated.json"), "wb") as f:
                f.write(data[:len(data) // 2])
            server = Server(root)
            browser = Browser(exe, d)
            page = opened_cleanly(browser, server.port, "trace.json", artifacts)
            trace = read_trace(trace_path)
            check_format(trace)
            log("the trace keeps to the Trace Event Format: %d events" % len(trace["traceEvents"]))
            want = expected_profiles(trace)
            check(len({pid for pid, _ in (w["key"] for w in want)}) == 3 and len(want) == sum(
                len(t) for t in threads.values()), "a profile per thread of the three processes", want)
            total = check_viewer(page, trace, artifacts)
            check(total == sum(1 for e in trace["traceEvents"] if e["ph"] == "X"), "every complete event shown")
            check_refused(browser, server.port, "truncated.json")
    except Skip as e:
        print("SKIP: %s" % e)
        return 77
    except Failed as e:
        print("FAIL: %s" % e)
        if browser:
            print("--- chromium's output:\n" + browser.log_tail())
        return 1
    finally:
        if browser:
            browser.close()
        if server:
            server.close()
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
