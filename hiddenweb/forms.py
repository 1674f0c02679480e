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
from dataclasses import dataclass, field
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
class FormInfo:
    index: int
    action: str
    method: str
    fields: list[FieldInfo]
    text: str  # the form's own visible text and its buttons' labels
    selector: Selector | None = None

    @property
    def signature(self) -> str:
        """Same form on other pages ⇒ same signature: action path + method + field names."""
        names = ",".join(sorted({f.name for f in self.fields if f.kind != "hidden"}))
        path = urlsplit(self.action).path
        return f"{self.method} {path} [{names}]"

    def fillable_fields(self) -> list[FieldInfo]:
        return [f for f in self.fields if f.kind not in ("hidden", "submit")]


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
        buttons = " ".join(
            form.xpath(".//button//text() | .//input[@type='submit' or @type='image']/@value"
                       " | .//input[@type='submit' or @type='image']/@alt").getall()
        )
        text = " ".join([_texts(form, ".//text()[not(ancestor::option)]"), buttons])
        forms.append(FormInfo(index, action, method, list(fields.values()), text, form))
    return forms


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
    unfillable: list[str]  # required free-text fields with no LVS label


def plan_submissions(form: FormInfo, lvs: LVS, limit: int, seed: int = 0) -> Plan:
    """At most ``limit`` assignments {field: value | None (unchecked)} for ``form``."""
    domains: list[tuple[str, list[str | None]]] = []
    lvs_labels: dict[str, str] = {}
    unfillable: list[str] = []
    for f in form.fillable_fields():
        if f.kind in ("select",):
            values: list[str | None] = [v for v in f.options if v or not f.required]
        elif f.kind == "radio":
            values = list(f.options)
        elif f.kind == "checkbox":
            values = [f.options[0] if f.options else "on", None]
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
