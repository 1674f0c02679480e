"""``-a recrawl=1``: revisit the visit store's pages in rank order (the visit paper's crawl →
record → rank → filter loop, :meth:`hiddenweb.store.VisitStore.recrawl_targets`).

:func:`recrawl_requests` yields one request per stored page that is due, highest rank first
(priority by rank), each replayed as it was made (a form's POST with its fields), restricted
to the seed's host when there is a seed, and only when the safety policy allows it now
(:func:`hiddenweb.safety.judge_replay`: a stored POST without the form class the store keeps is
never replayed). Pages are revisited, not expanded.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import scrapy

from hiddenweb import defaults

if TYPE_CHECKING:
    from hiddenweb.spiders.hwdla import HwdlaSpider


def recrawl_requests(spider: HwdlaSpider) -> Iterator[scrapy.Request]:
    """The store's pages in rank order (``VisitStore.recrawl_targets``), highest first, on the
    spider's host (any host without a seed), that ``spider.safety`` allows (a refusal is
    counted by ``spider.refuse``); answered by ``spider.parse`` / ``spider.on_error``."""
    from hiddenweb.store import VisitStore, resolve_store_path

    crawler, host, logger = spider.crawler, spider.host, spider.logger
    callback, errback = spider.parse, spider.on_error
    s = crawler.settings
    path = resolve_store_path(s.get("HIDDENWEB_STORE_PATH", defaults.HIDDENWEB_STORE_PATH))
    if not path.exists():
        logger.error("recrawl=1: no visit store at %s (crawl first)", path)
        return
    with VisitStore(path) as store:
        targets = [t for t in store.recrawl_targets(by="combined")
                   if host is None or urlsplit(t.url).hostname == host]
    if not targets:
        logger.warning("Recrawl: no stored page is due in %s (crawl first)", path)
        return
    logger.info("Recrawl: %d stored pages due, in rank order", len(targets))
    crawler.stats.set_value("hiddenweb/recrawl/targets", len(targets))
    for rank, target in enumerate(targets):
        verdict = spider.safety.replay(target.method, target.url, target.formdata,
                                       target.form_class)  # SAFETY: a stored request
        if not verdict.allowed:
            spider.refuse("replays", verdict.reason)
            logger.info("Recrawl: not replaying %s %s (%s: %s)", target.method, target.url,
                        verdict.reason, verdict.evidence)
            continue
        fields = target.formdata
        form = ({"action": target.url, "method": target.method, "fields": fields,
                 "form_class": target.form_class, "signature": "recrawl"} if fields else None)
        meta = {"hiddenweb_reached_by": {"kind": "recrawl", "form": form},
                "hiddenweb_form_only": target.hidden}
        priority = len(targets) - rank
        if target.method == "POST" and fields:
            yield scrapy.FormRequest(target.url, formdata=fields, callback=callback,
                                     errback=errback, meta=meta, priority=priority,
                                     dont_filter=True)
        else:
            yield scrapy.Request(target.url, callback=callback, errback=errback, meta=meta,
                                 priority=priority, dont_filter=True)
