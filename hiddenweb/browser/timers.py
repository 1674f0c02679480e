"""Timers fired early on a rendered page (issue 24: "timers that fire within a few seconds
count"): content a page shows only some seconds after it loaded (a link added by
``setTimeout(show, 3000)``, a list fetched after a delay) is there when the DOM is read, without
waiting those seconds on every page.

The init script :data:`~hiddenweb.browser.scripts.RECORD_TIMERS_JS` records each
``setTimeout`` with a delay, and when it is due, until it runs or is cleared. Once the page has
settled, :meth:`PageTimers.run` runs the timers due within lab knob ``browser_timer_horizon`` s,
soonest first (each one's own timer cleared, so it runs once), waits for the requests they
started (as after a fired event), and does it again for the timers those callbacks set, for at
most :data:`ROUNDS` rounds and :data:`MAX_TIMERS` timers a round. Intervals are left alone
(a poll would run without end), and so are timers due later than the horizon (a session's
"you will be logged out" timer).

While timers run the page is *firing* (:attr:`Render.firing`): the guard aborts any request of
the page the safety policy would not follow as a link, and, as always, every script write,
off-host request and navigation; a navigation a timer started is kept as a URL found.

Bounds: :data:`ROUNDS`, :data:`MAX_TIMERS`; the waits are lab knob ``browser_event_wait`` s at
most. Called only with ``HIDDENWEB_BROWSER_EVENTS`` on. Stats (``hiddenweb/browser/timers/``):
``pages`` (pages with a timer run early), ``fired``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from playwright.async_api import Error as PlaywrightError

from hiddenweb.browser.config import BrowserConfig
from hiddenweb.browser.events import _DIED
from hiddenweb.browser.guard import Guard, Render
from hiddenweb.browser.scripts import FIRE_TIMERS_JS

logger = logging.getLogger(__name__)

ROUNDS = 3  # a timer's callback may set the next one (a short chain of steps)
MAX_TIMERS = 20  # timers run early per round
QUIET = 0.06  # seconds without a request in flight: what the timers started is answered


class PageTimers:
    """Runs a rendered page's pending timers early (see the module docstring)."""

    def __init__(self, crawler: Any, guard: Guard, config: BrowserConfig) -> None:
        self.stats = crawler.stats
        self.guard = guard
        self.horizon_ms = config.timer_horizon * 1000
        self.wait = config.event_wait

    async def run(self, page: Any, render: Render) -> int:
        """Run ``page``'s timers due within the horizon, for ``render``; how many ran. A dead
        page's error is raised; any other error ends the run quietly."""
        if self.horizon_ms <= 0:
            return 0
        ran = 0
        render.firing = True
        try:
            for _ in range(ROUNDS):
                fired = await page.evaluate(FIRE_TIMERS_JS, [self.horizon_ms, MAX_TIMERS])
                if not fired:
                    break
                ran += fired
                await asyncio.sleep(0.03)  # the callbacks' own requests are asked first
                await self.guard.quiet(page, self.wait, QUIET, 0.03, render.stopped)
        except PlaywrightError as exc:
            if _DIED.search(str(exc)):
                raise
            logger.debug("Timers of %s not run to the end: %s", page.url,
                         str(exc).splitlines()[0][:200])
        finally:
            render.firing = False
        if ran:
            self.stats.inc_value("hiddenweb/browser/timers/pages")
            self.stats.inc_value("hiddenweb/browser/timers/fired", ran)
        return ran
