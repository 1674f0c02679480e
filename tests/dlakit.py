"""Helpers of the DLA scheduler's tests: a scheduler on a crawler, link and form requests with
their ``hiddenweb_action``, and draining a scheduler."""

from __future__ import annotations

from typing import Any

from scrapy import Request, Spider
from scrapy.utils.test import get_crawler

from hiddenweb.dla.scheduler import DLAScheduler

SITE = "http://ex.org"


class _Spider(Spider):
    name = "dla-test"


def make(settings: dict[str, Any] | None = None) -> DLAScheduler:
    crawler = get_crawler(_Spider, settings or {})
    crawler.spider = crawler._create_spider()
    scheduler = DLAScheduler.from_crawler(crawler)
    scheduler.open(crawler.spider)
    return scheduler


def link(page: str, path: str, label: str = "") -> Request:
    meta = {"hiddenweb_action": {"kind": "link", "page": page, "label": label, "form": None}}
    return Request(SITE + path, meta=meta)


def form(page: str, signature: str, value: str, label: str = "search") -> Request:
    action = {"kind": "form", "page": page, "label": label,
              "form": {"signature": signature, "fields": {"q": value}}}
    path = signature.split("|")[0].removeprefix("ex.org")
    return Request(f"{SITE}{path}?q={value}", meta={"hiddenweb_action": action})


def drain(scheduler: DLAScheduler) -> list[str]:
    out = []
    while (request := scheduler.next_request()) is not None:
        out.append(request.url.removeprefix(SITE))
    return out
