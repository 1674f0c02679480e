"""A submission in Chromium acts on its own form, found again on a fresh render of its page
(:mod:`hiddenweb.browser.formtarget`), never on whichever form holds its old position.

Two kinds of page, each a script's forms (a root ``submit`` listener sends them with ``fetch``,
as a GET: a script's POST that does not read is refused in Chromium, hiddenweb.browser.guard):

* **a form a click reveals**: "Show options" puts an options form in the page, before a form
  that deletes everything, and "Hide options" takes it away (and shows a link, so that it is
  fired again on the page's next render). The crawl reads the options form
  as the events showed it (the render appends a form an event showed and a later one hid),
  after the other two; a fresh load has two forms, the second the delete form. Found by
  position, the options form's submission submitted the delete form, which the safety policy
  refuses; found by what it is, the options form is revealed by the page's events, which stop
  at the one that shows it (the next would hide it again), and sent, and the delete form
  never is;
* **a form shown once**: a welcome search box the page shows on a reader's first visit only
  (kept in its storage). Its submissions find no form and are dropped at once; the form's
  explorer ends (``hiddenweb/forms/gone``) instead of waiting for a field on every one of them.

Counted from the server's own log of what was sent."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest
from crawlrun import browser_crawl
from localsite import SiteHandler, serve  # tests/ is on sys.path (rootdir)

CHROMIUM = Path("/usr/bin/chromium")

POSTS = b"""<script>
document.addEventListener("submit", function (e) {
  e.preventDefault();
  var f = e.target;
  fetch(f.getAttribute("action") + "?" + new URLSearchParams(new FormData(f)))
    .then(function (r) { return r.text(); })
    .then(function (t) { document.getElementById("out").innerHTML = t; });
});
</script>"""
LIST = b"""<!doctype html><html><head><title>Shopping list</title></head><body>
<h1>Shopping list</h1><p><a href="/welcome">Welcome</a></p>
<form action="/search" method="get"><input name="q"><button>Search the list</button></form>
<button type="button" onclick="document.getElementById('slot').innerHTML =
 '<form action=&quot;/apply&quot; method=&quot;post&quot;><input type=hidden name=view value=wide>'
 + '<button>Apply these options</button></form>'">Show options</button>
<button type="button" onclick="document.getElementById('slot').innerHTML = '';
 document.getElementById('note').innerHTML =
 '<a href=&quot;/options-help&quot;>About the options</a>'"
 >Hide options</button>
