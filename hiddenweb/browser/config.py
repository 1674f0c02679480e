"""The browser's settings, parsed once (:class:`BrowserConfig`), and its fixed bounds.

Settings (defaults in :mod:`hiddenweb.defaults`, documented in ``docs/settings.md``):
``HIDDENWEB_BROWSER`` (``"auto"`` | ``"always"`` | ``"never"``), ``HIDDENWEB_BROWSER_PATH``,
``HIDDENWEB_BROWSER_MAX_PAGES``, ``HIDDENWEB_BROWSER_TIMEOUT``, ``HIDDENWEB_BROWSER_EVENTS``,
``HIDDENWEB_BROWSER_EVENT_BUDGET``, ``HIDDENWEB_BROWSER_SCROLL_STEPS``,
``HIDDENWEB_BROWSER_SCRIPT_READS``; lab knobs
(``HIDDENWEB_LAB``, docs/design-notes.md)
``browser_page_reuse``, ``browser_reuse_body``, ``browser_same_document``, ``browser_route_hop``,
``browser_event_seconds``, ``browser_event_wait``, ``browser_event_retry``,
``browser_scroll_seconds``,
``browser_timer_horizon``, ``hash_route_pages``, ``browser_press_clicks``,
``browser_scripted_forms``, ``browser_event_containers``, ``browser_event_route_memory``,
``browser_event_restore_view``, ``browser_event_delegated_share``,
``browser_event_hidden_links``.
A browser request as a
whole is bounded by Scrapy's ``DOWNLOAD_TIMEOUT`` (meta ``download_timeout``).
"""

from __future__ import annotations

from dataclasses import dataclass

from scrapy.settings import BaseSettings

from hiddenweb import defaults
from hiddenweb.config import lab

MODES = ("auto", "always", "never")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]
# Browser requests get their own download slot (meta "download_slot") and concurrency on top of
# the plain ones: waiting for a page never holds up plain HTTP.
BROWSER_SLOT = "hiddenweb-browser"

# Fixed bounds (constants, not settings: nobody tunes them; each was enough on a loaded 2-core
# machine for every pattern of tests/browser/patterns.py):
CLOSE_TIMEOUT = 5.0  # seconds for page.close(); then the page's whole context is closed
SETTLE_LOAD = 1.0  # after DOMContentLoaded, wait this long at most for "load" ...
SETTLE = 0.15  # ... then this long, so a page navigating itself ~50-100 ms after load is seen
IDLE_CAP = 5.0  # a page action's wait for "networkidle" gives up after this (endless polling)
IDLE_QUIET = 0.5  # ... which ends once no request of the page was in flight for this long
# a page action on a control (fill, click, check, select) waits this long at most for it to be
# there and usable (Playwright's own wait is the page timeout, 20 s: a form's submission that
# did not find a field waited that long, hiddenweb.browser.formtarget)
ACTION_TIMEOUT = 5.0
RETRIES = 1  # a request whose page or browser died, or that the watchdog cancelled, is retried
RELAUNCH_RETRIES = 3  # ... and besides, after each Chromium that died under it (up to this)


