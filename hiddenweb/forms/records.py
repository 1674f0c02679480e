"""Values for a form from the hidden pages it led to: HiWE's "update action values", per record.

A hidden page (a result list, a record's detail page) usually shows the attributes of what it
lists as ``label: value`` pairs: ``city: Springfield``, ``author: Smith, J.``, ``keywords: fern,
tulip``. Those values are exactly what the form that found the page accepts, so they are the
best candidates for its next submissions: Raghavan & Garcia-Molina's HiWE adds values found in
result pages to the LVS ("update action values", ALGORITHMS.md section 1), and adaptive query
selection takes the next queries from the documents already retrieved (Ntoulas, Zerfos & Cho
2005; Barbosa & Freire 2004). Without it, a free-text field is filled blind from the LVS: on the
proving ground most submissions then answer "no results" (issue 3: 12,000 of 17,000 downloads
on a 10^4-page site).

Contract.

* :func:`record_fields` reads ``label: value`` pairs from a page's list items, definition lists
  and two-cell table rows (label 1-3 words; a value list split on ``,`` / ``;`` when the label
  is plural or there are three parts or more, so ``Orwell, George`` stays one value); at most
  :data:`MAX_PAIRS` pairs.
* :func:`endpoint` names the collection a form queries (method + action path);
  :func:`form_state` reads a form's fixed state (hidden fields, pinned selects) from its
  signature.
* :class:`ShownValues` samples the values an endpoint's answers show beyond their queries
  (Chao1); :class:`BlindBudget` is the misses the forms of an endpoint share before its first
  result.
* :func:`looks_like_no_results` and :func:`result_words` read a form's answer page.

Records are offered to forms by :func:`hiddenweb.forms.endpoint.offer_record`.

A hidden page's record is offered only to the explorers of the form *endpoint* (method
and action path) whose submission led to the page, directly or through links between hidden
pages (``meta["hiddenweb_origin"]``): another collection's values are another collection's.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import urldefrag, urlsplit

from hiddenweb.forms.lvs import words_of
from hiddenweb.pagetext import TEXTS, compiled, tree

if TYPE_CHECKING:
    from parsel import Selector
    from scrapy.http import Response

MAX_PAIRS = 24
MAX_VALUE_CHARS = 64
_PAIR = re.compile(r"^\s*([^\W\d_][\w .'-]{0,30}?)\s*:\s*(\S.{0,300}?)\s*$", re.S)
_STATE = re.compile(r"\{([^{}]*)\}\s*$")
_ITEMS = compiled("//li[not(.//li)]")
_TERMS = compiled("//dt")
_DEFINITION = compiled("following-sibling::dd[1]//text()")
_PAIR_ROWS = compiled("//tr[count(th|td) = 2][not(ancestor::table[1]//tr[th and not(td)]"
                      "[count(th) > 1])]")
CELLS = compiled("th|td")  # a table row's cells


def record_fields(selector: Selector) -> dict[str, list[str]]:
    """``label (lower case) -> values`` of the page's ``label: value`` pairs (see module)."""
    out: dict[str, list[str]] = {}
    texts: list[tuple[str, str]] = []
    root = tree(selector)  # lxml: a parsel Selector per node cost more than the reading
    for li in _ITEMS(root):
        m = _PAIR.match(" ".join(TEXTS(li)))
        if m:
            texts.append((m.group(1), m.group(2)))
    for dt in _TERMS(root):
        dd = _DEFINITION(dt)
        if dd:
            texts.append((" ".join(TEXTS(dt)), " ".join(dd)))
    # two-cell rows of a table without a header row (a header row names columns, not pairs)
    for tr in _PAIR_ROWS(root):
        cells = [" ".join(TEXTS(c)) for c in CELLS(tr)]
        texts.append((cells[0], cells[1]))
    for raw_label, raw_value in texts:
        label = " ".join(words_of(raw_label))
        if not label or len(label.split()) > 3:
            continue
        value = " ".join(raw_value.split())
        if not value or len(value) > 300:
            continue
        parts = [p.strip() for p in re.split(r"[;,]", value) if p.strip()]
        if len(parts) > 2 or len(parts) == 2 and label.endswith("s"):  # not "Orwell, George"
            values = parts
        else:
            values = [value]
        bucket = out.setdefault(label, [])
        for v in values:
            v = v[:MAX_VALUE_CHARS]
            if v not in bucket:
                bucket.append(v)
        if len(out) >= MAX_PAIRS:
            break
    return out


def endpoint(method: str, action: str) -> str:
    """A form endpoint, ``"POST /c/2/locate"``: forms sharing it answer from one collection."""
    return f"{method.upper()} {urlsplit(action).path or '/'}"


