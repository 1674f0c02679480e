"""The stopping rule (``HIDDENWEB_STOP_MASS``): when a form is retired, and what a crawl with
only retired forms left does.

* A form that gave results is retired when the Good–Turing missing mass of its last
  ``stop_window`` answers (:func:`hiddenweb.estimate.missing_mass`: the chance that its next
  answer is a new page) falls below ``HIDDENWEB_STOP_MASS`` (:meth:`StoppingRule.answered`).
* An endpoint that never gave a result runs to its limit (lab knob ``stop_blind_rounds`` 0,
  the default); with it at N it is retired, when the crawl is idle, once it has spent N blind
  budgets: its missing mass is then 1/(2(misses+1)) (:meth:`StoppingRule.idle`).
* A retired form sends no more blind guesses and is not resumed (:meth:`FormExplorer.resume`);
  when nothing but retired forms is left the crawl closes with ``hiddenweb_exhausted``
  (:data:`hiddenweb.estimate.EXHAUSTED`; :meth:`StoppingRule.close_if_spent`).

Stat: ``hiddenweb/forms/retired``. Measurements: docs/design-notes.md ("The stopping rule").
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import CloseSpider

from hiddenweb.estimate import EXHAUSTED, HiddenMass, missing_mass
from hiddenweb.forms.config import FormsConfig

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from hiddenweb.forms.explorer import FormExplorer

logger = logging.getLogger(__name__)


class StoppingRule:
    """When the forms of one crawl retire (see the module docstring)."""

    def __init__(self, config: FormsConfig, crawler: Crawler) -> None:
        self.config, self.crawler = config, crawler
        #: per form, the page fingerprints of its last ``stop_window`` answers that gave a new
        #: page (None: nothing new)
        self.recent: dict[FormExplorer, deque[str | None]] = {}

    @property
    def stats(self) -> Any:
        return self.crawler.stats  # set once the crawl starts

    def answered(self, explorer: FormExplorer, mass: HiddenMass, response: Response | None,
                 success: bool) -> None:
        """An answer of ``explorer`` (``success``: it gave a new page) was read."""
        stop = self.config.stop_mass
        if not stop:
            return
        recent = self.recent.get(explorer)
        if recent is None:
            recent = self.recent[explorer] = deque(maxlen=self.config.stop_window)
        recent.append(mass.page_of(response.request) if success and response is not None
                      else None)
        if explorer.retired or not explorer.new_pages and not success:
            return
        if missing_mass(recent, mass.counts) < stop:
            explorer.retired = True
            self.stats.inc_value("hiddenweb/forms/retired")
            logger.debug("Form %s on %s retired after %d answers (%d new pages)",
                         explorer.signature[:12], explorer.page, explorer.answers + 1,
                         explorer.new_pages)

    def idle(self, explorer: FormExplorer) -> None:
        """The crawl is idle: retire ``explorer`` if its endpoint never gave a result in its
        last blind budget and has spent ``stop_blind_rounds`` of them; never when that is 0
        (the default): it runs to its limit. A keyword box whose domain is a few words finds
        them after 60 to 400 misses, depending on which site words were read by then: retired
        after 2 budgets, it lost 8 of 37 hidden pages of 100-page proving-ground sites (seeds 3
        and 4, every run); after 1, 31 of the demo's 91 browser-only pages in 1 run of 8."""
        stop = self.config.stop_mass
        if stop and self.config.stop_blind_rounds and not explorer.new_pages \
                and explorer.blind is not None and explorer.blind.spent and not explorer.retired \
                and explorer.blind.rounds >= self.config.stop_blind_rounds:
            explorer.retired = 0.5 / (explorer.blind.misses + 1) < stop
            self.stats.inc_value("hiddenweb/forms/retired", int(explorer.retired))

    @staticmethod
    def close_if_spent(explorers: Iterable[FormExplorer]) -> None:
        """Nothing was resumed: raise :class:`CloseSpider` with ``hiddenweb_exhausted`` when
        some form was retired (what is left is not expected to pay; Scrapy says "finished"
        when every form ran out of values)."""
        if any(explorer.retired for explorer in explorers):
            raise CloseSpider(EXHAUSTED)
