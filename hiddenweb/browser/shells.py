"""The hash routes of one app shell reached under another query of its document.

A single-page app routed on the hash is one document, its *shell*, that the server answers the
same whatever the document's query: ``/?q=x`` is ``/`` again, and the app's router reads only
the fragment. A GET form of the shell, sent by the browser's own navigation (HTML's submission
replaces the action's query with the form's fields and drops the fragment), lands on
``/?q=x``, and every route link of that render (``/?q=x#/runs/7``) is a page the crawl had as
``/#/runs/7`` already. Each was rendered again, once per value of the form: in an MLflow crawl
a third of the route renders were under a tag filter's answers.

:class:`RouteShells` learns, from the HTML document Chromium received for each route it
rendered (:meth:`RouteShells.note`, the render gate's ``judged_direct``), which documents are
one shell: two queries of one path answered with the same bytes. From then on a route under
such a path is one page whatever the document's query (:meth:`RouteShells.claim`, asked as a
browser request starts: a route whose page was claimed under another query of its shell is
withdrawn, stat ``hiddenweb/browser/routes_same_shell``). A shell that differs by query (a
token, a server-side language) is never folded, and an app whose script reads the document's
query to choose what it shows is the one that loses views: its routes under a query of an
identical shell are read once (lab knob ``browser_route_shells``, docs/design-notes.md).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from urllib.parse import urlsplit

from hiddenweb.routes import route_of

MAX_DOCUMENTS = 10_000  # documents whose shell hash is kept
MAX_CLAIMS = 200_000  # route pages claimed


def _split(url: str) -> tuple[str, str, str] | None:
    """(document without query, its query, route without its own query) of a hash route."""
    route = route_of(url)
    if route is None:
        return None
    document = url.split("#", 1)[0]
    parts = urlsplit(document)
    return parts._replace(query="").geturl(), parts.query, route.split("?", 1)[0]


class RouteShells:
    """Which documents are one app shell, and the route pages claimed under each (module)."""

    def __init__(self) -> None:
        self.noted: set[str] = set()  # documents (with their query) whose HTML was hashed
        self.by_path: dict[str, dict[bytes, set[str]]] = defaultdict(lambda: defaultdict(set))
        self.blind: set[str] = set()  # paths whose queries are answered with one shell
        self.claims: dict[tuple[str, str], set[str]] = defaultdict(set)  # (path, route): queries

    def note(self, url: str, document: bytes) -> None:
        """The HTML document Chromium received for route ``url``. Two queries of one path
        answered with the same bytes make the path's routes one page whatever its query."""
        split = _split(url)
        if split is None:
            return
        path, query, _ = split
        key = f"{path}?{query}"
        if key in self.noted or len(self.noted) >= MAX_DOCUMENTS:
            return
        self.noted.add(key)
        queries = self.by_path[path][hashlib.sha1(document).digest()[:8]]
        queries.add(query)
        if len(queries) > 1:
            self.blind.add(path)

    def claim(self, url: str) -> bool:
        """Whether route ``url`` is rendered: False when its path is one shell whatever the
        query and its route's page was claimed under another query of it; else it is claimed
        (True). Any URL but a hash route is rendered."""
        split = _split(url)
        if split is None:
            return True
        path, query, route = split
        queries = self.claims.get((path, route))
        if path in self.blind and queries and query not in queries:
            return False
        if len(self.claims) < MAX_CLAIMS or queries is not None:
            self.claims[(path, route)].add(query)
        return True