def form_state(signature: str) -> dict[str, str]:
    """The fixed state a form signature carries (``{region=MA}``), ``name -> value``."""
    m = _STATE.search(signature)
    if not m:
        return {}
    pairs = (p.partition("=") for p in m.group(1).split(","))
    return {name.strip(): value.strip() for name, _, value in pairs if name.strip()}


class ShownValues:
    """The values an endpoint's answers showed *outside the query that found them*: a sample
    of the values its records take. A record listed for the query ``author=Orwell`` shows
    Orwell because it was asked for; a record reached from it by a link between records
    ("related") shows whatever author it has. ``counts`` is kept per form field (the record
    labels that match it, :func:`matched_fields`), so a form reads its own field's sample.
    Chao1 (Chao 1984, "Nonparametric estimation of
    the number of classes in a population") estimates, per field, how many values the sample
    has not shown yet: ``f1^2 / (2 f2)``, or ``f1 (f1 - 1) / 2`` with no value seen twice
    (``f1``, ``f2``: values seen once, twice). :attr:`complete`: some label was sampled and
    every sampled field's estimate is below one value: a blind guess is not expected to find
    a value the records take that they have not shown (``FormExplorer.holding``)."""

    def __init__(self) -> None:
        self.counts: dict[str, dict[str, int]] = {}

    def add(self, record: dict[str, list[str]], labels: dict[str, str],
            query: dict[str, str | None]) -> int:
        """Count the record's values of ``labels`` (label -> field name) that differ from the
        query's value of that field; returns how many were counted."""
        added = 0
        for label, name in labels.items():
            asked = str(query.get(name) or "").strip().casefold()
            for value in record.get(label, ()):
                folded = value.strip().casefold()
                if folded and folded != asked:
                    counts = self.counts.setdefault(name, {})
                    counts[folded] = counts.get(folded, 0) + 1
                    added += 1
        return added

    def unseen(self) -> float | None:
        """The largest Chao1 estimate over the sampled fields (None: nothing sampled)."""
        worst: float | None = None
        for counts in self.counts.values():
            f1 = sum(1 for c in counts.values() if c == 1)
            f2 = sum(1 for c in counts.values() if c == 2)
            estimate = f1 * f1 / (2 * f2) if f2 else f1 * (f1 - 1) / 2
            worst = estimate if worst is None else max(worst, estimate)
        return worst

    @property
    def complete(self) -> bool:
        unseen = self.unseen()
        return unseen is not None and unseen < 1


class BlindBudget:
    """Answers that gave nothing new, shared by the forms of one endpoint
    (:func:`endpoint`: a wizard's step-2 forms for each region) until the
    endpoint gives its first result: then a form that gave results goes on by its own
    ``patience``, one that did not waits for the values the results show (suggestions).
    ``limit`` misses (0: no limit) pause them all until the spider is idle
    (:meth:`FormExplorer.resume` adds a round)."""

    def __init__(self, limit: int) -> None:
        self.limit, self.misses, self.hits, self.rounds = limit, 0, 0, 1
        #: answers of the endpoint still to be read (links on its result pages, harvested
        #: submissions queued or downloading), kept by the spider: see FormExplorer.holding
        self.reading = 0
        #: submissions of the endpoint's forms queued or downloading, not counting suggested
        #: ones: at most a form's ``wave`` (the forms of one endpoint query one collection;
        #: a wizard's ten region forms do not send ten waves of guesses before any answer)
        self.flying = 0
        #: the values its answers showed beyond their queries (see FormExplorer.holding)
        self.shown = ShownValues()

    @property
    def spent(self) -> bool:
        return not self.hits and 0 < self.limit * self.rounds <= self.misses

    def answer(self, new: bool) -> None:
        if new:
            self.hits += 1
        else:
            self.misses += 1


_NO_RESULTS = re.compile(r"\bno (results|matches|records|items)\b|\bnothing found\b", re.I)


def looks_like_no_results(text: str) -> bool:
    """True for the empty answer page a form gives for values that match nothing."""
    return bool(_NO_RESULTS.search(text[:5000]))


def result_words(texts: list[str], limit: int = 40) -> list[str]:
    """Candidate values from a result page's link texts: its longer words, most frequent first."""
    counts: dict[str, int] = {}
    for text in texts:
        for w in words_of(text):
            if len(w) >= 4:
                counts[w] = counts.get(w, 0) + 1
    return sorted(counts, key=lambda w: -counts[w])[:limit]


def rejected(meta: dict, response: Response, page: str) -> bool:
    """A submission redirected back to its form's page: the server refused it (a missing or
    invalid value), whatever the page now says; not a result."""
    if not meta.get("redirect_urls"):
        return False
    return urldefrag(response.url)[0] == urldefrag(page)[0]
