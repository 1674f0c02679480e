"""Scripts run in the page: :data:`WRITE_DOCUMENT_JS` (render a body in place),
:data:`DEPENDENT_PROBE_JS` (read a script-filled select's options), :data:`RECORD_OPEN_JS`
(``window.open`` records its URL instead of opening a window), :data:`RECORD_EVENTS_JS`
(``addEventListener`` and History-API routes recorded, for :mod:`hiddenweb.browser.events`),
:data:`FRESH_STORAGE_JS` (each document's Web Storage its own)."""

# A page already showing the request's origin renders the next body in place: the URL becomes
# the request's (history.replaceState: relative links, fetches and pushState resolve as after a
# navigation), then document.open/write/close parse the body and run its scripts, up to
# DOMContentLoaded — Playwright's page.set_content does the same write, keeping the old URL.
WRITE_DOCUMENT_JS = """([url, html]) => {
  history.replaceState(null, "", url);
  document.open();
  document.write(html);
  document.close();
}"""


# A dependent select (issue 5): in the page, choose each value of the parent select in turn
# (input + change events, as a user's choice fires) and read the child's options once they
# changed, or once the request the choice started has been answered (a resource entry) and the
# page has stayed unchanged for 0.5 s, or after ``timeout`` ms. Returns {parent: [child values]}.
# The form is the one the handler found again on the page and marked: ``mark`` is its
# selector (hiddenweb.browser.formtarget.FORM_MARK).
DEPENDENT_PROBE_JS = """async ([mark, parent, child, limit, timeout]) => {
  const f = document.querySelector(mark), p = f.elements[parent], out = {};
  const values = () => Array.from(f.elements[child].options, o => o.value).filter(v => v);
  const vals = Array.from(p.options, o => o.value).filter(v => v).slice(0, limit);
  for (const v of vals) {
    const before = performance.getEntriesByType("resource").length;
    const old = values().join("\\n");
    p.value = v;
    p.dispatchEvent(new Event("input", {bubbles: true}));
    p.dispatchEvent(new Event("change", {bubbles: true}));
    const t0 = performance.now();
    let answered = null;
    while (performance.now() - t0 < timeout) {
      await new Promise(r => setTimeout(r, 15));
      const now = values();
      if (now.length && now.join("\\n") !== old) break;
      if (performance.getEntriesByType("resource").length > before) {
        if (answered === null) answered = performance.now();
        else if (performance.now() - answered > 500) break;
      }
    }
    out[v] = values();
  }
  return out;
}"""


# Installed in every page: the script URL of each shared worker the document starts is kept in
# window.__hiddenwebSharedWorkers (at most 50), for the guard, which does not wait for that
# request (hiddenweb.browser.guard.Guard.in_flight): Chromium reports a shared worker's script as
# the page's request and finishes it in the worker's own target, so the page never sees it end.
# The worker is started as the page asked.
SHARED_WORKERS = "__hiddenwebSharedWorkers"
RECORD_SHARED_WORKERS_JS = """(() => {
  const Shared = window.SharedWorker;
  if (typeof Shared !== "function" || window.""" + SHARED_WORKERS + """) return;
  const urls = window.""" + SHARED_WORKERS + """ = [];
  const Wrapped = function SharedWorker(url, options) {
    if (!new.target) return Shared(url, options);  // throws, as the browser's own does
    try {
      if (urls.length < 50) urls.push(new URL(String(url), document.baseURI).href);
    } catch (e) {}
    return Reflect.construct(Shared, [url, options], new.target);
  };
  Wrapped.prototype = Shared.prototype;
  window.SharedWorker = Wrapped;
})();"""


# Installed in every page (an init script, so in every document it loads): window.open opens no
# window (a popup would be a page outside the pool, outside the routing of its opener); its URL
# is kept for the handler, which reads it as a URL found (hiddenweb.browser.handler).
RECORD_OPEN_JS = """(() => {
  if (window.__hiddenwebOpened) return;
  const opened = [];
  Object.defineProperty(window, "__hiddenwebOpened", {value: opened});
  window.open = function (url) {
    try { if (url) opened.push(String(new URL(url, document.baseURI))); } catch (e) {}
    return null;
  };
})();"""
OPENED_JS = "() => (window.__hiddenwebOpened || []).splice(0).slice(0, 50)"  # read and clear


