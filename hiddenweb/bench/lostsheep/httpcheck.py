"""The over-HTTP check: a generated EMRIS site served as HTML, searched by the real spider.

``hiddenweb bench emris-http --nodes 1000 --runs 20``: for run ``i`` the same site and task as
the in-process runner's (:func:`hiddenweb.bench.lostsheep.emris.run_once`, seed ``[seed, N,
i]``) are served on 127.0.0.1 (:func:`serve_graph`: page 0 at ``/``, page ``k`` at ``/p/k``, the
page's text in a ``<p>``, each out-link an ``<a>`` whose text is its label, nothing around it)
and ``scrapy crawl hwdla -a seed=… -a query=… -a find=1`` runs in a subprocess. Prints accuracy
and D over HTTP beside the in-process herder's on the same sites and queries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np

from hiddenweb import defaults
from hiddenweb.bench.lostsheep.graphs import (
    GraphParams,
    GraphSite,
    SiteGraph,
    draw_task,
    generate_site,
)
from hiddenweb.config import setting_args
from hiddenweb.lostsheep.herder import Herder

ROOT = Path(__file__).resolve().parents[3]


def page_html(graph: SiteGraph, page: int) -> bytes:
    lo, hi = int(graph.out_off[page]), int(graph.out_off[page + 1])
    links = "".join(
        f'<li><a href="/p/{int(graph.out_dst[e])}">{graph.label_text(e)}</a></li>'
        for e in range(lo, hi)
    )
    return (f"<html><head><title>page {page}</title></head><body><p>{graph.text(page)}</p>"
            f"<ul>{links}</ul></body></html>").encode()


class GraphServer:
    """A :class:`SiteGraph` on ``http://127.0.0.1:PORT`` in a daemon thread; counts GETs."""

    def __init__(self, graph: SiteGraph) -> None:
        self.graph, self.hits = graph, 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                page = 0 if self.path == "/" else None
                if self.path.startswith("/p/") and self.path[3:].isdigit():
                    page = int(self.path[3:])
                if page is None or page >= graph.n:
                    self.send_response(404)
                    self.end_headers()
                    return
                outer.hits += 1
                body = page_html(graph, page)
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def page_url(self, page: int) -> str:
        return f"{self.url}/" if page == 0 else f"{self.url}/p/{page}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def crawl_find(url: str, query: str, workdir: Path, settings: dict | None = None) -> list[dict]:
    """``scrapy crawl hwdla -a find=1`` in a subprocess; the items it wrote."""
    out = workdir / "items.jsonl"
    cmd = [sys.executable, "-m", "scrapy", "crawl", "hwdla", "-a", f"seed={url}/",
           "-a", f"query={query}", "-a", "find=1", "-O", f"{out}:jsonlines",
           "-s", "LOG_LEVEL=WARNING", "-s", "HIDDENWEB_STORE_ENABLED=0",
           "-s", "HIDDENWEB_BROWSER=never", "-s", "ROBOTSTXT_OBEY=0",
           "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=16"]
    cmd += setting_args(settings)
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "hiddenweb.settings"}
    subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
                   check=False)
    return [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []


def run_check(nodes: int, runs: int, *, states: int = 100, twofold: bool = True,
              threshold: float = 0.75, seed: int = 0, maxdepth: int = 20,
              params: GraphParams | None = None,
              start: str = defaults.HIDDENWEB_LOSTSHEEP_START) -> dict:
    """Accuracy and D of the herder in process and through the spider, on the same tasks."""
    rows = []
    for i in range(runs):
        rng = np.random.default_rng([seed, nodes, i])
        graph = generate_site(nodes, rng, params)
        target, query_ids = draw_task(graph, rng)
        words = [graph.vocab[w] for w in query_ids.tolist()]
        site = GraphSite(graph)
        res = Herder(words, states=states, twofold=twofold, threshold=threshold,
                     maxdepth=maxdepth, start=start).run(site, 0)
        server = GraphServer(graph)
        try:
            with tempfile.TemporaryDirectory() as tmp:
                items = crawl_find(server.url, " ".join(words), Path(tmp), {
                    "HIDDENWEB_LAB": {"lostsheep_states": states,
                                      "lostsheep_twofold": bool(twofold),
                                      "lostsheep_maxdepth": maxdepth},
                    "HIDDENWEB_LOSTSHEEP_THRESHOLD": threshold,
                    "HIDDENWEB_LOSTSHEEP_START": start})
            found = next((it for it in items if it.get("lostsheep")), None)
            rows.append({
                "inproc_found": res.page == target, "inproc_d": len(site.downloaded),
                "http_found": bool(found) and found["url"] == server.page_url(target),
                "http_d": server.hits,
                "same_page": bool(found) and found["url"] == server.page_url(res.page or 0)})
        finally:
            server.close()
    n = max(1, len(rows))
    return {
        "nodes": nodes, "runs": runs, "states": states, "twofold": twofold,
        "threshold": threshold,
        "inproc_accuracy": sum(r["inproc_found"] for r in rows) / n,
        "inproc_mean_downloads": sum(r["inproc_d"] for r in rows) / n,
        "http_accuracy": sum(r["http_found"] for r in rows) / n,
        "http_mean_downloads": sum(r["http_d"] for r in rows) / n,
        "same_page": sum(r["same_page"] for r in rows) / n,
    }
