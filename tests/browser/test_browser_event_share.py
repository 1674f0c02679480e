"""The share of a page's event budget kept for delegated clicks
(:mod:`hiddenweb.browser.events`, lab knob ``browser_event_delegated_share``).

The served page has more controls with handlers of their own than the event budget of a page
(icon buttons, each with an ``onclick`` of its own code that does nothing a crawler sees:
one code for all would be fired once, the rest skipped as repeats), and after them, in
document order, a tab strip whose tabs have no handler of their own: one listener on the
document handles their clicks, as a framework's does, and the second tab shows a link
(``/tab/2``). The 35th own button's handler shows another link (``/late/1``).

* default: the tabs get their share of the budget before the own buttons have spent it all, so
  ``/tab/2`` is asked; the budget the tabs leave goes back to the own buttons, so ``/late/1``
  (the 35th, past the own buttons' first share) is asked too;
* the share 0 (the order before the knob): the own buttons spend the whole budget and the tabs
  are never pressed.

No path is written whole in the page (the crawl reads path-shaped strings in scripts and
handlers). Counted from the server's own log; real Chromium."""

from __future__ import annotations

from pathlib import Path

import pytest
from crawlrun import browser_crawl
from localsite import SiteHandler, serve  # tests/ is on sys.path (rootdir)

CHROMIUM = Path("/usr/bin/chromium")
BUDGET = 40  # HIDDENWEB_BROWSER_EVENT_BUDGET, set for the test
OWN = 45  # own buttons, more than the budget
LATE = 35  # the own button that shows a link: after the own buttons' share (30 of 40)

ONCLICK = {LATE: "reveal('late', 1)"}
BUTTONS = "\n".join(
    f'<button type="button" onclick="{ONCLICK.get(n, f"tick(this, {n})")}">b{n}</button>'
    for n in range(1, OWN + 1))
PAGE = f"""<!doctype html><html><head><title>share</title></head><body>
<div id="tools">{BUTTONS}</div>
<div role="tablist"><span role="tab" id="t1">First tab</span>
<span role="tab" id="t2">Second tab</span></div>
<div id="panel">first panel</div>
<script>
function path() {{ return [""].concat(Array.prototype.slice.call(arguments)).join("/"); }}
function tick(el, n) {{ el.dataset.n = n; }}
function reveal(name, n) {{
  document.body.insertAdjacentHTML("beforeend", '<a href="' + path(name, n) + '">' + name
                                   + "</a>");
}}
document.addEventListener("click", function (e) {{
  var tab = e.target.closest && e.target.closest("[role=tab]");
  if (!tab) return;
  document.getElementById("panel").innerHTML = tab.id === "t2"
    ? '<a href="' + path("tab", 2) + '">the second tab\\'s page</a>' : "first panel";
}});
</script></body></html>""".encode()


class Share(SiteHandler):
    def do_GET(self) -> None:  # noqa: N802
        self.log.append(self.path)
        if self.path == "/":
            return self._send(PAGE)
        if self.path in ("/tab/2", "/late/1"):
            return self._send(f"<html><body><h1>{self.path}</h1></body></html>".encode())
        return self._send(b"", "text/plain", 404 if self.path != "/robots.txt" else 200)


def _crawl(tmp_path: Path, lab: dict) -> tuple[list[str], dict]:
    with serve(Share) as url:
        run = browser_crawl(tmp_path, url, 60, HIDDENWEB_BROWSER_EVENT_BUDGET=str(BUDGET),
                            HIDDENWEB_BROWSER_TIMEOUT="10",
                            HIDDENWEB_LAB={"browser_event_seconds": 20, **lab})
        log = list(Share.log)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stats is not None
    return log, run.stats


@pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")
def test_delegated_clicks_get_their_share_and_leave_the_rest_to_own_handlers(tmp_path):
    log, stats = _crawl(tmp_path, {})
    assert "/tab/2" in log, log  # pressed within its share, before the own buttons spent all
    assert "/late/1" in log, log  # what the tabs left went back to the own buttons
    assert stats.get("hiddenweb/browser/events/delegated", 0) >= 2, stats
    assert stats.get("hiddenweb/browser/events/fired", 0) == BUDGET, stats


@pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")
def test_without_a_share_own_handlers_spend_the_whole_budget(tmp_path):
    log, stats = _crawl(tmp_path, {"browser_event_delegated_share": 0})
    assert "/tab/2" not in log, log
    assert "/late/1" in log, log
    assert "hiddenweb/browser/events/delegated" not in stats, stats
    assert stats.get("hiddenweb/browser/events/budget_spent", 0) >= 1, stats
