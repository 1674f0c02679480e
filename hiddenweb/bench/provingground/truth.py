"""Ground truth of a proving-ground site: every page reachable from home by some action chain.

A breadth-first search over the site's actions — link clicks (public links, pagination, result →
detail, detail → related detail) and form submissions (one per useful query of each form on each
page that carries it) — gives each page its ``depth`` (actions on the shortest chain from home)
and ``action`` (the last action of that chain, a request that returns the page). A second search
that skips script-built links and forms decides ``needs_browser``. Neighbours are visited in
page order, so ties are broken the same way every time; among shortest chains, one without
script-built steps is preferred when there is one.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hiddenweb.bench.provingground.site import SiteModel

STEP_HOST = -1  # the "form host" of a result reached from a wizard's step page


class _Index:
    """Integer ids for truth pages: public ids first, then hidden pages collection by collection."""

    def __init__(self, site: SiteModel) -> None:
        self.site = site
        self.n_pub = site.graph.n_nodes
        # ("r", cid, canon, page) | ("d", cid, rid) | ("s", cid, region)
        self.hidden: list[tuple] = []
        self.step: dict[tuple[int, str], int] = {}  # (cid, region) → id of a wizard's step page
        self.first: dict[tuple[int, tuple], int] = {}  # (cid, canon) → id of page 1
        self.detail0: list[int] = []  # id of record 0 of each collection
        for col in site.collections:
            for region in col.regions():
                self.step[(col.cid, region)] = self.n_pub + len(self.hidden)
                self.hidden.append(("s", col.cid, region))
            for canon in col.results:
                self.first[(col.cid, canon)] = self.n_pub + len(self.hidden)
                self.hidden += [("r", col.cid, canon, k) for k in range(1, col.n_pages(canon) + 1)]
            self.detail0.append(self.n_pub + len(self.hidden))
            self.hidden += [("d", col.cid, rid) for rid in range(len(col.records))]

    def __len__(self) -> int:
        return self.n_pub + len(self.hidden)

    def edges(self, i: int, with_js: bool):
        """(target id, form host or None, js) for the actions of page ``i``."""
        site = self.site
        g = site.graph
        if i < self.n_pub:
            js_edges = g.js_edges if site.js else ()
            for v in g.out[i]:
                js = (i, v) in js_edges
                if with_js or not js:
                    yield v, None
            for cid in site.host_forms.get(i, ()):
                col = site.collections[cid]
                if col.scripted and not with_js:
                    continue
                if col.wizard:  # the wizard's first step
                    for region in col.regions():
                        yield self.step[(cid, region)], i
                    continue
                for canon in col.results:
                    yield self.first[(cid, canon)], i
            return
        node = self.hidden[i - self.n_pub]
        col = site.collections[node[1]]
        if node[0] == "s":  # step 2: the city, with the region as hidden state
            region_field = col.fields["region"]
            for canon in col.results:
                if dict(canon)[region_field] == node[2]:
                    yield self.first[(col.cid, canon)], STEP_HOST
            return
        if node[0] == "r":
            from hiddenweb.bench.provingground.hidden import PAGE_SIZE

            _, cid, canon, pg = node
            base = self.detail0[cid]
            for r in col.results[canon][(pg - 1) * PAGE_SIZE : pg * PAGE_SIZE]:
                yield base + r, None
            first = self.first[(cid, canon)]
            for k in range(1, col.n_pages(canon) + 1):
                if k != pg:
                    yield first + k - 1, None
        else:
            base = self.detail0[node[1]]
            for r in col.related[node[2]]:
                yield base + r, None

    def bfs(self, with_js: bool) -> tuple[list[int], list[int], list[int | None]]:
        n = len(self)
        depth = [-1] * n
        parent = [-1] * n
        host: list[int | None] = [None] * n
        depth[0] = 0
        queue = deque([0])
        while queue:
            i = queue.popleft()
            d = depth[i] + 1
            for j, h in self.edges(i, with_js):
                if depth[j] < 0:
                    depth[j], parent[j], host[j] = d, i, h
                    queue.append(j)
        return depth, parent, host

    # --- description of a page ---------------------------------------------------------------
    def key(self, i: int) -> str:
        if i < self.n_pub:
            return f"p/{i}"
        node = self.hidden[i - self.n_pub]
        col = self.site.collections[node[1]]
        if node[0] == "s":
            return col.step_key(node[2])
        return col.key(node[2], node[3]) if node[0] == "r" else col.detail_key(node[2])

    def url(self, i: int) -> str:
        if i < self.n_pub:
            return self.site.graph.url(i)
        node = self.hidden[i - self.n_pub]
        col = self.site.collections[node[1]]
        if node[0] == "s":
            return col.step_url(node[2], col.hosts[0])
        return col.truth_url(node[2], node[3]) if node[0] == "r" else col.detail_url(node[2])

    def link_url(self, i: int) -> str:
        """The href that links to page ``i``."""
        if i < self.n_pub:
            return self.site.graph.url(i)
        node = self.hidden[i - self.n_pub]
        col = self.site.collections[node[1]]
        if node[0] == "s":
            return col.step_url(node[2], col.hosts[0])
        return col.result_url(node[2], node[3]) if node[0] == "r" else col.detail_url(node[2])

    def kind(self, i: int) -> str:
        if i < self.n_pub:
            return "public"
        return {"r": "result", "d": "detail", "s": "step"}[self.hidden[i - self.n_pub][0]]


def compute_truth(site: SiteModel) -> list[dict]:
    idx = _Index(site)
    depth, parent, host = idx.bfs(with_js=True)
    static_depth, static_parent, static_host = (
        idx.bfs(with_js=False) if site.js else (depth, parent, host)
    )
    for i in range(len(idx)):
        # a shortest chain without scripts exists: report that one (replayable without a browser)
        if static_depth[i] == depth[i] >= 0:
            parent[i], host[i] = static_parent[i], static_host[i]
    out = []
    for i in range(len(idx)):
        if depth[i] < 0:
            continue
        action = None
        if i:
            p = parent[i]
            action = {
                "via": "link",
                "from_key": idx.key(p),
                "from_url": idx.url(p),
                "method": "GET",
                "url": idx.link_url(i),
                "data": [],
            }
            node = idx.hidden[i - idx.n_pub] if i >= idx.n_pub else None
            if host[i] is not None and node[0] == "s":  # wizard step 1: a GET form
                col = site.collections[node[1]]
                action["via"], action["url"] = "form", col.step_url(node[2], host[i])
            elif host[i] is not None:
                col = site.collections[node[1]]
                token_host = col.hosts[0] if host[i] == STEP_HOST else host[i]
                data = [list(kv) for kv in col.form_data(node[2], token_host)]
                action["via"], action["method"] = "form", col.method
                if col.method == "GET":
                    action["url"] = col.result_url(node[2], 1, col.tokens[token_host])
                else:
                    action["url"], action["data"] = col.action, data
        out.append(
            {
                "key": idx.key(i),
                "url": idx.url(i),
                "hidden": i >= idx.n_pub,
                "depth": depth[i],
                "needs_browser": static_depth[i] < 0,
                "disallowed": i < idx.n_pub and site.graph.is_private(i),
                "kind": idx.kind(i),
                "action": action,
            }
        )
    return out
