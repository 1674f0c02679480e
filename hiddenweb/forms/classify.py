"""Classify a form, and its submit buttons, by rules on its fields, action and wording.

:func:`classify` puts a form in one of :data:`FORM_CLASSES` (``hiddenweb bench forms`` compares
it with formasaurus). What the crawl submits and clicks is decided by the safety policy,
:mod:`hiddenweb.safety` (``docs/safety.md``), not by these rules.
:func:`submit_button` picks the first button whose own click is of an allowed class (a "Delete"
button beside "Search" is never clicked).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from hiddenweb.forms.extract import TEXT_TYPES, ButtonInfo, FormInfo
from hiddenweb.forms.lvs import words_of

FORM_CLASSES = ("search", "filter", "login", "signup", "contact", "payment", "destructive", "other")

_DESTRUCTIVE = {"delete", "remove", "unsubscribe", "logout", "deactivate", "erase", "destroy",
                "signout", "cancel"}
_PAYMENT = {"card", "cvv", "cvc", "iban", "expiry", "payment", "checkout", "billing", "pay"}
_SIGNUP = {"register", "signup", "join", "confirm", "create"}
_CONTACT = {"contact", "message", "comment", "feedback", "subject", "reply", "enquiry",
            "inquiry"}
_SEARCH = {"search", "find", "query", "keyword", "keywords", "q", "lookup", "locate", "filter",
           "browse", "terms"}


def button_class(form: FormInfo, form_class: str, button: ButtonInfo) -> str:
    """What clicking ``button`` does: a harmful class when its own label, name, value or
    ``formaction`` says so (a "Delete" button beside "Search"), else the form's class."""
    words = set(words_of(" ".join([button.text, button.name, button.value,
                                   urlsplit(button.action).path])))
    if words & _DESTRUCTIVE:
        return "destructive"
    if words & _PAYMENT:
        return "payment"
    if words & _SIGNUP and form_class in ("login", "signup"):
        return "signup"
    return form_class


def submit_button(form: FormInfo, form_class: str, allowed: set[str] | frozenset[str]
                  ) -> ButtonInfo | None | bool:
    """The first button whose click is of an ``allowed`` class; ``None`` when the form has no
    button (submitted by Enter); ``False`` when every button is of another class."""
    if not form.buttons:
        return None
    for b in form.buttons:
        if button_class(form, form_class, b) in allowed:
            return b
    return False


def classify(form: FormInfo) -> str:
    """One of :data:`FORM_CLASSES`, by rules on the form's fields, action and wording.

    Order matters: the harmful classes are tested first, so a form that mixes signals (a
    "search" box beside a password field) is never taken for a safe one.
    """
    kinds = [f.kind for f in form.fields]
    words = set(words_of(form.text)) | set(words_of(urlsplit(form.action).path))
    for f in form.fields:
        words.update(words_of(" ".join([f.name, *f.descriptors[:4]])))
    if words & _DESTRUCTIVE:
        return "destructive"
    if words & _PAYMENT:
        return "payment"
    passwords = kinds.count("password")
    if passwords >= 2 or (passwords and words & _SIGNUP):
        return "signup"
    if passwords:
        return "login"
    if "textarea" in kinds or (words & _CONTACT and "email" in kinds):
        return "contact"
    if form.method == "POST" and words & _CONTACT:
        return "contact"
    free = [f for f in form.fields if f.kind in TEXT_TYPES]
    finite = [f for f in form.fields if f.kind in ("select", "radio", "checkbox")]
    if free and (words & _SEARCH or len(free) <= 3):
        return "search"
    if finite and not free:
        return "filter"
    return "other"
