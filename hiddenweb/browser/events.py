"""Event firing on a rendered page (issue 24): the handlers a person would trigger, fired by
the crawler, bounded, and what each one brings collected.

:meth:`PageEvents.fire` is called by the handler once a page has settled, before the DOM is
read (not on a form's answer submitted by page actions: that answer is read as it came). It
fires, in document order (then the elements of open shadow roots), each (element, event type)
once:

* handlers set as ``on*`` attributes or properties (``onclick``, ``onmouseover``, ``onchange``,
  … :data:`EVENT_TYPES`), listeners added with ``addEventListener`` (recorded by the init script
  :data:`~hiddenweb.browser.scripts.RECORD_EVENTS_JS`: cheaper than asking the DevTools
  protocol's ``DOMDebugger.getEventListeners`` element by element, and it sees elements added
  later), ``javascript:`` links (clicked), hash-route links (``#/page``, ``#!/page``,
  ``#!page``: clicked; a single-page app's router listens on ``window`` or ``document``, not on
  the link, and loads the route's view when the hash changes; with the lab knob
  ``hash_route_pages``, on,
  they are not clicked, nor clicked as delegated clicks: the crawl follows them as pages of
  their own, :mod:`hiddenweb.routes`) and forms with a ``javascript:`` action (submitted);
* not a *container*'s own (lab knob ``browser_event_containers``, on): nothing of ``<html>``'s
  or ``<body>``'s, nor the listeners added by script of an element holding
  :data:`CONTAINER_CONTROLS` controls or more (links, buttons, fields, elements with a
  ``role``), but a form: such an element listens for its descendants, and an event fired on
  it is nobody's gesture and brings nothing (MLflow's app wrapper and ``<body>`` listen to
  every mouse and key event: 25 events a view, each awaited, signed by the view's text and so
  never remembered as fruitless); its descendants get its clicks as delegated ones (below),
  and another element's ``on*`` attribute or property is fired as ever;
* then *delegated* clicks: a click listener on an ancestor, the document or the window (jQuery's
  ``$(document).on("click", ".more", f)``, a framework's one listener on its root; or a
  ``mousedown`` / ``pointerdown`` one: tabs and menus that act on the press) handles the
  clicks of elements that have none of their own. Each element a person would click under such
  a listener is clicked once (at most :data:`MAX_DELEGATED` per page): a shown button that is
  not a form's submit button, an element whose ``role`` acts (``button``, ``link``, ``tab``,
  ``menuitem`` …), a link without a URL (no ``href``, ``#``), a focusable element
  (``tabindex``), or the outermost element under a pointer cursor; not a field, nor anything
  inside a link or a button (stat ``…/delegated``);
* a click is fired as a person's: pressed, then clicked
  (:data:`~hiddenweb.browser.scripts.PRESS_CLICK_JS`; ``el.click()`` alone fires no press, and
  a design system's tabs, MLflow's run page's among them, switch on ``mousedown``);
* a ``<select>`` with a change handler gets one change per option (at most
  :data:`MAX_OPTIONS`), and is set back to the option it had at the end, with a change event
  (the forms are read after the events: left on its last option, a select whose change fills
  another showed that one filled, and the form was explored as an ordinary one, its child's
  options those of one parent value only, not probed as a dependent select);
* each one judged first by the safety policy as a button outside a form
  (:meth:`~hiddenweb.safety.SafetyPolicy.link`: its text, value, title, ``aria-label``, name,
  id, the identifiers and quoted paths of its handler's code, its ``href``, fragment
  included: a hash route ``#/account/logout`` is refused): a destructive,
  auth or commerce control is never fired (``…/skipped_unsafe``); while events fire, the guard
  aborts a request of the page the policy would not follow as a link, and every script write,
  off-host request and navigation as always (:mod:`~hiddenweb.browser.guard`);
* after each one, the page's own requests are awaited (until none was in flight for
  :data:`QUIET` s, at most lab knob ``browser_event_wait`` s), then collected: new ``<a>``,
  ``<area>`` and frame URLs in the DOM and its open shadow roots, new forms (their markup as
  they appeared), History-API routes (``pushState``, ``replaceState``, hash changes) and
  ``window.open`` URLs, and the documents the event set out to load (the Navigation API's
  ``navigate`` event, recorded as the navigation starts); the guard aborts such a navigation
  and keeps its URL too, but only once its request is made, which may be after the page was
  read (an event's navigation was lost now and then when it was the page's last) or never;
* an event that took the page to another view of its document (a History-API route, a hash
  change: the app's logo, a home link, a tab that routes) is followed by the view the firing
  began on, taken again as a router takes one (:data:`RESTORE_VIEW_JS`: a hash change, else a
  History-API entry and a ``popstate``, and a ``hashchange`` too when the view was the
  document's own, with no hash), and its requests awaited (lab knob
  ``browser_event_restore_view``, on; stat ``…/views_restored``): the handlers fired next are
  the view's, not another's under its memory (MLflow's views each fired the home view's
  handlers, reached by its logo's link, until their time cap). A link to the app's root view
  (``#/``, ``#!/``: the document itself, when hash routes are pages) is not clicked, unless its
  markup gives it an ``onclick`` (a handler a script set, MLflow's on every link, is not its
  own).

Bounds: ``HIDDENWEB_BROWSER_EVENT_BUDGET`` events fired per page, lab knob
``browser_event_seconds`` (and at most 40 % of ``DOWNLOAD_TIMEOUT``) per page. Of both, a share
(lab knob ``browser_event_delegated_share``, 0.25; of the budget at most :data:`MAX_DELEGATED`
events) is kept for the delegated clicks while own handlers are left: the own handlers are
fired until the rest is spent, then the delegated clicks (an element with a click handler of
its own is not one of them while the own handlers' turn lasts), then the own handlers again
with whatever the delegated clicks left. MLflow's run page has more own handlers (icon
buttons, hover cards) than its budget, all before its tabs (a design system's, pressed through
its root's listener), and spent the budget with its Artifacts tab never pressed. A handler whose
firing brought no URL the page's URL template had not already given (its signature: tag, event,
code or text) is not fired again on that template's pages (``…/skipped_repeat``); a hash
route's template is its document's: the routes of a single-page app share one memory (its
chrome's handlers are fired once, not on every view). With the lab knob
``browser_event_route_memory`` (off) a hash route's template is its route's
(``/#/runs/{n}``), and a handler that brought nothing on :data:`BARREN_ROUTES` of a document's
route templates and never anything on any is not fired on its other routes either
(:meth:`PageEvents._document`): a control of the chrome whose route depends on the view it is
pressed on is pressed on each kind of view, but the chrome is fired again on each, and
MLflow's renders in 80 s fell from 35 and 37 to 32 and 32 with no unit found more
(``docs/design-notes.md``). An event
answered by a dialog and no URL (a handler that refuses while the page is busy: "one request
at a time", the last event's request still out on a slow server) is fired once more when the
page's requests have ended, awaited at most lab knob ``browser_event_retry`` s (``…/retried``).

What it returns is HTML for the handler to append to the page: the links and forms that
appeared after an event and were gone again by the end, and the links the page had before the
first event and an event took away (lab knob ``browser_event_hidden_links``, on; those still
there are in the DOM; MLflow's runs view lost its run links to the controls fired after them,
and no run page was read in 80 s);
routes and ``window.open`` URLs go to :meth:`Render.find` (URLs found, ``meta["hiddenweb_found"]``).

Stats (``hiddenweb/browser/events/``): ``pages``, ``fired``, ``delegated``, ``skipped_unsafe``,
``skipped_repeat``, ``retried``, ``views_restored``, ``found_links``, ``found_forms``,
``found_urls`` (routes, ``window.open``, navigations), ``budget_spent``, ``time_capped``,
``unsafe_aborted`` (the guard's).
"""

