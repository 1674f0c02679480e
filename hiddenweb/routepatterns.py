"""The views a single-page app's router declares: :class:`RoutePatterns`.

A hash-routed app (:mod:`hiddenweb.routes`) declares its views in its scripts as a router's
path patterns, React Router's, Vue Router's, Express-style: ``"/experiments/:experimentId/runs"``,
``"/items/:id/details"``, ``"/runs/:runUuid/artifacts/*"``. A view the app reaches only by a
control that sets the route, or by a mode a person switches, is named nowhere but there: no link
gives it, and a crawler that renders the app's links never shows it. The quoted paths of a
script are URL sources already (:func:`~hiddenweb.urlsources.script_urls`), but a pattern with a
parameter is no URL and is left out there.

Contract: with the lab knob ``route_patterns`` (off: its measurement is in
docs/design-notes.md), hash routes and URL guesses on, the patterns of the scripts a render
loaded (:func:`route_patterns`: quoted, absolute, at least one ``:name`` segment; the browser's
guard reads each script once, ``meta["hiddenweb_route_patterns"]``) are kept for the render's
document. A hash route the crawl meets (a page read, a link) gives,
for each pattern it *extends*, the route the pattern names: the route (or one of its leading
parts) matches the pattern's first segments, a literal segment the same, a parameter bound to an
id segment (a digit run, an opaque key: :func:`~hiddenweb.pagetext.fold_path`'s ``{n}`` and
``{id}``; a word is another view, not a record), and the rest of the pattern is literal
segments, with a trailing ``*`` or optional parameter left out. ``#/experiments/1`` and
``"/experiments/:experimentId/runs"`` give ``#/experiments/1/runs``; a route met before the
pattern is given when the pattern is learned. The spider requests each as a guessed link
(``hiddenweb_source`` ``route-pattern``, judged by the safety policy as any link); the render
gate and the DLA learn the view's template as any route's. With the lab knob ``route_siblings``
(on), a pattern's view is given under the first :data:`FIRST_RECORDS` records met only, and under
the others by that rule, once a render of it added something: an app's table names many views
(MLflow's names eleven under each experiment), and most show nothing under any record.

Not the other patterns: one whose unbound parameters are not the route's (``/settings/:section``
from ``#/experiments/1``: no value is known), nor combinations of values met on different
routes (the records' structure is the route's). Not for paths: as with
:mod:`hiddenweb.routesiblings`, a server-side site links its pages, and a guess there is a
download a 404 may answer. Bounds: :data:`MAX_PATTERNS` per document, :data:`MAX_BODY`
characters of a script read, :data:`MAX_GIVEN` routes given per pattern.
"""

from __future__ import annotations

import re
from collections import defaultdict

from hiddenweb.pagetext import fold_path
from hiddenweb.routes import route_parts

MAX_PATTERNS = 500  # patterns kept per document (the first learned)
MAX_GIVEN = 200  # routes given per pattern
#: ... with the siblings rule on (hiddenweb.routesiblings): the first records' only; the others
#: are given the view by that rule once a render of it added something
FIRST_RECORDS = 2
MAX_BODY = 30_000_000  # characters of a script read for patterns
_LITERAL = r"[A-Za-z0-9_.~\-]+"
_PARAM = r":[A-Za-z_]\w*\??"
#: a quoted absolute router pattern with a parameter: ``"/a/:id"``, ``'/a/:id/b'``, ``"/a/:id/*"``
_PATTERN = re.compile(
    rf"""(?P<q>["'`])(?P<s>/(?:{_LITERAL}/)*{_PARAM}(?:/(?:{_LITERAL}|{_PARAM}))*(?:/\*)?/?)"""
    r"""(?P=q)""")
_JOINED_AFTER = re.compile(r"\s*\+")
_JOINED_BEFORE = re.compile(r"\+\s*$")