# A person's click on an element, as the page sees it: the press before it (``pointerdown``,
# ``mousedown``, ``pointerup``, ``mouseup``, at the element's centre, primary button), then the
# click. Components that act on the press, not the click (Radix's and many design systems' tabs
# and menus, drag handles), answer only this; ``el.click()`` alone fires the click. As in a
# browser, a cancelled ``pointerdown`` suppresses the mouse presses; a press type ``skip`` names
# (fired on its own as the element's own handler: not twice) is left out. No focus moves.
# ``pressed`` false (lab knob browser_press_clicks off): the click alone.
PRESS_CLICK_JS = """(el, skip, pressed) => {
  const box = el.getBoundingClientRect(), init = (down) => ({
    bubbles: true, cancelable: true, composed: true, view: window, button: 0,
    buttons: down ? 1 : 0, clientX: box.left + box.width / 2, clientY: box.top + box.height / 2,
    pointerId: 1, pointerType: "mouse", isPrimary: true});
  const press = (type, down) => {
    if (skip && skip.includes(type)) return true;
    const Kind = type.startsWith("pointer") && typeof PointerEvent === "function"
      ? PointerEvent : MouseEvent;
    return el.dispatchEvent(new Kind(type, init(down)));
  };
  if (pressed) {
    const mice = press("pointerdown", true);
    if (mice) press("mousedown", true);
    if (el.isConnected) press("pointerup", false);
    if (mice && el.isConnected) press("mouseup", false);
    if (!el.isConnected) return;
  }
  if (typeof el.click === "function") el.click();
  else el.dispatchEvent(new MouseEvent("click", init(false)));
}"""


# A hash route's ``href`` or ``location.hash`` (``#/page``, ``#!/page``, ``#!page``; not the bare
# ``#/``, ``#!``, ``#!/``, often the href of a link a click handler acts on), as a JS regex: the
# scripts' one test of it, which agrees with the crawl's (hiddenweb.routes.route_of)
ROUTE_HREF_JS = r"/^\s*#(?!(?:\/|!|!\/)\s*$)[!\/]/"
# The href of a link to a single-page app's root view (``#/``, ``#!/``): the document itself,
# when hash routes are pages (hiddenweb.browser.events does not click it)
ROOT_HREF_JS = r"/^\s*#!?\/\s*$/"
# A hash route's render, once its document settled: the route taken again as a hash change (the
# URL set back to the document's, then the hash set), for an app that routes on "hashchange"
# alone and never reads the hash it was loaded with; an app that routed on load is told the same
# route again. True when it was a hash route.
ROUTE_AGAIN_JS = """() => {
  const hash = location.hash;
  if (!""" + ROUTE_HREF_JS + """.test(hash)) return false;
  history.replaceState(history.state, "", location.pathname + location.search);
  location.hash = hash;
  return true;
}"""