from __future__ import annotations

import asyncio
import html
import logging
import re
from collections import OrderedDict
from typing import Any
from urllib.parse import urljoin, urlsplit

from playwright.async_api import Error as PlaywrightError

from hiddenweb.browser.config import BrowserConfig
from hiddenweb.browser.guard import Guard, Render
from hiddenweb.browser.scripts import (
    FOUND_JS,
    PRESS_CLICK_JS,
    ROOT_HREF_JS,
    ROUTE_HREF_JS,
    ROUTES_JS,
)
from hiddenweb.pagetext import template_key
from hiddenweb.routes import is_route
from hiddenweb.safety import SafetyPolicy

logger = logging.getLogger(__name__)

#: the event types fired, in the order a person's gestures fire them on one element
EVENT_TYPES = ("mouseover", "mouseenter", "mousedown", "mouseup", "click", "dblclick", "focus",
               "input", "change", "keydown", "keypress", "keyup", "submit", "blur", "mouseout",
               "mouseleave")
QUIET = 0.06  # after an event, the page is read once none of its requests flew for this long
MAX_OPTIONS = 8  # a select's change handler: fired for its first options
MAX_DELEGATED = 12  # delegated clicks fired per page, within its budget
#: an element holding this many controls (links, buttons, fields, elements with a role) or more
#: is a container: its script listeners are delegated, not fired on it
CONTAINER_CONTROLS = 3
#: a handler that brought nothing on the pages of this many of a document's route templates,
#: and never brought anything on any, is not fired on its other routes either
BARREN_ROUTES = 2
MAX_SCAN = 5000  # elements looked at for handlers, in document order
MAX_FORMS = 20  # forms that appeared after events, kept per page
MAX_TEMPLATES = 1000  # URL templates whose fruitless handlers are remembered ...
MAX_MEMORY = 2000  # ... and signatures / URLs per template
_DIED = re.compile(r"crash|closed|disconnected|context was destroyed", re.IGNORECASE)
_QUOTED = re.compile(r"""["']([^"'\s]*[/?.=][^"'\s]*)["']""")
_IDENT = re.compile(r"[A-Za-z_$][\w$]{2,}")

