"""The hidden part of a proving-ground site: collections of records behind forms (HWDLA, §1).

A collection has records and one search/filter form (on a main public page and copied onto a
few others). Submitting useful values gives *result pages* that no link reaches; they link to
*detail pages* and to their other pages (``page=2``…); details link to *related* details, some
of which are in no result list (deeper hidden pages). Four form kinds, cycling over collections:

``search``  GET keyword (LVS ``keyword``); the collection indexes a few vocabulary words;
            case, plural and synonym variants give the same result page.
``filter``  GET finite domains: required category select, colour radios, in-stock checkbox.
``locate``  a two-step wizard whose city step depends on the region chosen (a post-back):
            step 1 (GET ``/c/N/step``) takes the region select and answers with a step page
            whose form carries the region as hidden state and a fresh token; step 2 POSTs the
            city (LVS ``city``): results only if the city is in the region.
``archive`` POST author (LVS ``author``; "Last, First" works too) + optional year select.

Every form carries a ``csrf`` hidden input, one token per host page; a result request without a
valid token gets a 400 page. Result links (pagination) always carry the main host's token.

How the form is built (:data:`STYLES`, by ``cid % 5``; every 5th collection's form is instead
built by a script, ``js``): ``plain``; ``buttons`` — the form's own ``action`` is a dead URL,
the first submit button ("Clear my saved searches", ``formaction=/account/delete``, POST) is a
trap and the second one carries the real ``formaction``; ``image`` — an ``<input type=image>``
submits; ``xhr`` — a script intercepts the submission, fetches the results and shows them in the
page (``history.pushState`` to the result URL); the form's ``action`` is a dead URL, so only a
browser gets results (``needs_browser`` in the truth).

``dependent`` (extra collections, appended after the others: see ``SiteModel``): a locate
collection whose one form has the region select and a *city select with no options in the HTML*;
a script fills the city options when a region is chosen (``fetch`` of
``/c/N/options?region=R``, JSON ``[[value, text], …]``: the cities with records in R). The
form POSTs region + city to ``/c/N/locate``. Only a browser that chooses a region first sees
the cities, so all its pages are ``needs_browser`` (a dependent field filled by a script, as
the post-back wizard is the dependent field filled by the server).
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from urllib.parse import urlencode

from hiddenweb.bench.provingground import vocab
from hiddenweb.bench.provingground.graph import rng_for

KINDS = ("search", "filter", "locate", "archive")
STYLES = ("plain", "buttons", "image", "xhr", "plain")  # by cid % 5 (the 5th: js, script-built)
METHODS = {"search": "GET", "filter": "GET", "locate": "POST", "archive": "POST"}
PAGE_SIZE = 10
RELATED_ONLY_FRACTION = 0.2

_SEARCH_NAMES = [
    ("q", "Keyword"),
    ("kw", "Keywords"),
    ("terms", "Search terms"),
    ("query", "Query"),
    ("find", "Find"),
]
_FILTER_NAMES = [
    ("category", "colour", "instock"),
    ("cat", "color", "available"),
    ("section", "colour", "stock"),
]
_LOCATE_NAMES = [("city", "City", "region", "Region"), ("town", "Town", "state", "State")]
_ARCHIVE_NAMES = [("author", "Author", "year", "Year"), ("name", "Name", "yr", "Year")]

_SPACES = re.compile(r"\s+")
Canon = tuple[tuple[str, str], ...]


def _norm(value: str) -> str:
    return _SPACES.sub(" ", value or "").strip().lower()


def canon_keyword(value: str) -> str:
    w = _norm(value)
    if w in vocab.SYNONYMS:
        return vocab.SYNONYMS[w]
    if w not in vocab.WORD_SET and w.endswith("s") and w[:-1] in vocab.WORD_SET:
        return w[:-1]
    return w


def canon_author(value: str) -> str:
    a = _norm(value)
    if "," in a:
        last, _, first = a.partition(",")
        a = _norm(f"{first} {last}")
    return a


@dataclass
class Collection:
    seed: int
    cid: int
    kind: str
    topic: int
    hosts: list[int]  # main host first
    js: bool
    fields: dict[str, str] = field(default_factory=dict)  # role → field name
    labels: dict[str, str] = field(default_factory=dict)  # role → label text
    domain: dict[str, list] = field(default_factory=dict)  # role → options
    records: list[dict] = field(default_factory=list)
    n_listed: int = 0
    related: list[list[int]] = field(default_factory=list)
    results: dict[Canon, list[int]] = field(default_factory=dict)
    tokens: dict[int, str] = field(default_factory=dict)
    style: str = "plain"  # STYLES: how the form is built and submitted

    @property
    def scripted(self) -> bool:
        """Only a browser can submit this collection's form usefully."""
        return self.js or self.style in ("xhr", "dependent")

    @property
    def wizard(self) -> bool:
        """A two-step locate wizard (the region step is a post-back)."""
        return self.kind == "locate" and self.style != "dependent"

    @property
    def method(self) -> str:
        return METHODS[self.kind]

    @property
    def action(self) -> str:
        return f"/c/{self.cid}/{self.kind}"

    @property
    def main_token(self) -> str:
        return self.tokens[self.hosts[0]]

    def n_pages(self, canon: Canon) -> int:
        return math.ceil(len(self.results.get(canon, ())) / PAGE_SIZE)

    def size(self) -> int:
        return len(self.records) + sum(self.n_pages(c) for c in self.results)

    # --- requests -----------------------------------------------------------------------------
    def canon(self, params: dict[str, str]) -> Canon | None:
        """The canonical query of a submission, or None if it cannot give results."""
        f = self.fields
        if self.kind == "search":
            w = canon_keyword(params.get(f["q"], ""))
            return ((f["q"], w),) if w else None
        if self.kind == "filter":
            cat = _norm(params.get(f["category"], ""))
            col = _norm(params.get(f["colour"], "")) or "any"
            stock = (
                "1" if _norm(params.get(f["instock"], "")) in ("1", "on", "yes", "true") else "0"
            )
            if cat not in self.domain["category"] or col not in ("any", *self.domain["colour"]):
                return None
            return ((f["category"], cat), (f["colour"], col), (f["instock"], stock))
        if self.kind == "locate":
            city = _norm(params.get(f["city"], ""))
            region = _norm(params.get(f["region"], "")).upper()
            return ((f["city"], city), (f["region"], region)) if city and region else None
        author = canon_author(params.get(f["author"], ""))
        year = _norm(params.get(f["year"], "")) or "any"
        return ((f["author"], author), (f["year"], year)) if author else None

    def key(self, canon: Canon, page: int) -> str:
        return f"c{self.cid}/{self.kind}?{urlencode(canon)}" + (f"&page={page}" if page > 1 else "")

    @property
    def step_action(self) -> str:
        return f"/c/{self.cid}/step"

    def step_key(self, region: str) -> str:
        return f"c{self.cid}/step?{urlencode([(self.fields['region'], region)])}"

    def step_url(self, region: str, host: int) -> str:
        return f"{self.step_action}?{urlencode([(self.fields['region'], region)])}" + (
            f"&csrf={self.tokens[host]}")

    def regions(self) -> list[str]:
        return list(self.domain["region"]) if self.wizard else []

    def options_url(self, region: str) -> str:
        return f"/c/{self.cid}/options?{urlencode([('region', region)])}"

    def cities_in(self, region: str) -> list[str]:
        """A dependent form's city options for ``region`` (the cities with records there)."""
        fc, fr = self.fields["city"], self.fields["region"]
        return [c for c, r in self.domain["city"]
                if r == region and ((fc, c.lower()), (fr, region)) in self.results]

    def detail_key(self, rid: int) -> str:
        return f"c{self.cid}/item/{rid}"

    def detail_url(self, rid: int) -> str:
        return f"/c/{self.cid}/item/{rid}"

    def result_url(self, canon: Canon, page: int = 1, token: str | None = None) -> str:
        """A GET URL of a result page (for POST kinds: the pagination URL)."""
        q = list(canon) + [("csrf", token or self.main_token)]
        if page > 1:
            q.append(("page", str(page)))
        return f"{self.action}?{urlencode(q)}"

    def truth_url(self, canon: Canon, page: int) -> str:
        if self.method == "POST" and page == 1:
            return self.action
        return self.result_url(canon, page)

    def form_data(self, canon: Canon, host: int) -> list[tuple[str, str]]:
        """Form data a browser sends from ``host`` to get ``canon`` (values as displayed)."""
        return [*canon, ("csrf", self.tokens[host])]