# Installed in every page and frame before its scripts: a script's write (an XHR or fetch whose
# method is not GET, HEAD or OPTIONS, a beacon) is never sent; it fails as a network error does
# (fetch rejects with a TypeError, an XHR fires "error" and "loadend", sendBeacon returns false)
# and is recorded (method, URL; read and cleared by WRITES_JS). The guard's route aborts such a
# request too, but Playwright continues a paused request unrouted when it cannot tell which
# frame made it (a page retrying a refused save every 3 ms got one PUT out in about 1 of 4
# crawls of 80 pages), so the write is refused before it is a request at all. Before refusing
# it, the document asks the guard through the binding MAY_POST with the method, the absolute
# URL and the body as text (null when it is not text: a file, a stream, more than 64 KiB); a
# request the safety policy reads as a search (a GraphQL query, an API's ".../search";
# HIDDENWEB_BROWSER_SCRIPT_READS), or the submission of the form the crawler is submitting, to
# its own action (hiddenweb.browser.guard.Guard._form_sends), is then sent as the page asked. A
# synchronous XHR cannot wait for the answer: refused. Beacons are refused without asking.
MAY_POST = "__hiddenwebMayPost"
RECORD_WRITES_JS = """(() => {
  if (window.__hiddenwebWrites) return;
  const writes = [];
  Object.defineProperty(window, "__hiddenwebWrites", {value: writes});
  const reads = new Set(["GET", "HEAD", "OPTIONS"]);
  const LIMIT = 65536;
  const absolute = (url) => {
    try { return String(new URL(String(url), document.baseURI)); } catch (e) { return String(url); }
  };
  const record = (method, url) => {
    if (writes.length < 200) writes.push([method, absolute(url)]);
    return false;
  };
  const textOf = (body) => {  // a Promise of the body's text, or of null
    try {
      if (body === undefined || body === null) return Promise.resolve("");
      if (typeof body === "string") return Promise.resolve(body);
      if (body instanceof URLSearchParams) return Promise.resolve(body.toString());
      if (typeof FormData !== "undefined" && body instanceof FormData) {
        const pairs = [];
        for (const [k, v] of body.entries()) {
          if (typeof v !== "string") return Promise.resolve(null);
          pairs.push([k, v]);
        }
        return Promise.resolve(new URLSearchParams(pairs).toString());
      }
      if (typeof Blob !== "undefined" && body instanceof Blob)
        return body.size <= LIMIT ? body.text() : Promise.resolve(null);
      if (body instanceof ArrayBuffer || ArrayBuffer.isView(body))
        return Promise.resolve(body.byteLength <= LIMIT ? new TextDecoder().decode(body) : null);
    } catch (e) {}
    return Promise.resolve(null);
  };
  // a Promise: true when the guard lets the request go, else false (recorded as refused)
  const judge = (method, url, body) => {
    const ask = window.__hiddenwebMayPost;
    if (typeof ask !== "function") return Promise.resolve(record(method, url));
    return Promise.resolve(body)
      .then((text) => ask(method, absolute(url), text === undefined ? null : text))
      .then((ok) => ok === true || record(method, url), () => record(method, url));
  };
  const fetch0 = window.fetch;
  if (fetch0) {
    window.fetch = function (input, init) {
      let method = init && init.method, url = input, body;
      const isRequest = typeof Request !== "undefined" && input instanceof Request;
      if (isRequest) {
        method = method || input.method;
        url = input.url;
      }
      const m = String(method || "GET").toUpperCase();
      if (reads.has(m)) return fetch0.apply(window, arguments);  // (as a method it throws)
      if (init && init.body !== undefined) body = textOf(init.body);
      else if (isRequest && input.body) body = input.clone().text().catch(() => null);
      else body = Promise.resolve("");
      const args = arguments;
      return judge(m, url, body).then((ok) => ok ? fetch0.apply(window, args)
        : Promise.reject(new TypeError("Failed to fetch")));
    };
  }
  const X = XMLHttpRequest.prototype, open0 = X.open, send0 = X.send, opened = new WeakMap();
  X.open = function (method, url, async) {
    opened.set(this, [String(method || "GET").toUpperCase(), url, arguments.length < 3 || !!async]);
    return open0.apply(this, arguments);
  };
  X.send = function (body) {
    const o = opened.get(this);
    if (!o || reads.has(o[0])) return send0.apply(this, arguments);
    const xhr = this, args = arguments;
    const fail = () => setTimeout(() => {
      for (const type of ["error", "loadend"]) xhr.dispatchEvent(new ProgressEvent(type));
    }, 0);
    if (!o[2]) { record(o[0], o[1]); fail(); return; }  // synchronous: cannot wait
    judge(o[0], o[1], textOf(body)).then((ok) => {
      if (!ok) return fail();
      try { send0.apply(xhr, args); } catch (e) { fail(); }
    });
  };
  if (navigator.sendBeacon) {
    navigator.sendBeacon = function (url) { record("POST", url); return false; };
  }
})();"""
WRITES_JS = "() => (window.__hiddenwebWrites || []).splice(0)"  # read and clear


# Installed in every page and frame before its scripts (lab knob browser_fresh_storage): the
# document's localStorage and sessionStorage are its own, empty at first, kept in memory for as
# long as the document lives and never written to the browser's storage. Every page of a crawl
# renders in one browser context, whose origin storage all its pages share: what one render's
# script or fired events stored (a view switch, the tab a record "last showed", a dismissed
# banner) changed what every later render of the origin showed, and what concurrent renders
# showed depended on their order. A render now shows what a first visit of its URL shows, with
# the crawl's cookies (as a Scrapy request carries them and nothing else of an earlier one).
# Keys are read and written as a Storage's are: getItem/setItem/removeItem/clear/key/length
# and as properties; no "storage" event is sent (no other document shares the storage).
FRESH_STORAGE_JS = """(() => {
  const fresh = () => {
    const items = new Map();
    const api = {
      getItem: (k) => (items.has(String(k)) ? items.get(String(k)) : null),
      setItem: (k, v) => { items.set(String(k), String(v)); },
      removeItem: (k) => { items.delete(String(k)); },
      clear: () => { items.clear(); },
      key: (i) => {
        const keys = [...items.keys()];
        return i >= 0 && i < keys.length ? keys[i] : null;
      },
    };
    return new Proxy(api, {
      get: (t, p) => p === "length" ? items.size
        : p in t ? t[p] : typeof p === "string" && items.has(p) ? items.get(p) : undefined,
      set: (t, p, v) => { if (p in t) return false; items.set(String(p), String(v)); return true; },
      has: (t, p) => p in t || items.has(String(p)),
      deleteProperty: (t, p) => { items.delete(String(p)); return true; },
      ownKeys: () => [...items.keys()],
      getOwnPropertyDescriptor: (t, p) => items.has(String(p))
        ? {value: items.get(String(p)), enumerable: true, configurable: true, writable: true}
        : undefined,
    });
  };
  for (const name of ["localStorage", "sessionStorage"]) {
    try {
      Object.defineProperty(window, name, {value: fresh(), configurable: true, enumerable: true});
    } catch (e) {}
  }
})();"""


