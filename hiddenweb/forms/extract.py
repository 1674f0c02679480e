"""Find a page's forms: every ``<form>``, its fields and its submit controls.

* :func:`extract_forms` reads every ``<form>`` of a page into :class:`FormInfo` (fields with their
  kind, finite domain and descriptive texts: label, name, id, placeholder, nearby text; the
  buttons that submit it with their ``formaction`` / ``formmethod``).
* An ``<isindex>`` outside any form (HTML 2's searchable index, still served by old sites) is a
  one-box GET form of its own (:func:`isindex_forms`): its answer URL is ``action?keywords``,
  the box's value with no ``name=`` (:func:`keywords_url`).
* :attr:`FormInfo.signature` names the same form on other pages.
* :func:`dependent_fields` finds a select whose options a script fills once another is chosen;
  :func:`pin` fixes the parent's choice (one form per parent value, like a wizard step).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from urllib.parse import parse_qsl, urljoin, urlsplit

from parsel import Selector

from hiddenweb.pagetext import compiled
from hiddenweb.safety import refused_choice

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
    submits: bool = False  # changing it submits the form (``onchange``: a post-back)
    outside: bool = False  # outside the <form>, joined to it by ``form="id"``
    #: choices the safety policy never makes, left out of ``options``: value -> class
    #: (:func:`hiddenweb.safety.refused_choice`: "Delete selected", "Mark all as read")
    refused: dict[str, str] = field(default_factory=dict)

    def add_choice(self, value: str, refused: str | None) -> None:
        """One of its choices: among its options, or, when the policy refuses it (``refused``:
        the class), among :attr:`refused`."""
        if refused is None:
            self.options.append(value)
        else:
            self.refused[value] = refused


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
    page: str = ""  # the URL of the page it was read on ("": not known)

    def __getstate__(self) -> dict:
        """Pickled (a JOBDIR checkpoint: :meth:`FormCrawler.jobdir_state`) with its selector as
        the form's markup and base URL: parsed again when loaded."""
        state = dict(self.__dict__)
        sel = state.pop("selector", None)
        state["_markup"] = None if sel is None else (sel.get(), sel.root.base_url)
        return state

    def __setstate__(self, state: dict) -> None:
        markup = state.pop("_markup", None)
        self.__dict__.update(state)
        self.selector = None
        if markup is not None:
            forms = Selector(text=markup[0], base_url=markup[1]).xpath("//form")
            self.selector = forms[0] if forms else None

    @property
    def signature(self) -> str:
        """Same form on other pages ⇒ same signature: action path + method + field names, plus
        the values of hidden fields that carry state rather than a token (a wizard's earlier
        choices: ``region=MA``; tokens — long or hex values — vary per page and are left out)."""
        return self._key([f"{name}={value}" for name, value in self.hidden_state()])

    def hidden_state(self) -> list[tuple[str, str]]:
        """``(name, value)`` of the hidden fields that carry state, not a token (long or hex
        values): what :attr:`signature` keeps beyond :attr:`family`."""
        return [(f.name, f.default) for f in self.fields
                if f.kind == "hidden" and not _token_like(f.default)]

    @property
    def family(self) -> str:
        """The :attr:`signature` without the hidden fields' state: the copies of one form that
        differ only in what their hidden fields carry (a listing's sort, columns or offset on
        each of its pages; a wizard's earlier choices) are one family."""
        return self._key([])

    @property
    def family_across_pages(self) -> str:
        """The :attr:`family` of a POST form that posts back to the page it is on
        (:meth:`posts_to_its_page`) across pages, whatever their path: a diff's display
        options on each wiki page, stored in the session, the reader sent back
        (:meth:`hiddenweb.forms.stopping.StoppingRule.family_of`)."""
        return self._key([], its_page=True)

    def posts_to_its_page(self) -> bool:
        """A POST form whose action is the host and path of the page it was read on."""
        if self.method != "POST" or not self.page:
            return False
        action, page = urlsplit(self.action), urlsplit(self.page)
        try:
            return (action.hostname, action.port, action.path) \
                == (page.hostname, page.port, page.path)
        except ValueError:  # a port that is not a number
            return False

    def echoes_page(self, page_url: str) -> bool:
        """Whether this copy of its form only asks again for its own page in the view the page
        shows: a GET form whose action is the page's own host and path, and whose hidden
        state (:meth:`hidden_state`, none pinned) is all in the page's
        own query. A listing's sort or facet link (``/report/4?sort=owner``) leads to a page
        whose filter form carries ``sort=owner`` in a hidden field; its default answer is
        that page again, and its other answers are those of the copy on the plain listing in
        another order. A wizard's later step posts to another path, or keeps its state out of
        the URL, and is not such a copy."""
        if self.method != "GET" or self.pinned:
            return False
        action, page = urlsplit(self.action), urlsplit(page_url)
        try:
            if (action.hostname, action.port, action.path) \
                    != (page.hostname, page.port, page.path):
                return False
        except ValueError:  # a port that is not a number
            return False
        state = self.hidden_state()
        return bool(state) and set(state) <= set(parse_qsl(page.query, keep_blank_values=True))

    def _key(self, hidden: list[str], its_page: bool = False) -> str:
        """Action path (``its_page``: ``(its page)`` instead) + method + field names, plus
        ``hidden`` state and the pinned values."""
        names = ",".join(sorted({f.name for f in self.fields if f.kind != "hidden"}))
        state = ",".join(sorted(hidden + [f"{k}={v}" for k, v in self.pinned.items()]))
        path = "(its page)" if its_page else urlsplit(self.action).path
        return (f"{self.method} {path} [{names}]"
                + (f" {{{state}}}" if state else ""))

    def fillable_fields(self) -> list[FieldInfo]:
        return [f for f in self.fields if f.kind not in ("hidden", "submit")]


