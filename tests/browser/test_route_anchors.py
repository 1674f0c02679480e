"""A fragment that looks like a hash route (``#/Milestone``) on a page of text is an anchor,
not an app's view (lab knob ``route_anchors``, :meth:`hiddenweb.browser.detect.BrowserPolicy.
anchor_of`): a wiki page that links ``#/Milestone`` to find a word in itself was loaded in
Chromium once more for each such link. A single-page app's shell, with no text of its own,
keeps its routes. Counted from the server's log, with the rule on and off."""

from __future__ import annotations

from pathlib import Path

import pytest
from crawlrun import run_crawl
from localsite import SiteHandler, serve  # tests/ is on sys.path (rootdir)

from hiddenweb.browser.detect import PAGE_WORDS, BrowserPolicy

CHROMIUM = Path("/usr/bin/chromium")
WORDS = ("river", "stone", "lantern", "orchard", "harbour", "meadow", "copper", "willow",
         "falcon", "ember", "glacier", "thistle", "saffron", "juniper", "quarry", "velvet")
TEXT = " ".join(f"{WORDS[i % 16]}{i}" for i in range(2 * PAGE_WORDS))

SHELL = b"""<!doctype html><html><head><title>app</title></head><body><div id="view"></div>
<a href="/guide">guide</a>
<script>
function route() {
  var view = document.getElementById("view");
  if (location.hash === "#/secret") { view.innerHTML = '<a href="/hidden-page">hidden</a>'; }
  else { view.innerHTML = '<a href="#/secret">secret view</a>'; }
}
window.addEventListener("hashchange", route);
route();
</script></body></html>"""


def text_page(title: str, links: str) -> bytes:
    return (f"<!doctype html><html><head><title>{title}</title></head><body><h1>{title}</h1>"
            f"<p>{TEXT}</p><p>{links}</p></body></html>").encode()


class Site(SiteHandler):
    log: list[str] = []

    def do_GET(self) -> None:  # noqa: N802
        self.log.append(self.path)
        if self.path == "/":
            return self._send(SHELL)
        if self.path == "/guide":
            return self._send(text_page("Guide", "<a href='#/Milestone'>first Milestone</a> "
                                        "<a href='#/Milestone/i'>any milestone</a> "
                                        "<a href='/manual'>manual</a>"))
        if self.path == "/manual":
            return self._send(text_page("Manual", "<a href='/guide'>guide</a>"))
        if self.path == "/hidden-page":
            return self._send(text_page("Hidden", ""))
        return self._send(b"", "text/plain", 404 if self.path != "/robots.txt" else 200)


def _crawl(tmp_path: Path, anchors: bool) -> tuple[list[str], dict]:
    with serve(Site) as url:
        run = run_crawl(tmp_path, "-a", f"seed={url}/",
                        settings={"HIDDENWEB_BROWSER_TIMEOUT": "5", "DOWNLOAD_TIMEOUT": "10",
                                  "CLOSESPIDER_TIMEOUT": "120", "LOG_LEVEL": "INFO",
                                  "HIDDENWEB_LAB": {"route_anchors": anchors}},
                        timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return list(Site.log), run.stats


@pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")
@pytest.mark.browser
def test_route_like_anchors_of_a_page_of_text_are_not_rendered(tmp_path: Path):
    (on_log, on_stats), (off_log, off_stats) = (_crawl(tmp_path / str(a), a)
                                                for a in (True, False))
    for log in (on_log, off_log):
        assert "/hidden-page" in log  # the app shell's route is rendered either way
    # the guide read once over plain HTTP; off, loaded again in Chromium for each anchor
    assert on_log.count("/guide") == 1, on_log
    assert off_log.count("/guide") == 3, off_log
    assert on_stats.get("hiddenweb/links/route_anchors") == 2
    assert "hiddenweb/links/route_anchors" not in off_stats
    assert on_stats["hiddenweb/browser/pages"] < off_stats["hiddenweb/browser/pages"]


def test_a_document_of_text_read_over_plain_http_has_anchors_not_routes():
    policy = BrowserPolicy("auto", route_anchors=True)
    policy.read_plain("http://h/", words=9)  # an app's shell: its text is its script's
    policy.read_plain("http://h/wiki/Links", words=PAGE_WORDS)
    assert not policy.anchor_of("http://h/#/runs/7")
    assert policy.anchor_of("http://h/wiki/Links#/Milestone")
    assert not policy.anchor_of("http://h/wiki/Links?version=2#/Milestone")  # not read
    off = BrowserPolicy("auto")
    off.read_plain("http://h/wiki/Links", words=10 * PAGE_WORDS)
    assert not off.anchor_of("http://h/wiki/Links#/Milestone")
