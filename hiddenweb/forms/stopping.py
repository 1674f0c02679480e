"""The stopping rule (``HIDDENWEB_STOP_MASS``): when a form is retired, and what a crawl with
only retired forms left does.

* A form that gave results is retired when the Good–Turing missing mass of its last
  ``stop_window`` answers (:func:`hiddenweb.estimate.missing_mass`: the chance that its next
  answer is a new page) falls below ``HIDDENWEB_STOP_MASS`` (:meth:`StoppingRule.answered`).
* An endpoint that never gave a result runs to its limit (lab knob ``stop_blind_rounds`` 0,
  the default); with it at N it is retired, when the crawl is idle, once it has spent N blind
  budgets: its missing mass is then 1/(2(misses+1)) (:meth:`StoppingRule.idle`).
* A form family (:attr:`FormInfo.family`: the copies of one form that differ only in their
  hidden fields' state, as a listing's filter form carries the sort and offset of each page)
  is spent once :data:`FAMILY_RETIRED` of its copies retired (or were ended as inert: their
  values change nothing, :meth:`StoppingRule.ended`) and the last ``stop_window``
  answers of all its copies have a missing mass under ``HIDDENWEB_STOP_MASS``: a copy met
  after that is sent once, with its page's defaults (:meth:`StoppingRule.family_spent`), not
  explored again for results its siblings showed to repeat; a copy still exploring retires at
  its next answer. The copies of a POST form that posts back to its own page are one family
  across pages (:meth:`StoppingRule.family_of`; lab knob ``form_own_page_families``), and such
  a copy done with no new page counts as retired (stat ``hiddenweb/forms/own_page_empty``),
  and once such a family is spent a copy with no result of its own sends nothing more after its
  next answer (``hiddenweb/forms/family_stopped``): a
  diff's display options on each wiki page, stored in the session and the reader sent back to
  the page already read, were explored page after page (a Trac crawl sent 282 such POSTs).
  Such a family is judged by its copies' answers to values other than their page's defaults
  (lab knob ``form_family_values``, :meth:`StoppingRule.own_pages`): where the options send
  the reader to the page's diff view, each copy's defaults' answer is a new page (that page's
  diff) and the family was never spent: Trac crawls sent 390 and 572 such POSTs, each copy
  about 12, their answers the same diff again. And an answer to such a value is a new page for
  the family only when it shows a text block no page showed before (lab knob
  ``form_family_text``, stat ``hiddenweb/forms/answers_rearranged``): options whose answers
  are other views of the diff (context lines, side by side, carried in the URL) are new pages
  of known text, and judged by new pages the family is never spent. (Trac keeps its options
  in the session and sends the reader back to a page read: its answers are repeats, and this
  rule fired 1-2 times a crawl there.)
* A retired form sends no more blind guesses and is not resumed (:meth:`FormExplorer.resume`);
  it still sends the values its results suggest until its last ``stop_window`` answers to
  suggested values have a missing mass under ``HIDDENWEB_STOP_MASS`` too; then it declines
  them (:meth:`FormExplorer.decline`);
  when nothing but retired forms is left the crawl closes with ``hiddenweb_exhausted``
  (:data:`hiddenweb.estimate.EXHAUSTED`; :meth:`StoppingRule.close_if_spent`).

Stats: ``hiddenweb/forms/retired`` (of them ``…/retired_with_family``),
``hiddenweb/forms/family_spent``, ``hiddenweb/forms/declined`` (suggestions a retired form
dropped). Measurements:
docs/design-notes.md ("The stopping rule").
"""

from __future__ import annotations

import logging
from collections import Counter, deque
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import CloseSpider

from hiddenweb.estimate import EXHAUSTED, HiddenMass, missing_mass
from hiddenweb.forms.config import FormsConfig

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from hiddenweb.forms.explorer import FormExplorer
    from hiddenweb.forms.extract import FormInfo

logger = logging.getLogger(__name__)


#: copies of a form family that must have retired before the family is spent: one copy's
#: poor answers say little of its siblings' (a wizard's second step for another region)
FAMILY_RETIRED = 2


