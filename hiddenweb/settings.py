"""Scrapy settings of the hiddenweb project.

Only Scrapy's own settings and the activation of hiddenweb's components live here; the
``HIDDENWEB_*`` defaults are in :mod:`hiddenweb.defaults` and documented in ``docs/settings.md``.
"""

BOT_NAME = "hiddenweb"
SPIDER_MODULES = ["hiddenweb.spiders"]
NEWSPIDER_MODULE = "hiddenweb.spiders"

USER_AGENT = "hiddenweb/0.1 (+https://example.invalid/hiddenweb)"
ROBOTSTXT_OBEY = True

CONCURRENT_REQUESTS = 16
CONCURRENT_REQUESTS_PER_DOMAIN = 8
DOWNLOAD_TIMEOUT = 30
RETRY_TIMES = 1
REDIRECT_MAX_TIMES = 10

FEED_EXPORT_ENCODING = "utf-8"
LOGSTATS_INTERVAL = 30.0
TWISTED_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"

# Every response becomes an item (404 and 500 included), so HttpErrorMiddleware lets them through.
HTTPERROR_ALLOW_ALL = True

EXTENSIONS = {
    "hiddenweb.progress.HiddenProgress": 500,
    "hiddenweb.statsfile.StatsFile": 510,
}

# The DLA scheduler orders downloads by what the learning automata learned (issue 3); its
# feedback middleware reports each response's outcome. Scrapy's own scheduler:
# -s SCHEDULER=scrapy.core.scheduler.Scheduler
SCHEDULER = "hiddenweb.dla.scheduler.DLAScheduler"

# The lost-sheep pre-filter is off by itself unless the spider has a query (-a query=...); it
# sits nearer the spider than the DLA feedback middleware (550) so dropped links never reach it.
SPIDER_MIDDLEWARES: dict[str, int] = {
    "hiddenweb.dla.middleware.DLAFeedbackMiddleware": 550,
    "hiddenweb.lostsheep.middleware.LostSheepMiddleware": 600,
}
DOWNLOADER_MIDDLEWARES: dict[str, int] = {
    "hiddenweb.trapguard.TemplateTrapGuard": 560,
}
# Chromium through scrapy-playwright, configured only when HIDDENWEB_BROWSER is not "never"
# (hiddenweb/browser.py): the handler alone starts a ~250 MB node driver.
ADDONS = {"hiddenweb.browser.BrowserAddon": 0}
ITEM_PIPELINES: dict[str, int] = {
    "hiddenweb.pipelines.visitstore.VisitStorePipeline": 800,
}
