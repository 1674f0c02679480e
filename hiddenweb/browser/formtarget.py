"""Which form a submission in Chromium acts on: found again on a fresh render of its page.

A form submitted by page actions (:func:`hiddenweb.forms.submit.browser_request`) was read in a
render's final DOM: after the page's events were fired, its timers run and its load-more
controls clicked. The submission loads the page afresh, where that DOM is not: a form a click
put in a dialog is not there yet, and every form after it in document order has moved up one.
Addressed by its position, the submission filled a form that was not there until Playwright's
action timeout (20 s each; MLflow: 9 submissions, over a quarter of the browser's page time in
an 80 s crawl) or, worse, submitted whichever form held that position on the fresh page, one the
safety policy never judged.

Contract:

* :func:`form_target` describes the form as its page showed it: its ``id``, its position, the
  names of its controls, its ``action`` and ``method`` attributes as written
  (:data:`FORM_TARGET_META` on the request);
* :data:`LOCATE_FORM_JS` finds it on the fresh page: the form with that ``id`` if it had one,
  else a form with the same ``action`` and ``method`` that has every control name (the one at
  its old position first), and marks it (:data:`FORM_MARK`); the page actions then address the
  marked form, never a position;
* not there: the handler fires the page's events as its render did
  (:mod:`hiddenweb.browser.events`), looking again after each, and stops at the event that
  shows it (a form a click reveals, which a later event may hide again:
  ``hiddenweb/browser/forms_revealed``); not there after all, the submission is dropped at once
  with :class:`FormGone` (``hiddenweb/browser/forms_gone``) and the form's explorer ends
  (:meth:`hiddenweb.forms.crawl.FormCrawler.gone`);
* once the crawler's submitting action ran, a script's request with the form's method to the
  form's own action (``sends``) is the submission the safety policy judged, and is sent even
  when it is not a GET (:meth:`hiddenweb.browser.guard.Guard._form_sends`, stat
  ``hiddenweb/browser/form_sends``): a form handled in the page that posts itself with
  ``fetch`` was refused as the page's own write, and sent nothing.
"""

from __future__ import annotations

from typing import Any

from scrapy.exceptions import IgnoreRequest

#: the request meta key holding :func:`form_target`'s description
FORM_TARGET_META = "hiddenweb_form_target"
#: the attribute :data:`LOCATE_FORM_JS` marks the form found with
FORM_MARK_ATTR = "data-hiddenweb-form"
#: a CSS selector of the marked form (what the page actions address)
FORM_MARK = f"form[{FORM_MARK_ATTR}]"

#: ``[target, attribute]`` → the found form's position among ``document.forms`` (marked with
#: ``attribute``, every other mark removed), or -1
LOCATE_FORM_JS = """([t, mark]) => {
  for (const f of document.querySelectorAll("form[" + mark + "]")) f.removeAttribute(mark);
  const forms = Array.from(document.forms);
  const method = f => (f.getAttribute("method") || "get").trim().toLowerCase();
  const fits = f => {
    if (t.id) return f.id === t.id;
    if ((f.getAttribute("action") || "").trim() !== t.action || method(f) !== t.method)
      return false;
    const have = new Set(Array.from(f.elements, e => e.name).filter(n => n));
    return t.names.every(n => have.has(n));
  };
  const at = forms[t.index];
  const found = at && fits(at) ? at : forms.find(fits);
  if (!found) return -1;
  found.setAttribute(mark, "");
  return forms.indexOf(found);
}"""


class FormGone(IgnoreRequest):
    """The form a submission in Chromium acts on is not on a fresh render of its page, nor
    after its events were fired: the submission is dropped (nothing was sent)."""


def form_target(form: Any, button: Any = None) -> dict[str, Any]:
    """:data:`FORM_TARGET_META` for ``form`` (a :class:`hiddenweb.forms.extract.FormInfo`),
    and, under ``sends``, the method and absolute URL its submission goes to (``button``'s
    ``formaction`` and ``formmethod``, if it is clicked): a script's request of just that,
    once the crawler submitted, is the submission (:meth:`hiddenweb.browser.guard.Guard.
    _form_sends`)."""
    attrib = form.selector.attrib if form.selector is not None else {}
    sends = button if button is not None else form
    return {"id": form.element_id, "index": form.index,
            "names": sorted({f.name for f in form.fields if f.name}),
            "action": (attrib.get("action") or "").strip(),
            "method": (attrib.get("method") or "get").strip().lower(),
            "sends": [(sends.method or "get").upper(), sends.action]}
