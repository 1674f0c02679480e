"""The parts of scrapy-playwright (and Playwright) that :mod:`hiddenweb.browser` relies on, checked
against the installed versions: this fails when an upgrade changes one of them.

:class:`~hiddenweb.browser.handler.BrowserHandler` subclasses scrapy-playwright's handler and
overrides only ``download_request`` (Scrapy's public download-handler method) and ``close``; it
reads the handler's ``browser`` attribute (to wait for a dead browser to be let go) and drives
it through documented meta keys; :class:`~hiddenweb.browser.provider.LazyProvider` implements
the public ``BrowserProvider`` protocol.
"""

from __future__ import annotations

import inspect

import scrapy_playwright._utils as upstream_utils
import scrapy_playwright.handler as upstream
from playwright.async_api import BrowserContext, Page, Route
from scrapy_playwright.headers import use_scrapy_headers
from scrapy_playwright.page import PageMethod
from scrapy_playwright.provider import BrowserProvider, PlaywrightBrowserProvider

from hiddenweb.browser.handler import BrowserHandler
from hiddenweb.browser.provider import LazyProvider

Handler = upstream.ScrapyPlaywrightDownloadHandler


def params(function) -> list[str]:
    return list(inspect.signature(function).parameters)


def test_the_overridden_methods_keep_their_signatures():
    assert params(Handler.__init__) == ["self", "crawler"]
    assert params(Handler.download_request) == ["self", "request"]
    assert inspect.iscoroutinefunction(Handler.download_request)
    assert params(Handler.close) == ["self"] and inspect.iscoroutinefunction(Handler.close)
    ours = {name: value for cls in BrowserHandler.__mro__ if cls.__module__.startswith("hiddenweb")
            for name, value in vars(cls).items()}  # the handler and its mixins (PagePool)
    overridden = {name for name in ours if not name.startswith("_") and hasattr(Handler, name)}
    assert overridden == {"download_request", "close"}, overridden
    private = {name for name, value in ours.items()
               if name.startswith("_") and not name.startswith("__") and callable(value)
               and hasattr(Handler, name)}
    assert not private, f"overrides scrapy-playwright's private {private}"


def test_the_meta_keys_and_attributes_used_are_still_read():
    source = inspect.getsource(upstream) + inspect.getsource(upstream_utils)
    for key in ("playwright_page", "playwright_include_page", "playwright_page_init_callback",
                "playwright_context_kwargs", "playwright_page_goto_kwargs",
                "playwright_suggested_filename", "PLAYWRIGHT_BROWSER_PROVIDER",
                "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT", "PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT",
                "PLAYWRIGHT_RESTART_DISCONNECTED_BROWSER", "self.browser ="):
        assert key in source, key
    # the init callback is awaited with (page, request) before the navigation
    callback = inspect.getsource(upstream_utils._maybe_execute_page_init_callback)
    assert "await page_init_callback(page, request)" in callback
    assert params(use_scrapy_headers) == ["browser_type_name", "playwright_request",
                                          "scrapy_request_data"]
    assert {"method", "args", "kwargs", "result"} <= set(vars(PageMethod("click", "a")))


def test_the_provider_protocol():
    assert isinstance(LazyProvider.__new__(LazyProvider), BrowserProvider)
    for name in ("start", "launch_browser", "launch_persistent_context", "close"):
        assert inspect.iscoroutinefunction(getattr(PlaywrightBrowserProvider, name)), name
    assert "self.browser_type = " in inspect.getsource(PlaywrightBrowserProvider.start)


def test_the_playwright_calls_used():
    assert "max_redirects" in params(Route.fetch)
    assert {"status", "headers", "body", "response"} <= set(params(Route.fulfill))
    assert "error_code" in params(Route.abort)
    for name in ("route", "add_init_script", "set_default_timeout", "wait_for_load_state"):
        assert hasattr(Page, name), name
    assert hasattr(BrowserContext, "route_web_socket")
