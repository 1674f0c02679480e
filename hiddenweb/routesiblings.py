"""Sibling views of a single-page app's records: :class:`RouteSiblings`.

A single-page app routed on the hash (:mod:`hiddenweb.routes`) keys its records by a route
segment and shows each record's views under it: ``#/experiments/1/runs``,
``#/experiments/1/traces``, ``#/projects/7/settings``. The views are often reached by controls
that set the route (a tab strip, a view switch, an app that redirects a record to the view it
last showed), not by links, and which view a record opens on can differ record by record: one
record's page shows a link to its ``/runs`` view, its siblings' pages open another view and name
it nowhere. A crawler that renders each record then reaches each view only where the app
happened to show it.

Contract: with the lab knob ``route_siblings`` (on) and hash routes on, every hash route the
crawl meets (a page read, a link, a URL a render found) is split at each of its id segments
(a digit run, an opaque key: :func:`~hiddenweb.pagetext.fold_path`'s ``{n}`` and ``{id}``)
into a parent (the segments before it, as written, with the ids before it), the id, and a view
(the segments after it: none of them an id, at least one). For each parent, the ids met and the
views met are kept, and which views are *proven*: a render of the view under some record added
something to follow (the render gate's verdict, :data:`~hiddenweb.pagetext.RENDER_ADDED_META`;
a view that shows nothing new under one record is not asked for under the others). Each pair of
an id and a proven view under the same parent of the same document gives the route
``#/parent/id/view`` (without a query: a route's query is a view's options,
:func:`~hiddenweb.routes.route_page`), which the spider requests as a guessed link
(``hiddenweb_source`` ``sibling``; it teaches nothing to the site's public links, and the safety
policy judges it as any link). At most ``max_views`` views and ``max_ids`` ids per parent are
kept (the first met), so one parent gives at most their product.

Not for paths (``/items/7/edit``): a server-side site links its records' views, and a guess
there is a download a 404 may answer; a hash route is a render of the document the crawl has,
and a route the app does not know shows its shell, judged idle by the render gate. This is the
guess a tester makes by hand (the same view under another record's id), made only of names the
app itself showed.
"""

from __future__ import annotations

from collections import defaultdict

from hiddenweb.pagetext import fold_path
from hiddenweb.routes import route_parts

MAX_VIEWS = 12  # views kept per parent (the first met)
MAX_IDS = 50  # ids kept per parent (the first met)
#: a parent: its document, the route's lead (``/``, ``!/``, ``!``) and the segments before the id
_Parent = tuple[str, str, tuple[str, ...]]


def _is_id(segment: str) -> bool:
    return bool(segment) and fold_path(segment) in ("{n}", "{id}")


class RouteSiblings:
    """The ids and views met under each parent of a document's hash routes, and the views proven
    (module docstring); :meth:`met` and :meth:`proven` return the sibling routes they make
    known."""

    def __init__(self, max_views: int = MAX_VIEWS, max_ids: int = MAX_IDS) -> None:
        self.max_views, self.max_ids = max_views, max_ids
        #: (document, lead, parent segments) -> ids / views met, in the order met (a view
        #: maps to whether it was proven)
        self.ids: dict[_Parent, dict[str, None]] = defaultdict(dict)
        self.views: dict[_Parent, dict[tuple[str, ...], bool]] = defaultdict(dict)
        self.known: set[str] = set()  # routes met or given, without their query

    def met(self, url: str) -> list[str]:
        """Record hash route ``url`` (a page read, a link): its ids and views; the sibling
        routes (full URLs) it makes known, not met nor given before: a new id's proven views.
        Any other URL: nothing."""
        return self._record(url, proven=False)

    def proven(self, url: str) -> list[str]:
        """Hash route ``url``'s render added something: its views are proven; the sibling routes
        this makes known (each proven view under every id met), not met nor given before."""
        return self._record(url, proven=True)

    def _record(self, url: str, proven: bool) -> list[str]:
        parts = route_parts(url)
        if parts is None:
            return []
        document, lead, found = parts
        segments = list(found)
        self.known.add(self._url(document, lead, segments))
        out: list[str] = []
        for k, segment in enumerate(segments):
            if not _is_id(segment):
                continue
            key = (document, lead, tuple(segments[:k]))
            ids, views = self.ids[key], self.views[key]
            view = tuple(segments[k + 1:])
            pairs: list[tuple[str, tuple[str, ...]]] = []
            if segment not in ids and len(ids) < self.max_ids:
                ids[segment] = None
                pairs += [(segment, v) for v, sure in views.items() if sure]
            if view and not any(_is_id(s) for s in view) \
                    and (view in views or len(views) < self.max_views):
                if proven and not views.get(view):
                    pairs += [(i, view) for i in ids]
                views[view] = views.get(view, False) or proven
            for id_, v in pairs:
                sibling = self._url(document, lead, [*segments[:k], id_, *v])
                if sibling not in self.known:
                    self.known.add(sibling)
                    out.append(sibling)
        return out

    @staticmethod
    def _url(document: str, lead: str, segments: list[str]) -> str:
        return f"{document}#{lead}{'/'.join(segments)}"