# Installed in every page with RECORD_OPEN_JS: the event types each element got a listener for
# through addEventListener (a WeakMap: nothing kept alive; hiddenweb.browser.events fires them),
# and the URLs the page gave the History API (pushState, replaceState) or the hash it moved to:
# the document stays, the URL is a route of the site (read and cleared by ROUTES_JS); and the
# URLs of the documents the page's scripts set out to load (location = …, a link clicked: the
# Navigation API's ``navigate`` event, sent as the navigation starts; not a form's POST, a
# reload or a move in history), read and cleared by LEAVING_JS. The guard sees such a
# navigation only once its request is made, which may be after the page was read, or never
# (another navigation or window.stop() cancelled it first).
RECORD_EVENTS_JS = """(() => {
  if (window.__hiddenwebListeners) return;
  const listeners = new WeakMap(), routes = [], leaving = [], delegates = new Set();
  Object.defineProperty(window, "__hiddenwebListeners", {value: listeners});
  // the types the document and the window listen to: a click there may be a delegated one
  Object.defineProperty(window, "__hiddenwebRootListeners", {value: delegates});
  Object.defineProperty(window, "__hiddenwebRoutes", {value: routes});
  Object.defineProperty(window, "__hiddenwebLeaving", {value: leaving});
  const add = EventTarget.prototype.addEventListener;
  EventTarget.prototype.addEventListener = function (type, listener, options) {
    try {
      if (this instanceof Element) {
        let types = listeners.get(this);
        if (!types) { types = new Set(); listeners.set(this, types); }
        types.add(String(type).toLowerCase());
      } else if (this === document || this === window) {
        delegates.add(String(type).toLowerCase());
      }
    } catch (e) {}
    return add.call(this, type, listener, options);
  };
  const note = (url) => {
    try { if (routes.length < 100) routes.push(String(new URL(url, document.baseURI))); }
    catch (e) {}
  };
  for (const name of ["pushState", "replaceState"]) {
    const original = History.prototype[name];
    History.prototype[name] = function (state, title, url) {
      if (url !== undefined && url !== null) note(url);
      return original.apply(this, arguments);
    };
  }
  add.call(window, "hashchange", () => note(location.href));
  if (window.navigation) {
    add.call(window.navigation, "navigate", (e) => {
      try {
        if (e.destination.sameDocument || e.formData || leaving.length >= 100) return;
        if (e.navigationType === "push" || e.navigationType === "replace") {
          leaving.push(String(e.destination.url));
        }
      } catch (err) {}
    });
  }
})();"""
ROUTES_JS = "() => (window.__hiddenwebRoutes || []).splice(0)"  # read and clear
LEAVING_JS = "() => (window.__hiddenwebLeaving || []).splice(0)"  # read and clear
# the URLs the page tried to reach by itself so far (window.open, navigations it started), in
# one round trip: read and cleared
FOUND_JS = f"() => ({OPENED_JS})().concat(({LEAVING_JS})())"