class StoppingRule:
    """When the forms of one crawl retire (see the module docstring)."""

    def __init__(self, config: FormsConfig, crawler: Crawler) -> None:
        self.config, self.crawler = config, crawler
        #: per form, the page fingerprints of its last ``stop_window`` answers that gave a new
        #: page (None: nothing new)
        self.recent: dict[FormExplorer, deque[str | None]] = {}
        #: per form, the same over its answers to suggested values
        self.suggested: dict[FormExplorer, deque[str | None]] = {}
        #: per form family, the same over the answers of all its copies, and its copies retired
        self.family_recent: dict[str, deque[str | None]] = {}
        self.family_retired: Counter[str] = Counter()

    @property
    def stats(self) -> Any:
        return self.crawler.stats  # set once the crawl starts

    def across_pages(self, form: FormInfo) -> bool:
        """Whether ``form``'s family spans pages: a POST form that posts back to its own
        page (:meth:`FormInfo.posts_to_its_page`; lab knob ``form_own_page_families``)."""
        return self.config.own_page_families and form.posts_to_its_page()

    def family_of(self, form: FormInfo) -> str:
        """The family ``form`` counts in: :attr:`FormInfo.family`, or, when it spans pages
        (:meth:`across_pages`), :attr:`FormInfo.family_across_pages`."""
        return form.family_across_pages if self.across_pages(form) else form.family

    def _window(self, windows: dict, key: Any) -> deque[str | None]:
        window = windows.get(key)
        if window is None:
            window = windows[key] = deque(maxlen=self.config.stop_window)
        return window

    def answered(self, explorer: FormExplorer, mass: HiddenMass, response: Response | None,
                 success: bool, suggested: bool = False, defaults: bool = False) -> None:
        """An answer of ``explorer`` (``success``: it gave a new page; ``suggested``: to a
        value its results suggested; ``defaults``: to the form as its page gives it) was read.
        Of a family across pages (:meth:`across_pages`), the defaults' answers are not counted
        in the family's window (lab knob ``form_family_values``): a copy met once the family is
        spent is sent with its defaults anyway, and what the family's window judges is whether
        its other values pay."""
        stop = self.config.stop_mass
        if not stop:
            return
        page = mass.page_of(response.request) if success and response is not None else None
        recent = self._window(self.recent, explorer)
        recent.append(page)
        family = self.family_of(explorer.form)
        if not (defaults and self._by_values(explorer.form)):
            self._window(self.family_recent, family).append(page)
        if suggested:
            self._window(self.suggested, explorer).append(page)
        if not explorer.retired and (explorer.new_pages or success):
            spent = self.family_spent(family, mass.counts)
            if spent or missing_mass(recent, mass.counts) < stop:
                explorer.retired = True
                self.family_retired[family] += 1
                self.stats.inc_value("hiddenweb/forms/retired")
                if spent:
                    self.stats.inc_value("hiddenweb/forms/retired_with_family")
                logger.debug("Form %s on %s retired after %d answers (%d new pages)",
                             explorer.signature[:12], explorer.page, explorer.answers + 1,
                             explorer.new_pages)
        elif not self.own_pages(explorer) and not success and self.across_pages(explorer.form) \
                and explorer.limit > explorer.submitted and self.family_spent(family, mass.counts):
            # a copy of a spent family across pages (family_of) with no result of its own:
            # what it sent is read, nothing more goes (as an inert form's, FormExplorer.feedback)
            explorer.limit = explorer.submitted
            self.stats.inc_value("hiddenweb/forms/family_stopped")
        if explorer.retired and not explorer.declining \
                and missing_mass(self.suggested.get(explorer, ()), mass.counts) < stop:
            dropped = explorer.decline()
            if dropped:
                self.stats.inc_value("hiddenweb/forms/declined", dropped)
            logger.debug("Form %s on %s declines suggested values", explorer.signature[:12],
                         explorer.page)

    def own_pages(self, explorer: FormExplorer) -> int:
        """The new pages ``explorer``'s answers gave, for its family across pages: those to
        values other than its defaults (lab knob ``form_family_values``), else all."""
        return explorer.value_pages if self._by_values(explorer.form) else explorer.new_pages

    def _by_values(self, form: FormInfo) -> bool:
        """Whether ``form``'s family is judged by its copies' answers to values other than
        their defaults: a family across pages (:meth:`across_pages`), with the lab knob
        ``form_family_values``."""
        return self.config.family_values and self.across_pages(form)

    def by_text(self, form: FormInfo) -> bool:
        """Whether an answer to a value other than ``form``'s defaults is a new page for it
        only when it shows text no page showed before (:data:`hiddenweb.pagetext.NEW_TEXT_META`,
        lab knob ``form_family_text``): a family judged by its copies' values
        (:meth:`_by_values`). A diff's display options on each wiki page answer other views
        of the diff its defaults' answer showed: new pages, no new text."""
        return self.config.family_text and self._by_values(form)

    def ended(self, explorer: FormExplorer) -> None:
        """``explorer`` was ended because its values change nothing (``FormExplorer.feedback``:
        inert), or, a copy of a form that posts back to its own page, it is done with no new
        page (``FormCrawler.feedback``); for its family it is a copy retired (a table's filter
        box whose empty column makes the site redirect every value to the unfiltered page, on
        each sort and facet view of the table; a diff's display options on each wiki page)."""
        if self.config.stop_mass:
            self.family_retired[self.family_of(explorer.form)] += 1

    def family_spent(self, family: str, counts: Counter[str] | dict[str, int]) -> bool:
        """Whether a new copy of a form of ``family`` is to be sent once with its defaults
        (module docstring): :data:`FAMILY_RETIRED` of its copies retired, and the last
        ``stop_window`` answers of all its copies (``counts``: the crawl's capture counts,
        :attr:`HiddenMass.counts`) have a missing mass under ``HIDDENWEB_STOP_MASS``."""
        stop = self.config.stop_mass
        return bool(stop) and self.family_retired[family] >= FAMILY_RETIRED \
            and missing_mass(self.family_recent.get(family, ()), counts) < stop

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
            if 0.5 / (explorer.blind.misses + 1) < stop:
                explorer.retired = True
                self.stats.inc_value("hiddenweb/forms/retired")

    @staticmethod
    def close_if_spent(explorers: Iterable[FormExplorer]) -> None:
        """Nothing was resumed: raise :class:`CloseSpider` with ``hiddenweb_exhausted`` when
        some form was retired (what is left is not expected to pay; Scrapy says "finished"
        when every form ran out of values)."""
        if any(explorer.retired for explorer in explorers):
            raise CloseSpider(EXHAUSTED)
