"""HTML forms: find them, classify them, and plan the submissions worth making.

* :func:`extract_forms` reads every ``<form>`` of a page into :class:`FormInfo` (fields with their
  kind, finite domain and descriptive texts).
* :func:`classify` puts a form in one of :data:`FORM_CLASSES`. Only ``search`` and ``filter``
  forms are submitted unless the user opts in (``HIDDENWEB_UNSAFE_FORM_CLASSES``): a crawler must
  never log in, sign up, pay, post a message or delete anything by default.
* :func:`plan_submissions` turns a form into at most ``limit`` value assignments: free-text fields
  take values from the LVS label they match (HiWE label matching, :mod:`hiddenweb.lvs`), finite
  fields (select, radio, checkbox) their own domain; when the cross product is larger than the
  limit a deterministic sample of it is taken (never the full product).
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass, field, replace
from math import prod
from urllib.parse import urljoin, urlsplit

from parsel import Selector

from hiddenweb.lvs import LVS, words_of

FORM_CLASSES = ("search", "filter", "login", "signup", "contact", "payment", "destructive", "other")
SAFE_FORM_CLASSES = frozenset({"search", "filter"})

TEXT_TYPES = frozenset({"text", "search", "email", "tel", "url", "number", ""})
_SKIP_TYPES = frozenset({"submit", "button", "reset", "image", "file"})

_DESTRUCTIVE = {"delete", "remove", "unsubscribe", "logout", "deactivate", "erase", "destroy",
                "signout", "cancel"}
_PAYMENT = {"card", "cvv", "cvc", "iban", "expiry", "payment", "checkout", "billing", "pay"}
_SIGNUP = {"register", "signup", "join", "confirm", "create"}
_CONTACT = {"contact", "message", "comment", "feedback", "subject", "reply", "enquiry",
            "inquiry"}
_SEARCH = {"search", "find", "query", "keyword", "keywords", "q", "lookup", "locate", "filter",
           "browse", "terms"}


@dataclass
class FieldInfo:
    name: str
    kind: str  # text, textarea, select, radio, checkbox, hidden, password, email, ...
    options: list[str] = field(default_factory=list)
    default: str = ""
    required: bool = False
    descriptors: list[str] = field(default_factory=list)  # label, name, id, placeholder, nearby


@dataclass
class ButtonInfo:
    """A control that submits the form: ``<button>``, ``<input type=submit|image>``."""

    index: int  # position among the form's submit controls (document order)
    kind: str  # "submit" or "image"
    name: str
    value: str
    text: str  # label, value or alt text
    action: str  # its formaction, resolved; else the form's action
    method: str  # its formmethod; else the form's method


@dataclass
class FormInfo:
    index: int
    action: str
    method: str
    fields: list[FieldInfo]
    text: str  # the form's own visible text and its buttons' labels
    selector: Selector | None = None
    buttons: list[ButtonInfo] = field(default_factory=list)
    element_id: str = ""
    pinned: dict[str, str] = field(default_factory=dict)  # a dependent select's parent choice

    @property
    def signature(self) -> str:
        """Same form on other pages ⇒ same signature: action path + method + field names, plus
        the values of hidden fields that carry state rather than a token (a wizard's earlier
        choices: ``region=MA``; tokens — long or hex values — vary per page and are left out)."""
        names = ",".join(sorted({f.name for f in self.fields if f.kind != "hidden"}))
        path = urlsplit(self.action).path
        state = ",".join(sorted([f"{f.name}={f.default}" for f in self.fields
                                 if f.kind == "hidden" and not _token_like(f.default)]
                                + [f"{k}={v}" for k, v in self.pinned.items()]))
        return f"{self.method} {path} [{names}]" + (f" {{{state}}}" if state else "")

    def fillable_fields(self) -> list[FieldInfo]:
        return [f for f in self.fields if f.kind not in ("hidden", "submit")]


_HEX = re.compile(r"^[0-9a-fA-F]{8,}$")


def _token_like(value: str) -> bool:
    return len(value) >= 12 or bool(_HEX.match(value))


def _texts(sel: Selector, xpath: str) -> str:
    return " ".join(t.strip() for t in sel.xpath(xpath).getall() if t.strip())


def _descriptors(form: Selector, el: Selector) -> list[str]:
    el_id = el.attrib.get("id", "")
    label = ""
    if el_id:
        label = _texts(form, f'.//label[@for="{el_id}"]//text()')
    if not label:
        label = _texts(el, "ancestor::label[1]//text()")
    nearby = _texts(el, "preceding::text()[normalize-space()][1]")
    return [
        label,
        el.attrib.get("name", ""),
        el_id,
        el.attrib.get("placeholder", ""),
        el.attrib.get("aria-label", ""),
        nearby,
    ]


def extract_forms(page: Selector, base_url: str) -> list[FormInfo]:
    """Every ``<form>`` of ``page`` as :class:`FormInfo` (controls with a name only)."""
    forms = []
    for index, form in enumerate(page.xpath("//form")):
        action = urljoin(base_url, form.attrib.get("action", "") or base_url)
        method = (form.attrib.get("method", "GET") or "GET").upper()
        method = method if method in ("GET", "POST") else "GET"
        fields: dict[str, FieldInfo] = {}
        for el in form.xpath(".//input | .//select | .//textarea"):
            name = el.attrib.get("name")
            if not name:
                continue
            tag = el.root.tag.lower()
            if tag == "select":
                options = [
                    o.attrib.get("value", o.xpath("normalize-space(.)").get())
                    for o in el.xpath(".//option")
                ]
                selected = el.xpath(".//option[@selected]/@value").get()
                fields[name] = FieldInfo(name, "select", options, selected or "",
                                         "required" in el.attrib, _descriptors(form, el))
            elif tag == "textarea":
                fields[name] = FieldInfo(name, "textarea", [], el.xpath("string(.)").get(),
                                         "required" in el.attrib, _descriptors(form, el))
            else:
                kind = el.attrib.get("type", "text").lower()
                if kind in _SKIP_TYPES:
                    continue
                value = el.attrib.get("value", "on" if kind in ("radio", "checkbox") else "")
                if kind == "radio" and name in fields:
                    fields[name].options.append(value)
                    continue
                opts = [value] if kind in ("radio", "checkbox") else []
                fields[name] = FieldInfo(name, kind, opts, value, "required" in el.attrib,
                                         _descriptors(form, el))
        buttons = _buttons(form, base_url, action, method)
        text = " ".join([_texts(form, ".//text()[not(ancestor::option) and not(ancestor::button)]"),
                         *(b.text for b in buttons[:1])])
        forms.append(FormInfo(index, action, method, list(fields.values()), text, form, buttons,
                              form.attrib.get("id", "")))
    return forms


_SUBMITS = (".//button[not(@type) or translate(@type,'SUBMIT','submit')='submit']"
            " | .//input[translate(@type,'SUBMITAGE','submitage')='submit'"
            " or translate(@type,'SUBMITAGE','submitage')='image']")


def _buttons(form: Selector, base_url: str, action: str, method: str) -> list[ButtonInfo]:
    out = []
    for i, el in enumerate(form.xpath(_SUBMITS)):
        kind = "image" if (el.attrib.get("type") or "").lower() == "image" else "submit"
        text = " ".join(el.xpath(".//text()").getall()).strip() or el.attrib.get("value", "") \
            or el.attrib.get("alt", "")
        formaction = el.attrib.get("formaction")
        formmethod = (el.attrib.get("formmethod") or method).upper()
        out.append(ButtonInfo(i, kind, el.attrib.get("name", ""), el.attrib.get("value", ""),
                              text, urljoin(base_url, formaction) if formaction else action,
                              formmethod if formmethod in ("GET", "POST") else "GET"))
    return out


def dependent_fields(form: FormInfo) -> tuple[str, str] | None:
    """(parent, child) when a select of ``form`` offers no value yet (only a placeholder) while
    an earlier select does: the child's options come once the parent is chosen, from a script
    (issue 5's dependent fields; the post-back variant is a separate page with its own form)."""
    parent = None
    for f in form.fields:
        if f.kind != "select":
            continue
        if any(f.options):
            parent = f.name
        elif parent is not None:
            return parent, f.name
    return None


def pin(form: FormInfo, parent: str, value: str, child: str, options: list[str]) -> FormInfo:
    """``form`` with ``parent`` fixed to ``value`` and ``child`` offering ``options`` (what the
    page showed once ``value`` was chosen): one explorer per parent value, like a wizard step."""
    fields = []
    for f in form.fields:
        if f.name == parent:
            f = replace(f, options=[value], default=value)
        elif f.name == child:
            f = replace(f, options=list(options), default="")
        fields.append(f)
    return replace(form, fields=fields, pinned={**form.pinned, parent: value})


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


@dataclass
class Plan:
    """The submissions planned for one form, and why fields were left out."""

    assignments: list[dict[str, str | None]]
    lvs_labels: dict[str, str]  # field name → LVS label used
    space: int  # size of the full cross product
    unfillable: list[str]  # required fields with no value to give (see field_domains)


def field_domains(form: FormInfo, lvs: LVS
                  ) -> tuple[list[tuple[str, list[str | None]]], dict[str, str], list[str]]:
    """(field name, candidate values) per fillable field, the LVS label used per free-text field,
    and the required fields with no value to give: a free-text field no LVS label matches, or a
    select whose only option is an empty placeholder (a dependent select a script fills once its
    parent is chosen: a browser's constraint validation refuses to submit the form without it,
    and a plain-HTTP submission only gets the server's refusal). Finite fields take their own
    domain (the selected/checked default first), free-text fields their LVS label's values."""
    domains: list[tuple[str, list[str | None]]] = []
    lvs_labels: dict[str, str] = {}
    unfillable: list[str] = []
    for f in form.fillable_fields():
        if f.kind in ("select",):
            values: list[str | None] = [v for v in f.options if v or not f.required]
            if not values and f.required:
                unfillable.append(f.name)
                continue
            if f.default in values:
                values.remove(f.default)
                values.insert(0, f.default)
        elif f.kind == "radio":
            values = list(f.options)
            if f.default in values:
                values.remove(f.default)
                values.insert(0, f.default)
        elif f.kind == "checkbox":
            values = [None, f.options[0] if f.options else "on"]  # unchecked (the default) first
        elif f.kind in TEXT_TYPES or f.kind == "textarea":
            label = lvs.match(f.descriptors)
            if label is None:
                if f.required:
                    unfillable.append(f.name)
                continue
            lvs_labels[f.name] = label.name
            values = list(label.values)
        else:
            continue
        if values:
            domains.append((f.name, values))
    return domains, lvs_labels, unfillable


def plan_submissions(form: FormInfo, lvs: LVS, limit: int, seed: int = 0) -> Plan:
    """At most ``limit`` assignments {field: value | None (unchecked)} for ``form``."""
    domains, lvs_labels, unfillable = field_domains(form, lvs)
    if unfillable or not domains:
        return Plan([], lvs_labels, 0, unfillable)
    sizes = [len(v) for _, v in domains]
    space = prod(sizes)
    rng = random.Random(int(hashlib.sha1(f"{seed}{form.signature}".encode()).hexdigest()[:8], 16))
    if space <= limit:
        indices = list(range(space))
        rng.shuffle(indices)
    else:
        indices = rng.sample(range(space), limit)
    assignments = []
    for index in indices:
        data: dict[str, str | None] = {}
        for (name, values), size in zip(domains, sizes, strict=True):
            index, digit = divmod(index, size)
            data[name] = values[digit]
        assignments.append(data)
    return Plan(assignments, lvs_labels, space, [])


_NO_RESULTS = re.compile(r"\bno (results|matches|records|items)\b|\bnothing found\b", re.I)


def looks_like_no_results(text: str) -> bool:
    """True for the empty answer page a form gives for values that match nothing."""
    return bool(_NO_RESULTS.search(text[:5000]))
