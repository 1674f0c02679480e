"""Scroll and "load more" on a rendered page (issue 24): the rest of a list that a page shows
only when a person scrolls down or clicks "Load more".

:meth:`PageScroll.run` is called by the handler once a page has settled and its events were
fired (not on a form's answer submitted by page actions: read as it came). Step by step, until
the page stops growing or a bound is hit:

1. the page is scrolled to its bottom (the document, and every element that scrolls its own
   content), two animation frames are let pass (an ``IntersectionObserver``'s callbacks and
   ``scroll`` listeners run then; an element that got no ``scroll`` event by then is sent
   one), and the page is watched until it grew, or until none of its requests flew for
   :data:`GRACE` s (a loader's timer; its requests are waited for lab knob
   ``browser_event_wait`` s at most);
2. if that grew nothing, a *load-more control* is clicked: a visible, enabled button
   (``<button>`` that is not a form's submit, ``<input type=button>``, ``role=button``, a link
   without a URL to follow, an element with a click handler) whose words (text, ``value``,
   ``title``, ``aria-label``, ``id``, ``class``) are those of
   :data:`~hiddenweb.safety_lexicon.MORE` ("Load more", "Show more", "Next", in the lexicon's
   languages), judged first by the safety policy as a button outside a form, as fired events
   are (:func:`~hiddenweb.browser.events.refusal`); while it runs, the guard aborts a request
   of the page the policy would not follow as a link (:attr:`Render.firing`). A control whose
   click grew nothing (or that the policy refused) is not clicked again on its URL template's
   pages.

The page *grew* when it has more elements or more text than before the step. The links and
forms that appeared are in the DOM the handler reads; those a later step removed again (a
virtual list) are returned as HTML for the handler to append.

Bounds: ``HIDDENWEB_BROWSER_SCROLL_STEPS`` steps that grew the page (``0``: no scrolling),
:data:`MAX_TRIES` clicks that grew nothing, lab knob ``browser_scroll_seconds`` (and at most
25 % of ``DOWNLOAD_TIMEOUT``) per page. A URL template none of whose first :data:`IDLE_AFTER`
pages grew is no longer scrolled, but one page in :data:`SAMPLE` (``scroll_skipped_idle``).

Stats (``hiddenweb/browser/``): ``scroll_steps`` (steps that grew a page), ``scroll_pages``
(pages that grew), ``scroll_clicks`` (load-more clicks that grew a page), ``scroll_links`` and
``scroll_forms`` (links and forms that appeared: the items reached), ``scroll_capped`` (a bound
hit before the page stopped growing), ``scroll_skipped_unsafe`` (load-more controls the safety
policy refused), ``scroll_skipped_idle`` (pages of an idle template not scrolled),
``scroll_frames_late`` (steps whose page was not drawn within :data:`FRAMES` s).
"""

from __future__ import annotations

import asyncio
import html
import logging
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import Error as PlaywrightError

from hiddenweb.browser.config import BrowserConfig
from hiddenweb.browser.events import LINKS_JS, refusal
from hiddenweb.browser.guard import Guard, Render
from hiddenweb.browser.scripts import PRESS_CLICK_JS
from hiddenweb.pagetext import template_key
from hiddenweb.safety_lexicon import MORE, normalize

logger = logging.getLogger(__name__)

QUIET = 0.1  # after a step that grew the page, its requests are awaited until none flew this long
GRACE = 0.3  # a step grew nothing once none of the page's requests flew for this long (a timer)
FRAMES = 3.0  # a scroll's two animation frames are awaited this long at most (a loaded machine)
MAX_TRIES = 3  # load-more clicks that grew nothing, per page
MAX_SCAN = 5000  # elements looked at for scrollers and controls
MAX_WORDS = 6  # a control's text longer than this is not a load-more control
IDLE_AFTER = 3  # a URL template none of whose first pages grew is scrolled no more ...
SAMPLE = 10  # ... but one page in this many
MAX_TEMPLATES = 1000  # URL templates whose fruitless controls are remembered ...
MAX_MEMORY = 200  # ... and controls per template
_DIED = re.compile(r"crash|closed|disconnected|context was destroyed", re.IGNORECASE)

