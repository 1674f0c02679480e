"""Turn a chosen submission of a form into a Scrapy request: over plain HTTP, or by page actions
in Chromium.

* :func:`plain_request`: form2request builds the request from the form's own markup (hidden
  fields, the clicked button's name and value, ``formaction`` / ``formmethod``; an image button
  sends ``name.x`` / ``name.y`` as a browser does).
* :func:`browser_request`: scrapy-playwright page actions on the form's page (fill, select,
  check, click the button or ``requestSubmit()``), for a form only a script can submit; a
  dependent select waits for the option the script adds once its parent is chosen.
* :func:`describe`: the ``hiddenweb_reached_by`` / ``hiddenweb_action`` meta of a submission,
  what the item records and what the DLA scheduler learns from; :func:`is_submission` reads it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import scrapy
from form2request import form2request

from hiddenweb.browser import BROWSER_SLOT
from hiddenweb.browser.formtarget import FORM_MARK, FORM_TARGET_META, form_target
from hiddenweb.forms.explorer import FormExplorer
from hiddenweb.forms.extract import SUBMITS, keywords_url
from hiddenweb.safety import secret_fields

logger = logging.getLogger(__name__)

Assignment = dict[str, str | None]


def plain_request(explorer: FormExplorer, data: Assignment, *, callback: Callable,
                  errback: Callable) -> scrapy.Request | None:
    """A submission over plain HTTP (form2request), clicking the explorer's button if any;
    None (logged) when form2request cannot build it."""
    form, button = explorer.form, explorer.button
    # controls outside the <form> (form="id") that form2request does not see: their defaults
    data = {**{f.name: f.default for f in form.fields
               if f.outside and (f.default or f.kind not in ("checkbox", "radio"))}, **data}
    click: Any = False
    if button is not None:
        click = form.selector.xpath(SUBMITS)[button.index]
        if button.kind == "image" and button.name:  # a browser sends the click's x, y
            data.update({button.name: None, f"{button.name}.x": "1", f"{button.name}.y": "1"})
    try:
        spec = form2request(form.selector, data, click=click)
    except (ValueError, NotImplementedError) as exc:  # a control form2request cannot build
        logger.warning("Cannot build a submission of %s: %s", form.signature, exc)
        return None
    request = spec.to_scrapy(callback=callback, errback=errback)
    url = keywords_url(form, request.url)  # an <isindex>: the keywords alone
    return request if url == request.url else request.replace(url=url)


def browser_request(explorer: FormExplorer, data: Assignment, *, callback: Callable,
                    errback: Callable) -> scrapy.Request:
    """A submission by page actions in Chromium: fill, select, check, click submit, on the
    form found again on the fresh page (:mod:`hiddenweb.browser.formtarget`), never on
    whichever form holds its old position."""
    from scrapy_playwright.page import PageMethod

    form, button = explorer.form, explorer.button
    scope = FORM_MARK  # the form found again on the fresh page (hiddenweb.browser.formtarget)
    kinds = {f.name: f.kind for f in form.fields}
    groups = {f.name: f for f in form.fields if f.kind == "checkbox" and len(f.options) > 1}
    parent, child = explorer.dependent or (None, None)
    methods = []
    for name, value in data.items():
        target = f'{scope} >> [name="{name}"]'
        kind = kinds.get(name, "text")
        if kind == "select":
            methods.append(PageMethod("select_option", target, value or ""))
            if name == parent and data.get(child):  # wait for the script's options
                wanted = str(data[child]).replace('"', '\\"')
                methods.append(PageMethod(
                    "wait_for_selector", f'{scope} >> [name="{child}"] >> '
                    f'option[value="{wanted}"]', state="attached"))
        elif kind == "radio":
            methods.append(PageMethod("check", f'{target}[value="{value}"]'))
        elif kind == "checkbox":  # a group's box by its value; unchecked: its checked default
            box = groups.get(name)
            if box is None:
                methods.append(PageMethod("check" if value is not None else "uncheck", target))
            elif value is not None or box.default:
                methods.append(PageMethod("check" if value is not None else "uncheck",
                                          f'{target}[value="{value or box.default}"]'))
        elif value is not None:
            methods.append(PageMethod("fill", target, value))
    if button is not None:
        clickable = ("button[type=submit], button:not([type]), input[type=submit],"
                     f" input[type=image] >> nth={button.index}")
        methods.append(PageMethod("click", f"{scope} >> {clickable}"))
    else:
        methods.append(PageMethod("evaluate", "s => document.querySelector(s).requestSubmit()",
                                  FORM_MARK))
    methods.append(PageMethod("wait_for_load_state", "networkidle"))
    return scrapy.Request(explorer.page, callback=callback, errback=errback, dont_filter=True,
                          meta={"playwright": True, "playwright_page_methods": methods,
                                "download_slot": BROWSER_SLOT, "hiddenweb_browser_form": True,
                                FORM_TARGET_META: form_target(form, button)})


def defaults(explorer: FormExplorer) -> dict[str, str]:
    """What the form sends as the page gives it (its defaults submission, ``{}``): the values of
    its fields, checked boxes and chosen radios only."""
    return {f.name: f.default for f in explorer.form.fields
            if f.kind not in ("checkbox", "radio", "hidden") or f.default}


def is_submission(request: scrapy.Request) -> bool:
    """Whether ``request`` is a form's submission (its :func:`describe` meta)."""
    reached = request.meta.get("hiddenweb_reached_by")
    return isinstance(reached, dict) and reached.get("kind") == "form"


def describe(explorer: FormExplorer, data: Assignment, request: scrapy.Request,
             keep_tokens: bool = False) -> dict[str, Any]:
    """The meta of a submission: how the page was reached (what was sent over plain HTTP,
    hidden state included; tokens and keys only with ``keep_tokens``, else their names are
    listed under ``redacted``: :func:`hiddenweb.safety.secret_fields`) and the action the DLA
    scheduler learns from."""
    form, button = explorer.form, explorer.button
    fields = {k: v for k, v in data.items() if v is not None}
    if button is not None and button.kind == "image" and button.name:
        fields.update({f"{button.name}.x": "1", f"{button.name}.y": "1"})
    sent = dict(parse_qsl(request.body.decode() if request.method == "POST"
                          else urlsplit(request.url).query, keep_blank_values=True))
    sent = {**sent, **(fields if data else defaults(explorer))}  # a browser's request has none
    secret = set() if keep_tokens else secret_fields(
        sent, {f.name for f in form.fields if f.kind == "hidden"})
    form_meta = {"action": button.action if button else form.action,
                 "method": button.method if button else form.method,
                 "fields": {k: v for k, v in sent.items() if k not in secret},
                 "form_class": explorer.form_class, "signature": form.signature,
                 **({"redacted": sorted(secret)} if secret else {})}
    return {
        "hiddenweb_reached_by": {"kind": "form", "form": form_meta},
        "hiddenweb_form_only": True,
        "hiddenweb_action": {"kind": "form", "page": explorer.page,
                             "label": button.text[:200] if button else "",
                             "form": {"signature": form.signature, "fields": fields},
                             **({"source": "harvest"} if explorer.is_suggested(data) else {})},
        "hiddenweb_explore": form.signature,
        "hiddenweb_explore_data": dict(data),
        "hiddenweb_origin": explorer.endpoint,
    }
