"""Values for a free-text field that no LVS label matches: the site's own vocabulary.

A search box named ``symbol``, ``@search_text`` or ``term`` matches no label of a general LVS,
yet the site tells what it takes: the page's own default, a placeholder that gives an example
("e.g. London"), a ``<datalist>``; a table column or a ``label: value`` pair whose label names
the field (a ``symbol`` column on another page lists the symbols); and the words its pages use
most (Barbosa & Freire 2004: queries from the words of the pages seen; Raghavan &
Garcia-Molina's HiWE fill a field from values found on the site, ALGORITHMS.md section 1).

Contract.

* :class:`SiteVocabulary` reads every page with new content (:meth:`add_page`): each word's
  page count in its most frequent written form (``MSFT`` stays upper case: a value is matched
  as written by most back ends), and the values of columns and ``label: value`` pairs by their
  label's words. Memory is bounded: :data:`MAX_WORDS` words, :data:`MAX_LABELS` labels of
  :data:`MAX_VALUES` values each.
* :func:`site_label` gives such a field an *open* :class:`~hiddenweb.forms.lvs.LVSLabel` of its
  own (named and sourced ``site:<field name>``), added to the crawl's LVS: the explorer then
  treats it like any open LVS field (values its answers show are suggested, words of its
  result pages learnt). Its values, best first: the page's examples, the labelled values of
  the site, its frequent words; for a number box (``type=number``, or one whose page gives it
  a number) its numeric labelled values and a few numbers, no word.
* :meth:`SiteVocabulary.values_for` is what the labelled values offer a field later, as the
  crawl reads more pages (:meth:`hiddenweb.forms.crawl.FormCrawler.new_page`).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING

from hiddenweb.forms.lvs import LVS, LVSLabel, words_of
from hiddenweb.forms.records import CELLS, MAX_VALUE_CHARS, record_fields
from hiddenweb.pagetext import TEXTS, compiled, tree

if TYPE_CHECKING:
    from parsel import Selector

    from hiddenweb.forms.extract import FieldInfo

#: the name prefix and ``source`` of a field's own label
SITE = "site:"
MAX_WORDS = 50_000
MAX_LABELS = 500
MAX_VALUES = 300
#: values a field starts with from the site's frequent words
FREQUENT_WORDS = 30
_NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)?")
_TOKEN = re.compile(r"[^\W\d_][\w'-]{2,39}")
_EXAMPLE = re.compile(r"^\s*(?:e\.?\s?g\.?|z\.?\s?b\.?|p\.?\s?ex\.?|ex\.?|example|such as|like)"
                      r"[\s:,.]*(.+?)\s*\.{0,3}\s*$", re.I)
#: a table with a header row, that row's header cells, its data rows
_TABLES = compiled("//table[.//th]")
_HEADER = compiled("(.//tr[th])[1]/th")
_ROWS = compiled(".//tr[td]")
#: words a search box gains nothing from (the same answer for every page)
STOP_WORDS = frozenset("""
the and for with you your are was were this that from have has had not but all any can
our out its their them they then than into onto over under more most some such only also
been being here there when where which while who whom what why how will would could should
page pages home next previous prev back top login logout sign search help about contact
""".split())


def placeholder_example(text: str) -> str | None:
    """The example a placeholder gives ("e.g. London" → "London"), or None: a placeholder
    that only describes the field ("Search…", "Enter a name") is not a value."""
    m = _EXAMPLE.match(text or "")
    if not m:
        return None
    value = m.group(1).strip(" \"'“”‘’")
    return value or None


class SiteVocabulary:
    """The site's words and labelled values (see the module docstring)."""

    def __init__(self) -> None:
        self.pages = 0
        self.word_pages: Counter[str] = Counter()  # folded word -> pages that show it
        self.forms: dict[str, Counter[str]] = {}  # folded word -> its written forms
        self.labelled: dict[str, list[str]] = {}  # label (folded words) -> values, first seen

    def add_page(self, selector: Selector | None, text: str,
                 record: dict[str, list[str]] | None = None) -> list[tuple[str, str]]:
        """Read one page with new content (``selector`` None: not markup, its words only;
        ``record``: its :func:`record_fields`, if already read); returns the ``(label, value)``
        pairs new to the vocabulary."""
        self.pages += 1
        seen: set[str] = set()
        for token in _TOKEN.findall(text):
            folded = token.casefold()
            if folded in seen or (folded not in self.word_pages
                                  and len(self.word_pages) >= MAX_WORDS):
                continue
            seen.add(folded)
            self.word_pages[folded] += 1
            self.forms.setdefault(folded, Counter())[token] += 1
        if selector is None:
            return []
        if record is None:
            try:
                record = record_fields(selector)
            except (ValueError, AttributeError):  # not markup
                return []
        new: list[tuple[str, str]] = []
        for label, values in self._labelled(selector, record).items():
            bucket = self.labelled.get(label)
            if bucket is None:
                if len(self.labelled) >= MAX_LABELS:
                    continue
                bucket = self.labelled[label] = []
            known = {v.casefold() for v in bucket}
            for value in values:
                if value.casefold() not in known and len(bucket) < MAX_VALUES:
                    known.add(value.casefold())
                    bucket.append(value)
                    new.append((label, value))
        return new

    @staticmethod
    def _labelled(selector: Selector, record: dict[str, list[str]]) -> dict[str, list[str]]:
        """``label -> values`` of the page's ``label: value`` pairs (``record``, not changed)
        and of its tables' columns (a header row of ``<th>`` cells names the cells below it)."""
        out = {label: list(values) for label, values in record.items()}
        for table in _TABLES(tree(selector)):  # lxml: a Selector per cell cost 20 ms a page
            names = [" ".join(words_of(" ".join(TEXTS(th)))) for th in _HEADER(table)]
            if not any(names):
                continue
            for row in _ROWS(table)[:MAX_VALUES]:
                cells = CELLS(row)
                if len(cells) != len(names):
                    continue
                for name, cell in zip(names, cells, strict=True):
                    value = " ".join(" ".join(TEXTS(cell)).split())
                    if name and 0 < len(value) <= MAX_VALUE_CHARS:
                        bucket = out.setdefault(name, [])
                        if value not in bucket:
                            bucket.append(value)
        return out

    def written(self, folded: str) -> str:
        """A word in the form the site writes it most."""
        forms = self.forms.get(folded)
        return forms.most_common(1)[0][0] if forms else folded

    def frequent(self, n: int = FREQUENT_WORDS) -> list[str]:
        """The ``n`` words most pages show, leaving out stop words and words on nearly every
        page (navigation: the same answer for any of them)."""
        ceiling = self.pages * 0.9 if self.pages >= 10 else self.pages + 1
        ranked = [w for w, c in self.word_pages.most_common()
                  if w not in STOP_WORDS and c < ceiling]
        return [self.written(w) for w in ranked[:n]]

    def values_for(self, words: set[str]) -> list[str]:
        """The labelled values whose label shares a word with ``words`` (a field's name,
        label and id)."""
        out: list[str] = []
        for label, values in self.labelled.items():
            if set(label.split()) & words:
                out += [v for v in values if v not in out]
        return out