# the page's size: elements and text (a step that grew neither added nothing)
SIZE_JS = """() => [document.getElementsByTagName("*").length,
                    document.body ? document.body.textContent.length : 0, document.forms.length]"""
# to the bottom: the document and every element that scrolls its own content; true if any moved.
# The elements moved are kept (window.__hiddenwebScrolled) with a capture listener that notes
# the scroll events that came: FRAMES_JS sends one to each that got none
SCROLL_JS = f"""() => {{
  const moved = [], root = document.scrollingElement || document.documentElement;
  const st = {{moved: moved, came: new Set()}};
  if (window.__hiddenwebScrolled) window.__hiddenwebScrolled.stop();
  const note = (e) => st.came.add(e.target === document ? root : e.target);
  window.addEventListener("scroll", note, true);
  st.stop = () => window.removeEventListener("scroll", note, true);
  window.__hiddenwebScrolled = st;
  const top = root.scrollTop;
  window.scrollTo(0, root.scrollHeight);
  if (root.scrollTop !== top) moved.push(root);
  const all = document.body ? document.body.getElementsByTagName("*") : [];
  for (let i = 0; i < Math.min(all.length, {MAX_SCAN}); i++) {{
    const el = all[i];
    if (el.scrollHeight <= el.clientHeight + 2 || el.clientHeight === 0) continue;
    if (!/auto|scroll|overlay/.test(getComputedStyle(el).overflowY)) continue;
    const was = el.scrollTop;
    el.scrollTop = el.scrollHeight;
    if (el.scrollTop !== was) moved.push(el);
  }}
  return moved.length > 0;
}}"""
# two animation frames (observers' callbacks and scroll events run in them), or FRAMES s (on a
# loaded 2-core machine a frame took up to 1.5 s); then a scroll event for each element
# SCROLL_JS moved that got none (a page not drawn in time). True if the frames came
FRAMES_JS = f"""() => new Promise((done) => {{
  setTimeout(() => done(false), {FRAMES * 1000:.0f});
  requestAnimationFrame(() => requestAnimationFrame(() => done(true)));
}}).then((drawn) => {{
  const st = window.__hiddenwebScrolled;
  if (!st) return drawn;
  st.stop();
  delete window.__hiddenwebScrolled;
  const root = document.scrollingElement || document.documentElement;
  for (const el of st.moved) {{
    if (st.came.has(el)) continue;
    (el === root ? document : el).dispatchEvent(new Event("scroll", {{bubbles: el === root}}));
  }}
  return drawn;
}})"""
# the visible, enabled button-like controls with a few words, in document order; kept in the
# page (window.__hiddenwebMore) for CLICK_JS
CONTROLS_JS = f"""() => {{
  const recorded = window.__hiddenwebListeners, out = [], kept = [];
  const all = document.body ? document.body.getElementsByTagName("*") : [];
  for (let i = 0; i < Math.min(all.length, {MAX_SCAN}) && out.length < 60; i++) {{
    const el = all[i], tag = el.tagName.toLowerCase(), attr = (n) => el.getAttribute(n) || "";
    const type = (attr("type") || (tag === "button" ? "submit" : "")).toLowerCase();
    const href = tag === "a" ? attr("href").trim() : "";
    const own = recorded && recorded.get(el);
    const button = (tag === "button" && !(type === "submit" && el.form))
      || (tag === "input" && type === "button") || attr("role") === "button"
      || (tag === "a" && (!href || href === "#" || /^javascript:/i.test(href)))
      || typeof el.onclick === "function" || (own && own.has("click"));
    if (!button || el.disabled || attr("aria-disabled") === "true") continue;
    if (!el.getClientRects().length) continue;
    const text = (el.textContent || el.value || "").replace(/\\s+/g, " ").trim();
    if (text.length > 80) continue;
    kept.push(el);
    out.push({{tag: tag, text: text, href: "",
              words: ["value", "title", "aria-label", "id", "class", "name"].map(attr).join(" ")
                .slice(0, 300),
              code: (/^javascript:/i.test(href) ? href : attr("onclick")).slice(0, 400),
              method: attr("data-method") || attr("data-turbo-method"),
              confirm: el.hasAttribute("data-confirm") || el.hasAttribute("data-turbo-confirm")}});
  }}
  window.__hiddenwebMore = kept;
  return out;
}}"""
CLICK_JS = """([i, pressed]) => {
  const el = (window.__hiddenwebMore || [])[i];
  if (!el || !el.isConnected) return false;
  el.scrollIntoView({block: "center"});
  (""" + PRESS_CLICK_JS + """)(el, [], pressed);  // pressed, then clicked, as a person does
  return true;
}"""


