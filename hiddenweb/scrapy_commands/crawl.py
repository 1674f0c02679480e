"""``scrapy crawl``: Scrapy's own command, with an exit status that says whether the crawl failed.

Scrapy exits 0 whenever the crawl got as far as starting. A hiddenweb crawl that fails on the
way records why in the stat ``hiddenweb/failed`` — ``seed_unreachable`` (the spider's start URL
could not be fetched), ``store_failed`` (the visit store could not be written:
:mod:`hiddenweb.pipelines.visitstore`) — and this command then prints one line on stderr and
exits 1. The reason itself was logged where it happened.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from scrapy.commands.crawl import Command as ScrapyCrawl


class Command(ScrapyCrawl):
    crawler: Any = None

    def _create_crawler(self, spidercls: Any) -> Any:
        self.crawler = super()._create_crawler(spidercls)
        return self.crawler

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        super().run(args, opts)
        try:
            stats = self.crawler.stats if self.crawler is not None else None
        except RuntimeError:  # the crawl never started (a bad setting): Scrapy's status stands
            stats = None
        failed = stats.get_value("hiddenweb/failed") if stats is not None else None
        if failed and not self.exitcode:
            print(f"scrapy crawl {args[0]}: the crawl failed ({failed}); the log says why",
                  file=sys.stderr)
            self.exitcode = 1