def _token(seed: int, cid: int, host: int) -> str:
    return hashlib.sha1(f"{seed}:csrf:{cid}:{host}".encode()).hexdigest()[:16]


def _clamp(x: float, lo: int, hi: int) -> int:
    return max(lo, min(hi, int(round(x))))


def _generate(
    seed: int, cid: int, kind: str, topic: int, hosts: list[int], js: bool, n_rec: int,
    style: str | None = None,
) -> Collection:
    # a new style draws from its own stream: the other collections stay byte-identical
    rnd = rng_for(seed, "collection" if style is None else f"collection-{style}", cid, n_rec)
    col = Collection(seed, cid, kind, topic, hosts, js)
    col.tokens = {h: _token(seed, cid, h) for h in hosts}
    col.style = style or ("plain" if js else STYLES[cid % len(STYLES)])
    variant = cid // len(KINDS)
    n_listed = max(2, n_rec - int(n_rec * RELATED_ONLY_FRACTION))
    col.n_listed = n_listed
    topic_words = vocab.TOPICS[vocab.TOPIC_NAMES[topic]]
    recs: list[dict] = []
    for rid in range(n_rec):
        words = rnd.sample(topic_words, 3)
        recs.append(
            {
                "title": " ".join(w.capitalize() for w in words[:2]) + f" {rid + 1}",
                "text": " ".join(rnd.choice(topic_words) for _ in range(rnd.randint(12, 30))),
            }
        )
    listed = range(n_listed)
    results: dict[Canon, list[int]] = {}
    if kind == "search":
        name, label = _SEARCH_NAMES[variant % len(_SEARCH_NAMES)]
        col.fields, col.labels = {"q": name}, {"q": label}
        n_w = max(2, n_listed // 4)
        pool = topic_words if n_w <= len(topic_words) // 2 else vocab.ALL_WORDS
        words = rnd.sample(pool, min(n_w, len(pool)))
        col.domain = {"q": words}
        for rid in listed:
            mine = {words[rid % len(words)]}
            if rnd.random() < 0.5:
                mine.add(rnd.choice(words))
            recs[rid]["keywords"] = sorted(mine)
            for w in sorted(mine):
                results.setdefault(((name, w),), []).append(rid)
    elif kind == "filter":
        n_cat = _clamp(math.sqrt(n_listed) / 1.5, 2, 8)
        n_col = _clamp(n_cat - 1, 2, 5)
        fc, fo, fs = _FILTER_NAMES[variant % len(_FILTER_NAMES)]
        col.fields = {"category": fc, "colour": fo, "instock": fs}
        col.labels = {"category": "Category", "colour": "Colour", "instock": "In stock only"}
        col.domain = {
            "category": sorted(rnd.sample(vocab.CATEGORIES, n_cat)),
            "colour": sorted(rnd.sample(vocab.COLOURS, n_col)),
        }
        for rid in listed:
            recs[rid].update(
                category=rnd.choice(col.domain["category"]),
                colour=rnd.choice(col.domain["colour"]),
                instock=rnd.random() < 0.6,
            )
        for c in col.domain["category"]:
            for o in ["any", *col.domain["colour"]]:
                for s in ("0", "1"):
                    hits = [
                        r
                        for r in listed
                        if recs[r]["category"] == c
                        and o in ("any", recs[r]["colour"])
                        and (s == "0" or recs[r]["instock"])
                    ]
                    if hits:
                        results[((fc, c), (fo, o), (fs, s))] = hits
    elif kind == "locate":
        fcity, lcity, freg, lreg = _LOCATE_NAMES[variant % len(_LOCATE_NAMES)]
        col.fields, col.labels = {"city": fcity, "region": freg}, {"city": lcity, "region": lreg}
        cities = rnd.sample(vocab.CITIES, min(len(vocab.CITIES), max(2, n_listed // 6)))
        col.domain = {"city": cities, "region": sorted(vocab.REGIONS)}
        for rid in listed:
            city, region = cities[rid % len(cities)] if rid < len(cities) else rnd.choice(cities)
            recs[rid].update(city=city, region=region)
            results.setdefault(((fcity, city.lower()), (freg, region)), []).append(rid)
    else:
        fa, la, fy, ly = _ARCHIVE_NAMES[variant % len(_ARCHIVE_NAMES)]
        col.fields, col.labels = {"author": fa, "year": fy}, {"author": la, "year": ly}
        authors = rnd.sample(vocab.AUTHORS, min(len(vocab.AUTHORS), max(2, n_listed // 5)))
        y0 = rnd.randrange(1990, 2018)
        col.domain = {"author": authors, "year": [str(y) for y in range(y0, y0 + 6)]}
        for rid in listed:
            a = authors[rid % len(authors)] if rid < len(authors) else rnd.choice(authors)
            recs[rid].update(author=a, year=rnd.choice(col.domain["year"]))
        for a in authors:
            for y in ["any", *col.domain["year"]]:
                hits = [
                    r for r in listed if recs[r]["author"] == a and y in ("any", recs[r]["year"])
                ]
                if hits:
                    results[((fa, a.lower()), (fy, y))] = hits
    col.records = recs
    col.results = results
    # related links: 2 random others each; every related-only record gets a parent link
    related = [
        [x for x in dict.fromkeys(rnd.sample(range(n_rec), min(3, n_rec))) if x != rid][:2]
        for rid in range(n_rec)
    ]
    for rid in range(n_listed, n_rec):
        parent = (
            rnd.randrange(n_listed)
            if rnd.random() < 0.6 or rid == n_listed
            else rnd.randrange(n_listed, rid)
        )
        if rid not in related[parent]:
            related[parent].append(rid)
    col.related = related
    return col


def build_collection(
    seed: int, cid: int, topic: int, hosts: list[int], js: bool, budget: float,
    style: str | None = None,
) -> Collection:
    """A collection whose truth pages (results + details) number about ``budget``; ``style``
    ``"dependent"``: a locate collection with a script-filled city select (see above)."""
    kind = "locate" if style == "dependent" else KINDS[cid % len(KINDS)]
    n = max(3, int(budget * 0.6))
    col = _generate(seed, cid, kind, topic, hosts, js, n, style)
    for _ in range(4):
        size = col.size()
        if abs(size - budget) <= max(2.0, 0.08 * budget):
            break
        n2 = max(3, round(n * budget / size))
        if n2 == n:
            break
        n = n2
        col = _generate(seed, cid, kind, topic, hosts, js, n, style)
    return col