def route_patterns(text: str) -> list[str]:
    """The router path patterns quoted in script ``text``, each once, in text order: absolute,
    with a ``:name`` parameter segment (``"/items/:id/details"``); not a relative child route
    (``":id"``, ``"items/:id"``: its parent is the router's nesting, not the string), nor a
    string joined to another with ``+``."""
    text = text[:MAX_BODY]
    out: dict[str, None] = {}
    for m in _PATTERN.finditer(text):
        if _JOINED_AFTER.match(text, m.end()) \
                or _JOINED_BEFORE.search(text, max(0, m.start() - 20), m.start()):
            continue  # a part of a string built with +, not the whole pattern
        out[m.group("s").rstrip("/")] = None
    return list(out)


def _is_param(segment: str) -> bool:
    return segment.startswith(":")


def _is_id(segment: str) -> bool:
    return bool(segment) and fold_path(segment) in ("{n}", "{id}")


class RoutePatterns:
    """The router patterns of each document and the hash routes met (module docstring);
    :meth:`learn` and :meth:`met` return the routes they make known, as full URLs."""

    def __init__(self, max_given: int = MAX_GIVEN, max_patterns: int = MAX_PATTERNS) -> None:
        self.max_given, self.max_patterns = max_given, max_patterns
        #: document -> its patterns, as segment tuples, in the order learned
        self.patterns: dict[str, dict[tuple[str, ...], int]] = defaultdict(dict)
        #: document -> (lead, segments) of the hash routes met, in the order met
        self.routes: dict[str, dict[tuple[str, tuple[str, ...]], None]] = defaultdict(dict)
        self.known: set[str] = set()  # routes met or given, without their query

    def learn(self, document: str, patterns: list[str]) -> list[str]:
        """Patterns of a script ``document``'s render loaded; the routes they give from the
        routes of ``document`` met so far, not met nor given before."""
        document = document.partition("#")[0]
        kept = self.patterns[document]
        new = []
        for pattern in patterns:
            segments = tuple(s for s in pattern.split("/") if s)
            if segments and segments not in kept and len(kept) < self.max_patterns:
                kept[segments] = 0
                new.append(segments)
        out: list[str] = []
        for lead, segments in list(self.routes[document]):
            out += self._give(document, lead, segments, new)
        return out

    def met(self, url: str) -> list[str]:
        """Record hash route ``url``; the routes the patterns of its document give from it, not
        met nor given before. Any other URL: nothing."""
        parts = route_parts(url)
        if parts is None:
            return []
        document, lead, segments = parts
        self.known.add(self._url(document, lead, segments))
        if not segments or (lead, segments) in self.routes[document]:
            return []
        self.routes[document][(lead, segments)] = None
        return self._give(document, lead, segments, list(self.patterns.get(document, ())))

    def _give(self, document: str, lead: str, segments: tuple[str, ...],
              patterns: list[tuple[str, ...]]) -> list[str]:
        out: list[str] = []
        kept = self.patterns[document]
        for pattern in patterns:
            if kept.get(pattern, 0) >= self.max_given:
                continue
            route = self.extend(segments, pattern)
            if route is None:
                continue
            url = self._url(document, lead, route)
            if url not in self.known:
                self.known.add(url)
                kept[pattern] += 1
                out.append(url)
        return out

    @staticmethod
    def extend(segments: tuple[str, ...], pattern: tuple[str, ...]) -> tuple[str, ...] | None:
        """The route ``pattern`` names from route ``segments`` (module docstring), or None: the
        longest leading part of ``segments`` that matches the pattern's first segments with at
        least one parameter bound, then the pattern's literal rest (a trailing ``*`` and
        optional parameters left out)."""
        rest = list(pattern)
        while rest and (rest[-1] == "*" or (_is_param(rest[-1]) and rest[-1].endswith("?"))):
            rest.pop()
        for k in range(min(len(segments), len(rest)), 0, -1):
            head, tail = rest[:k], rest[k:]
            if not any(_is_param(p) for p in head) or any(_is_param(p) or p == "*"
                                                           for p in tail):
                continue
            if all(_is_id(s) if _is_param(p) else s == p
                   for s, p in zip(segments[:k], head, strict=True)):
                return (*segments[:k], *tail)
        return None

    @staticmethod
    def _url(document: str, lead: str, segments: tuple[str, ...]) -> str:
        return f"{document}#{lead}{'/'.join(segments)}"