class PageScroll:
    """Scrolls a rendered page and clicks its load-more controls within their bounds (see the
    module docstring)."""

    def __init__(self, crawler: Any, guard: Guard, config: BrowserConfig,
                 download_timeout: float) -> None:
        self.stats = crawler.stats
        self.guard = guard
        self.safety = guard.safety
        self.steps = config.scroll_steps
        self.seconds = min(config.scroll_seconds, 0.25 * download_timeout)
        self.wait = config.event_wait
        self.press = config.press_clicks  # lab knob browser_press_clicks
        # URL template -> its pages scrolled, those that grew, its fruitless controls
        self.memory: OrderedDict[str, _Template] = OrderedDict()

    async def run(self, page: Any, render: Render) -> str:
        """Scroll ``page`` for ``render``; return the HTML to append to its DOM (links that
        appeared and were gone again by the end). A dead page's error is raised."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.seconds
        grown = clicks = misses = 0
        template = self._memory(template_key(render.request.url))
        if template.scrolled >= IDLE_AFTER and not template.grown:
            template.skipped += 1
            if template.skipped % SAMPLE:
                self.stats.inc_value("hiddenweb/browser/scroll_skipped_idle")
                return ""
        template.scrolled += 1
        tried = template.tried  # controls whose click grew nothing on the template's pages
        render.navigations = 0  # a click's navigation is aborted, its URL found
        render.firing = True
        try:
            start = set(await page.evaluate(LINKS_JS))
            seen = set(start)
            size = await page.evaluate(SIZE_JS)
            forms0 = size[2]
            while True:
                if grown >= self.steps or loop.time() >= deadline:
                    self.stats.inc_value("hiddenweb/browser/scroll_capped")  # still growing
                    break
                render.stopped.clear()
                grew = False
                if await page.evaluate(SCROLL_JS):
                    grew, size = await self._settle(page, render, size, deadline)
                while not grew and misses < MAX_TRIES and loop.time() < deadline:
                    control = await self._control(page, render, tried)
                    if control is None:
                        break
                    index, key = control
                    if not await page.evaluate(CLICK_JS, [index, self.press]):
                        self._remember(tried, key)
                        continue
                    grew, size = await self._settle(page, render, size, deadline)
                    if grew:
                        clicks += 1
                    else:
                        self._remember(tried, key)
                        misses += 1
                if not grew:
                    if loop.time() >= deadline:
                        self.stats.inc_value("hiddenweb/browser/scroll_capped")  # unfinished
                    break
                grown += 1
                seen.update(await page.evaluate(LINKS_JS))
            current = set(await page.evaluate(LINKS_JS)) if grown else start
            forms = size[2] - forms0
        except PlaywrightError as exc:
            if _DIED.search(str(exc)):
                raise
            logger.debug("Scrolling %s not done to the end: %s", page.url,
                         str(exc).splitlines()[0][:200])
            return ""
        finally:
            render.firing = False
        if not grown:
            return ""
        template.grown += 1
        stats = self.stats
        stats.inc_value("hiddenweb/browser/scroll_pages")
        stats.inc_value("hiddenweb/browser/scroll_steps", grown)
        if clicks:
            stats.inc_value("hiddenweb/browser/scroll_clicks", clicks)
        appeared = (seen | current) - start
        if appeared:
            stats.inc_value("hiddenweb/browser/scroll_links", len(appeared))
        if forms > 0:
            stats.inc_value("hiddenweb/browser/scroll_forms", forms)
        logger.debug("Scrolled %s: %d steps, %d clicks, %d links appeared", page.url, grown,
                     clicks, len(appeared))
        return "".join(f'<a href="{html.escape(u, quote=True)}" data-hiddenweb-scroll></a>'
                       for u in sorted(seen - current))

    def _memory(self, template: str) -> _Template:
        if template in self.memory:
            self.memory.move_to_end(template)
        else:
            self.memory[template] = _Template()
            if len(self.memory) > MAX_TEMPLATES:
                self.memory.popitem(last=False)
        return self.memory[template]

    @staticmethod
    def _remember(tried: set[str], key: str) -> None:
        if len(tried) < MAX_MEMORY:
            tried.add(key)

    async def _settle(self, page: Any, render: Render, size: list[int], deadline: float
                      ) -> tuple[bool, list[int]]:
        """After a scroll or a click: whether the page grew, and its size now. Nothing grew
        once none of the page's requests flew for :data:`GRACE` s after the page was drawn
        twice (waited for twice :data:`FRAMES` s at most; requests are waited for
        ``browser_event_wait`` s at most)."""
        loop = asyncio.get_running_loop()
        if await page.evaluate(FRAMES_JS) is False:
            # not drawn in FRAMES s: an observer's callback has not run yet; wait once more
            self.stats.inc_value("hiddenweb/browser/scroll_frames_late")
            await page.evaluate(FRAMES_JS)
        begun = quiet_since = loop.time()
        while True:
            now = await page.evaluate(SIZE_JS)
            if now[0] > size[0] or now[1] > size[1]:
                # what the growth started (images of the new items, the next page's fetch)
                await self.guard.quiet(page, max(0.0, min(self.wait, deadline - loop.time())),
                                       QUIET, 0.03, render.stopped)
                return True, await page.evaluate(SIZE_JS)
            moment = loop.time()
            if self.guard.in_flight(page) and moment - begun < self.wait:
                quiet_since = moment
            if moment - quiet_since >= GRACE or moment >= deadline or render.stopped.is_set():
                return False, now
            await asyncio.sleep(0.05)

    async def _control(self, page: Any, render: Render, tried: set[str]
                       ) -> tuple[int, str] | None:
        """The first load-more control not tried yet that the safety policy allows: its index
        for :data:`CLICK_JS` and its key; None when there is none."""
        for index, target in enumerate(await page.evaluate(CONTROLS_JS)):
            key = f"{target['tag']}|{target['text'][:80]}|{target['words'][:120]}"
            if key in tried or not _loads_more(target):
                continue
            reason = refusal(self.safety, target, render.request.url)
            if reason:
                self._remember(tried, key)
                self.stats.inc_value("hiddenweb/browser/scroll_skipped_unsafe")
                self.stats.inc_value(f"hiddenweb/safety/refused/{reason}")
                logger.debug("Not clicking <%s> %r on %s (%s)", target["tag"],
                             target["text"][:60], page.url, reason)
                continue
            return index, key
        return None


@dataclass
class _Template:
    """What scrolling the pages of one URL template gave."""

    scrolled: int = 0  # pages scrolled
    grown: int = 0  # ... that grew
    skipped: int = 0  # pages not scrolled (the template idle)
    tried: set[str] = field(default_factory=set)  # controls whose click grew nothing


def _loads_more(target: dict[str, Any]) -> bool:
    """Whether a control's words say it shows more of a list (:data:`MORE`): its text, or,
    for an icon without one, its ``value``, ``title``, ``aria-label``, ``id`` or ``class``."""
    text = normalize(target.get("text") or "")
    if len(text.split()) > MAX_WORDS:
        return False
    if text and MORE.search(text):
        return True
    return not text and MORE.search(normalize(target.get("words") or "")) is not None
