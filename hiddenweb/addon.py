"""The hiddenweb add-on: one line switches the whole crawler on in a Scrapy project.

    # settings.py
    ADDONS = {"hiddenweb.Addon": 500}

It sets, at Scrapy's ``addon`` priority (a project's own settings still win):

* ``SCHEDULER``: the DLA scheduler (:class:`hiddenweb.dla.scheduler.DLAScheduler`), which orders
  downloads by what the learning automata learned; with ``HIDDENWEB_REDIS_URL`` set, its shared
  form (:class:`hiddenweb.dla.redis_scheduler.RedisDLAScheduler`) and ``DUPEFILTER_CLASS``
  :class:`hiddenweb.redis_dupefilter.RedisDupeFilter`, and the downloader middleware
  :class:`hiddenweb.dla.relay.AnswerRelay` (950): N processes, one crawl (docs/scaling.md);
* spider middlewares: the DLA feedback (:class:`hiddenweb.dla.middleware.DLAFeedbackMiddleware`,
  550) and the lost-sheep pre-filter (:class:`hiddenweb.lostsheep.middleware.LostSheepMiddleware`,
  600; off unless the spider has a ``query``);
* the trap guard downloader middleware (:class:`hiddenweb.trapguard.TemplateTrapGuard`, 560)
  and the redirect scope (:class:`hiddenweb.scope.RedirectScope`, 51: a redirect never takes a
  ``dont_filter`` request to another host) and the redirect body's links
  (:class:`hiddenweb.redirectbody.RedirectBodyLinks`, 650: before Scrapy's redirect, which
  drops that body);
* the visit-store pipeline (:class:`hiddenweb.pipelines.visitstore.VisitStorePipeline`, 800);
* the progress, stats-file and crawl-report extensions (:mod:`hiddenweb.crawlreport`: a summary
  block at the end of the log and a JSON report), the stale rule (:mod:`hiddenweb.stale`), the
  stop of endless streams at their headers (:mod:`hiddenweb.streams`), and third-party loggers
  (scrapy-playwright, Playwright, asyncio) at INFO unless ``LOG_LEVEL`` is set
  (:mod:`hiddenweb.quietlogs`);
* Chromium through scrapy-playwright unless ``HIDDENWEB_BROWSER = "never"``
  (:class:`hiddenweb.browser.BrowserAddon`; it needs Scrapy's default asyncio reactor);

keeps Scrapy's public suffix list on the machine (:mod:`hiddenweb.suffixlist`: no look-up of
``publicsuffix.org`` at the first cookie), adds the ``hwdla`` spider to the project
(``hiddenweb.spiders`` in ``SPIDER_MODULES``), and
refuses, at start-up, a ``HIDDENWEB_*`` setting it does not know (a typo) or a value out of
range, with a message naming the setting (:func:`hiddenweb.config.check`).

The ``hwdla`` spider does the crawling (links, forms, browser); the scheduler, the feedback
middleware, the trap guard and the pipeline work under any spider, which then gets the DLA
ordering of its own requests and the visit store, but no form discovery, no browser rendering
decision and no lost-sheep pre-filter (it reads the link labels ``hwdla`` puts in
``hiddenweb_action``); ``tests/test_package.py`` checks it in a ``scrapy startproject`` project.
"""

from __future__ import annotations

from scrapy.exceptions import UsageError
from scrapy.settings import SETTINGS_PRIORITIES, BaseSettings

from hiddenweb.browser import BrowserAddon
from hiddenweb.config import check
from hiddenweb.suffixlist import keep_suffix_list_local

SPIDERS = "hiddenweb.spiders"
DLA_SCHEDULER = "hiddenweb.dla.scheduler.DLAScheduler"
SHARED_SCHEDULER = "hiddenweb.dla.redis_scheduler.RedisDLAScheduler"
COMPONENTS = {
    "SPIDER_MIDDLEWARES": {
        "hiddenweb.dla.middleware.DLAFeedbackMiddleware": 550,
        "hiddenweb.lostsheep.middleware.LostSheepMiddleware": 600,
    },
    "DOWNLOADER_MIDDLEWARES": {"hiddenweb.scope.RedirectScope": 51,
                               "hiddenweb.trapguard.TemplateTrapGuard": 560,
                               "hiddenweb.redirectbody.RedirectBodyLinks": 650},
    "ITEM_PIPELINES": {"hiddenweb.pipelines.visitstore.VisitStorePipeline": 800},
    "EXTENSIONS": {"hiddenweb.progress.HiddenProgress": 500,
                   "hiddenweb.statsfile.StatsFile": 510,
                   "hiddenweb.quietlogs.QuietThirdPartyLogs": 0,
                   "hiddenweb.crawlreport.CrawlReport": 520,
                   "hiddenweb.stale.CloseWhenStale": 530,
                   "hiddenweb.streams.StopStreams": 540},
}


class Addon:
    """``ADDONS = {"hiddenweb.Addon": 500}`` (see the module docstring)."""

    @classmethod
    def update_pre_crawler_settings(cls, settings: BaseSettings) -> None:
        """The ``hwdla`` spider in any project: ``hiddenweb.spiders`` joins ``SPIDER_MODULES``
        (read by the spider loader before any crawler, hence here); and the public suffix
        list read from disk, not fetched (:mod:`hiddenweb.suffixlist`)."""
        keep_suffix_list_local()
        modules = settings.getlist("SPIDER_MODULES")
        if SPIDERS not in modules:
            settings.set("SPIDER_MODULES", [*modules, SPIDERS],
                         priority=settings.getpriority("SPIDER_MODULES") or "addon")

    def update_settings(self, settings: BaseSettings) -> None:
        check(settings)
        if settings.get("HIDDENWEB_REDIS_URL"):
            # the DLA scheduler, set here or by the project, becomes its shared form
            priority = settings.getpriority("SCHEDULER") or 0
            if priority <= SETTINGS_PRIORITIES["addon"] or settings.get("SCHEDULER") in (
                    DLA_SCHEDULER, SHARED_SCHEDULER):
                settings.set("SCHEDULER", SHARED_SCHEDULER,
                             max(priority, SETTINGS_PRIORITIES["addon"]))
            if settings.get("SCHEDULER") != SHARED_SCHEDULER:
                raise UsageError(f"HIDDENWEB_REDIS_URL needs the DLA scheduler; SCHEDULER is "
                                 f"{settings.get('SCHEDULER')!r}")
            settings.set("DUPEFILTER_CLASS", "hiddenweb.redis_dupefilter.RedisDupeFilter", "addon")
            settings["DOWNLOADER_MIDDLEWARES"].setdefault("hiddenweb.dla.relay.AnswerRelay", 950)
        else:
            settings.set("SCHEDULER", DLA_SCHEDULER, "addon")
        for name, components in COMPONENTS.items():
            for path, order in components.items():
                settings[name].setdefault(path, order)
        BrowserAddon().update_settings(settings)