@dataclass(frozen=True)
class BrowserConfig:
    mode: str
    path: str
    max_pages: int
    timeout: float
    page_reuse: int
    reuse_body: bool = True
    same_document: bool = False
    route_hop: bool = False  # lab knob browser_route_hop (hiddenweb.browser.hop)
    events: bool = True  # fire the page's event handlers (hiddenweb.browser.events)
    event_budget: int = 40  # events fired on one page at most
    event_seconds: float = 8.0  # ... and for at most this long
    event_wait: float = 1.0  # after each event, the page's requests awaited this long at most
    #: an event answered by a dialog and nothing else is fired again once the page's requests
    #: have ended, awaited this long at most (0: never)
    event_retry: float = 3.0
    scroll_steps: int = 20  # scroll / load-more steps that grew a page, at most (0: none)
    scroll_seconds: float = 6.0  # ... and for at most this long (hiddenweb.browser.scroll)
    timer_horizon: float = 5.0  # timers due within this many seconds run early (0: none)
    #: a page's script POSTs that read are sent (hiddenweb.safety.judge_script_request)
    script_reads: bool = True
    hash_routes: bool = True  # lab knob hash_route_pages: a hash route is a page (routes.py)
    press_clicks: bool = True  # lab knob browser_press_clicks (events.py)
    scripted_forms: bool = True  # lab knob browser_scripted_forms (scripts.SCRIPTED_FORMS_JS)
    event_containers: bool = True  # lab knob browser_event_containers (events.py)
    event_route_memory: bool = False  # lab knob browser_event_route_memory (events.py)
    event_restore_view: bool = True  # lab knob browser_event_restore_view (events.py)
    event_hidden_links: bool = True  # lab knob browser_event_hidden_links (events.py)
    #: lab knob browser_event_delegated_share: the share of a page's event budget and time
    #: kept for delegated clicks while its own handlers are left (events.py; 0: none kept)
    event_delegated_share: float = 0.25

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> BrowserConfig:
        mode = str(settings.get("HIDDENWEB_BROWSER", defaults.HIDDENWEB_BROWSER)).lower()
        if mode not in MODES:
            raise ValueError(f"HIDDENWEB_BROWSER={mode!r}: choose one of {', '.join(MODES)}")
        max_pages = settings.getint("HIDDENWEB_BROWSER_MAX_PAGES",
                                    defaults.HIDDENWEB_BROWSER_MAX_PAGES)
        if max_pages < 1:
            raise ValueError(f"HIDDENWEB_BROWSER_MAX_PAGES={max_pages}: must be at least 1")
        timeout = settings.getfloat("HIDDENWEB_BROWSER_TIMEOUT", defaults.HIDDENWEB_BROWSER_TIMEOUT)
        if timeout <= 0:
            raise ValueError(f"HIDDENWEB_BROWSER_TIMEOUT={timeout}: must be > 0 seconds")
        budget = settings.getint("HIDDENWEB_BROWSER_EVENT_BUDGET",
                                 defaults.HIDDENWEB_BROWSER_EVENT_BUDGET)
        if budget < 0:
            raise ValueError(f"HIDDENWEB_BROWSER_EVENT_BUDGET={budget}: must be at least 0")
        steps = settings.getint("HIDDENWEB_BROWSER_SCROLL_STEPS",
                                defaults.HIDDENWEB_BROWSER_SCROLL_STEPS)
        if steps < 0:
            raise ValueError(f"HIDDENWEB_BROWSER_SCROLL_STEPS={steps}: must be at least 0")
        return cls(
            mode=mode,
            path=settings.get("HIDDENWEB_BROWSER_PATH", defaults.HIDDENWEB_BROWSER_PATH),
            max_pages=max_pages,
            timeout=timeout,
            page_reuse=max(1, lab(settings, "browser_page_reuse")),
            reuse_body=lab(settings, "browser_reuse_body"),
            same_document=lab(settings, "browser_same_document"),
            route_hop=lab(settings, "browser_route_hop"),
            events=settings.getbool("HIDDENWEB_BROWSER_EVENTS", defaults.HIDDENWEB_BROWSER_EVENTS)
            and budget > 0,
            event_budget=budget,
            event_seconds=max(0.0, lab(settings, "browser_event_seconds")),
            event_wait=max(0.0, lab(settings, "browser_event_wait")),
            event_retry=max(0.0, lab(settings, "browser_event_retry")),
            scroll_steps=steps,
            scroll_seconds=max(0.0, lab(settings, "browser_scroll_seconds")),
            timer_horizon=max(0.0, lab(settings, "browser_timer_horizon")),
            script_reads=settings.getbool("HIDDENWEB_BROWSER_SCRIPT_READS",
                                          defaults.HIDDENWEB_BROWSER_SCRIPT_READS),
            hash_routes=lab(settings, "hash_route_pages"),
            press_clicks=lab(settings, "browser_press_clicks"),
            scripted_forms=lab(settings, "browser_scripted_forms"),
            event_containers=lab(settings, "browser_event_containers"),
            event_route_memory=lab(settings, "browser_event_route_memory"),
            event_restore_view=lab(settings, "browser_event_restore_view"),
            event_hidden_links=lab(settings, "browser_event_hidden_links"),
            event_delegated_share=min(1.0, max(0.0, lab(settings,
                                                        "browser_event_delegated_share"))),
        )
