"""Renders do not share what a page's script stored (lab knob ``browser_fresh_storage``).

Two pages of a served site run one script: it links ``/first-visit`` when the origin's
``localStorage`` holds no ``seen`` key and ``/returning`` when it does, and stores the key (a
view switch, a "last shown" tab, a dismissed banner). Rendered one after the other in the one
browser context, the second render sees what the first stored, unless each document's storage
is its own. Counted from the server's own log.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from crawlrun import browser_crawl
from localsite import SiteHandler, serve  # tests/ is on sys.path (rootdir)

CHROMIUM = Path("/usr/bin/chromium")

HOME = b"""<!doctype html><html><head><title>home</title></head><body>
<a href="/a">page a</a> <a href="/b">page b</a></body></html>"""

PAGE = """<!doctype html><html><head><title>page {name}</title></head><body>
<p>page {name}</p><div id="out"></div>
<script>
var seen = localStorage.getItem("seen") !== null || sessionStorage.seen !== undefined;
document.getElementById("out").innerHTML = seen
  ? '<a href="/returning">welcome back</a>' : '<a href="/first-visit">welcome</a>';
localStorage.setItem("seen", "{name}");
sessionStorage.seen = "{name}";
</script></body></html>"""


class Site(SiteHandler):
    def do_GET(self) -> None:  # noqa: N802
        path = self.path
        self.log.append(path)
        if path == "/":
            return self._send(HOME)
        if path in ("/a", "/b"):
            return self._send(PAGE.replace("{name}", path[1:]).encode())
        if path in ("/first-visit", "/returning"):
            return self._send(f"<html><body><p>{path}</p></body></html>".encode())
        return self._send(b"", "text/plain", 404 if path != "/robots.txt" else 200)


def _crawl(tmp_path: Path, fresh: bool) -> list[str]:
    with serve(Site) as url:
        run = browser_crawl(tmp_path, url, HIDDENWEB_BROWSER_MAX_PAGES="1",
                            HIDDENWEB_LAB=json.dumps({"browser_fresh_storage": fresh}))
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stats is not None
    assert run.stats.get("hiddenweb/browser/pages", 0) >= 2, run.stats  # /a and /b rendered
    return list(Site.log)


@pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")
def test_each_render_starts_from_empty_web_storage(tmp_path):
    fresh = _crawl(tmp_path / "fresh", fresh=True)
    assert "/first-visit" in fresh and "/returning" not in fresh, fresh
    shared = _crawl(tmp_path / "shared", fresh=False)  # the knob off: the second render
    assert "/first-visit" in shared and "/returning" in shared, shared  # sees the first's key
