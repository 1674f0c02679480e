"""The proving ground's site model: generation, rendering, ground truth and request resolution.

``SiteModel(pages, seed)`` is deterministic: every draw comes from a generator seeded by (seed,
purpose, id) (:func:`hiddenweb.bench.provingground.graph.rng_for`), so a page renders the same
bytes every time and in any order. Pages are rendered on request; only the link graph and the
collections (a few numbers per record) are kept.

Sizes: ``pages`` ≈ number of truth pages, half public, half hidden (like HWDLA's 58,251 /
29,395). The public part follows the lost-sheep protocol (:mod:`.graph`), the hidden part the
HWDLA setting (:mod:`.hidden`). With scripts on (``js``, the default), ``max(1, n / 20)`` of
n collections are added after the others, each a *dependent* form (a city select that a script
fills once a region is chosen: :mod:`.hidden`); they draw from their own random streams, so
every other page and collection is the same as without them (their host pages gain the form),
and their ≈ ``pages / n`` hidden pages each come on top of ``pages``. Truth keys: ``p/<id>``
(public, home = ``p/0``), ``c<cid>/<kind>?<canonical query>[&page=N]`` (result pages),
``c<cid>/item/<rid>`` (details).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from urllib.parse import parse_qsl, urlsplit

from hiddenweb.bench.provingground import html as H
from hiddenweb.bench.provingground import vocab
from hiddenweb.bench.provingground.graph import PublicGraph, build_public, rng_for
from hiddenweb.bench.provingground.hidden import PAGE_SIZE, Canon, Collection, build_collection

DEMO_PAGES = 300
DEMO_SEED = 7
PAGES_PER_COLLECTION = 250  # collections = max(5, pages / 250)
JS_COLLECTION_EVERY = 5  # every 5th collection's form exists only after JavaScript runs
DEPENDENT_EVERY = 20  # one dependent (script-filled select) collection per 20 others, at least 1
ROBOTS_TXT = "User-agent: *\nDisallow: /private/\nDisallow: /__hw/\n"
OFFSITE = ("http://offsite.invalid/", "https://example.org/")

_PUB = re.compile(r"^/(p|private)/(\d+)$")
_COLL = re.compile(r"^/c/(\d+)/(search|filter|locate|archive)$")
_ITEM = re.compile(r"^/c/(\d+)/item/(\d+)$")
_STEP = re.compile(r"^/c/(\d+)/step$")
_OPTIONS = re.compile(r"^/c/(\d+)/options$")
_HTML = {"Content-Type": "text/html; charset=utf-8"}


class SiteModel:
    def __init__(
        self,
        pages: int = 1000,
        seed: int = 1,
        forms: bool = True,
        js: bool = True,
        traps: bool = True,
        dependent: bool | None = None,
    ) -> None:
        self.pages, self.seed, self.forms, self.js, self.traps = pages, seed, forms, js, traps
        self.dependent = js if dependent is None else dependent  # script-filled select forms
        n_public = max(10, pages - pages // 2)
        self._truth: list[dict] | None = None
        self.graph: PublicGraph = build_public(n_public, seed)
        g = self.graph
        self.collections: list[Collection] = []
        self.host_forms: dict[int, list[int]] = {}
        self.main_host_pages: list[int] = []  # where a main form page may be (see below)
        if forms:
            n_coll = max(5, round(pages / PAGES_PER_COLLECTION))
            budget = max(4, pages - n_public) / n_coll
            rnd = rng_for(seed, "hosts")
            candidates = [u for u in range(1, g.n_core) if u not in g.slow]
            # The main form page of each collection is a page 1–2 links from home, as on real
            # sites (search and filter pages sit in the navigation), so that most hidden pages
            # lie 2–3 actions from the seed: the HWDLA paper's "most hidden pages lie at depth 2"
            # (§4, fig. 6). Copies of the form go on pages anywhere in the site.
            depth = _link_depths(g)
            shallow = [u for u in candidates if depth.get(u, 99) <= 2] or candidates
            self.main_host_pages = shallow
            for cid in range(n_coll):
                main = shallow[rnd.randrange(len(shallow))]
                copies = rnd.sample(candidates, min(len(candidates), rnd.randint(1, 3)))
                hosts = [main, *(h for h in copies if h != main)]
                col = build_collection(
                    seed,
                    cid,
                    g.topic[hosts[0]],
                    hosts,
                    js and cid % JS_COLLECTION_EVERY == JS_COLLECTION_EVERY - 1,
                    budget,
                )
                self.collections.append(col)
                for h in hosts:
                    self.host_forms.setdefault(h, []).append(cid)
            # the dependent-select collections: their own random streams (see the docstring)
            drnd = rng_for(seed, "dependent-hosts")
            for j in range(max(1, n_coll // DEPENDENT_EVERY) if self.dependent else 0):
                cid = n_coll + j
                main = shallow[drnd.randrange(len(shallow))]
                copies = drnd.sample(candidates, min(len(candidates), drnd.randint(0, 1)))
                hosts = [main, *(h for h in copies if h != main)]
                col = build_collection(seed, cid, g.topic[main], hosts, False, budget,
                                       style="dependent")
                self.collections.append(col)
                for h in hosts:
                    self.host_forms.setdefault(h, []).append(cid)

    # --- routing (shared by render and resolve) -------------------------------------------------
    def _route(self, path: str, params: dict[str, str]) -> tuple:
        g = self.graph
        if path == "/":
            return ("public", 0)
        m = _PUB.match(path)
        if m:
            u = int(m.group(2))
            if (
                m.group(1) == "p"
                and 1 <= u < g.n_core + g.n_js
                or m.group(1) == "private"
                and g.is_private(u)
            ):
                return ("public", u)
            return ("notfound",)
        m = _COLL.match(path)
        if m:
            cid = int(m.group(1))
            if cid >= len(self.collections) or self.collections[cid].kind != m.group(2):
                return ("notfound",)
            col = self.collections[cid]
            if params.get("csrf") not in col.tokens.values():
                return ("badtoken", cid)
            canon = col.canon(params)
            try:
                pg = int(params.get("page") or 1)
            except ValueError:
                pg = 0
            if canon is None or not 1 <= pg <= col.n_pages(canon):
                return ("noresults", cid)
            return ("result", cid, canon, pg)
        m = _STEP.match(path)
        if m:
            cid = int(m.group(1))
            if cid >= len(self.collections) or not self.collections[cid].wizard:
                return ("notfound",)
            col = self.collections[cid]
            if params.get("csrf") not in col.tokens.values():
                return ("badtoken", cid)
            region = (params.get(col.fields["region"]) or "").strip().upper()
            if region not in col.domain["region"]:
                return ("noresults", cid)
            return ("step", cid, region)
        m = _OPTIONS.match(path)
        if m:
            cid = int(m.group(1))
            if cid >= len(self.collections) or self.collections[cid].style != "dependent":
                return ("notfound",)
            return ("options", cid, (params.get("region") or "").strip().upper())
        m = _ITEM.match(path)
        if m:
            cid, rid = int(m.group(1)), int(m.group(2))
            if cid < len(self.collections) and rid < len(self.collections[cid].records):
                return ("detail", cid, rid)
            return ("notfound",)
        if path == "/robots.txt":
            return ("robots",)
        if self.traps:
            if path in H.TRAP_FORMS:
                return ("trap", path)
            if path == "/calendar":
                return ("calendar", params.get("month") or "2026-11")
            if path == "/catalog":
                return ("catalog",)
        if path == "/error/500":
            return ("error",)
        if path in ("/loop/a", "/loop/b"):
            return ("redirect", "/loop/b" if path == "/loop/a" else "/loop/a")
        return ("notfound",)

    def _key(self, route: tuple) -> str | None:
        if route[0] == "public":
            return f"p/{route[1]}"
        if route[0] == "result":
            return self.collections[route[1]].key(route[2], route[3])
        if route[0] == "detail":
            return self.collections[route[1]].detail_key(route[2])
        if route[0] == "step":
            return self.collections[route[1]].step_key(route[2])
        return None

    @staticmethod
    def _params(query: str, data) -> dict[str, str]:
        params: dict[str, str] = {}
        pairs = parse_qsl(query, keep_blank_values=True)
        if isinstance(data, dict):
            pairs += list(data.items())
        elif data:
            pairs += list(data)
        for k, v in pairs:
            params.setdefault(k, v)  # first value wins, as in the server
        return params

    def resolve(self, method: str, url: str, data=None) -> str | None:
        """Truth key of the page a request gets (any synonym, case or param order), else None."""
        parts = urlsplit(url)
        return self._key(self._route(parts.path or "/", self._params(parts.query, data)))

    def delay(self, path_and_query: str) -> float:
        """Seconds the server waits before answering (the slow pages), 0 for most."""
        m = _PUB.match(urlsplit(path_and_query).path)
        return self.graph.slow.get(int(m.group(2)), 0.0) if m and m.group(1) == "p" else 0.0

    # --- rendering ---------------------------------------------------------------------------
    def render(
        self,
        method: str,
        path_and_query: str,
        body: bytes | None = None,
        headers: dict | None = None,
    ) -> tuple[int, dict[str, str], bytes]:
        parts = urlsplit(path_and_query)
        data = None
        if method.upper() == "POST" and body:
            data = parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)
        route = self._route(parts.path or "/", self._params(parts.query, data))
        kind = route[0]
        if kind == "public":
            return 200, dict(_HTML), self._public_page(route[1])
        if kind == "result":
            return 200, dict(_HTML), self._result_page(*route[1:])
        if kind == "detail":
            return 200, dict(_HTML), self._detail_page(*route[1:])
        if kind == "step":
            col = self.collections[route[1]]
            return 200, dict(_HTML), H.page(
                f"Step 2 of 2: {vocab.REGIONS[route[2]]}",
                f"<h1>Find in {H.escape(vocab.REGIONS[route[2]])}</h1>",
                H.node_html(H.step_form(col, route[2])),
                H.a(self.graph.url(col.hosts[0]), "Start again"),
                H.a("/", "Home"),
            )
        if kind == "options":  # a dependent select's options (JSON; not a page)
            col = self.collections[route[1]]
            cities = col.cities_in(route[2])
            return 200, {"Content-Type": "application/json"}, json.dumps(
                [[c, c] for c in cities]).encode()
        if kind == "noresults":
            col = self.collections[route[1]]
            return (
                200,
                dict(_HTML),
                H.page(
                    "No results",
                    "<h1>No results</h1>",
                    "<p>Nothing matched your search.</p>",
                    H.a(self.graph.url(col.hosts[0]), "New search"),
                    H.a("/", "Home"),
                ),
            )
        if kind == "badtoken":
            return (
                400,
                dict(_HTML),
                H.page(
                    "Bad request",
                    "<h1>400 Bad request</h1>",
                    "<p>Invalid or missing form token.</p>",
                ),
            )
        if kind == "robots":
            return 200, {"Content-Type": "text/plain; charset=utf-8"}, ROBOTS_TXT.encode()
        if kind == "trap":
            return 200, dict(_HTML), H.trap_page(route[1], method.upper())
        if kind == "calendar":
            status, page = H.calendar_page(route[1])
            return status, dict(_HTML), page
        if kind == "catalog":
            return 200, dict(_HTML), H.catalog_page(self._params(parts.query, None))
        if kind == "error":
            return 500, dict(_HTML), H.page("Server error", "<h1>500 Internal Server Error</h1>")
        if kind == "redirect":
            return 302, {**_HTML, "Location": route[1]}, H.page("Moved", H.a(route[1], "Moved"))
        return 404, dict(_HTML), H.page("Not found", "<h1>404 Not found</h1>", H.a("/", "Home"))

    def _public_page(self, u: int) -> bytes:
        g = self.graph
        nav = [H.a("/", "Home")]
        if u == 0 and self.traps:
            nav += [
                H.a("/login", "Log in"),
                H.a("/contact", "Contact us"),
                H.a("/account/delete", "Delete account"),
                H.a("/calendar?month=2026-11", "Events calendar"),
                H.a("/catalog", "Shop"),
            ]
        items = []
        for v in g.out[u]:
            link = (g.url(v), g.label(u, v))
            if self.js and (u, v) in g.js_edges:
                items.append(H.scripted(("a", {"href": link[0]}, link[1]), f"jl-{v}"))
            else:
                items.append(H.a(*link))
        rnd = rng_for(self.seed, "extras", u)
        if u == 0 or rnd.random() < 0.04:
            items.append(H.a(f"/p/{g.n_nodes + rnd.randrange(10**6)}", "Old page"))
        if u == 0 or rnd.random() < 0.03:
            for base in OFFSITE if u == 0 else [rnd.choice(OFFSITE)]:
                items.append(H.a(f"{base}page{u}", "Partner site"))
        if u == 0:
            items += [H.a("/error/500", "Status"), H.a("/loop/a", "Archive (moved)")]
        forms = []
        for cid in self.host_forms.get(u, ()):
            col = self.collections[cid]
            forms.append(f"<h2>Search the {vocab.TOPIC_NAMES[col.topic]} collection {cid}</h2>")
            forms.append(H.render_node(H.collection_form(col, u), col.js, f"fs-c{cid}"))
            if col.style == "xhr":
                forms.append(H.xhr_script(col))
            elif col.style == "dependent":
                forms.append(H.dependent_script(col))
        return H.page(
            g.title(u),
            "<nav>" + " | ".join(nav) + "</nav>",
            f"<h1>{H.escape(g.title(u))}</h1>",
            f"<p>{' '.join(g.text(u))}</p>",
            *forms,
            "<h2>Links</h2>",
            H.ul(items),
        )

    def _result_page(self, cid: int, canon: Canon, pg: int) -> bytes:
        col = self.collections[cid]
        hits = col.results[canon]
        shown = hits[(pg - 1) * PAGE_SIZE : pg * PAGE_SIZE]
        n = col.n_pages(canon)
        desc = ", ".join(v for _, v in canon)
        pager = (
            [
                H.a(col.result_url(canon, k), str(k)) if k != pg else f"<b>{k}</b>"
                for k in range(1, n + 1)
            ]
            if n > 1
            else []
        )
        if pg < n:
            pager.append(H.a(col.result_url(canon, pg + 1), "Next »"))
        return H.page(
            f"Results for {desc} (page {pg})",
            f"<h1>Results for {H.escape(desc)}</h1>",
            f"<p>{len(hits)} items found, page {pg} of {n}.</p>",
            H.ul([H.a(col.detail_url(r), col.records[r]["title"]) for r in shown]),
            "<nav>" + " ".join(pager) + "</nav>",
            H.a(self.graph.url(col.hosts[0]), "New search"),
            H.a("/", "Home"),
        )

    def _detail_page(self, cid: int, rid: int) -> bytes:
        col = self.collections[cid]
        rec = col.records[rid]
        attrs = [
            f"{k}: {H.escape(', '.join(v) if isinstance(v, list) else str(v))}"
            for k, v in rec.items()
            if k not in ("title", "text")
        ]
        return H.page(
            rec["title"],
            f"<h1>{H.escape(rec['title'])}</h1>",
            H.ul(attrs),
            f"<p>{H.escape(rec['text'])}</p>",
            "<h2>Related</h2>",
            H.ul([H.a(col.detail_url(r), col.records[r]["title"]) for r in col.related[rid]]),
            H.a(self.graph.url(col.hosts[0]), "Back to search"),
            H.a("/", "Home"),
        )

    # --- truth -------------------------------------------------------------------------------
    def script_built_pages(self) -> set[str]:
        """Truth keys of the pages a render shows more than plain HTTP does: a public page
        with a link or a form a script builds (a render adds a link or a form to follow).
        Not the pages of ``xhr`` and ``dependent`` forms alone: their scripts act on submit or
        on a change, and a render of the page adds nothing (the form's submissions go to the
        browser: ``hiddenweb.forms``). Empty without scripts."""
        if not self.js:
            return set()
        g = self.graph
        built = {u for u, _ in g.js_edges}
        built |= {u for u, cids in self.host_forms.items()
                  if any(self.collections[cid].js for cid in cids)}
        return {f"p/{u}" for u in built}

    def truth(self) -> Iterator[dict]:
        """One dict per truth page (see :mod:`hiddenweb.bench.provingground.truth`)."""
        from hiddenweb.bench.provingground.truth import compute_truth

        if self._truth is None:
            self._truth = compute_truth(self)
        for d in self._truth:  # copies: callers may change what they get
            a = d["action"]
            yield {**d, "action": a and {**a, "data": [list(kv) for kv in a["data"]]}}


def _link_depths(g: PublicGraph) -> dict[int, int]:
    """Depth of each public page from home over plain (script-free) links."""
    depth = {0: 0}
    frontier = [0]
    while frontier:
        nxt = []
        for u in frontier:
            for v in g.out[u]:
                if v not in depth and (u, v) not in g.js_edges:
                    depth[v] = depth[u] + 1
                    nxt.append(v)
        frontier = nxt
    return depth
