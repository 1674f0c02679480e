"""Small sites, one per way a page can hang a browser crawl (issue 31), served on 127.0.0.1.

Every pattern page has a script that builds a link (so the crawler renders it in Chromium) and
does one hostile thing: navigate itself on a timer or on load, submit a form on load or when a
select changes (driven by the crawler's own page actions), hold ``beforeunload``, open dialogs,
``window.open``, start a download, never finish loading, or crash its renderer; or answers a form
by script (``xhr``: a ``fetch`` of the results, shown in the page, after the page sat idle
while the crawler filled the form, so Playwright's ``networkidle`` was already reached); or
whose script's request gets Chromium killed, twice (``relaunch``: the server SIGKILLs the
crawl's Chromium at the first two requests of ``/kill``, which the page sends on ``load``, once
its slow frame came: while the handler settles the page, after scrapy-playwright's part).
``EXPECTED`` is every URL (path and query) a crawl must reach, including those reached only
through the page's own navigation.

Run as a script to crawl each pattern N times and print the figures::

    PYTHONPATH=$PWD .venv/bin/python tests/browser/patterns.py --runs 10 [pattern ...]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from crawlrun import ENDED, CrawlRun, run_crawl  # noqa: E402

from hiddenweb.bench.browserkill import chromium_of  # noqa: E402
from hiddenweb.browser.config import CHROMIUM_ARGS  # noqa: E402

SLOW = 30.0  # seconds /slow takes to answer (beyond every browser bound of the test crawls)
ANSWER = 1.0  # seconds the xhr pattern's results take (the script's fetch after the click)
KILLS = 2  # times the relaunch pattern's /kill SIGKILLs the crawl's Chromium
FRAME = 0.6  # seconds the relaunch pattern's /frame takes (its load event comes after that)
BUILD = ("<script>const a = document.createElement('a'); a.href = '{href}';"
         " a.textContent = 'built {href}'; document.body.appendChild(a);</script>")


def page(body: str, head: str = "", title: str = "page") -> bytes:
    return (f"<!doctype html><html><head><title>{title}</title>{head}</head>"
            f"<body>{body}</body></html>").encode()


def built(n: int) -> str:
    return BUILD.format(href=f"/built/{n}")


def _form(extra_select: str = "", head: str = "") -> bytes:
    return page(
        '<h1>Search the catalogue</h1><form id="f" action="/results" method="get" '
        'onsubmit="return true"><label>Category <select name="category"' + extra_select + '>'
        '<option value="">any</option><option value="books">Books</option>'
        '<option value="music">Music</option><option value="films">Films</option></select>'
        '</label><input type="submit" value="Search"></form>', head=head, title="search")


# path -> body for each pattern (None: a generic leaf page); "/" links to the listed pages
PATTERNS: dict[str, dict[str, bytes | None]] = {
    "timer": {f"/p{n}": page(f"<p>timer {n}</p>" + built(n) + "<script>setTimeout(() => "
                             f"location.replace('/t/{n}'), 50)</script>") for n in (1, 2, 3)},
    "onload": {
        "/p1": page("<p>onload</p>" + built(1) + "<script>addEventListener('load', () => "
                    "{ location.href = '/l/1'; })</script>"),
        "/p2": page("<p>during parsing</p>" + built(2) + "<script>location.replace('/l/2')"
                    "</script>"),
        "/p3": page("<p>assign</p>" + built(3) + "<script>setTimeout(() => location.assign("
                    "'/l/3'), 0)</script>"),
        "/p5": page("<p>reloads itself forever</p>" + built(5) + "<script>setTimeout(() => "
                    "location.reload(), 10)</script>"),
        "/p4": page("<p>auto-submit</p><form action='/landing' method='get'><input type=hidden "
                    "name='from' value='auto'></form>" + built(4)
                    + "<script>document.forms[0].submit()</script>"),
    },
    "autosubmit": {
        "/form": _form(' onchange="this.form.submit()"'),
    },
    "beforeunload": {
        "/form": _form(head="<script>addEventListener('beforeunload', e => { e.preventDefault();"
                       " e.returnValue = 'stay'; })</script>"),
        "/p1": page("<p>stay</p>" + built(1), head="<script>onbeforeunload = () => 'stay';"
                    "</script>"),
    },
    "dialogs": {
        "/p1": page("<p>alert</p><script>alert('hello')</script>" + built(1)),
        "/p2": page("<p>confirm</p><script>if (!confirm('sure?')) { alert('no'); }</script>"
                    + built(2)),
        "/p3": page("<p>prompt</p><script>const v = prompt('name?', 'x');</script>" + built(3)),
    },
    "popup": {
        "/p1": page("<p>popup</p>" + built(1) + "<script>window.open('/w/1')</script>"),
        "/p2": page("<p>popup on load</p>" + built(2) + "<script>addEventListener('load', () =>"
                    " window.open('/w/2', '_blank', 'noopener'))</script>"),
    },
    "download": {
        "/p1": page("<p>download</p>" + built(1) + "<script>setTimeout(() => "
                    "{ location.href = '/report.csv'; }, 30)</script>"),
        "/p2": page('<p>file</p><a href="/export?format=raw">the file</a>' + built(2)),
    },
    "endless": {
        "/p1": page('<p>iframe never loads</p><iframe src="/slow"></iframe>' + built(1)),
        "/p2": page("<p>polls forever</p>" + built(2) + "<script>setInterval(() => "
                    "fetch('/slow?poll'), 100)</script>"),
        "/p3": page("<p>script never loads</p>" + built(3), head='<script src="/slow.js">'
                    '</script>'),
    },
    "xhr": {  # choosing a category keeps the page busy 0.8 s: it sat idle before the click
        "/form": page(
            '<h1>Search the catalogue</h1><form id="f" action="/nothing-here" method="get">'
            '<label>Category <select name="category"><option value="">any</option>'
            '<option value="books">Books</option><option value="music">Music</option>'
            '<option value="films">Films</option></select></label>'
            '<input type="submit" value="Search"></form><div id="res"></div><script>'
            "const f = document.getElementById('f');"
            "f.category.addEventListener('change', () => { const t = Date.now();"
            " while (Date.now() - t < 800) {} });"
            "f.addEventListener('submit', e => { e.preventDefault();"
            " const u = '/results?category=' + f.category.value;"
            " fetch(u).then(r => r.text()).then(t => {"
            " document.getElementById('res').innerHTML = t; history.pushState(null, '', u); });"
            " });</script>", title="search"),
    },
    "relaunch": {  # the rendered page is lost unless it is tried on a third Chromium
        "/p1": page("<p>killer</p>" + built(1) + '<iframe src="/frame"></iframe><script>'
                    "addEventListener('load', () => fetch('/kill'))</script>"),
    },
    "crash": {
        "/p1": page("<p>out of memory</p>" + built(1) + "<script>const hog = []; for (;;) "
                    "hog.push(new Array(1e6).fill(Math.random()));</script>"),
        "/p2": page("<p>fine</p>" + built(2)),
    },
}

LEAVES = {
    "timer": ["/built/1", "/built/2", "/built/3", "/t/1", "/t/2", "/t/3"],
    "onload": ["/built/1", "/built/2", "/built/3", "/built/4", "/built/5", "/l/1", "/l/2", "/l/3",
               "/landing?from=auto"],
    "autosubmit": ["/results?category=books", "/results?category=music",
                   "/results?category=films", "/item/books", "/item/music", "/item/films"],
    "beforeunload": ["/results?category=books", "/results?category=music",
                     "/results?category=films", "/built/1"],
    "dialogs": ["/built/1", "/built/2", "/built/3"],
    "popup": ["/built/1", "/built/2", "/w/1", "/w/2"],
    "download": ["/built/1", "/built/2", "/report.csv", "/export?format=raw"],
    "endless": ["/built/1", "/built/2"],  # /p3 never reaches DOMContentLoaded: its plain copy
    "crash": ["/built/2"],  # /p1's renderer dies each time: its plain copy
    "relaunch": ["/built/1"],
    "xhr": ["/results?category=books", "/results?category=music", "/results?category=films",
            "/item/books", "/item/music", "/item/films"],
}
# per pattern: extra crawl settings (download: every request in Chromium, the files too)
SETTINGS: dict[str, dict[str, str]] = {
    "download": {"HIDDENWEB_BROWSER": "always"},
    "crash": {"PLAYWRIGHT_LAUNCH_OPTIONS": json.dumps(
        {"args": [*CHROMIUM_ARGS, "--js-flags=--max-old-space-size=32"]})},
}


def expected(pattern: str) -> set[str]:
    return {"/", *PATTERNS[pattern], *LEAVES[pattern]}


class PatternServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, pattern: str, host: str = "127.0.0.1") -> None:
        super().__init__((host, 0), _Handler)
        self.pattern = pattern
        self.requests: Counter[str] = Counter()
        self.kills = 0
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_port}"

    def close(self) -> None:
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: PatternServer

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        path = self.path
        with self.server.lock:
            self.server.requests[path] += 1
        pages = PATTERNS[self.server.pattern]
        bare = urlsplit(path).path
        if bare in ("/slow", "/slow.js"):
            time.sleep(SLOW)
            return self._send(200, b"", "text/javascript")
        if path == "/frame":
            time.sleep(FRAME)
            return self._send(200, page("<p>frame</p>"))
        if path == "/kill":
            if self.server.kills < KILLS:
                pid = chromium_of(os.getpid())  # the crawl runs under this process
                if pid is not None:
                    os.kill(pid, signal.SIGKILL)
                    self.server.kills += 1
            return self._send(200, b"killed", "text/plain")
        if path == "/robots.txt":
            return self._send(404, b"", "text/plain")
        if path in ("/report.csv", "/export?format=raw"):
            return self._send(200, path.encode() + b"\na,b\n1,2\n" * 50, "application/octet-stream",
                              {"Content-Disposition": "attachment; filename=data.bin"})
        if path == "/":
            links = "".join(f'<a href="{p}">{p}</a> ' for p in pages)
            return self._send(200, page(f"<h1>{self.server.pattern}</h1>{links}", title="home"))
        if path in pages:
            return self._send(200, pages[path] or page(path))
        if bare == "/results":
            if self.server.pattern == "xhr":
                time.sleep(ANSWER)
            cat = urlsplit(path).query.partition("=")[2]
            return self._send(200, page(f'<h1>Results for {cat}</h1><a href="/item/{cat}">'
                                        f'{cat} item</a>', title=f"results {cat}"))
        if path in expected(self.server.pattern):
            return self._send(200, page(f"<h1>leaf {path}</h1>", title=f"leaf {path}"))
        return self._send(404, page("<h1>not found</h1>", title="404"))

    def _send(self, status: int, body: bytes, ctype: str = "text/html",
              headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass


# the bounds of the test crawls: a browser navigation 8 s, a whole request 20 s (generous: a
# loaded 2-core machine, load average 18, made 5 s navigations time out in 2 runs of 10)
CRAWL_SETTINGS = {"HIDDENWEB_BROWSER_TIMEOUT": "8", "DOWNLOAD_TIMEOUT": "20",
                  "CLOSESPIDER_TIMEOUT": "150", "LOG_LEVEL": "INFO"}


def crawl(pattern: str, out_dir: Path) -> tuple[CrawlRun, set[str], float, PatternServer]:
    """Crawl ``pattern``'s site once: the run, the URLs reached, the wall time, the server."""
    server = PatternServer(pattern)
    try:
        started = time.monotonic()
        run = run_crawl(out_dir, "-a", f"seed={server.url}/",
                        settings={**CRAWL_SETTINGS, **SETTINGS.get(pattern, {})}, timeout=400)
        wall = time.monotonic() - started
    finally:
        server.close()
    reached = set()
    for item in run.items:
        if item.get("status") == 200:
            parts = urlsplit(item["url"])
            reached.add(parts.path + (f"?{parts.query}" if parts.query else ""))
    return run, reached, wall, server


