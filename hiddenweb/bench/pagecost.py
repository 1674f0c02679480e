"""CPU cost of reading one page: a real-site run's logged HTML replies replayed through the
readers ``hwdla`` runs on every page it reads, in this process, no server and no network.

``hiddenweb bench pagecost RUN_DIR`` reads ``RUN_DIR/work/SITE/CRAWLER/requests.jsonl`` (the
logging proxy's record of a ``hiddenweb bench realsites --out RUN_DIR`` crawl: each reply's
text), keeps the 200 replies whose type is HTML, and times each reader on each page with
``time.process_time`` (CPU, not wall time: the machine's other work counts less). Each site is
read ``passes`` times; its best pass (least total) is reported, in milliseconds a page:

* ``parse``: the response built and its lxml tree parsed (``response.selector``);
* ``text``: the visible text nodes, the text and the page fingerprint (``pagetext``);
* ``content``: the content text a form's value prior reads (:func:`~hiddenweb.pagetext.
  content_text`);
* ``trap_guard``: the outward links and the shape fingerprint (:mod:`hiddenweb.trapguard`);
* ``forms``: every form read (:func:`~hiddenweb.forms.extract.extract_forms`);
* ``records``: ``label: value`` records and the site vocabulary's page (tables' columns);
* ``url_sources``: what the page names besides its anchors (:func:`~hiddenweb.urlsources.
  html_urls`);
* ``links``: the spider's link extractor (Scrapy's ``LinkExtractor``) and the safety
  policy's verdict on each link.

The same run directory read at two commits compares their readers on the same pages; the
whole crawl's CPU a page also counts the scheduler, the middlewares and Scrapy itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from scrapy.http import HtmlResponse, Request
from tqdm import tqdm

from hiddenweb.bench.realsites.runner import crawl_dir
from hiddenweb.bench.realsites.scoring import read_log
from hiddenweb.forms.extract import extract_forms
from hiddenweb.forms.records import record_fields
from hiddenweb.forms.vocabulary import SiteVocabulary
from hiddenweb.pagetext import (
    content_text,
    outward_links,
    page_fingerprint,
    shape_fingerprint,
    visible_nodes,
    visible_text,
)
from hiddenweb.safety import SafetyPolicy
from hiddenweb.spiders.hwdla import link_extractor
from hiddenweb.urlsources import html_urls

STAGES = ("parse", "text", "content", "trap_guard", "forms", "records", "url_sources", "links")


def logged_pages(run: Path, site: str, crawler: str = "hwdla") -> list[tuple[str, str]]:
    """``(URL, text)`` of the 200 HTML replies a run logged for ``site``'s ``crawler``, in the
    order they were sent (the host is a placeholder: the path and query are the page's)."""
    log = crawl_dir(run / "work", site, crawler) / "requests.jsonl"
    if not log.is_file():
        raise FileNotFoundError(f"{log}: no request log (a realsites --out directory?)")
    return [(f"http://127.0.0.1:8000{e.path}", e.body) for e in read_log(log)
            if e.status == 200 and "html" in e.ctype and e.body]


class _Reader:
    """One pass over the pages: each stage's CPU seconds, summed."""

    def __init__(self) -> None:
        self.vocabulary = SiteVocabulary()
        self.safety = SafetyPolicy()
        self.extractor = link_extractor()
        self.seconds = dict.fromkeys(STAGES, 0.0)

    def _timed(self, stage: str, work: Callable[[], Any]) -> Any:
        start = time.process_time()
        result = work()
        self.seconds[stage] += time.process_time() - start
        return result

    def read(self, url: str, body: str) -> None:
        def parse() -> HtmlResponse:
            response = HtmlResponse(url, body=body.encode("utf-8"), encoding="utf-8",
                                    request=Request(url))
            response.selector.root  # noqa: B018  (the parse itself)
            return response

        response = self._timed("parse", parse)
        page = response.selector

        def text() -> str:
            words = visible_text(page, visible_nodes(page))
            page_fingerprint(words, page)
            return words

        words = self._timed("text", text)
        self._timed("content", lambda: content_text(response))
        self._timed("trap_guard", lambda: shape_fingerprint(page, url, outward_links(page, url)))
        self._timed("forms", lambda: extract_forms(page, url))
        self._timed("records", lambda: self.vocabulary.add_page(page, words, record_fields(page)))
        self._timed("url_sources", lambda: list(html_urls(response)))
        self._timed("links", lambda: [self.safety.link(link.url, link.text)
                                      for link in self.extractor.extract_links(response)])


def measure(pages: list[tuple[str, str]], passes: int = 3,
            bar: tqdm | None = None) -> dict[str, Any]:
    """Each stage's milliseconds a page in the best of ``passes`` passes (least total)."""
    best: dict[str, float] | None = None
    for _ in range(passes):
        reader = _Reader()
        for url, body in pages:
            reader.read(url, body)
            if bar is not None:
                bar.update(1)
        if best is None or sum(reader.seconds.values()) < sum(best.values()):
            best = reader.seconds
    assert best is not None
    n = max(1, len(pages))
    row: dict[str, Any] = {"pages": len(pages)}
    row.update({f"{stage}_ms": round(1000 * best[stage] / n, 2) for stage in STAGES})
    row["total_ms"] = round(1000 * sum(best.values()) / n, 2)
    return row


def run(run_dir: Path, sites: Iterable[str] | None = None, crawler: str = "hwdla",
        passes: int = 3) -> list[dict[str, Any]]:
    """One row a site (:func:`measure`); ``sites`` None: every site the run crawled with
    ``crawler``."""
    if passes < 1:
        raise ValueError("passes must be at least 1")
    work = run_dir / "work"
    names = list(sites) if sites is not None else sorted(
        p.name for p in (work.iterdir() if work.is_dir() else ())
        if (crawl_dir(work, p.name, crawler) / "requests.jsonl").is_file())
    if not names:
        raise FileNotFoundError(f"{run_dir}: no site crawled by {crawler}")
    logged = {site: logged_pages(run_dir, site, crawler) for site in names}
    rows = []
    with tqdm(total=passes * sum(len(p) for p in logged.values()), unit="page",
              desc="pagecost") as bar:
        for site, pages in logged.items():
            rows.append({"site": site, **measure(pages, passes, bar)})
    return rows
