"""Find a page's forms: every ``<form>``, its fields and its submit controls.

* :func:`extract_forms` reads every ``<form>`` of a page into :class:`FormInfo` (fields with their
  kind, finite domain and descriptive texts: label, name, id, placeholder, nearby text; the
  buttons that submit it with their ``formaction`` / ``formmethod``).
* :attr:`FormInfo.signature` names the same form on other pages.
* :func:`dependent_fields` finds a select whose options a script fills once another is chosen;
  :func:`pin` fixes the parent's choice (one form per parent value, like a wizard step).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from urllib.parse import urljoin, urlsplit

from parsel import Selector

TEXT_TYPES = frozenset({"text", "search", "email", "tel", "url", "number", ""})
_SKIP_TYPES = frozenset({"submit", "button", "reset", "image", "file"})


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


SUBMITS = (".//button[not(@type) or translate(@type,'SUBMIT','submit')='submit']"
            " | .//input[translate(@type,'SUBMITAGE','submitage')='submit'"
            " or translate(@type,'SUBMITAGE','submitage')='image']")


def _buttons(form: Selector, base_url: str, action: str, method: str) -> list[ButtonInfo]:
    out = []
    for i, el in enumerate(form.xpath(SUBMITS)):
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