# Before the DOM is read: each form without an action of its own (none, empty, a fragment,
# ``javascript:``) whose submission a script listens to is marked with SCRIPTED_FORM_ATTR (read
# by hiddenweb.browser.detect.submitted_by_script): a ``submit`` listener (RECORD_EVENTS_JS) or
# an ``onsubmit`` property set by script on the form, on an ancestor (a framework's one
# listener on its root: React's) or on the document or window (jQuery's delegated
# ``$(document).on("submit", …)``). Such a form is submitted by page actions in Chromium: sent
# over plain HTTP its request is one the page never makes (a single-page app's form has no
# action: the shell's URL with the fields as its query). A form with an action goes there
# without the script as well: not marked. (sqlite-web's query page's "save" form has none and
# jQuery handles its submit: marked, its values sent in Chromium, 6 → 43 browser pages in the
# corpus, the same units.) An ``onsubmit`` attribute is the markup's, judged from the markup.
# How many were marked.
SCRIPTED_FORM_ATTR = "data-hiddenweb-script-submit"  # the name the script below sets
SCRIPTED_FORMS_JS = r"""() => {
  const recorded = window.__hiddenwebListeners, roots = window.__hiddenwebRootListeners;
  const listens = (el) => {
    const own = recorded && recorded.get(el);
    return (own && own.has("submit"))
      || (typeof el.onsubmit === "function" && !el.hasAttribute("onsubmit"));
  };
  const anywhere = (roots && roots.has("submit")) || typeof document.onsubmit === "function"
    || typeof window.onsubmit === "function";
  let n = 0;
  for (const form of Array.from(document.forms)) {
    // a form with an action of its own goes there without the script too (a listener that
    // validates, or one that sends it by fetch to the same endpoint): over plain HTTP
    if (!/^\s*(#|javascript:|$)/i.test(form.getAttribute("action") || "")) continue;
    let yes = anywhere;
    for (let el = form; !yes && el; el = el.parentElement) yes = listens(el);
    if (yes) { form.setAttribute("data-hiddenweb-script-submit", ""); n++; }
  }
  return n;
}"""


# While the crawler fills a form (page actions before its own submit), the page's scripts cannot
# submit it (a select whose change event submits the form would navigate away under the next
# action): form.submit / requestSubmit do nothing until RELEASE_SUBMIT_JS. The crawler's own
# click submits natively, and is preceded by the release.
HOLD_SUBMIT_JS = """() => {
  const P = HTMLFormElement.prototype;
  if (window.__hiddenwebHeld) return;
  Object.defineProperty(window, "__hiddenwebHeld", {value: [P.submit, P.requestSubmit],
                                                    configurable: true});
  P.submit = function () {};
  P.requestSubmit = function () {};
}"""
RELEASE_SUBMIT_JS = """() => {
  const held = window.__hiddenwebHeld;
  if (!held) return;
  HTMLFormElement.prototype.submit = held[0];
  HTMLFormElement.prototype.requestSubmit = held[1];
  delete window.__hiddenwebHeld;
}"""


# Installed in every page: each setTimeout with a delay is recorded with when it is due (by
# performance.now()) until it runs or is cleared, so that FIRE_TIMERS_JS can run it early. The
# page's own timer still runs as it would (cleared only when fired early): nothing changes for a
# page whose timers are never fired. A string callback runs as the browser runs it: global eval.
RECORD_TIMERS_JS = """(() => {
  if (window.__hiddenwebTimers) return;
  const pending = new Map(), set = window.setTimeout, clear = window.clearTimeout;
  Object.defineProperty(window, "__hiddenwebTimers", {value: {pending, clear}});
  window.setTimeout = function (callback, delay, ...args) {
    let id;
    const run = function () {
      pending.delete(id);
      if (typeof callback === "function") return callback.apply(this, args);
      return (0, eval)(String(callback));
    };
    id = set.call(window, run, delay);
    const ms = Number(delay) || 0;
    if (ms > 0) pending.set(id, {run, due: performance.now() + ms});
    return id;
  };
  window.clearTimeout = function (id) {
    pending.delete(id);
    return clear.call(window, id);
  };
})();"""

# Run the page's pending timers due within ``horizon`` ms from now, soonest first, at most
# ``limit`` of them: each one's own timer cleared, then its callback run. Returns how many ran.
FIRE_TIMERS_JS = """([horizon, limit]) => {
  const timers = window.__hiddenwebTimers;
  if (!timers) return 0;
  const now = performance.now();
  const due = Array.from(timers.pending.entries())
    .filter(([, t]) => t.due - now <= horizon)
    .sort((a, b) => a[1].due - b[1].due)
    .slice(0, limit);
  let ran = 0;
  for (const [id, t] of due) {
    if (!timers.pending.has(id)) continue;  // cleared by a timer that ran before it
    timers.pending.delete(id);
    timers.clear.call(window, id);
    try { t.run.call(window); } catch (e) {}
    ran += 1;
  }
  return ran;
}"""
