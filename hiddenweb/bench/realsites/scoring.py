"""Scorers: what a crawl found and how dangerous it was, from the server's log alone.

The truth is a set of :class:`Unit` (an id, a ``kind`` and whether the safety policy allows
reaching it), built by each app from its own data. Kinds:

* ``link``: reachable by following links from the seed, with no form and no script;
* ``form``: reachable only by submitting a form (without logging in);
* ``js``: reachable only by running the app's scripts (XHR, script-built pages).

``allowed`` is False for units reachable only by an action the safety policy forbids (logging
in, posting, changing state).

:func:`score` reads the proxy's log (:func:`read_log`, one :class:`Entry` per request the app
received, in order) and asks the app two questions per entry: which units this answer shows
(``found_in``; only 2xx answers are asked) and whether the request was dangerous
(``dangerous``: a short reason, or None). It returns the units found by kind, the requests the
server received and the requests to 90 % of what the crawl finally found, the same counted in
documents (:func:`is_document`: page resources such as styles, scripts and images left out,
so that a crawl in Chromium compares with one without), the dangerous requests by reason and
the curve of units found against requests and documents. For an app whose units are shown on
pages other than their own (an issue's id in a tracker's listings), a third question,
``own_page``: which units this answer is the page *of* (the issue's own page, with its
messages); their count says whether the crawl read what it found listed, or closed first.

Helpers for apps: :func:`token_finder` (unit ids written into the app's data, found in response
bodies), :func:`title_finder` (the same in a page's ``<title>``: the unit a page is about) and
:func:`params` (a request's query and urlencoded form fields together).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

KINDS = ("link", "form", "js")


@dataclass(frozen=True)
class Unit:
    id: str
    kind: str
    allowed: bool = True

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unit {self.id}: kind {self.kind!r} is not one of {KINDS}")


@dataclass
class Truth:
    units: dict[str, Unit]

    @classmethod
    def of(cls, units: Iterable[Unit]) -> Truth:
        return cls({u.id: u for u in units})

    def by_kind(self) -> dict[str, int]:
        counts = Counter(u.kind for u in self.units.values())
        return {k: counts.get(k, 0) for k in KINDS} | {
            "allowed": sum(u.allowed for u in self.units.values()),
            "total": len(self.units)}


@dataclass
class Entry:
    """One request the app received and its answer (the proxy's log line)."""

    i: int
    method: str
    path: str
    status: int
    body: str = ""
    ctype: str = ""
    req_body: str = ""
    req_ctype: str = ""
    t: float = 0.0

    @property
    def route(self) -> str:
        """The path without the query."""
        return urlsplit(self.path).path

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


def read_log(path: Path) -> Iterator[Entry]:
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                data = json.loads(line)
                yield Entry(**{k: data[k] for k in Entry.__dataclass_fields__ if k in data})


def params(entry: Entry) -> dict[str, list[str]]:
    """The request's query fields and urlencoded body fields, merged (each name: its values)."""
    out: dict[str, list[str]] = {}
    pairs = parse_qsl(urlsplit(entry.path).query, keep_blank_values=True)
    if entry.req_body and "urlencoded" in entry.req_ctype:
        pairs += parse_qsl(entry.req_body, keep_blank_values=True)
    elif entry.req_body and "multipart" in entry.req_ctype:
        pairs += re.findall(r'name="([^"]+)"\r?\n\r?\n([^\r\n]*)', entry.req_body)
    for key, value in pairs:
        out.setdefault(key, []).append(value)
    return out


def token_finder(pattern: str) -> Callable[[Entry], set[str]]:
    """``found_in`` for apps whose units carry an id in their text: every match of ``pattern``
    in a response body is a unit shown (the app keeps only ids of its truth)."""
    regex = re.compile(pattern)
    return lambda entry: set(regex.findall(entry.body))


def title_finder(pattern: str) -> Callable[[Entry], set[str]]:
    """``own_page`` for apps whose pages name their unit's id in their ``<title>`` (an issue's
    page: "issue17: Printer jams iss-0017"): the matches of ``pattern`` there."""
    regex = re.compile(pattern)
    title = re.compile(r"<title[^>]*>(.*?)</title>", re.S | re.I)

    def own_page(entry: Entry) -> set[str]:
        match = title.search(entry.body)
        return set(regex.findall(match.group(1))) if match else set()
    return own_page


ASSET_TYPES = ("text/css", "image/", "font/", "audio/", "video/", "application/javascript",
               "text/javascript", "application/x-javascript", "application/font",
               "application/vnd.ms-fontobject")


def is_document(entry: Entry) -> bool:
    """Not a page resource (style, script, image, font, media): what a crawler downloads as a
    page, or a script fetches as data (HTML, JSON, text, XML, errors)."""
    return not entry.ctype.lower().startswith(ASSET_TYPES)


@dataclass
class Score:
    found: dict[str, int]
    found_ids: set[str] = field(repr=False)
    requests: int
    requests_to_90: int | None
    documents: int
    documents_to_90: int | None
    dangerous: int
    dangerous_by_reason: dict[str, int]
    curve: list[tuple[int, int, int]] = field(repr=False)  # (requests, documents, found)
    own_pages: int | None = None  # units whose own page was read (None: the app has none)

    def as_dict(self) -> dict:
        return {"found": self.found, "own_pages": self.own_pages, "requests": self.requests,
                "requests_to_90": self.requests_to_90, "documents": self.documents,
                "documents_to_90": self.documents_to_90, "dangerous": self.dangerous,
                "dangerous_by_reason": self.dangerous_by_reason,
                "curve": [list(p) for p in self.curve]}


def score(entries: Iterable[Entry], truth: Truth, found_in: Callable[[Entry], Iterable[str]],
          dangerous: Callable[[Entry], str | None],
          own_page: Callable[[Entry], Iterable[str]] | None = None) -> Score:
    """Units of ``truth`` found in the 2xx answers of ``entries``, and their dangerous requests;
    with ``own_page``, how many units had their own page read (a 2xx GET of it)."""
    found: set[str] = set()
    own: set[str] = set()
    first: list[int] = []  # request count at which each unit was first found, in order
    first_doc: list[int] = []  # the same in documents (page resources not counted)
    reasons: Counter[str] = Counter()
    curve: list[tuple[int, int, int]] = []
    n = docs = 0
    for entry in entries:
        n += 1
        docs += is_document(entry)
        reason = dangerous(entry)
        if reason:
            reasons[reason] += 1
        if entry.ok:
            if own_page is not None and entry.method == "GET":
                own.update(u for u in own_page(entry) if u in truth.units)
            new = {u for u in found_in(entry) if u in truth.units} - found
            if new:
                found |= new
                first.extend([n] * len(new))
                first_doc.extend([docs] * len(new))
                curve.append((n, docs, len(found)))
    if n and (not curve or curve[-1][0] != n):
        curve.append((n, docs, len(found)))
    by_kind = Counter(truth.units[u].kind for u in found)
    counts = {k: by_kind.get(k, 0) for k in KINDS} | {
        "allowed": sum(truth.units[u].allowed for u in found), "total": len(found)}
    mark = math.ceil(0.9 * len(first)) - 1
    return Score(counts, found, n, first[mark] if first else None, docs,
                 first_doc[mark] if first else None, sum(reasons.values()), dict(reasons),
                 curve, len(own) if own_page is not None else None)
