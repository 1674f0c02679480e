"""Requests that never end as the page sees them: a shared worker's script (Chromium reports it
as the page's request and finishes it in the worker's own target) and a server-sent event
stream the server holds open. Each wait for the page's network (after each fired event, each
scroll step, a route taken again) ran to its cap while they were in flight; with the lab knob
``browser_long_requests`` (on) a shared worker's script, or any request in flight for
:data:`~hiddenweb.browser.guard.LONG_REQUEST` s, is not waited for
(:meth:`hiddenweb.browser.guard.Guard.in_flight`), and an ``EventSource`` is answered 204
(the guard), which closes it.

The page's ten buttons each show a link when clicked; the crawl's events stop after
``browser_event_seconds`` (6 s here). With the knob on, every button is clicked within it;
off, each click waits out its second (``browser_event_wait``) for the worker's script, and the
time runs out before the tenth. Counted from the server's own log."""

from __future__ import annotations

import json
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from crawlrun import browser_crawl
from localsite import SiteHandler, serve  # tests/ is on sys.path (rootdir)

CHROMIUM = Path("/usr/bin/chromium")
PARTS = 10
BUTTONS = "".join(  # no quoted paths: reached only by the clicks (and the scripts')
    f'<button type="button" onclick="var a = document.createElement(\'a\');'
    f' a.href = \'/pa\' + \'rt/{n}\'; a.textContent = \'part {n}\';'
    f' document.body.appendChild(a)">'
    f"Show part {n}</button>" for n in range(1, PARTS + 1))
PAGE = (f"<!doctype html><html><head><title>parts</title></head><body><h1>Parts</h1>{BUTTONS}"
        "<script>new SharedWorker('/static/' + 'worker.js');"
        " new EventSource('/ev' + 'ents');</script></body></html>").encode()


class App(SiteHandler):
    def do_GET(self) -> None:  # noqa: N802
        self.log.append(self.path)
        path = urlsplit(self.path).path
        if path == "/":
            return self._send(PAGE)
        if path == "/static/worker.js":  # a worker that only listens
            return self._send(b"onconnect = function (e) { e.ports[0].start(); };",
                              "text/javascript")
        if path == "/events":  # a stream held open: one event, then a comment each 0.5 s
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            try:
                self.wfile.write(b"data: hello\n\n")
                for _ in range(120):
                    self.wfile.flush()
                    time.sleep(0.5)
                    self.wfile.write(b": still here\n\n")
            except OSError:  # the page went away
                pass
            self.close_connection = True
            return None
        if path.startswith("/part/"):
            return self._send(f"<html><title>{path}</title><p>a part</p></html>".encode())
        return self._send(b"", "text/plain", 404 if path != "/robots.txt" else 200)


def _crawl(tmp_path: Path, skip_long: bool):
    with serve(App) as url:
        run = browser_crawl(tmp_path, url, 20, HIDDENWEB_BROWSER_SCROLL_STEPS="0",
                            HIDDENWEB_BROWSER_EVENT_BUDGET="30",
                            HIDDENWEB_LAB=json.dumps({"browser_long_requests": skip_long,
                                                      "browser_event_seconds": 6}))
        log = list(App.log)
    assert run.returncode == 0, run.stderr[-3000:]
    return run, {p for p in log if p.startswith("/part/")}


@pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")
def test_requests_that_never_end_on_the_page_are_not_waited_for(tmp_path):
    run, parts = _crawl(tmp_path / "on", skip_long=True)
    assert parts == {f"/part/{n}" for n in range(1, PARTS + 1)}, sorted(parts)
    stats = run.stats
    assert stats["hiddenweb/browser/events/fired"] >= PARTS, stats
    assert stats.get("hiddenweb/browser/long_requests", 0) >= 1, stats  # the worker's script
    assert stats.get("hiddenweb/browser/streams_closed", 0) >= 1, stats  # answered 204
    assert not stats.get("retry/count"), stats  # its URL over plain HTTP: stopped at headers
    assert not stats.get("hiddenweb/browser/events/time_capped"), stats
    # the lab knob off: each click waited its second for the worker's script and the stream
    run, parts = _crawl(tmp_path / "off", skip_long=False)
    assert len(parts) < PARTS, sorted(parts)
    assert run.stats.get("hiddenweb/browser/events/time_capped", 0) >= 1, run.stats
    assert not run.stats.get("hiddenweb/browser/long_requests"), run.stats
    assert not run.stats.get("hiddenweb/browser/streams_closed"), run.stats
