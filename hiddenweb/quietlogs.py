"""A readable log at the default level: third-party loggers at INFO unless the user asks for more.

scrapy-playwright logs every request and response of every browser page at DEBUG (several lines
per page), and Playwright and asyncio add their own. Scrapy's ``LOG_LEVEL`` defaults to DEBUG, so
a crawl that uses the browser drowned its log in them (735 KB for the 300-page demo site).

This extension sets :data:`LOGGERS` to INFO when ``LOG_LEVEL`` is Scrapy's default, i.e. the user
did not set it (in the project's settings, the spider's ``custom_settings`` or ``-L`` / ``-s
LOG_LEVEL=``). A user who sets ``LOG_LEVEL`` gets exactly that level, browser lines included:
``scrapy crawl hwdla -L DEBUG``. The ``hwdla`` spider itself logs at INFO unless ``LOG_LEVEL`` is
set (:meth:`hiddenweb.spiders.hwdla.HwdlaSpider.update_settings`).
"""

from __future__ import annotations

import logging

from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.settings import SETTINGS_PRIORITIES, BaseSettings

#: loggers that log a line per request (or per event loop step) at DEBUG
LOGGERS = ("scrapy-playwright", "playwright", "asyncio", "hpack", "urllib3", "PIL", "matplotlib")


def log_level_set(settings: BaseSettings) -> bool:
    """Whether ``LOG_LEVEL`` was set by the user (any priority above Scrapy's defaults)."""
    return (settings.getpriority("LOG_LEVEL") or 0) > SETTINGS_PRIORITIES["default"]


class QuietThirdPartyLogs:
    """Enabled by the add-on (``EXTENSIONS``); see the module docstring."""

    def __init__(self, quieted: list[str]):
        self.quieted = quieted  # the loggers set to INFO

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> QuietThirdPartyLogs:
        if log_level_set(crawler.settings):
            raise NotConfigured("LOG_LEVEL is set: third-party loggers log at that level")
        quieted = []
        for name in LOGGERS:
            log = logging.getLogger(name)
            if log.level < logging.INFO:  # NOTSET or DEBUG: a higher level set elsewhere stays
                log.setLevel(logging.INFO)
                quieted.append(name)
        return cls(quieted)