<div id="slot"></div><div id="note"></div>
<form action="/delete-all" method="post"><input type="hidden" name="confirm" value="yes">
<button>Delete all items</button></form>
<div id="out"></div>""" + POSTS + b"</body></html>"
WELCOME = b"""<!doctype html><html><head><title>Welcome</title></head><body>
<h1>Welcome</h1><div id="box"></div><div id="out"></div>
<script>
if (!localStorage.getItem("welcomed")) {
  localStorage.setItem("welcomed", "1");
  document.getElementById("box").innerHTML = '<form action="/find" method="post">'
    + '<input name="topic" placeholder="What are you looking for?"><button>Find</button></form>';
}
</script>""" + POSTS + b"</body></html>"


class Shop(SiteHandler):
    def do_GET(self) -> None:  # noqa: N802
        self.log.append(self.path)
        path = urlsplit(self.path).path
        if path == "/":
            return self._send(LIST)
        if path == "/welcome":
            return self._send(WELCOME)
        link = {"/apply": "/options-applied", "/find": "/found"}.get(path)
        if link and urlsplit(self.path).query:  # a form's answer
            return self._send(f'<a href="{link}">see the result</a>'.encode())
        if path in ("/options-applied", "/options-help", "/search", "/found"):
            return self._send(f"<html><title>{path}</title><p>The page {path}.</p></html>"
                              .encode())
        return self._send(b"", "text/plain", 404 if path != "/robots.txt" else 200)


@pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")
def test_a_submission_in_chromium_acts_on_its_own_form(tmp_path):
    with serve(Shop) as url:
        run = browser_crawl(tmp_path, url, 20, HIDDENWEB_BROWSER_SCROLL_STEPS="0",
                            HIDDENWEB_MAX_SUBMISSIONS_PER_FORM="30")
        log = list(Shop.log)
    assert run.returncode == 0, run.stderr[-3000:]
    stats = run.stats
    # the form a click reveals: revealed by the page's events on the fresh page, and sent
    assert stats.get("hiddenweb/browser/forms_revealed", 0) >= 1, stats
    assert "/apply?view=wide" in log, log
    assert any(i.get("url", "").endswith("/options-applied") for i in run.items), log
    # the form the safety policy refuses, at the options form's old position: never sent
    assert not [p for p in log if p.startswith("/delete-all")], log
    # the form shown once: dropped when not found, its explorer ended, nothing sent
    assert stats.get("hiddenweb/forms/gone") == 1, stats
    assert not [p for p in log if p.startswith("/find?")], log
    gone = stats.get("hiddenweb/browser/forms_gone", 0)
    assert 1 <= gone <= 1 + 8, stats  # its defaults and the rest of its first wave at most
    # and no page action waited for a control that was not there
    assert not stats.get("hiddenweb/browser/failures"), stats
    assert not stats.get("hiddenweb/browser/timeouts"), stats


NOTES = b"""<!doctype html><html><head><title>Notes</title></head><body>
<h1>Notes</h1>
<form action="/notes" method="post"><input name="tag" value="garden">
<button>Show the notes</button></form>
<div id="out"></div>
<script>
document.addEventListener("submit", function (e) {
  e.preventDefault();
  var f = e.target;
  fetch("/drafts/autosave", {method: "POST", body: "unsaved"});  // the page's own write
  fetch(f.action, {method: "POST", body: new URLSearchParams(new FormData(f))})
    .then(function (r) { return r.text(); })
    .then(function (t) { document.getElementById("out").innerHTML = t; });
});
</script></body></html>"""


class Notes(SiteHandler):
    def do_GET(self) -> None:  # noqa: N802
        self.log.append(("GET", self.path))
        path = urlsplit(self.path).path
        if path == "/":
            return self._send(NOTES)
        if path == "/notes/garden":
            return self._send(b"<html><title>garden</title><p>Notes tagged garden.</p></html>")
        return self._send(b"", "text/plain", 404 if path != "/robots.txt" else 200)

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode()
        self.log.append(("POST", self.path, body))
        if self.path == "/notes":
            return self._send(b'<a href="/notes/garden">The garden notes</a>')
        return self._send(b"saved")


@pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")
def test_a_form_that_posts_itself_with_fetch_is_sent_and_nothing_else_is(tmp_path):
    """A neutral POST form handled in the page, which sends itself with ``fetch`` to its own
    action: the crawler's submission is that request (``Guard._form_sends``). The page's
    other write at the same moment (an autosave) is still refused."""
    with serve(Notes) as url:
        run = browser_crawl(tmp_path, url, 20, HIDDENWEB_BROWSER_SCROLL_STEPS="0",
                            HIDDENWEB_MAX_SUBMISSIONS_PER_FORM="3")
        log = list(Notes.log)
    assert run.returncode == 0, run.stderr[-3000:]
    posts = [entry for entry in log if entry[0] == "POST"]
    assert ("POST", "/notes", "tag=garden") in posts, posts  # its defaults
    assert not [p for p in posts if p[1] != "/notes"], posts  # never the autosave
    assert ("GET", "/notes/garden") in log, log
    assert run.stats.get("hiddenweb/browser/form_sends", 0) >= 1, run.stats
    assert run.stats.get("hiddenweb/browser/writes_aborted", 0) >= 1, run.stats
