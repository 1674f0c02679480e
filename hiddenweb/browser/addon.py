"""``ADDONS = {"hiddenweb.browser.BrowserAddon": 0}``: Chromium through scrapy-playwright, only
when ``HIDDENWEB_BROWSER`` is not ``"never"`` (merely configuring scrapy-playwright's handler
starts nothing here, but loads Playwright).

Sets, through scrapy-playwright's public settings: the download handler
(:class:`~hiddenweb.browser.handler.BrowserHandler`), the lazy browser provider
(:class:`~hiddenweb.browser.provider.LazyProvider`), Debian's Chromium and its flags
(``PLAYWRIGHT_LAUNCH_OPTIONS``, a user's own keys win), one context, the navigation timeout; and
a download slot of ``HIDDENWEB_BROWSER_MAX_PAGES`` for browser requests on top of
``CONCURRENT_REQUESTS``; and the downloader middleware that answers a request of a script's
GET from the reply Chromium got (:class:`~hiddenweb.browser.replies.XhrReplies`); and, with the
lab knob ``hash_route_pages``, the request fingerprinter that keeps a hash route's fragment
(:class:`~hiddenweb.routes.RouteFingerprinter`), unless the project set its own.
"""

from __future__ import annotations

from scrapy.settings import SETTINGS_PRIORITIES, BaseSettings

from hiddenweb.browser.config import BROWSER_SLOT, CHROMIUM_ARGS, BrowserConfig

HANDLER = "hiddenweb.browser.handler.BrowserHandler"
PROVIDER = "hiddenweb.browser.provider.LazyProvider"
XHR_REPLIES = "hiddenweb.browser.replies.XhrReplies"
#: after Scrapy's own process_request steps (DownloaderStats 850, HttpCacheMiddleware 900)
XHR_REPLIES_ORDER = 905
ROUTE_FINGERPRINTER = "hiddenweb.routes.RouteFingerprinter"


class BrowserAddon:
    """The handler and Playwright's settings, unless ``HIDDENWEB_BROWSER = "never"``."""

    def update_settings(self, settings: BaseSettings) -> None:
        config = BrowserConfig.from_settings(settings)
        if config.mode == "never":
            return
        handlers = settings.getdict("DOWNLOAD_HANDLERS")
        handlers.update({"http": HANDLER, "https": HANDLER})
        _merge(settings, "DOWNLOAD_HANDLERS", handlers)
        settings.setdefault("PLAYWRIGHT_BROWSER_TYPE", "chromium")
        settings.setdefault("PLAYWRIGHT_BROWSER_PROVIDER", PROVIDER)
        _merge(settings, "PLAYWRIGHT_LAUNCH_OPTIONS", {
            "executable_path": config.path, "headless": True, "args": CHROMIUM_ARGS,
            **settings.getdict("PLAYWRIGHT_LAUNCH_OPTIONS")})
        settings.set("PLAYWRIGHT_MAX_CONTEXTS", 1, "addon")
        # the handler's pool holds max_pages; scrapy-playwright's own per-context limit gets
        # room for pages whose close is still under way (it counts a page until it is closed)
        settings.set("PLAYWRIGHT_MAX_PAGES_PER_CONTEXT", 2 * config.max_pages, "addon")
        slots = settings.getdict("DOWNLOAD_SLOTS")
        slots.setdefault(BROWSER_SLOT, {"concurrency": config.max_pages, "delay": 0})
        _merge(settings, "DOWNLOAD_SLOTS", slots)
        _merge(settings, "CONCURRENT_REQUESTS",
               settings.getint("CONCURRENT_REQUESTS") + config.max_pages)
        settings["DOWNLOADER_MIDDLEWARES"].setdefault(XHR_REPLIES, XHR_REPLIES_ORDER)
        settings.set("PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT", int(config.timeout * 1000), "addon")
        settings.set("PLAYWRIGHT_DOWNLOAD_TIMEOUT", int(config.timeout * 1000), "addon")
        if config.hash_routes and (settings.getpriority(
                "REQUEST_FINGERPRINTER_CLASS") or 0) <= SETTINGS_PRIORITIES["addon"]:
            # a hash route's fragment kept (hiddenweb.routes); a project's own class wins
            settings.set("REQUEST_FINGERPRINTER_CLASS", ROUTE_FINGERPRINTER, "addon")


def _merge(settings: BaseSettings, key: str, value: object) -> None:
    """Set ``key`` to a value that includes the user's own (``-s`` on the command line wins
    over an add-on's priority, so the merged value takes the user's priority)."""
    priority = max(settings.getpriority(key) or 0, SETTINGS_PRIORITIES["addon"])
    settings.set(key, value, priority)
