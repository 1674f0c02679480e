"""A bare Scrapy spider: the baseline for ``hiddenweb bench throughput``.

What a Scrapy user writes first: follow every in-host link, yield the URL and status. Run with
``scrapy runspider`` so it is not one of the project's spiders.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import scrapy
from scrapy.linkextractors import LinkExtractor


class BareSpider(scrapy.Spider):
    name = "bare"

    def __init__(self, seed: str, **kwargs):
        super().__init__(**kwargs)
        self.seed = seed
        self.host = urlsplit(seed).hostname
        self.links = LinkExtractor(unique=True)

    async def start(self):
        yield scrapy.Request(self.seed)

    def parse(self, response):
        yield {"url": response.url, "status": response.status}
        for link in self.links.extract_links(response):
            if urlsplit(link.url).hostname == self.host:
                yield response.follow(link.url)