STATS = ("timeouts", "self_navigations", "found_urls", "relaunches", "retries", "crashes",
         "stuck_cancelled", "dialogs", "popups", "offsite_aborted", "failures", "fallbacks")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("patterns", nargs="*", default=list(PATTERNS))
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    for pattern in args.patterns:
        finished, walls, pages, notes = 0, [], [], Counter()
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as tmp:
                run, reached, wall, _server = crawl(pattern, Path(tmp))
            stats = run.stats or {}
            ok = stats.get("finish_reason") in ENDED and expected(pattern) <= reached
            finished += ok
            walls.append(wall)
            pages.append(len(reached & expected(pattern)))
            for key in STATS:
                notes[key] += stats.get(f"hiddenweb/browser/{key}", 0)
            if not ok:
                log = Path(tempfile.mkstemp(prefix=f"hiddenweb-{pattern}-", suffix=".log")[1])
                log.write_text(run.stderr)
                print(f"  {pattern}: FAILED run: {stats.get('finish_reason')}, missing "
                      f"{sorted(expected(pattern) - reached)} (log: {log})", flush=True)
        mean = {k: round(v / args.runs, 1) for k, v in notes.items() if v}
        print(f"{pattern}: {finished}/{args.runs} finished with every page; wall "
              f"{min(walls):.1f}-{max(walls):.1f} s (median {sorted(walls)[len(walls) // 2]:.1f});"
              f" pages reached {min(pages)}-{max(pages)} of {len(expected(pattern))};"
              f" stats per run {mean}", flush=True)


if __name__ == "__main__":
    main()
