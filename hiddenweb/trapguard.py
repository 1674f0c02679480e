"""Template trap guard: stop following URL templates that keep giving the same page.

Crawler traps (an endless calendar, a faceted search that combines every filter) produce
unbounded numbers of URLs of one *template* (:func:`hiddenweb.pagetext.template_key`) whose pages
say nothing new. This downloader middleware counts, per template, the pages downloaded and how
many were *new*: a new shape fingerprint (:func:`hiddenweb.pagetext.shape_fingerprint`), or a
link out of the template to a page none of its pages linked to before (a record not yet listed:
a table of numbers, whose shapes are all alike once digits are left out, lists other rows on
each of its pages; a sort order of pages already read lists none). Once a template
has ``HIDDENWEB_TEMPLATE_BUDGET`` pages and fewer than ``template_min_novelty`` (a lab knob)
of them were new, further requests of that template are dropped before download (``IgnoreRequest``).
Templates whose pages keep being new (detail pages, result pagination) are never dropped.
Form submissions (``hiddenweb_reached_by["kind"] == "form"``) are exempt: the spider bounds them
per form. A request found on a page of *another* template is counted but never dropped: a trap
makes its own URLs (each calendar month links the next, each facet page every other), while the
links into a template from outside are as many as the pages that hold them. Before, a page
with many script navigations to leaves that differ only in a number (one test case each) had
its 21st leaf dropped, whichever came last. The page a request was found on is its action's
``page`` (``hiddenweb_action``), else its ``Referer``.

With a ``JOBDIR`` the trapped templates are appended to ``hiddenweb_trapped.txt`` as they are
trapped and read back at start: a resumed crawl (even after a kill) does not fall into them again.
The per-template records (pages, shapes, new ones, link targets) are part of the JOBDIR's
checkpoint (:meth:`jobdir_state`, :mod:`hiddenweb.dla.jobdir`): a resumed crawl goes on counting.

Settings: ``HIDDENWEB_TEMPLATE_BUDGET`` (0 disables), lab knob ``template_min_novelty``.
Stats: ``hiddenweb/trapguard/dropped``, ``hiddenweb/trapguard/templates_trapped``,
``hiddenweb/trapguard/let_in`` (requests of a trapped template found on another's page).
"""

from __future__ import annotations

import hashlib
import logging
from collections import defaultdict
from pathlib import Path
from urllib.parse import urldefrag

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import Response, TextResponse
from scrapy.utils.job import job_dir

from hiddenweb import defaults
from hiddenweb.config import lab
from hiddenweb.dla.kinds import ACTION_META
from hiddenweb.pagetext import outward_links, shape_fingerprint, template_key

logger = logging.getLogger(__name__)

TRAPPED_FILE = "hiddenweb_trapped.txt"
#: out-of-template link targets remembered per template (hashes: 8 bytes each and a set slot)
MAX_RECORDS = 100_000