# the page's elements in document order, then those of its open shadow roots (nested ones too),
# at most ``limit``
ELEMENTS_JS = """(limit) => {
  const all = Array.from(document.querySelectorAll("*"));
  for (let i = 0; i < all.length && all.length < limit; i++) {
    if (all[i].shadowRoot) all.push(...all[i].shadowRoot.querySelectorAll("*"));
  }
  return all.slice(0, limit);
}"""
START_JS = """() => {
  window.__hiddenwebFiring = {done: new WeakMap(), current: null, selects: new Map(),
                              forms: new WeakSet(Array.from(document.forms)), fresh: []};
  return null;
}"""
LINKS_JS = """(routes) => {
  const out = new Set(), roots = [document];
  for (let r = 0; r < roots.length && roots.length < 200; r++) {  // open shadow roots too
    for (const el of roots[r].querySelectorAll("*")) if (el.shadowRoot) roots.push(el.shadowRoot);
  }
  for (const root of roots) {
    for (const el of root.querySelectorAll("a[href], area[href], iframe[src], frame[src]")) {
      const url = el.tagName === "A" || el.tagName === "AREA" ? el.href : el.src;
      if (typeof url !== "string" || !/^https?:/i.test(url)) continue;
      // with routes: a hash route's link is its own (#/runs/7), another fragment dropped
      const [doc, fragment] = url.split("#", 2);
      const route = routes && fragment && fragment.length > 1 && "/!".includes(fragment[0]);
      out.add(route ? url : doc);
      if (out.size >= 2000) return Array.from(out);
    }
  }
  return Array.from(out);
}"""
# whether an ancestor of ``el`` (across open shadow roots) listens to clicks or presses
# (``mousedown``, ``pointerdown``: a press-activated tab or menu): a delegated click
DELEGATED_JS = """(el, recorded, PRESSES) => {
  for (let p = el.parentNode; p; p = p.parentNode) {
    if (p instanceof ShadowRoot) p = p.host;
    if (!(p instanceof Element)) return false;
    const own = recorded && recorded.get(p);
    if ((own && PRESSES.some((t) => own.has(t))) || typeof p.onclick === "function") return true;
  }
  return false;
}"""
# whether a person would click ``el`` for a delegated handler: shown, not a field, not inside a
# link or button (that one is the control), not a form's submit button (the form is explored as
# a form); a button, a role that says it acts, a script link (no href, "#"), a focusable
# element, or the outermost element of a pointer cursor. Remembered per element.
CLICKABLE_JS = """(el, st) => {
  st.clickable = st.clickable || new WeakMap();
  if (st.clickable.has(el)) return st.clickable.get(el);
  const tag = el.tagName.toLowerCase(), attr = (n) => (el.getAttribute(n) || "").trim();
  let yes = false;
  if (/^(html|head|body|script|style|noscript|template|input|select|textarea|option|optgroup"""\
    """|label|form|iframe|frame|area|br|hr|img|svg|path)$/.test(tag)) yes = false;
  else if (el.parentElement && el.parentElement.closest("a[href], button, [role=button]")) {
    yes = false;
  } else if (tag === "a") {
    // not a link to a page (a URL, a hash route), nor, when hash routes are pages, to the app's
    // root view (#/, #!/: the document itself, read as the crawl's page)
    yes = !/^\\s*[^#\\s]/.test(attr("href"))
      && !(st.routes && (""" + ROUTE_HREF_JS + """.test(attr("href"))
                         || """ + ROOT_HREF_JS + """.test(attr("href"))));
  }
  else if (tag === "button") yes = !(el.form && (el.type || "").toLowerCase() === "submit");
  else if (/^(button|link|tab|menuitem|menuitemcheckbox|menuitemradio|option|treeitem|switch)$"""\
    """/.test(attr("role"))) yes = true;
  else if (el.hasAttribute("tabindex") && el.tabIndex >= 0) yes = true;
  else {
    const parent = el.parentElement;
    yes = getComputedStyle(el).cursor === "pointer"
      && !(parent && getComputedStyle(parent).cursor === "pointer");
  }
  if (yes) yes = el.getClientRects().length > 0;  // shown
  st.clickable.set(el, yes);
  return yes;
}"""
# the next (element, event) not fired yet, in document order, then the next delegated click:
# its description, or null
NEXT_JS = """([types, limit, options, delegate, routes, pressed, containers, own]) => {
  const st = window.__hiddenwebFiring, recorded = window.__hiddenwebListeners;
  if (!st) return null;
  st.routes = routes;
  // a container's own script listeners are its descendants' (delegated clicks), not fired on
  // it: one that holds CONTAINER_CONTROLS controls or more (the root elements: below)
  st.container = st.container || new WeakMap();
  const container = (el, tag) => {
    if (!containers || tag === "form") return false;  // a form's submit listener is its own
    if (!st.container.has(el)) st.container.set(el, el.querySelectorAll(
      "a[href], button, input, select, textarea, [role]").length >= """ \
    + str(CONTAINER_CONTROLS) + """);
    return st.container.get(el);
  };
  const delegatedClick = """ + DELEGATED_JS + """, clickable = """ + CLICKABLE_JS + """;
  const describe = (el, tag, type, code, href, delegated) => {
    const attr = (name) => el.getAttribute(name) || "";
    st.current = el;
    return {type: type, tag: tag, href: href, code: code.slice(0, 400), delegated: delegated,
            text: (el.textContent || "").replace(/\\s+/g, " ").trim().slice(0, 200),
            words: ["value", "title", "aria-label", "alt", "name", "id"].map(attr).join(" ")
              .slice(0, 300),
            method: attr("data-method") || attr("data-turbo-method"),
            confirm: el.hasAttribute("data-confirm") || el.hasAttribute("data-turbo-confirm")};
  };
  const all = (""" + ELEMENTS_JS + """)(limit), n = all.length;
  const js = (v) => /^\\s*javascript:/i.test(v || "");
  // whether an element has a handler of its own for an event type: an on* property, or a script
  // listener of its own; nothing of the document's root elements (a handler there, a property
  // or a listener, serves the clicks of their descendants), nor a container's listeners
  const ownHas = (el, tag, t) => {
    if (containers && (tag === "html" || tag === "body")) return false;
    if (typeof el["on" + t] === "function") return true;
    const mine = recorded && recorded.get(el);
    return !!mine && mine.has(t) && !container(el, tag);
  };
  // the elements' own handlers (not while the budget kept for delegated clicks is spent)
  for (let i = 0; own && i < n; i++) {
    const el = all[i], tag = el.tagName.toLowerCase();
    const attr = (name) => el.getAttribute(name) || "";
    const have = types.filter((t) => ownHas(el, tag, t));
    const href = tag === "a" || tag === "area" ? attr("href") : "";
    // a hash route (#/page, #!/page): the app routes on the hash change it makes; clicked,
    // unless hash routes are pages of their own (followed as links: hiddenweb.routes)
    const route = """ + ROUTE_HREF_JS + """.test(href);
    // the app's root view (#/, #!/), when hash routes are pages: the document itself, unless
    // its markup gives it a click handler (then what it does is that handler's; a handler set
    // by script on every link, a framework's or an analytics hook, is not the link's own)
    const home = """ + ROOT_HREF_JS + """.test(href) && !el.hasAttribute("onclick");
    if ((route || home) && routes) {
      const k = have.indexOf("click");
      if (k >= 0) have.splice(k, 1);
    } else if ((js(href) || route) && !have.includes("click")) have.push("click");
    if (tag === "form" && js(attr("action")) && !have.includes("submit")) have.push("submit");
    if (!have.length) continue;
    const done = st.done.get(el) || new Set();
    st.done.set(el, done);
    for (const t of have) {
      const keys = (t === "change" || t === "input") && tag === "select"
        ? Array.from(el.options).slice(0, options).map((o, k) => t + "#" + k) : [t];
      for (const key of keys) {
        if (done.has(key)) continue;
        done.add(key);
        return describe(el, tag, key,
                        js(href) ? href : attr("on" + t) || (tag === "form" ? attr("action") : ""),
                        js(href) || typeof el.href !== "string" ? "" : el.href, false);
      }
    }
  }
  // then the clicks a listener of an ancestor, the document or the window handles for its
  // descendants (jQuery's $(document).on("click", sel, f), a framework's root listener)
  if (!delegate) return null;
  const roots = window.__hiddenwebRootListeners;
  const PRESSES = pressed ? ["click", "mousedown", "pointerdown"] : ["click"];
  const anywhere = (roots && PRESSES.some((t) => roots.has(t)))
    || typeof document.onclick === "function"
    || typeof window.onclick === "function";
  for (let i = 0; i < n; i++) {
    const el = all[i];
    const done = st.done.get(el);
    if (done && done.has("click")) continue;
    // while the own handlers' turn is not over, an element with a click handler of its own
    // waits for that turn: not a delegated click
    if (!own && ownHas(el, el.tagName.toLowerCase(), "click")) continue;
    if (!anywhere && !delegatedClick(el, recorded, PRESSES)) continue;
    if (!clickable(el, st)) continue;
    const tag = el.tagName.toLowerCase();
    if (done) done.add("click"); else st.done.set(el, new Set(["click"]));
    return describe(el, tag, "click", "", "", true);
  }
  return null;
}"""
FIRE_JS = """([key, pressed]) => {
  const st = window.__hiddenwebFiring, el = st && st.current;
  if (!el || !el.isConnected) return false;
  const [type, option] = key.split("#");
  const mouse = (t) => el.dispatchEvent(new MouseEvent(t, {
    bubbles: !/enter|leave/.test(t), cancelable: true, view: window}));
  try {
    if (type === "click") {  // the presses too, but its own handlers' (fired apart)
      const own = window.__hiddenwebListeners && window.__hiddenwebListeners.get(el);
      (""" + PRESS_CLICK_JS + """)(el, ["mousedown", "mouseup"].filter(
        (t) => (own && own.has(t)) || typeof el["on" + t] === "function"), pressed);
    }
    else if (type.startsWith("mouse") || type === "dblclick") mouse(type);
    else if (type === "submit") {
      if (/^\\s*javascript:/i.test(el.getAttribute("action") || ""))
        HTMLFormElement.prototype.submit.call(el);
      else el.dispatchEvent(new Event("submit", {bubbles: true, cancelable: true}));
    }
    else if (type === "focus" || type === "blur") el.dispatchEvent(new FocusEvent(type));
    else if (type.startsWith("key")) el.dispatchEvent(new KeyboardEvent(type, {
      bubbles: true, cancelable: true, key: "a"}));
    else {
      if (option !== undefined && el.tagName === "SELECT") {
        if (!st.selects.has(el)) st.selects.set(el, el.selectedIndex);  // restored at the end
        el.selectedIndex = Number(option);
      }
      el.dispatchEvent(new Event(type, {bubbles: true, cancelable: true}));
    }
  } catch (e) {}
  return true;
}"""
# after an event, in one call: the page's link URLs, how many forms appeared (their markup kept
# as it was then), its History-API routes and window.open URLs (both read and cleared)
AFTER_JS = f"""() => {{
  const st = window.__hiddenwebFiring;
  let n = 0;
  for (const f of st ? Array.from(document.forms) : []) {{
    if (st.forms.has(f)) continue;
    st.forms.add(f);
    if (st.fresh.length < {MAX_FORMS}) {{ st.fresh.push([f, f.outerHTML.slice(0, 20000)]); n++; }}
  }}
  return {{links: ({LINKS_JS})(), forms: n, routes: ({ROUTES_JS})(), found: ({FOUND_JS})()}};
}}"""
# after an event that took the page to another view of its document (a click on the app's logo,
# its home link, a tab that routes): the view the firing began on, taken again as the routers
# take one (a hash change; else the History API's entry and a popstate); true when it moved
RESTORE_VIEW_JS = """(home) => {
  const bare = (url) => url.replace(/#$/, "");
  if (bare(location.href) === bare(home)) return false;
  const to = new URL(home), old = location.href;
  if (to.pathname === location.pathname && to.search === location.search && to.hash) {
    location.hash = to.hash;  // a hash change, as a hash router hears one
    return true;
  }
  history.pushState(history.state, "", home);
  window.dispatchEvent(new PopStateEvent("popstate", {state: history.state}));
  if (to.pathname === location.pathname && to.search === location.search) {
    // the document's own view, with no hash: a hash router hears its change too
    window.dispatchEvent(new HashChangeEvent("hashchange", {oldURL: old, newURL: home}));
  }
  return true;
}"""
# before the end: each select whose options were fired back to the option it had, with its change
# event (a dependent select's script empties the child again); how many were changed back
RESTORE_JS = """() => {
  const st = window.__hiddenwebFiring;
  let n = 0;
  for (const [el, index] of st ? st.selects : []) {
    if (!el.isConnected || el.selectedIndex === index) continue;
    el.selectedIndex = index;
    try { el.dispatchEvent(new Event("change", {bubbles: true, cancelable: true})); } catch (e) {}
    n++;
  }
  return n;
}"""
# the end: markup of the forms that appeared and are gone again
END_JS = """() => {
  const st = window.__hiddenwebFiring;
  delete window.__hiddenwebFiring;
  return st ? st.fresh.filter(([f]) => !f.isConnected).map(([, markup]) => markup) : [];
}"""


