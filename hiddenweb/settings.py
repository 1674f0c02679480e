"""Scrapy settings of the hiddenweb project.

Only Scrapy's own settings and the add-on that switches hiddenweb on live here; the
``HIDDENWEB_*`` defaults are in :mod:`hiddenweb.defaults` and documented in ``docs/settings.md``.
"""

BOT_NAME = "hiddenweb"
SPIDER_MODULES = ["hiddenweb.spiders"]
NEWSPIDER_MODULE = "hiddenweb.spiders"
# `scrapy crawl` exits 1 when the crawl failed (unreachable seed, visit store not writable)
COMMANDS_MODULE = "hiddenweb.scrapy_commands"

USER_AGENT = "hiddenweb/0.1 (+https://example.invalid/hiddenweb)"
ROBOTSTXT_OBEY = True

CONCURRENT_REQUESTS = 16
CONCURRENT_REQUESTS_PER_DOMAIN = 8
DOWNLOAD_TIMEOUT = 30
# A page is text for forms and links: a response over 16 MiB is refused (Scrapy logs "… larger
# than download max size …", and the page's item carries the error). Reading a page costs ~35-40x
# its size at peak (measured on a link-dense page: 15 MiB -> 587 MB RSS, 30 MiB -> 1070 MB), so
# Scrapy's 1 GiB default let one page take tens of gigabytes; 16 MiB keeps a page under ~650 MB.
DOWNLOAD_MAXSIZE = 16 * 1024 * 1024
DOWNLOAD_WARNSIZE = 4 * 1024 * 1024
RETRY_TIMES = 1
REDIRECT_MAX_TIMES = 10

FEED_EXPORT_ENCODING = "utf-8"
LOGSTATS_INTERVAL = 30.0
# Progress, warnings and the crawl report; -L DEBUG (or -s LOG_LEVEL=DEBUG) gives every request,
# item and browser line back (hiddenweb.quietlogs).
LOG_LEVEL = "INFO"

# Every response becomes an item (404 and 500 included), so HttpErrorMiddleware lets them through.
HTTPERROR_ALLOW_ALL = True

# Everything hiddenweb adds to Scrapy, switched on by its add-on (hiddenweb/addon.py): the DLA
# scheduler (-s SCHEDULER=scrapy.core.scheduler.Scheduler gives Scrapy's own), the DLA feedback
# and lost-sheep spider middlewares, the trap guard, the visit-store pipeline, the progress and
# stats-file extensions, and Chromium through scrapy-playwright unless HIDDENWEB_BROWSER=never.
ADDONS = {"hiddenweb.Addon": 0}