def field_words(field: FieldInfo) -> set[str]:
    """The words of a field's label, name and id."""
    return {w for d in field.descriptors[:3] for w in words_of(d)} | set(words_of(field.name))


def site_label(lvs: LVS, field: FieldInfo, vocabulary: SiteVocabulary | None) -> LVSLabel:
    """An open label of the field's own, with the values the page and the site offer it (see
    the module docstring); added to ``lvs`` so that its answers' values reach it."""
    values: list[str] = []

    def add(value: str | None) -> None:
        value = (value or "").strip()
        if value and value.casefold() not in {v.casefold() for v in values}:
            values.append(value)

    # a box the page fills with a number takes numbers, whatever its type says ("Max items
    # per page": 100): a word there is an error page (Trac answered 400 to each one)
    numeric = field.kind == "number" or bool(_NUMBER.fullmatch(field.default.strip()))
    add(field.default)
    add(placeholder_example(field.descriptors[3] if len(field.descriptors) > 3 else ""))
    for value in field.options:  # a <datalist>
        add(value)
    if vocabulary is not None:
        for value in vocabulary.values_for(field_words(field)):
            if not numeric or _NUMBER.fullmatch(value.strip()):
                add(value)
        if not numeric:
            for word in vocabulary.frequent():
                add(word)
    if numeric:
        for number in ("1", "10", "100"):
            add(number)
    name = f"{SITE}{field.name}"
    label = lvs.get(name)
    if label is not None:  # the same field on another form: one vocabulary
        lvs.add_values(name, [v for v in values if v not in label.values])
        return label
    label = LVSLabel(name, [field.name, *field.descriptors[:1]], values or [""], source=SITE,
                     open=not numeric)  # a number box is no search box: no words learnt
    lvs.labels.append(label)
    return label
