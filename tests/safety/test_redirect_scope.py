"""Issue 26 §7: a plain-HTTP request with ``dont_filter=True`` (a recrawl replay, a browser
request fetched again over plain HTTP) skipped Scrapy's offsite check on its redirects and
followed the site to another host. Two real servers: the site on ``127.0.0.1`` and "elsewhere" on
``localhost`` (another host name; hosts are compared without ports)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent

SPIDER = '''
import scrapy


class DontFilterSpider(scrapy.Spider):
    name = "dontfilter"

    def __init__(self, urls="", **kwargs):
        super().__init__(**kwargs)
        self.urls = urls.split(",")
        self.allowed_domains = ["127.0.0.1"]

    async def start(self):
        for url in self.urls:
            yield scrapy.Request(url, dont_filter=True)

    def parse(self, response):
        yield {"url": response.url}
'''


class Site(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.redirects: dict[str, str] = {}
        self.log: list[str] = []
        threading.Thread(target=self.serve_forever, daemon=True).start()


class _Handler(BaseHTTPRequestHandler):
    server: Site

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.server.log.append(self.path)
        target = self.server.redirects.get(self.path)
        body = b"" if target else b"<html><body>a page</body></html>"
        self.send_response(302 if target else 200)
        if target:
            self.send_header("Location", target)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_dont_filter_request_is_not_redirected_to_another_host(tmp_path: Path) -> None:
    site, elsewhere = Site(), Site()
    base = f"http://127.0.0.1:{site.server_port}"
    site.redirects.update({"/away": f"http://localhost:{elsewhere.server_port}/landed",
                           "/moved": "/here"})
    (tmp_path / "spider.py").write_text(SPIDER)
    out = tmp_path / "items.jsonl"
    cmd = [sys.executable, "-m", "scrapy", "runspider", str(tmp_path / "spider.py"),
           "-a", f"urls={base}/away,{base}/moved", "-O", f"{out}:jsonlines",
           "-s", "HIDDENWEB_STORE_ENABLED=0", "-s", "HIDDENWEB_BROWSER=never",
           "-s", f"HIDDENWEB_STATS_FILE={tmp_path / 'stats.json'}", "-s", "ROBOTSTXT_OBEY=0"]
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "hiddenweb.settings"}
    try:
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=120)
    finally:
        for server in (site, elsewhere):
            server.shutdown()
            server.server_close()
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert elsewhere.log == []
    assert [json.loads(line)["url"] for line in out.read_text().splitlines()] == [
        f"{base}/here"]  # a redirect on the host is followed
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["hiddenweb/scope/redirects_refused"] == 1
    assert "Not following a redirect off the crawl's hosts" in proc.stderr
