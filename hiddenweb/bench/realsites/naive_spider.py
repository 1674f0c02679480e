"""The spider a typical Scrapy user writes, run with ``scrapy runspider`` outside the project.

Follows every link whose host is the seed's (by host, not host:port: ``LinkExtractor``'s
``allow_domains`` would drop them all when the seed has a port) and submits each form once —
the first time a form with that action, method and field names is seen — with the page's
default values (form2request, first submit button). Nothing else: no values of its own, no
safety rules. ``-a browser=1`` renders every request in Chromium through scrapy-playwright
(the runner sets the download handler and launch options). ``-a stats=PATH`` writes the final
Scrapy stats there as JSON.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import scrapy
from form2request import form2request
from scrapy.http import TextResponse
from scrapy.linkextractors import LinkExtractor


class NaiveSpider(scrapy.Spider):
    name = "naive"

    def __init__(self, seed: str, browser: str = "0", stats: str = "", **kwargs):
        super().__init__(**kwargs)
        self.seed, self.stats_path = seed, stats
        self.browser = browser not in ("0", "", "false")
        self.host = urlsplit(seed).hostname
        self.links = LinkExtractor()
        self.forms_seen: set[tuple] = set()

    def meta(self) -> dict:
        return {"playwright": True} if self.browser else {}

    async def start(self):
        yield scrapy.Request(self.seed, meta=self.meta())

    def parse(self, response):
        if not isinstance(response, TextResponse):
            return
        for link in self.links.extract_links(response):
            if urlsplit(link.url).hostname == self.host:
                yield response.follow(link.url, meta=self.meta())
        for form in response.css("form"):
            names = tuple(sorted(set(form.xpath(".//*[@name]/@name").getall())))
            key = (form.attrib.get("action", ""), form.attrib.get("method", "get").lower(), names)
            if key in self.forms_seen:
                continue
            self.forms_seen.add(key)
            try:
                request = form2request(form)
            except (ValueError, TypeError, NotImplementedError):  # multipart POST: unsupported
                continue
            if urlsplit(request.url).hostname == self.host:
                yield request.to_scrapy(callback=self.parse, meta=self.meta())

    def closed(self, reason):
        if self.stats_path:
            with open(self.stats_path, "w") as fh:
                json.dump(self.crawler.stats.get_stats(), fh, default=str)
