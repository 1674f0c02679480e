"""Issue 26, scope in the browser: Chromium asks only the crawl's host, and a header the user set
for the crawl reaches no other host.

Two local servers: the site on ``127.0.0.1`` and "elsewhere" on ``localhost`` (another host name:
the scope compares host names, not host:port). The site's page points everything at elsewhere:
a script, an iframe, an image, a stylesheet, ``fetch`` GET and POST, XHR, a beacon, an
EventSource, a WebSocket, a prefetch, ``window.open``, a form the page submits itself, a form the
crawler submits in Chromium, a script navigation, and a redirect of its own host to elsewhere;
and a ``fetch`` of a path robots.txt disallows. Elsewhere must see 0 requests; the site must see
the user's ``Authorization`` header and no request to the disallowed path.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from crawlrun import ENDED, run_crawl

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")
SECRET = "Bearer hiddenweb-test-secret"
#: a crawl with every page in Chromium, bounded (the tests' own pages answer at once)
EVERY_PAGE_IN_CHROMIUM = {"HIDDENWEB_BROWSER": "always", "HIDDENWEB_BROWSER_TIMEOUT": "5",
                          "DOWNLOAD_TIMEOUT": "10", "CLOSESPIDER_TIMEOUT": "120",
                          "LOG_LEVEL": "INFO"}


class Recorder(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, pages: dict[str, bytes]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.pages = pages
        self.redirects: dict[str, str] = {}  # path -> Location (a 302)
        self.log: list[tuple[str, str, str | None]] = []  # method, path, Authorization
        self.chromium: list[str] = []  # paths asked with a header only a browser sends
        threading.Thread(target=self.serve_forever, daemon=True).start()


class _Handler(BaseHTTPRequestHandler):
    server: Recorder

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _any(self) -> None:
        self.server.log.append((self.command, self.path, self.headers.get("Authorization")))
        if self.headers.get("Sec-Fetch-Mode"):
            self.server.chromium.append(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        body = self.server.pages.get(self.path)
        if self.path in self.server.redirects:
            self.send_response(302)
            self.send_header("Location", self.server.redirects[self.path])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if body is None and self.path.startswith("/go"):
            self.send_response(302)
            self.send_header("Location", self.server.pages["redirect-to"].decode())
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        status = 200 if body is not None else 404
        body = body or b"nothing here"
        self.send_response(status)
        self.send_header("Content-Type", "text/plain" if self.path == "/robots.txt"
                         else "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_HEAD = _any


def site_pages(elsewhere: str) -> dict[str, bytes]:
    page = f"""<!doctype html><html><head><title>everything points elsewhere</title>
<script src="{elsewhere}/script.js"></script>
<link rel="stylesheet" href="{elsewhere}/style.css">
<link rel="prefetch" href="{elsewhere}/prefetch">
</head><body><h1>Catalogue</h1>
<img src="{elsewhere}/image.png">
<iframe src="{elsewhere}/frame"></iframe>
<form id="auto" action="{elsewhere}/auto-submit" method="post"><input type="hidden" name="a"
 value="1"></form>
<form id="search" action="{elsewhere}/search" method="get" onsubmit="return true">
<label>Category <select name="category"><option value="">any</option>
<option value="books">Books</option><option value="music">Music</option></select></label>
<input type="submit" value="Search"></form>
<script>
const a = document.createElement("a"); a.href = "/leaf"; a.textContent = "leaf";
document.body.appendChild(a);
fetch("{elsewhere}/fetch-get").catch(() => {{}});
fetch("{elsewhere}/fetch-post", {{method: "POST", body: "x=1",
  headers: {{"Authorization": "{SECRET}"}}}}).catch(() => {{}});
