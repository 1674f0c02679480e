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
* :func:`offer_record` matches a record's labels to one form's fields (a label sharing a word
  with the field's label, name or id, or naming the same LVS label as the field) and suggests
  the values to the form's :class:`~hiddenweb.formexplore.FormExplorer`, each alone and, when
  it matches two fields or more with one value each, together (``author: Christie`` and
  ``year: 2013``: a narrowing its answer is known to hold,
  :meth:`~hiddenweb.formexplore.FormExplorer.suggest_together`). A record that
  *contradicts* the form's fixed state (a wizard's earlier choice kept in a hidden field,
  ``region=MA``, or a dependent select's pinned parent) is not offered to it: it is not an
  answer that form can give. Returns how many new submissions were queued.

The spider offers a hidden page's record only to the explorers of the form *endpoint* (method
and action path) whose submission led to the page, directly or through links between hidden
pages (``meta["hiddenweb_origin"]``): another collection's values are another collection's.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from hiddenweb.lvs import LVS, words_of

if TYPE_CHECKING:
    from parsel import Selector

    from hiddenweb.formexplore import FormExplorer

MAX_PAIRS = 24
MAX_VALUE_CHARS = 64
_PAIR = re.compile(r"^\s*([^\W\d_][\w .'-]{0,30}?)\s*:\s*(\S.{0,300}?)\s*$", re.S)
_STATE = re.compile(r"\{([^{}]*)\}\s*$")


def record_fields(selector: Selector) -> dict[str, list[str]]:
    """``label (lower case) -> values`` of the page's ``label: value`` pairs (see module)."""
    out: dict[str, list[str]] = {}
    texts: list[tuple[str, str]] = []
    for li in selector.xpath("//li[not(.//li)]"):
        m = _PAIR.match(" ".join(li.xpath(".//text()").getall()))
        if m:
            texts.append((m.group(1), m.group(2)))
    for dt in selector.xpath("//dt"):
        dd = dt.xpath("following-sibling::dd[1]//text()").getall()
        if dd:
            texts.append((" ".join(dt.xpath(".//text()").getall()), " ".join(dd)))
    for tr in selector.xpath("//tr[count(th|td) = 2]"):
        cells = [" ".join(c.xpath(".//text()").getall()) for c in tr.xpath("th|td")]
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


def _same(a: str, b: str) -> bool:
    return a.strip().casefold() == b.strip().casefold()


def _label_matches(label: str, words: set[str], lvs_label: str | None, lvs: LVS) -> bool:
    if set(label.split()) & words:
        return True
    if lvs_label is None:
        return False
    found = lvs.match([label])
    return found is not None and found.name == lvs_label


def matched_fields(explorer: FormExplorer, record: dict[str, list[str]], lvs: LVS
                   ) -> dict[str, str]:
    """``record label -> field name`` for the explorer's fields the record's labels match (a
    label sharing a word with the field's label, name or id, or naming the field's LVS label)."""
    form = explorer.context.get("form")
    fields = {f.name: f for f in form.fields} if form is not None else {}
    out: dict[str, str] = {}
    for name in explorer.names:
        info = fields.get(name)
        descriptors = info.descriptors[:3] if info is not None else [name]
        words = {w for d in descriptors for w in words_of(d)} | set(words_of(name))
        for label in record:
            if label not in out and _label_matches(label, words,
                                                   explorer.lvs_labels.get(name), lvs):
                out[label] = name
    return out


def offer_record(explorer: FormExplorer, record: dict[str, list[str]], lvs: LVS) -> int:
    """Suggest a record's values to the explorer's matching fields; new submissions queued."""
    if not record:
        return 0
    for name, value in form_state(explorer.signature).items():
        words = set(words_of(name))
        for label, values in record.items():
            if set(label.split()) & words and not any(_same(v, value) for v in values):
                return 0  # the record answers another choice of the wizard
    queued = 0
    matched = matched_fields(explorer, record, lvs)
    for label, name in matched.items():
        for value in record[label]:
            queued += explorer.suggest(name, value)
    # and the record's single values together: a narrowing its answer is known to hold
    together = {name: record[label][0] for label, name in matched.items()
                if len(record[label]) == 1}
    return queued + explorer.suggest_together(together)


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