class PageEvents:
    """Fires a rendered page's events within its bounds (see the module docstring)."""

    def __init__(self, crawler: Any, guard: Guard, config: BrowserConfig,
                 download_timeout: float) -> None:
        self.stats = crawler.stats
        self.guard = guard
        self.safety = guard.safety  # the crawl's one policy, with its opt-ins
        self.budget = config.event_budget
        self.seconds = min(config.event_seconds, 0.4 * download_timeout)
        self.wait = config.event_wait
        self.retry = config.event_retry  # lab knob browser_event_retry
        self.routes = config.hash_routes  # lab knob hash_route_pages (hiddenweb.routes)
        self.press = config.press_clicks  # lab knob browser_press_clicks
        self.containers = config.event_containers  # lab knob browser_event_containers
        self.route_memory = config.event_route_memory  # lab knob browser_event_route_memory
        self.restore_view = config.event_restore_view  # lab knob browser_event_restore_view
        self.hidden_links = config.event_hidden_links  # lab knob browser_event_hidden_links
        # lab knob browser_event_delegated_share: kept for delegated clicks while own handlers
        # are left, of the budget (at most MAX_DELEGATED events) and of the time
        self.share = config.event_delegated_share
        self.reserve = min(MAX_DELEGATED, int(self.budget * self.share))
        # URL template -> (signatures of handlers that brought nothing new, URLs brought)
        self.memory: OrderedDict[str, tuple[set[str], set[str]]] = OrderedDict()
        # a document whose hash routes are pages -> signature -> [route templates on whose
        # pages it brought nothing, whether it brought something on any]
        self.documents: OrderedDict[str, dict[str, list[int]]] = OrderedDict()

    async def fire(self, page: Any, render: Render, until: tuple[str, Any] | None = None
                   ) -> str:
        """Fire ``page``'s events for ``render``; return the HTML to append to its DOM (links
        and forms that appeared and were gone again). A dead page's error is raised. With
        ``until`` (a script and its argument), stop as soon as the script returns a number
        ≥ 0 after an event, the page left as that event left it (a form a click reveals,
        which a later event may hide again: :mod:`hiddenweb.browser.formtarget`)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.seconds
        found_before = len(render.found)
        render.navigations = 0  # a fired event's navigation is aborted, its URL found
        try:
            start = set(await page.evaluate(LINKS_JS))
            hrefs = set(await page.evaluate(LINKS_JS, True))  # hash routes their own
            home = page.url  # the view events are fired on (a redirect on load taken)
            await page.evaluate(START_JS)
            self._routes(await page.evaluate(ROUTES_JS), render)  # routes taken while loading
        except PlaywrightError as exc:
            return self._failed(exc, page)
        fruitless, brought = self._memory(self.memory_key(render.request.url))
        chrome = self._document(render.request.url)  # its document's handlers, for a route
        links: list[str] = []  # appeared after an event, in order
        fired = offered = forms = delegated = 0
        reached = False  # ``until`` said so
        # own handlers stop here while delegated clicks are left (their share of the budget
        # and of the time); once those are done, own handlers have what is left
        own_budget = self.budget - self.reserve
        own_deadline = deadline - self.seconds * self.share
        delegated_done = False  # with no share, ``own`` below is always true
        render.firing = True
        try:
            while fired < self.budget and offered < 4 * self.budget:
                now = loop.time()
                if now >= deadline:
                    self.stats.inc_value("hiddenweb/browser/events/time_capped")
                    break
                own = delegated_done or (fired - delegated < own_budget and now < own_deadline)
                target = await page.evaluate(NEXT_JS, [list(EVENT_TYPES), MAX_SCAN, MAX_OPTIONS,
                                                       delegated < MAX_DELEGATED, self.routes,
                                                       self.press, self.containers, own])
                if target is None:
                    if own:
                        break
                    delegated_done = True  # none left: own handlers take the rest
                    continue
                offered += 1
                reason = self.unsafe(target, render.request.url)
                if reason:
                    self.stats.inc_value("hiddenweb/browser/events/skipped_unsafe")
                    self.stats.inc_value(f"hiddenweb/safety/refused/{reason}")
                    logger.debug("Not firing %s on <%s> %r of %s (%s)", target["type"],
                                 target["tag"], target["text"][:60], page.url, reason)
                    continue
                signature = _signature(target)
                if signature in fruitless or _barren(chrome, signature):
                    self.stats.inc_value("hiddenweb/browser/events/skipped_repeat")
                    continue
                urls_before = {*render.found, *(u for _, u in render.captured)}
                render.stopped.clear()  # an aborted navigation of the last event: not ours
                dialogs = render.dialogs
                if not await page.evaluate(FIRE_JS, [target["type"], self.press]):
                    continue
                fired += 1
                delegated += bool(target.get("delegated"))
                await self._quiet(page, render, max(0.0, min(self.wait, deadline - loop.time())))
                if self.retry and render.dialogs > dialogs and urls_before >= \
                        {*render.found, *(u for _, u in render.captured)}:
                    await self._again(page, render, target["type"], deadline)
                after = await page.evaluate(AFTER_JS)
                new_forms = after["forms"]
                self._routes(after["routes"], render)
                for url in after["found"]:
                    render.find(url)
                now = set(after["links"])
                fresh = [u for u in now - start if u not in links]
                links += fresh
                forms += new_forms
                got = ({*render.found, *(u for _, u in render.captured)} - urls_before) | set(fresh)
                new_urls = got - brought
                logger.debug("Fired %s on <%s> %r of %s: %d URLs (%d new to its memory), "
                             "%d forms", target["type"], target["tag"], target["text"][:60],
                             page.url, len(got), len(new_urls), new_forms)
                useless = not new_urls and not new_forms
                if useless and len(fruitless) < MAX_MEMORY:
                    fruitless.add(signature)
                if chrome is not None and (signature in chrome or len(chrome) < MAX_MEMORY):
                    record = chrome.setdefault(signature, [0, 0])
                    record[0] += useless
                    record[1] |= not useless
                if len(brought) < MAX_MEMORY:
                    brought.update(got)
                if self.restore_view and page.url != home \
                        and await page.evaluate(RESTORE_VIEW_JS, home):
                    self.stats.inc_value("hiddenweb/browser/events/views_restored")
                    await self._quiet(page, render,
                                      max(0.0, min(self.wait, deadline - loop.time())))
                if until is not None and await page.evaluate(*until) >= 0:
                    reached = True
                    break
            else:
                if fired >= self.budget:
                    self.stats.inc_value("hiddenweb/browser/events/budget_spent")
            if not reached and await page.evaluate(RESTORE_JS):
                # the forms read next are as the page gave them
                await self._quiet(page, render, min(self.wait, max(0.5, deadline - loop.time())))
            gone_forms = await page.evaluate(END_JS)
            current = set(await page.evaluate(LINKS_JS, True))
        except PlaywrightError as exc:
            return self._failed(exc, page)
        finally:
            render.firing = False
        if fired:
            self.stats.inc_value("hiddenweb/browser/events/pages")
            self.stats.inc_value("hiddenweb/browser/events/fired", fired)
        if delegated:
            self.stats.inc_value("hiddenweb/browser/events/delegated", delegated)
        if links:
            self.stats.inc_value("hiddenweb/browser/events/found_links", len(links))
        if len(render.found) > found_before:
            self.stats.inc_value("hiddenweb/browser/events/found_urls",
                                 len(render.found) - found_before)
        if forms:
            self.stats.inc_value("hiddenweb/browser/events/found_forms", forms)
        # gone by the end: those an event showed, and the page's own an event hid (a table's
        # rows regrouped or collapsed by a control fired after them)
        gone = [u for u in links if u not in current]
        if self.hidden_links:
            gone += sorted(hrefs - current - set(links))
        return "".join(f'<a href="{html.escape(u, quote=True)}" data-hiddenweb-event></a>'
                       for u in gone) + "".join(gone_forms)

    def unsafe(self, target: dict[str, Any], page_url: str) -> str | None:
        """The safety policy's refusal of firing ``target`` (:func:`refusal`), or None."""
        return refusal(self.safety, target, page_url)

    def _routes(self, urls: list[str], render: Render) -> None:
        """History-API routes and hash changes: URLs found, but the page's own; a hash route
        (``#/runs/7``) with its fragment, when hash routes are pages (:mod:`hiddenweb.routes`),
        else without."""
        own = render.request.url
        for url in urls:
            if urlsplit(url).scheme not in ("http", "https"):
                continue
            if self.routes and is_route(url):
                if url != own:
                    render.find(url)
            elif url.split("#")[0] != own.split("#")[0]:
                render.find(url.split("#")[0])

    def memory_key(self, url: str) -> str:
        """Whose memory of handlers fired a page's firing reads and adds to: its URL template's
        (a hash route's, when hash routes are pages, :mod:`hiddenweb.routes`: ``/#/runs/{n}``).
        With the lab knob ``browser_event_route_memory`` off, every route of a document shares
        one (see :meth:`_document` for what it shares when on)."""
        if self.routes and is_route(url) and not self.route_memory:
            return template_key(url.split("#", 1)[0]) + "#"
        return template_key(url)

    def _document(self, url: str) -> dict[str, list[int]] | None:
        """For a hash route (hash routes pages, lab knob ``browser_event_route_memory`` on),
        what its document's handlers brought on each route template: a single-page app's views
        share its chrome (a sidebar, a header's menus), whose handlers that brought nothing on
        :data:`BARREN_ROUTES` views and never anything bring nothing on the next (MLflow: 34 of
        39 renders stopped at the time cap, firing its chrome again), but a control of the
        chrome that brought something on one view may bring something else on another (MLflow's
        sidebar's "Model training": on the home view a link to the model registry, the second
        time nothing new; on an experiment's view its runs' list, never reached while one
        memory served every route). Else None."""
        if not (self.routes and self.route_memory and is_route(url)):
            return None
        return _recent(self.documents, template_key(url.split("#", 1)[0]), dict)

    def _memory(self, template: str) -> tuple[set[str], set[str]]:
        return _recent(self.memory, template, lambda: (set(), set()))

    async def _again(self, page: Any, render: Render, key: str, deadline: float) -> None:
        """The event just fired was answered by a dialog and brought no URL: a handler that
        refuses while the page is busy ("one request at a time", and the last event's request
        is still out on a slow server). Once the page's requests have ended (awaited at most
        ``browser_event_retry`` s), it is fired once more (stat ``…/events/retried``)."""
        loop = asyncio.get_running_loop()
        await self._quiet(page, render, max(0.0, min(self.retry, deadline - loop.time())))
        if loop.time() < deadline and await page.evaluate(FIRE_JS, [key, self.press]):
            self.stats.inc_value("hiddenweb/browser/events/retried")
            await self._quiet(page, render, max(0.0, min(self.wait, deadline - loop.time())))

    async def _quiet(self, page: Any, render: Render, seconds: float) -> None:
        """Until none of the page's requests was in flight for :data:`QUIET` s (at most
        ``seconds``)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        await asyncio.sleep(min(0.03, seconds))  # the event's own requests are asked first
        await self.guard.quiet(page, deadline - loop.time(), QUIET, 0.03)

    def _failed(self, exc: PlaywrightError, page: Any) -> str:
        if _DIED.search(str(exc)):
            raise exc
        logger.debug("Events of %s not fired to the end: %s", page.url,
                     str(exc).splitlines()[0][:200])
        return ""


def refusal(safety: SafetyPolicy, target: dict[str, Any], page_url: str) -> str | None:
    """The safety policy's refusal of clicking or firing ``target`` (a control described by
    the page: ``tag``, ``text``, ``words``, ``code``, ``href``, ``method``, ``confirm``), judged
    as a button outside a form: its words, its handler's identifiers, its URLs and quoted
    paths; None when allowed."""
    code = target.get("code") or ""
    label = " ".join([target.get("text") or "", target.get("words") or "",
                      " ".join(_IDENT.findall(code))])
    urls = [target["href"]] if target.get("href") else []
    urls += [urljoin(page_url, q) for q in _QUOTED.findall(code)[:10]]
    markup = {k: v for k, v in (("data-method", target.get("method") or ""),
                                ("data-confirm", "1" if target.get("confirm") else ""))
              if v}
    for url in urls or [""]:
        verdict = safety.link(url, label, markup or None)  # SAFETY: a button
        if not verdict.allowed:
            return verdict.reason
    return None


def _recent(store: OrderedDict, key: str, make: Any) -> Any:
    """``store[key]``, made by ``make()`` if missing, as the most recent of at most
    :data:`MAX_TEMPLATES` keys (the oldest dropped)."""
    if key in store:
        store.move_to_end(key)
    else:
        store[key] = make()
        if len(store) > MAX_TEMPLATES:
            store.popitem(last=False)
    return store[key]


def _barren(chrome: dict[str, list[int]] | None, signature: str) -> bool:
    """Whether a handler brought nothing on the pages of :data:`BARREN_ROUTES` route templates
    of its document and never brought anything on any."""
    record = chrome.get(signature) if chrome is not None else None
    return record is not None and record[0] >= BARREN_ROUTES and not record[1]


def _signature(target: dict[str, Any]) -> str:
    what = target.get("code") or f"{target.get('text', '')[:80]}|{target.get('words', '')[:80]}"
    return f"{target['tag']}|{target['type']}|{what}|{target.get('href', '')}"
