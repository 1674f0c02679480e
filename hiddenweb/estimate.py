"""What is left to find: the hidden pages not yet found, and the yield of a form's next answer.

Two estimators from the crawl's discovery history, both from the counts of how often each page
was *captured* (downloaded, or asked for again and dropped as a duplicate):

* :func:`chao1` — the number of hidden pages not yet found, from the pages captured once
  (``f1``) and twice (``f2``): the bias-corrected Chao1 estimator with Chao's (1987) log-normal
  95 % interval (Chao, *Scand. J. Statist.* 14, 1987; bias correction as in Chao et al.,
  *Ecol. Monogr.* 84, 2014, eq. 2a). Chosen because it needs only f1 and f2, which a crawl
  observes for free (a result page's records are linked again by other answers; two queries
  give the same answer), and because it is a *lower bound* of what is left: a crawler that
  chooses its queries finds the easy pages first, and Chao1 is built for exactly that kind of
  unequal catchability. It is reported, not used to stop. Measured on the proving ground
  (docs/design-notes.md) it is far off: a crawl deduplicates, so most hidden pages are captured
  once and f1 stays high after everything was found (10^3, seeds 1-5: 87-142 "left" when 0
  were); a forecast from the open forms' missing masses was tried and did no better.
* :func:`missing_mass` — the probability that a form's next answer is a page not seen before:
  Good–Turing's missing mass (Good, *Biometrika* 40, 1953: P(new) = f1/n), over the form's last
  ``window`` answers (the explorer sends its best values first, so the discovery rate falls
  as it goes; a window follows it) with Jeffreys' ½ for a window with no singleton. A form
  whose missing mass falls below ``HIDDENWEB_STOP_MASS`` is retired (:mod:`hiddenweb.forms.crawl`).

:class:`HiddenMass` keeps the capture counts of the crawl's hidden pages and publishes the
estimate in the stats ``hiddenweb/estimate/hidden_left`` (and ``..._low``, ``..._high``).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

#: the finish reason of a crawl the stopping rule ended (only retired forms were left); like
#: Scrapy's "finished", a crawl that ended by itself
EXHAUSTED = "hiddenweb_exhausted"
#: the finish reason of a crawl whose last pages showed no word it had not read (hiddenweb.stale)
STALE = "hiddenweb_stale"
ENDED_BY_ITSELF = ("finished", EXHAUSTED, STALE)


def chao1(f1: int, f2: int, seen: int) -> tuple[float, float, float]:
    """(estimate, low, high) of the species not yet seen, from ``f1`` seen once, ``f2`` seen
    twice and ``seen`` in all: f0 = f1(f1-1)/(2(f2+1)) (bias-corrected), interval f0/C .. f0*C
    (Chao 1987; the variance for f2 = 0 as in EstimateS)."""
    if f1 <= 0:
        return 0.0, 0.0, 0.0
    f0 = f1 * (f1 - 1) / (2 * (f2 + 1))
    if f0 <= 0:
        return 0.0, 0.0, 0.0
    if f2 > 0:
        r = f1 / f2
        var = f2 * (r * r / 2 + r ** 3 + r ** 4 / 4)
    else:
        var = f1 * (f1 - 1) / 2 + f1 * (2 * f1 - 1) ** 2 / 4 - f1 ** 4 / (4 * (seen + f0))
        var = max(var, 0.0)
    c = math.exp(1.96 * math.sqrt(math.log(1 + var / (f0 * f0)))) if var > 0 else 1.0
    return f0, f0 / c, f0 * c


def missing_mass(recent: Iterable[str | None], counts: Counter[str] | dict[str, int]) -> float:
    """Good–Turing P(next answer is new) over ``recent`` answers (their page fingerprints, None
    for an answer that was no page: an error, a "no results" page, a refusal): the share of them
    whose page was captured exactly once in the whole crawl, with ½ added so that a window of
    ``n`` answers with no singleton says 1/(2(n+1)), not 0."""
    answers = list(recent)
    singletons = sum(1 for fp in answers if fp is not None and counts.get(fp, 0) == 1)
    return (singletons + 0.5) / (len(answers) + 1)


class HiddenMass:
    """Capture counts of the hidden pages (pages reached only through forms) and the Chao1
    estimate of those not yet found, kept in the crawler's stats.

    A capture is a download of a hidden page (new or a repeat of known content) or a request
    for one dropped as a duplicate. ``trace``: a JSON-lines file that gets one line per change
    of the estimate (``downloads``, ``found``, ``left``, ``low``, ``high``), for benchmarks
    (lab knob ``estimate_trace``)."""

    def __init__(self, crawler: Crawler, trace: str | None = None) -> None:
        self.crawler = crawler  # its stats and request fingerprinter are set when it starts
        self.counts: Counter[str] = Counter()
        self.freq: Counter[int] = Counter()  # capture count -> pages captured that often
        self.pages: dict[str, str] = {}  # request fingerprint -> the page's content fingerprint
        self.pending: Counter[str] = Counter()  # duplicates of requests not downloaded yet
        self.trace = Path(trace) if trace else None
        self._files: dict[str, IO[str]] = {}  # the trace's files, open for the crawl
        self.last: tuple | None = None

    @property
    def stats(self) -> Any:
        return self.crawler.stats

    def _key(self, request: Request) -> str:
        return self.crawler.request_fingerprinter.fingerprint(request).hex()

    def capture(self, request: Request, fp: str | None) -> None:
        """A hidden page downloaded by ``request``; ``fp`` is its content fingerprint."""
        if fp is None:
            return
        key = self._key(request)
        self._count(fp, 1 + self.pending.pop(key, 0))
        self.pages[key] = fp
        self._event("c", request, key, fp)
        self.publish()

    def recapture(self, request: Request) -> None:
        """A request for a hidden page dropped as a duplicate (the dupefilter saw it)."""
        key = self._key(request)
        fp = self.pages.get(key)
        self._event("r", request, key, fp)
        if fp is None:
            self.pending[key] += 1  # still queued or downloading: counted when it lands
            return
        self._count(fp, 1)
        self.publish()

    def _count(self, fp: str, captures: int) -> None:
        """``captures`` more of page ``fp``; f1, f2 kept as they change (not recounted)."""
        before = self.counts[fp]
        self.counts[fp] = before + captures
        if before:
            self.freq[before] -= 1
        self.freq[before + captures] += 1

    def _event(self, kind: str, request: Request, key: str, fp: str | None) -> None:
        """With a trace: one line per capture, for studying estimators offline."""
        if self.trace is None:
            return
        meta = request.meta
        query = meta.get("hiddenweb_query") or meta.get("hiddenweb_explore_data") or {}
        line = {"e": kind, "d": self.stats.get_value("hiddenweb/downloads", 0), "key": key[:12],
                "fp": fp and fp[:12], "answer": bool(meta.get("hiddenweb_explore")),
                "form": str(meta.get("hiddenweb_explore") or meta.get("hiddenweb_origin"))[:12],
                "q": hashlib.sha1(json.dumps(query, sort_keys=True).encode()).hexdigest()[:8]}
        self._write(self.trace.with_suffix(".events"), line)

    def _write(self, path: Path, line: dict) -> None:
        """One JSON line to a trace file, opened once (line-buffered: whole lines on a kill)."""
        fh = self._files.get(str(path))
        if fh is None:
            fh = self._files[str(path)] = path.open("a", encoding="utf-8", buffering=1)
        fh.write(json.dumps(line) + "\n")

    def page_of(self, request: Request | None) -> str | None:
        """The content fingerprint of the hidden page ``request`` downloaded, if any."""
        return None if request is None else self.pages.get(self._key(request))

    def estimate(self) -> tuple[float, float, float]:
        f1, f2 = self.singletons()
        return chao1(f1, f2, len(self.counts))

    def singletons(self) -> tuple[int, int]:
        """(f1, f2): the hidden pages captured once, and twice."""
        return self.freq[1], self.freq[2]

    def publish(self) -> None:
        left, low, high = self.estimate()
        figures = (round(left), math.floor(low), math.ceil(high))
        if figures == self.last:
            return
        self.last = figures
        for key, value in zip(("hidden_left", "hidden_left_low", "hidden_left_high"), figures,
                              strict=True):
            self.stats.set_value(f"hiddenweb/estimate/{key}", value)
        if self.trace is not None:
            line = {"downloads": self.stats.get_value("hiddenweb/downloads", 0),
                    "found": len(self.counts), "f1_f2": self.singletons(),
                    "left": round(left, 2), "low": round(low, 2),
                    "high": round(high, 2)}
            self._write(self.trace, line)