_HEX = re.compile(r"^[0-9a-fA-F]{8,}$")


#: a form's own words: not its options' (a choice, not the form's purpose), not its buttons'
#: (judged one by one), and not the labels of the links it holds that only navigate (an
#: ``href`` that is not ``#`` or ``javascript:``, no ``onclick``, ``data-method`` or
#: ``data-confirm``): a "Cancel" or "Reset filters" link beside the submit button goes back
#: without submitting, so its word says nothing of what the submission does (the link itself
#: is judged as a link). A scripted link (it may submit the form) keeps its words.
_OWN_TEXT = (
    ".//text()[not(ancestor::option) and not(ancestor::button) and not(ancestor::a["
    "@href and not(starts-with(normalize-space(@href), '#'))"
    " and not(starts-with(translate(normalize-space(@href), 'JAVSCRIPT', 'javscript'),"
    " 'javascript:'))"
    " and not(@onclick) and not(@data-method) and not(@data-confirm)])]"
)


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
        post = method == "POST"
        fields: dict[str, FieldInfo] = {}
        for el in _controls(page, form):
            name = el.attrib.get("name")
            if not name:
                continue
            tag = el.root.tag.lower()
            if tag == "select":
                info = FieldInfo(name, "select", [], "", "required" in el.attrib,
                                 _descriptors(form, el))
                first = selected = None
                for o in _OPTIONS(el.root):  # lxml: a Selector per option cost more
                    label = _NORMALIZED(o)
                    value = o.get("value", label)
                    info.add_choice(value, refused_choice(label, value, post))
                    first = value if first is None else first
                    if selected is None and "selected" in o.attrib:
                        selected = value
                # what a browser sends: the selected option, else the first one
                info.default = next((v for v in (selected, first) if v is not None), "")
                fields[name] = info
            elif tag == "textarea":
                fields[name] = FieldInfo(name, "textarea", [], el.xpath("string(.)").get(),
                                         "required" in el.attrib, _descriptors(form, el))
            else:
                kind = el.attrib.get("type", "text").lower()
                if kind in _SKIP_TYPES:
                    continue
                descriptors = _descriptors(form, el)
                if kind not in ("radio", "checkbox"):
                    fields[name] = FieldInfo(name, kind, _datalist(page, el),  # suggested values
                                             el.attrib.get("value", ""), "required" in el.attrib,
                                             descriptors)
                    continue
                info = fields.get(name)
                if info is None or info.kind != kind:  # else a group: one field, several values
                    info = fields[name] = FieldInfo(name, kind, [], "", "required" in el.attrib,
                                                    descriptors)
                value = el.attrib.get("value", "on")
                info.add_choice(value, refused_choice(descriptors[0], value, post))
                if "checked" in el.attrib and not info.default:  # what a browser sends
                    info.default = value
        for el in _controls(page, form):
            info = fields.get(el.attrib.get("name", ""))
            if info is not None:
                info.submits = info.submits or bool(_SUBMITS_ON_CHANGE.search(
                    el.attrib.get("onchange", "")))
                info.outside = info.outside or not _inside(el, form)
        buttons = _buttons(form, base_url, action, method)
        text = " ".join([_texts(form, _OWN_TEXT), *(b.text for b in buttons[:1])])
        forms.append(FormInfo(index, action, method, list(fields.values()), text, form, buttons,
                              form.attrib.get("id", ""), page=base_url))
    return forms + isindex_forms(page, base_url, len(forms))


#: the name of an ``<isindex>``'s box: its value is sent alone (:func:`keywords_url`)
ISINDEX = "isindex"
#: what a browser showed beside an ``<isindex>`` without a ``prompt``
ISINDEX_PROMPT = "This is a searchable index. Enter search keywords:"


