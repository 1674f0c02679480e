"""Versions of one form: a dependent select filled by a script, a post-back (choosing A posts the
form back, server side, and the reply offers B), and each submit button that sends elsewhere.

Each version is a form of its own: the parent's choice is pinned (:func:`pin`,
:func:`pin_choices`; the choice joins the form's signature, like a wizard's step) and the
child offers the options that choice revealed. Every version gets its own
:class:`~hiddenweb.forms.explorer.FormExplorer`, within a share of
``HIDDENWEB_MAX_SUBMISSIONS_PER_FORM``, through its :class:`~hiddenweb.forms.crawl.FormCrawler`.

* :meth:`FormVersions.probe` / :meth:`FormVersions.options`: a select that offers no value
  until a script fills it (a rendered page): in Chromium, choose each parent value and read the
  child's options (:data:`~hiddenweb.browser.DEPENDENT_PROBE_JS`).
* :meth:`FormVersions.post_back`: the answer to a submission shows the same form with new
  options in a select; the answer's own hidden fields (view state, tokens) are the ones sent.

* :meth:`FormVersions.buttons`: another allowed button with its own ``formaction``,
  ``formmethod``, name or value is a version of the form (``@button`` joins its signature).

Stats: ``hiddenweb/forms/dependent_probes``, ``…/dependent_values``, ``…/post_backs``,
``…/button_variants``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

import scrapy
from scrapy.http import Response, TextResponse

from hiddenweb.browser import BROWSER_SLOT, DEPENDENT_PROBE_JS
from hiddenweb.browser.formtarget import FORM_MARK, FORM_TARGET_META, form_target
from hiddenweb.forms.explorer import FormExplorer
from hiddenweb.forms.extract import ButtonInfo, FormInfo, is_wildcard, pin, pin_choices

if TYPE_CHECKING:
    from hiddenweb.forms.crawl import FormCrawler
    from hiddenweb.safety import FormVerdict

logger = logging.getLogger(__name__)


class FormVersions:
    """The dependent-select probes and post-backs of one crawl's forms (see the module)."""

    def __init__(self, forms: FormCrawler) -> None:
        self.forms = forms
        self.probes: dict[str, FormExplorer] = {}  # dependent-select probes, by signature

    def probe(self, response: TextResponse, probe: FormExplorer) -> scrapy.Request:
        """A dependent select: in Chromium, choose each value of the parent select and read the
        child's options (:data:`~hiddenweb.browser.DEPENDENT_PROBE_JS`); the answer
        (:meth:`options`) starts one bounded explorer per parent value."""
        from scrapy_playwright.page import PageMethod

        parent, child = probe.dependent
        form = probe.form
        self.probes[form.signature] = probe
        self.forms.stats.inc_value("hiddenweb/forms/dependent_probes")
        spider = self.forms.spider
        timeout_ms = int(min(5.0, spider.browser.timeout) * 1000)
        return scrapy.Request(
            response.url, callback=spider.dependent_options, errback=spider.on_error,
            dont_filter=True, priority=response.request.priority + 1 if response.request else 1,
            meta={"playwright": True, "download_slot": BROWSER_SLOT,
                  "playwright_page_goto_kwargs": {"wait_until": "domcontentloaded"},
                  "playwright_page_methods": [PageMethod(
                      "evaluate", DEPENDENT_PROBE_JS,
                      [FORM_MARK, parent, child, self.forms.config.max_submissions, timeout_ms])],
                  "hiddenweb_dependent": form.signature, "hiddenweb_browser_form": True,
                  FORM_TARGET_META: form_target(form),
                  "hiddenweb_form_only": probe.form_only,
                  "hiddenweb_action": {"kind": "form", "page": response.url,
                                       "label": f"choose {parent}",
                                       "form": {"signature": form.signature, "fields": {}}}})

    def options(self, response: Response) -> Iterator[scrapy.Request]:
        """The child's options per parent value: one explorer per value with options, all of
        them together within ``HIDDENWEB_MAX_SUBMISSIONS_PER_FORM`` submissions."""
        stats = self.forms.stats
        stats.inc_value("hiddenweb/downloads")  # a browser download, not a page of its own
        probe = self.probes.get(response.meta["hiddenweb_dependent"])
        methods = response.meta.get("playwright_page_methods") or []
        found = getattr(methods[0], "result", None) if methods else None
        options = {v: [o for o in opts if o] for v, opts in (found or {}).items()
                   if isinstance(opts, list) and any(opts)}
        response.meta["hiddenweb_new_content"] = bool(options)
        if probe is None or not options:
            return
        parent, child = probe.dependent
        share = max(1, self.forms.config.max_submissions // len(options))
        for value, opts in options.items():
            form = pin(probe.form, parent, value, child, opts)
            if form.signature in self.forms.seen:
                continue
            self.forms.seen.add(form.signature)
            explorer = self._explorer(form, share, probe, page=probe.page,
                                      form_only=probe.form_only, dependent=probe.dependent)
            if not explorer.fillable:
                continue
            stats.inc_value("hiddenweb/forms/dependent_values")
            yield from self.forms.start(explorer, offer=False)

    def post_back(self, explorer: FormExplorer, form: FormInfo, response: TextResponse
                  ) -> Iterator[scrapy.Request]:
        """The answer to a submission shows the same form again with other options in a select
        (a post-back: choosing A fills B, server side): that version of the form, with the
        values the submission chose pinned (:func:`pin_choices`) and the answer's own hidden
        fields (view state, tokens), is explored on its own, within a share of
        ``HIDDENWEB_MAX_SUBMISSIONS_PER_FORM`` (like a dependent select's values)."""
        before = {f.name: set(f.options) for f in explorer.form.fields if f.kind == "select"}
        changed = [f.name for f in form.fields if f.kind == "select" and f.name in before
                   and {o for o in f.options if not is_wildcard(o)} - before[f.name]]
        data = response.meta.get("hiddenweb_explore_data") or {}
        version = pin_choices(form, data, changed) if changed else None
        if version is None or version.signature in self.forms.seen:
            return
        self.forms.seen.add(version.signature)
        parents = max((len(explorer.values[explorer.names.index(name)])
                       for name in version.pinned if name in explorer.names), default=1)
        child = self._explorer(version, max(1, self.forms.config.max_submissions // parents),
                               explorer, page=response.url, form_only=True,
                               vocabulary=self.forms.vocabulary)
        self.forms.stats.inc_value("hiddenweb/forms/post_backs")
        logger.debug("Post-back of %s: %s now offers %s", explorer.signature, changed,
                     version.pinned)
        yield from self.forms.start(child, offer=False)

    def _explorer(self, form: FormInfo, limit: int, like: FormExplorer, **kwargs: object
                  ) -> FormExplorer:
        """An explorer of a version of ``like``'s form, sent as ``like`` is."""
        config = self.forms.config
        return FormExplorer(form, self.forms.lvs, limit, self.forms.wave_for(like.by_browser),
                            config.patience, config.lvs_learn, form_class=like.form_class,
                            button=like.button, by_browser=like.by_browser,
                            inert_repeats=like.inert_repeats, **kwargs)

    def buttons(self, form: FormInfo, verdict: FormVerdict, chosen: ButtonInfo | None
                ) -> list[tuple[FormInfo, ButtonInfo]]:
        """The form's other allowed buttons that send something else (another ``formaction``
        or ``formmethod``, another name or value): each is a version of the form of its own
        (``@button`` joins its signature), explored like the first."""
        refused = {i for i, _ in verdict.refused_buttons}
        sends = {(chosen.action, chosen.method, chosen.name, chosen.value)} if chosen else set()
        out = []
        for b in form.buttons:
            key = (b.action, b.method, b.name, b.value)
            if b.index in refused or key in sends or not self.forms.spider.in_scope(b.action):
                continue
            sends.add(key)
            out.append((replace(form, pinned={**form.pinned, "@button": str(b.index)}), b))
            self.forms.stats.inc_value("hiddenweb/forms/button_variants")
        return out