const x = new XMLHttpRequest(); x.open("PUT", "{elsewhere}/xhr"); x.send("y");
navigator.sendBeacon("{elsewhere}/beacon", "z");
try {{ new EventSource("{elsewhere}/events"); }} catch (e) {{}}
try {{ new WebSocket("{elsewhere.replace("http", "ws")}/ws"); }} catch (e) {{}}
fetch("/go").catch(() => {{}});
fetch("/private/data").catch(() => {{}});
window.open("{elsewhere}/popup");
setTimeout(() => document.getElementById("auto").submit(), 20);
setTimeout(() => {{ location.href = "{elsewhere}/navigation"; }}, 60);
</script></body></html>"""
    return {
        "/": b'<html><body><a href="/page">the page</a></body></html>',
        "/page": page.encode(),
        "/leaf": b"<html><body><p>leaf</p></body></html>",
        "/robots.txt": b"User-agent: *\nDisallow: /private\n",
        "redirect-to": f"{elsewhere}/redirected".encode(),
    }


@pytest.mark.parametrize("mode", ["auto", "always"])
def test_chromium_asks_no_other_host_and_leaks_no_header(tmp_path, mode):
    elsewhere = Recorder({})
    site = Recorder({})
    site.pages.update(site_pages(f"http://localhost:{elsewhere.server_port}"))
    try:
        run = run_crawl(tmp_path, "-a", f"seed=http://127.0.0.1:{site.server_port}/", settings={
            "HIDDENWEB_BROWSER": mode, "HIDDENWEB_BROWSER_TIMEOUT": "5",
            "DOWNLOAD_TIMEOUT": "10", "CLOSESPIDER_TIMEOUT": "120", "LOG_LEVEL": "INFO",
            "DEFAULT_REQUEST_HEADERS": json.dumps({"Authorization": SECRET})}, timeout=300)
    finally:
        for server in (elsewhere, site):
            server.shutdown()
            server.server_close()
    assert run.returncode == 0 and run.stats["finish_reason"] in ENDED, run.stderr[-3000:]
    assert elsewhere.log == []  # not one request, so no header either
    paths = Counter(path for _, path, _ in site.log)
    assert paths["/page"] >= 1 and paths["/leaf"] == 1  # the script-built link was followed
    assert not any(path.startswith("/private") for path in paths)  # robots.txt
    assert all(auth == SECRET for _, path, auth in site.log
               if path in ("/", "/page", "/leaf")), site.log  # the header where it belongs
    stats = run.stats
    assert stats["hiddenweb/browser/pages"] >= 1
    assert stats["hiddenweb/browser/offsite_aborted"] >= 8, stats
    assert stats["hiddenweb/browser/robots_aborted"] >= 1, stats


def test_every_hop_of_a_redirect_chain_is_held_to_the_host(tmp_path):
    """Playwright routes only the first URL of a redirect chain: a 3xx handed to Chromium would
    send the next hops out unrouted. Two same-host hops, then elsewhere, for a navigation (the
    crawl's own request of /jump) and a script's fetch (/hop): Chromium asks elsewhere nothing
    (the plain-HTTP fallback of the aborted /jump is Scrapy's: it sends no Sec-Fetch-Mode). A
    same-host chain (/chain -> /chain2 -> /deep/landed) is followed: the page is read at the
    URL it landed on (its relative link resolves there)."""
    elsewhere = Recorder({})
    site = Recorder({
        "/": b'<html><body><a href="/jump">jump</a> <a href="/chain">chain</a> '
             b'<a href="/page">page</a></body></html>',
        "/page": b'<html><body><p>a page that fetches</p>'
                 b'<script>fetch("/hop").catch(() => {})</script></body></html>',
        "/deep/landed": b'<html><body><p>landed</p><a href="next">next</a></body></html>',
        "/deep/next": b"<html><body><p>next</p></body></html>",
    })
    other = f"http://localhost:{elsewhere.server_port}"
    site.redirects.update({"/jump": "/jump2", "/jump2": f"{other}/navigated",
                           "/hop": "/hop2", "/hop2": f"{other}/fetched",
                           "/chain": "/chain2", "/chain2": "/deep/landed"})
    try:
        run = run_crawl(tmp_path, "-a", f"seed=http://127.0.0.1:{site.server_port}/",
                        settings=EVERY_PAGE_IN_CHROMIUM, timeout=300)
    finally:
        for server in (elsewhere, site):
            server.shutdown()
            server.server_close()
    assert run.returncode == 0 and run.stats["finish_reason"] in ENDED, run.stderr[-3000:]
    assert elsewhere.chromium == [], elsewhere.log
    paths = Counter(path for _, path, _ in site.log)
    assert paths["/hop2"] and paths["/jump2"] and paths["/chain2"], paths  # hop 1 followed
    assert paths["/deep/next"] == 1, paths  # the landed page's relative link
    chain = [i for i in run.items if i["url"].endswith("/chain")]
    assert chain and chain[0]["final_url"].endswith("/deep/landed"), chain
    assert run.stats["hiddenweb/browser/offsite_aborted"] >= 2, run.stats