def isindex_forms(page: Selector, base_url: str, first: int = 0) -> list[FormInfo]:
    """Each ``<isindex>`` outside a ``<form>`` as a GET form with one text box named
    :data:`ISINDEX` (RFC 1866 section 7.5: the document's own URL, or the element's
    ``action``, queried with the keywords). Its markup is made here: a browser no longer
    shows the element, so such a form is always sent over plain HTTP."""
    out = []
    for el in page.xpath("//isindex[not(ancestor::form)]"):
        action = urljoin(base_url, el.attrib.get("action") or base_url.split("?")[0])
        prompt = (el.attrib.get("prompt") or "").strip() or ISINDEX_PROMPT
        markup = Selector(text='<form method="get"><input type="text"></form>', base_url=action)
        form = markup.xpath("//form")[0]
        form.root.set("action", action)
        form.root.find("input").set("name", ISINDEX)
        # the element is a keyword search by definition, whatever its prompt says
        box = FieldInfo(ISINDEX, "text", [], "", False, list(dict.fromkeys([prompt,
                                                                          ISINDEX_PROMPT])))
        out.append(FormInfo(first + len(out), action, "GET", [box], prompt, form))
    return out


def keywords_url(form: FormInfo, url: str) -> str:
    """The URL of an ``<isindex>`` form's submission (:func:`isindex_forms`): ``?isindex=x``
    becomes ``?x``. Any other form's URL is returned as it is."""
    if len(form.fields) == 1 and form.fields[0].name == ISINDEX:
        head, sep, query = url.partition("?")
        if sep and query.startswith(ISINDEX + "="):
            return f"{head}?{query[len(ISINDEX) + 1:]}"
    return url


_SUBMITS_ON_CHANGE = re.compile(r"submit\s*\(|__doPostBack", re.I)


def _inside(el: Selector, form: Selector) -> bool:
    return any(a.root is form.root for a in el.xpath("ancestor::form"))


_OPTIONS = compiled(".//option")
_NORMALIZED = compiled("normalize-space(.)")


def _controls(page: Selector, form: Selector) -> list[Selector]:
    """The form's controls: those inside it, and those outside that name it (``form="id"``)."""
    inside = form.xpath(".//input | .//select | .//textarea")
    form_id = form.attrib.get("id")
    if not form_id:
        return list(inside)
    outside = page.xpath("//input[@form=$id] | //select[@form=$id] | //textarea[@form=$id]",
                         id=form_id)
    return [el for el in inside if el.attrib.get("form", form_id) == form_id] + [
        el for el in outside if not el.xpath("ancestor::form")
        or el.xpath("ancestor::form[1]/@id").get() != form_id]


def _datalist(page: Selector, el: Selector) -> list[str]:
    """The values a text box's ``<datalist>`` (``list="id"``) suggests."""
    list_id = el.attrib.get("list")
    if not list_id:
        return []
    return [v for v in page.xpath("//datalist[@id=$id]/option/@value", id=list_id).getall()
            if v.strip()]


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


#: option values that mean "no filter" when they are a field's default
WILDCARDS = frozenset({"", "any", "all", "*", "-", "none"})


def is_wildcard(value: str | None) -> bool:
    """An unchecked box (``None``) or an "any"-like default option value."""
    return value is None or value.strip().casefold() in WILDCARDS


def pin_choices(form: FormInfo, data: dict[str, str | None], changed: list[str]
                ) -> FormInfo | None:
    """The version of ``form`` a post-back answered: the finite fields ``data`` chose (not
    "any") fixed to their choice, and the ``changed`` selects offering their real options (a
    placeholder is not a value); None when ``data`` chose nothing."""
    finite = {f.name for f in form.fields if f.kind in ("select", "radio")}
    chosen = {name: value for name, value in data.items()
              if name in finite and name not in changed and value is not None
              and not is_wildcard(value)}
    if not chosen:
        return None
    fields = []
    for f in form.fields:
        if f.name in chosen:
            f = replace(f, options=[chosen[f.name]], default=chosen[f.name])
        elif f.name in changed:
            options = [o for o in f.options if not is_wildcard(o)]
            f = replace(f, options=options, default=options[0] if options else "")
        fields.append(f)
    return replace(form, fields=fields, pinned={**form.pinned, **chosen})


def submittable(form: FormInfo) -> bool:
    """Whether a person can submit the form without a script: it has a submit button, a text
    box (Enter submits it) or a field whose change submits it. A form of read-only values (an
    item's page shown to a visitor who may not edit it) is not, even where a script could
    submit it: the crawler would be the one submitting it."""
    return bool(form.buttons) or any(
        f.submits or f.kind in TEXT_TYPES or f.kind == "textarea" for f in form.fields)
