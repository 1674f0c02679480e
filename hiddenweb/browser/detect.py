"""Which pages need the browser: :func:`needs_browser` (scripts build links or forms, or submit
forms), :func:`submitted_by_script` (a form only a script submits), and :class:`BrowserPolicy`
(per URL template: send pages straight to the browser once most of them needed it, and stop
rendering a template whose renders add nothing to what plain HTTP read: :func:`page_offer`).

Pure functions of a page's HTML; no setting, no Playwright.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from urllib.parse import urljoin, urlsplit

from parsel import Selector

from hiddenweb.browser.scripts import SCRIPTED_FORM_ATTR
from hiddenweb.pagetext import template_key
from hiddenweb.routes import is_route
from hiddenweb.urlsources import CLICK_CODE

MAX_ADDITIONS = 200_000  # offer keys of what renders added, kept (about 20 MB at most)

_BUILDS = re.compile(r"createElement|appendChild|insertAdjacentHTML|innerHTML|document\.write"
                     r"|fetch\s*\(|XMLHttpRequest|\.submit\s*\(|requestSubmit|addEventListener")
_SUBMITS = re.compile(r"fetch\s*\(|XMLHttpRequest|preventDefault")


#: elements whose only dynamic part is an event handler or a script URL: any ``on*``
#: attribute (``<div onmouseover>``, ``<input type=button onclick>``, ``<body onload>``), a
#: ``javascript:`` link or form action (the browser fires them: :mod:`.events`)
_HANDLERS = (CLICK_CODE + " | //@onsubmit"
             " | //form/@action[starts-with(normalize-space(.), 'javascript:')]")


def needs_browser(page: Selector) -> bool:
    """True when scripts on the page build links or forms, or submit forms (any inline script
    doing DOM work or requests, any external script), or when an element has an event handler
    attribute or a ``javascript:`` URL (its handler is fired in the browser)."""
    for script in page.xpath("//script"):
        kind = (script.attrib.get("type") or "text/javascript").lower()
        if "json" in kind or "template" in kind:
            continue
        if script.attrib.get("src") or _BUILDS.search(script.xpath("string(.)").get() or ""):
            return True
    return bool(page.xpath(_HANDLERS))


#: an ``onsubmit`` that only calls a function with no argument and returns its answer
#: (``return submit_once()``, a double-submit or confirmation guard): it says yes or no, the
#: browser then submits the form by navigation, as plain HTTP does
_GUARD = re.compile(r"^\s*(return\s+)?[A-Za-z_$][\w$]*\s*\(\s*\)\s*;?\s*$")
_BY_ID = re.compile(r"""getElementById\(\s*["']([^"']+)["']|querySelector\(\s*["']#([\w-]+)""")
_ANY_FORM = re.compile(r"""document\.forms|querySelectorAll\(|getElementsByTagName\(\s*["']form""")


def submitted_by_script(page: Selector, form: Selector | None) -> bool:
    """True when a script (not the browser's navigation) submits ``form``: an ``onsubmit``
    handler, or a page script that intercepts submissions and sends them by fetch / XHR; in a
    rendered page, a form that a script listens to (marked by
    :data:`~hiddenweb.browser.scripts.SCRIPTED_FORMS_JS`, a bundle's listeners included).

    A page script that names the forms it hooks by id (``getElementById("form-2")``) is taken
    to hook only those: the page's other forms are submitted by the browser's navigation, and
    plain HTTP does for them. A script that reaches forms in general (``document.forms``,
    ``querySelectorAll``), or names none, is taken to hook every form of the page. An
    ``onsubmit`` guard that takes no argument (``return submit_once()``: it cannot reach the
    form through ``this`` or the event) does not make a form script-submitted."""
    if form is not None:
        if SCRIPTED_FORM_ATTR in form.attrib:  # a rendered page's script listens to it
            return True
        handler = form.attrib.get("onsubmit") or ""
        if form.attrib.get("data-xhr") or handler and not _GUARD.match(handler):
            return True
    hooks = [code for code in page.xpath("//script[not(@src)]/text()").getall()
             if "submit" in code and _SUBMITS.search(code)]
    if not hooks:
        return False
    form_id = form.attrib.get("id") if form is not None else None
    for code in hooks:
        named = {a or b for a, b in _BY_ID.findall(code)}
        if form_id is None or not named or _ANY_FORM.search(code) or form_id in named:
            return True
    return False


_OFFERS = "//a[@href] | //area[@href] | //iframe[@src] | //frame[@src]"


def offer_items(page: Selector, url: str,
                acts_on: Callable[[str, str, Selector, str], bool] | None = None) -> set[str]:
    """What a page offers a crawler: the targets of its links and frames (absolute, no
    fragment) and its forms (``form``, method, action and field names; a GET form's action
    without its query, which its submission replaces with the form's fields: a form without an
    ``action`` on a form's answer, ``/?q=a``, is the form of ``/``, not a new one). ``acts_on``
    (``"link"`` or ``"form"``, the absolute target, the element, ``url``): whether the crawl
    would follow that link or submit that form (in scope, allowed by the safety policy); an
    item it would not is left out. A link to the page itself (an in-page anchor: a script
    that adds ``¶`` links to a page's headings) is not an item."""
    itself = url.split("#", 1)[0]
    items = set()
    for el in page.xpath(_OFFERS):
        href = el.attrib.get("href") if "href" in el.attrib else el.attrib.get("src", "")
        target = urljoin(url, href.strip()).split("#", 1)[0]
        if target != itself and (acts_on is None or acts_on("link", target, el, url)):
            items.add(target)
    for form in page.xpath("//form"):
        fields = sorted(set(form.xpath(".//*[@name]/@name").getall()))
        action = urljoin(url, form.attrib.get("action") or "")
        method = (form.attrib.get("method") or "get").strip().lower()
        if acts_on is None or acts_on("form", action, form, url):
            items.add(" ".join(["form", method, _submitted_to(action, method), *fields]))
    return items


def _submitted_to(action: str, method: str) -> str:
    """Where a form's submission goes, as an offer: a GET form's action without its query
    (HTML's form submission replaces the action's query with the form's fields); any other's
    as it is."""
    if method not in ("get", ""):
        return action
    parts = urlsplit(action)
    return parts._replace(query="").geturl() if parts.query else action


#: the :func:`page_offer` mark of a page that links another view of itself (:func:`is_view_of`)
VIEWS_ITEM = "views of the page itself"


def is_view_of(target: str, url: str) -> bool:
    """Whether the link ``target`` (an :func:`offer_items` item: a form's is never one) is
    another view of the page at ``url``: its own scheme, host and path with another query (a
    sort order, a filter, a facet, a hidden column, a page of it)."""
    if target.startswith("form "):
        return False
    t, u = urlsplit(target), urlsplit(url)
    return (t.scheme, t.netloc, t.path) == (u.scheme, u.netloc, u.path) and t.query != u.query


def offer_key(item: str) -> bytes:
    """An :func:`offer_items` item as the 8-byte hash :func:`page_offer` keeps."""
    return hashlib.sha1(item.encode("utf-8", "replace")).digest()[:8]


def page_offer(page: Selector, url: str,
               acts_on: Callable[[str, str, Selector, str], bool] | None = None
               ) -> frozenset[bytes]:
    """What a page offers a crawler (:func:`offer_items`), as 8-byte hashes. A render whose
    offer holds nothing the plain copy's did added nothing a crawl can follow; with
    ``acts_on``, nothing the crawl would follow or submit (a render that adds only a login
    link, or a filter form the policy refuses, adds nothing to the crawl). With the mark
    :data:`VIEWS_ITEM` when a link is another view of the page (:func:`is_view_of`)."""
    items = offer_items(page, url, acts_on)
    if any(is_view_of(i, url) for i in items):
        items.add(VIEWS_ITEM)
    return frozenset(offer_key(i) for i in items)


def script_signature(page: Selector, url: str) -> str:
    """What runs on a page: a hash of its external scripts (host and path, no query) and of the
    DOM-building or request-making calls its inline scripts make (the ``_BUILDS`` words they
    use, not their text, which often holds the page's own data). Pages of different URL
    templates with one signature run the same code (a site's one bundle on every page)."""
    srcs = sorted({urljoin(url, src.strip()).split("?", 1)[0].split("#", 1)[0]
                   for src in page.xpath("//script/@src").getall() if src.strip()})
    calls = sorted({m.group(0).split("(")[0].strip() for code in
                    page.xpath("//script[not(@src)]/text()").getall()
                    for m in _BUILDS.finditer(code)})
    return hashlib.sha1("\n".join([*srcs, "", *calls]).encode("utf-8", "replace")).hexdigest()[:16]


#: words of text (:func:`~hiddenweb.pagetext.text_blocks`) from which a document read over
#: plain HTTP is a page, not a single-page app's shell (:meth:`BrowserPolicy.anchor_of`)
PAGE_WORDS = 150


def _document(url: str) -> str:
    """``url`` without its fragment: the document a hash route (or an anchor) is of."""
    return url.split("#", 1)[0]


class BrowserPolicy:
    """Per URL template, two records: the pages checked over plain HTTP and how many needed the
    browser by their markup (:meth:`record`, :func:`needs_browser`), and the renders of pages
    plain HTTP had read and how many added something to follow (:meth:`rendered`: a link,
    frame or form the plain copy lacked, a URL the page went to, a script request not seen
    before). The spider's ``min_seen`` is lab knob ``browser_min_renders`` (2).

    * :meth:`direct`: once ``min_seen`` pages of a template were checked, at least ``share``
      of them needed the browser, and at least ``share`` of ``min_seen`` or more renders added
      something, the template's pages go straight to the browser (one download instead of two);
    * :meth:`worth_rendering`: once ``min_seen`` renders of a template were made and fewer than
      ``useful_share`` of them added anything, its pages are no longer rendered (a site whose
      every page loads a script that builds nothing), but a few still are, so that the
      template is looked at again: the ``sample``-th page skipped, then the one at twice that
      count each time a look added nothing (the 10th, 20th, 40th, 80th, …: about
      log2(n / sample) renders for n pages), the gap back to ``sample`` once a render of the
      template adds something;
    * across templates, by what their pages run (:func:`script_signature`, :meth:`note`): once
      ``2 * min_seen`` renders of pages with one signature, over at least ``min_templates``
      templates, were made and fewer than ``useful_share`` of them added anything
      (:meth:`scripts_idle`), a new template with that signature is judged idle after one
      render that added nothing, not ``min_seen`` (a site that loads one bundle on every page
      of every kind pays one render per template); and a template first met once its
      signature is idle is judged idle with no render at all (:meth:`verdict`), but for a few,
      as for the pages of an idle template: the ``sample``-th such new template is rendered,
      then the one at twice that count, and so on (a site with a template per sort order and
      facet of each table, all on one bundle, rendered 95 pages for 12 that added anything).
      Its own pages are still looked at (:meth:`worth_rendering`), and a render that adds
      something ends its verdict;
    * per document, its hash routes (:meth:`worth_routing`): they always go to the browser,
      but once ``2 * min_seen`` of them were judged and fewer than ``route_share`` of them
      added anything, the others are not rendered at all, but for a few (as above);
    * a document read over plain HTTP whose text is a page's (:data:`PAGE_WORDS` words or
      more, :meth:`read_plain`) is no app's shell: a fragment of it that looks like a hash
      route is an anchor (:meth:`anchor_of`, lab knob ``route_anchors``). A single-page
      app's shell shows almost no text before its script runs (MLflow's 9 words, Docsify's
      none); a wiki page that links ``#/Milestone`` (Trac's search-in-page anchors) shows
      thousands.
    """

    def __init__(self, mode: str, min_seen: int = 4, share: float = 0.5,
                 useful_share: float = 0.5, sample: int = 10, min_templates: int = 3,
                 judge_new: bool = True, route_share: float = 0.0,
                 judge_read: bool = False, route_templates: bool = False,
                 route_anchors: bool = False) -> None:
        self.mode, self.min_seen, self.share = mode, min_seen, share
        self.route_anchors = route_anchors  # lab knob route_anchors (:meth:`anchor_of`)
        self.page_documents: set[str] = set()
        #: lab knob browser_route_templates (:meth:`worth_routing`)
        self.route_templates = route_templates
        #: lab knob browser_route_share (:meth:`worth_routing`); 0: every route is rendered
        self.route_share = route_share
        #: lab knob browser_judge_read (:meth:`read_plain`); nothing kept when nothing renders
        self.judge_read = judge_read and mode != "never"
        self.plain_reads: set[str] = set()
        self.route_renders: dict[str, int] = defaultdict(int)  # per document: its routes'
        self.route_useful: dict[str, int] = defaultdict(int)
        self.route_skipped: dict[str, int] = defaultdict(int)
        self.route_gap: dict[str, int] = {}
        self.route_due: dict[str, int] = {}
        self.judge_new = judge_new  # lab knob browser_judge_new_templates (:meth:`note`)
        self.useful_share, self.sample, self.min_templates = useful_share, sample, min_templates
        self.signature: dict[str, str] = {}  # template -> script signature of its pages
        self.sig_renders: dict[str, int] = defaultdict(int)
        self.sig_useful: dict[str, int] = defaultdict(int)
        self.sig_templates: dict[str, set[str]] = defaultdict(set)
        self.seen: dict[str, int] = defaultdict(int)
        self.needed: dict[str, int] = defaultdict(int)
        self.renders: dict[str, int] = defaultdict(int)
        self.useful: dict[str, int] = defaultdict(int)
        self.skipped: dict[str, int] = defaultdict(int)
        self.gap: dict[str, int] = {}  # pages an idle template skips before its next look
        self.due: dict[str, int] = {}  # the skipped count at which it is looked at again
        #: templates first met with an idle signature and not rendered for it (:meth:`note`);
        #: per signature, the new templates met so far and the count at which one is rendered
        self.by_scripts: set[str] = set()
        self.sig_counted: set[str] = set()  # templates counted in sig_new
        self.sig_new: dict[str, int] = defaultdict(int)
        self.sig_gap: dict[str, int] = {}
        self.sig_due: dict[str, int] = {}
        self.script_requests: set[str] = set()
        self.additions: set[bytes] = set()  # offer keys of what renders added (new_additions)

    def record(self, url: str, needed: bool) -> None:
        key = template_key(url)
        self.seen[key] += 1
        self.needed[key] += int(needed)

    def note(self, url: str, signature: str) -> None:
        """The script signature (:func:`script_signature`) of a page of ``url``'s template; a
        template met first once its signature is idle is judged by it (the class docstring)."""
        key = template_key(url)
        self.signature[key] = signature
        # counted once, when first met with idle scripts and no render of its own judged
        # (met before they were idle, its pages still waited for a render of their own)
        if self.judge_new and key not in self.sig_counted and not self.renders.get(key) \
                and self.scripts_idle(url):
            self.sig_counted.add(key)
            self.sig_new[signature] += 1
            if not self._looked_at(signature, self.sig_new[signature], self.sig_gap,
                                   self.sig_due):
                self.by_scripts.add(key)  # else rendered as any new template

    def rendered(self, url: str, useful: bool) -> None:
        key = template_key(url)
        self.renders[key] += 1
        self.useful[key] += int(useful)
        if useful:  # looked at as often as at first again
            self.gap.pop(key, None)
        if is_route(url):
            document = _document(url)
            self.route_renders[document] += 1
            self.route_useful[document] += int(useful)
            if useful:
                self.route_gap.pop(document, None)
        sig = self.signature.get(key)
        if sig is not None:
            self.sig_renders[sig] += 1
            self.sig_useful[sig] += int(useful)
            self.sig_templates[sig].add(key)

    def scripts_idle(self, url: str) -> bool:
        """Whether the pages that run what ``url``'s template's pages run (its signature) were
        rendered idle across templates (the class docstring)."""
        sig = self.signature.get(template_key(url))
        renders = self.sig_renders.get(sig, 0) if sig is not None else 0
        return renders >= 2 * self.min_seen \
            and len(self.sig_templates[sig]) >= self.min_templates \
            and self.sig_useful.get(sig, 0) < self.useful_share * renders

    def read_plain(self, url: str, words: int = 0) -> None:
        """The crawl read ``url`` over plain HTTP (a GET), a page of ``words`` words of text:
        a render's script GET of it is not new (:meth:`new_script_requests`), and with
        :data:`PAGE_WORDS` words or more it is a page, not an app's shell
        (:meth:`anchor_of`). At most :data:`MAX_ADDITIONS` of each kept."""
        if self.judge_read and len(self.plain_reads) < MAX_ADDITIONS:
            self.plain_reads.add(_document(url))
        if self.route_anchors and words >= PAGE_WORDS \
                and len(self.page_documents) < MAX_ADDITIONS:
            self.page_documents.add(_document(url))

    def anchor_of(self, url: str) -> str | None:
        """The document of hash route ``url`` (without its fragment) when that document was
        read over plain HTTP as a page of text (:meth:`read_plain`): the route is an anchor of
        it; else None."""
        document = _document(url)
        return document if is_route(url) and document in self.page_documents else None

    def new_script_requests(self, urls: list[str]) -> bool:
        """Whether any of ``urls`` (a render's script GETs) was not made by an earlier render
        nor read over plain HTTP already (:meth:`read_plain`: a documentation app's pages,
        whose text files its sidebar names, each route fetching its own)."""
        fresh = [u for u in urls if u not in self.script_requests]
        self.script_requests.update(fresh)
        return any(u not in self.plain_reads for u in fresh)

    def new_additions(self, keys: Iterable[bytes], learn: bool = True) -> bool:
        """Whether any of ``keys`` (:func:`offer_key` of what a render added to its plain
        copy) no earlier render added; with ``learn`` they are recorded (at most
        :data:`MAX_ADDITIONS`)."""
        fresh = set(keys) - self.additions
        if learn and len(self.additions) < MAX_ADDITIONS:
            self.additions |= fresh
        return bool(fresh)

    def verdict(self, url: str) -> str | None:
        """``"useful"`` or ``"idle"`` once ``min_seen`` renders of the template were judged
        (idle: fewer than ``useful_share`` of them added anything), or once one was judged idle
        and its scripts are idle on other templates (:meth:`scripts_idle`), or with none when the
        template was met after they were (:meth:`note`); None before."""
        key = template_key(url)
        renders = self.renders.get(key, 0)
        if renders < self.min_seen:
            # one idle render is enough where the same scripts were idle on other templates,
            # none for a template met once they were (but a few: :meth:`note`)
            if (renders or key in self.by_scripts) and not self.useful.get(key) \
                    and self.scripts_idle(url):
                return "idle"
            return None
        return "useful" if self.useful.get(key, 0) >= self.useful_share * renders else "idle"

    def worth_rendering(self, url: str) -> bool:
        """False for the page of an idle template (:meth:`verdict`), but for a few of them
        (the class docstring), so that the template is looked at again."""
        if self.mode != "auto":
            return self.mode == "always"
        return self._template_looked_at(url)

    def _template_looked_at(self, url: str) -> bool:
        """True unless ``url``'s template is idle (:meth:`verdict`) and ``url`` is not one of
        the few of its pages looked at again (:meth:`_looked_at`), counted as skipped."""
        if self.verdict(url) != "idle":
            return True
        key = template_key(url)
        self.skipped[key] += 1
        return self._looked_at(key, self.skipped[key], self.gap, self.due)

    def _looked_at(self, key: str, n: int, gap: dict[str, int], due: dict[str, int]) -> bool:
        """Whether the ``n``-th one skipped for ``key`` is looked at after all: the
        ``sample``-th, then each at twice the last gap (10th, 20th, 40th, …); ``gap`` and
        ``due`` keep each key's gap and next count."""
        if n < due.get(key, self.sample):
            return False
        gap[key] = gap.get(key, self.sample // 2) * 2
        due[key] = n + gap[key]
        return True

    def routes_idle(self, url: str) -> bool:
        """Whether the hash routes of ``url``'s document were rendered idle: ``2 * min_seen``
        of them judged, fewer than ``route_share`` of them useful."""
        document = _document(url)
        renders = self.route_renders.get(document, 0)
        return self.route_share > 0 and renders >= 2 * self.min_seen \
            and self.route_useful.get(document, 0) < self.route_share * renders

    def worth_routing(self, url: str) -> bool:
        """Whether hash route ``url`` is rendered (:mod:`hiddenweb.routes`). A route can only
        be read in the browser (plain HTTP reads the app's shell), so it always goes straight
        there (:meth:`direct`); but once its document's routes were rendered idle
        (:meth:`routes_idle`: a documentation site whose every page's links are in its
        sidebar, read already), its other routes are not rendered at all, but for a few, as
        for the pages of an idle template: the ``sample``-th skipped, then the one at twice
        that count, and so on; a useful render brings the gap back to ``sample``. With
        ``route_templates`` (lab knob ``browser_route_templates``) a route whose template (a
        view of a record: ``#/experiments/{n}/traces``) was rendered idle (:meth:`verdict`:
        ``min_seen`` renders, fewer than ``useful_share`` of them useful) is not rendered
        either, but for a few, as for the pages of an idle template."""
        if self.mode != "auto" or not is_route(url):
            return True
        if self.route_templates and not self._template_looked_at(url):  # a view idle on
            return False  # the records rendered
        if not self.routes_idle(url):
            return True
        document = _document(url)
        self.route_skipped[document] += 1
        return self._looked_at(document, self.route_skipped[document], self.route_gap,
                               self.route_due)

    def direct(self, url: str) -> bool:
        if self.mode == "always":
            return True
        if self.mode == "never":
            return False
        if is_route(url):  # a hash route: plain HTTP reads the app's empty document
            return True
        key = template_key(url)
        seen, renders = self.seen.get(key, 0), self.renders.get(key, 0)
        return seen >= self.min_seen and self.needed.get(key, 0) >= self.share * seen \
            and renders >= self.min_seen and self.useful.get(key, 0) >= self.share * renders