class TemplateTrapGuard:
    def __init__(self, crawler: Crawler, budget: int, min_novelty: float,
                 jobdir: str | None = None):
        self.stats = crawler.stats
        self.budget = budget
        self.min_novelty = min_novelty
        #: the pages of each template, by URL (stable 64-bit hashes): a page downloaded again
        #: (read again after a JOBDIR resume) is not counted twice
        self.pages: dict[str, set[int]] = defaultdict(set)
        self.shapes: dict[str, set[str]] = defaultdict(set)
        self.fresh: dict[str, int] = defaultdict(int)  # pages new by their records only
        self.records: dict[str, set[int]] = defaultdict(set)  # hashes of out-of-template links
        self.trapped: set[str] = set()
        self.saved = Path(jobdir, TRAPPED_FILE) if jobdir else None
        if self.saved is not None and self.saved.exists():
            lines = self.saved.read_text(encoding="utf-8").split("\n")
            self.trapped.update(line for line in lines[:-1] if line)  # the last: torn or ""

    #: the name of its part of a JOBDIR's checkpoint
    jobdir_name = "trapguard"

    def jobdir_state(self) -> dict[str, dict]:
        """The per-template records, picklable (link targets as stable 64-bit hashes)."""
        return {"pages": self.pages, "shapes": self.shapes, "fresh": self.fresh,
                "records": self.records}

    def restore_jobdir_state(self, state: dict[str, dict]) -> None:
        """Go on counting from :meth:`jobdir_state` (a resumed crawl)."""
        for name, records in state.items():
            getattr(self, name).update(records)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> TemplateTrapGuard:
        s = crawler.settings
        budget = s.getint("HIDDENWEB_TEMPLATE_BUDGET", defaults.HIDDENWEB_TEMPLATE_BUDGET)
        if budget <= 0:
            raise NotConfigured("HIDDENWEB_TEMPLATE_BUDGET is 0")
        novelty = lab(s, "template_min_novelty")
        return cls(crawler, budget, novelty, job_dir(s))

    @staticmethod
    def _exempt(request: Request) -> bool:
        reached = request.meta.get("hiddenweb_reached_by") or {}
        return reached.get("kind") in ("form", "seed") or request.dont_filter

    @staticmethod
    def _from_outside(request: Request, key: str) -> bool:
        """Whether ``request`` was found on a page of a template other than ``key``."""
        page = (request.meta.get(ACTION_META) or {}).get("page") \
            or request.headers.get("Referer", b"").decode("latin-1")
        return bool(page) and template_key(page) != key

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        if self.trapped and not self._exempt(request):
            key = template_key(request.url)
            if key not in self.trapped:
                return
            if self._from_outside(request, key):
                self.stats.inc_value("hiddenweb/trapguard/let_in")
                return
            self.stats.inc_value("hiddenweb/trapguard/dropped")
            raise IgnoreRequest(f"template trapped: {key}")

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response:
        if self._exempt(request) or not isinstance(response, TextResponse):
            return response
        key = template_key(request.url)
        self.pages[key].add(_hash(request.url))
        try:
            outward = outward_links(response.selector, request.url)
            shape = shape_fingerprint(response.selector, request.url, outward)
        except (ValueError, AttributeError):  # not HTML
            return response
        shapes = self.shapes[key]
        new_records = self._new_records(key, [target for target, _ in outward])
        if shape not in shapes:
            shapes.add(shape)
        elif new_records:
            self.fresh[key] += 1
        pages = len(self.pages[key])
        if pages >= self.budget and key not in self.trapped:
            novelty = (len(shapes) + self.fresh[key]) / pages
            if novelty < self.min_novelty:
                self.trapped.add(key)
                if self.saved is not None:
                    self.saved.parent.mkdir(parents=True, exist_ok=True)
                    with self.saved.open("a", encoding="utf-8") as fh:
                        fh.write(key.replace("\n", " ") + "\n")
                self.stats.inc_value("hiddenweb/trapguard/templates_trapped")
                logger.info("Trap guard: %s gave %d pages, %d new; not following it further",
                            key, pages, len(shapes) + self.fresh[key])
        return response

    def _new_records(self, key: str, targets: list[str]) -> bool:
        """Whether the page links out of its template (``targets``: :func:`outward_links`) to
        a web page (fragment left out) that no page of the template linked to before;
        remembered, at most :data:`MAX_RECORDS` per template."""
        seen = self.records[key]
        new = False
        for target in targets:
            if not target.startswith(("http://", "https://")):
                continue
            h = _hash(urldefrag(target).url)
            if h not in seen and len(seen) < MAX_RECORDS:
                seen.add(h)
                new = True
        return new


def _hash(url: str) -> int:
    """A URL's stable 64-bit hash (the same in every process: kept in a JOBDIR)."""
    return int.from_bytes(hashlib.blake2b(url.encode("utf-8", "replace"), digest_size=8).digest(),
                          "big")
