"""What the safety policy (:mod:`hiddenweb.safety`) reads of a form, before any verdict.

Contract
--------
* :class:`FormLike` (its :class:`FieldLike` fields and :class:`ButtonLike` buttons): what is
  read of a form (``hiddenweb.forms.FormInfo`` has it).
* :func:`form_facts` → :class:`FormFacts`: what the form's fields say, gathered once for every
  way of submitting it: their words (name, id, label, placeholder, ``aria-label``; a hidden
  field's value when it carries an action, ``_method=DELETE``), its password fields (a
  ``password`` field, or a text field named or labelled password), and whether it asks for
  personal data, a message, a payment or a search, with how many free and finite fields.
* :func:`own_text`: the form's text without its first button's label.

Pure, like :mod:`hiddenweb.safety_lexicon`, whose words it reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from hiddenweb.safety_lexicon import (
    CONTACT_FIELDS,
    ORDER,
    PASSWORD,
    PASSWORD_NAMES,
    PAYMENT_FIELDS,
    PERSONAL,
    SEARCH_FIELDS,
    SORT_NAMES,
    STATE_NAMES,
    normalize,
    token_like,
)

_TEXT_KINDS = frozenset({"text", "search", "email", "tel", "url", "number", ""})
_FINITE_KINDS = frozenset({"select", "radio", "checkbox"})


class FieldLike(Protocol):
    name: str
    kind: str
    options: list[str]
    default: str
    descriptors: list[str]
    refused: dict[str, str]  # choices never made: value -> class (safety.refused_choice)


class ButtonLike(Protocol):
    name: str
    value: str
    text: str
    action: str
    method: str


class FormLike(Protocol):
    """What :func:`~hiddenweb.safety.judge_form` reads of a form (``hiddenweb.forms.FormInfo``
    has it)."""

    action: str
    method: str
    text: str

    @property
    def fields(self) -> Sequence[FieldLike]: ...

    @property
    def buttons(self) -> Sequence[ButtonLike]: ...


def _field_words(f: FieldLike) -> tuple[str, str]:
    """(name words, label words) of a field: name and id; label, placeholder, aria-label."""
    d = list(f.descriptors) + [""] * 6
    return normalize(f"{f.name} {d[2]}"), normalize(f"{d[0]} {d[3]} {d[4]}")


def _is_password(f: FieldLike) -> bool:
    if f.kind == "password":
        return True
    if f.kind not in _TEXT_KINDS:
        return False
    name, label = _field_words(f)
    if set(normalize(f.name).split()) & PASSWORD_NAMES:
        return True
    nearby = normalize(f.descriptors[5]) if len(f.descriptors) > 5 else ""
    return bool(PASSWORD.search(name) or PASSWORD.search(label)
                or (nearby and len(nearby.split()) <= 4 and PASSWORD.search(nearby)))


def _hidden_state(f: FieldLike) -> str:
    """Words of a hidden field that carries an action: ``_method=DELETE``, ``action=remove``."""
    name = normalize(f.name)
    if name in STATE_NAMES or name.endswith(" action"):
        value = f.default or ""
        if not token_like(value):
            return normalize(value)
    return ""


@dataclass
class FormFacts:
    """What a form's fields say, gathered once for every way of submitting it."""

    texts: list[str] = field(default_factory=list)
    passwords: int = 0
    personal: bool = False
    contact_fields: bool = False
    payment_fields: bool = False
    search_fields: bool = False
    only_email: bool = False
    free: int = 0
    finite: int = 0
    textarea: int = 0
    #: (class, value) of a choice the form sends by default that the policy never makes
    refused_default: tuple[str, str] | None = None


def form_facts(form: FormLike) -> FormFacts:
    facts = FormFacts()
    emails = 0
    for f in form.fields:
        name, label = _field_words(f)
        if f.kind in _FINITE_KINDS or normalize(f.name) in SORT_NAMES:
            # a select or radio named "order" is a sort order, not a purchase
            name, label = ORDER.sub(" ", name), ORDER.sub(" ", label)
        if f.kind == "hidden":
            state = _hidden_state(f)
            facts.texts.append(f"{name} {state}")
            if normalize(f.name) == "method" and state in ("delete", "put", "patch"):
                facts.texts.append("delete")
            continue
        facts.texts.append(f"{name} {label}")
        if f.default and f.default in f.refused and facts.refused_default is None:
            facts.refused_default = (f.refused[f.default], f.default)
        if _is_password(f):
            facts.passwords += 1
            continue
        if f.kind in _FINITE_KINDS:
            facts.finite += 1
        elif f.kind == "textarea":
            facts.textarea += 1
            facts.contact_fields = True
        elif f.kind in _TEXT_KINDS:
            facts.free += 1
            if f.kind in ("email", "tel") or PERSONAL.search(name) or PERSONAL.search(label):
                facts.personal = True
            if f.kind == "email" or "mail" in normalize(f.name).split():
                emails += 1
        if CONTACT_FIELDS.search(name):
            facts.contact_fields = True
        if PAYMENT_FIELDS.search(name) or PAYMENT_FIELDS.search(label):
            facts.payment_fields = True
        if name in SEARCH_FIELDS or normalize(f.name) in SEARCH_FIELDS or f.kind == "search":
            facts.search_fields = True
    facts.only_email = facts.free == 1 and emails == 1 and not facts.finite
    return facts


def own_text(form: FormLike) -> str:
    """The form's text without its first button's label (``FormInfo.text`` appends it)."""
    text, buttons = form.text or "", list(form.buttons)
    if buttons and buttons[0].text and text.rstrip().endswith(buttons[0].text.strip()):
        text = text.rstrip()[: -len(buttons[0].text.strip())]
    return text
