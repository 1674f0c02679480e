"""The safety policy: which forms are submitted, which buttons clicked, which links followed.

One place decides, for the spider's forms, submit buttons, links and recrawl replays alike
(``docs/safety.md`` states the policy in plain words). The module is pure: it reads words, field
kinds, methods and URLs, and imports nothing of Scrapy but a type. Its words are in
:mod:`hiddenweb.safety_lexicon`, what it reads of a form in :mod:`hiddenweb.safety_form`.

Contract
--------
* :func:`judge_form` → :class:`FormVerdict`: the form's class, whether it may be submitted, the
  button to click (the first one the policy allows) and the buttons refused. It reads the form's
  text (its buttons' labels included), every button's label, name, value and ``formaction``,
  every field's name, label, id, placeholder, ``aria-label`` and type (a ``password`` field, or
  any field *labelled* password), state-carrying hidden fields (``_method=DELETE``,
  ``action=remove``) and the action URL's path and query, in English and in the common words of
  German, French, Spanish, Italian, Portuguese, Dutch, Polish, Swedish, Russian, Chinese and
  Japanese.
* Classes (:data:`FORM_CLASSES`): ``search``, ``filter``, ``neutral`` (nothing harmful, no
  personal data, a word such as "show" or only finite fields), ``unknown``, ``contact`` (contact,
  comment, feedback), ``edit`` (a POST form that adds, creates, saves or edits content: never
  sent, like ``unknown``), and the refused-by-default ``login``, ``signup``, ``password_reset``,
  ``payment`` (buying, ordering, carts, checkout, paying, sending or transferring money),
  ``subscribe``, ``vote`` (votes, likes, follows, flags) and ``destructive`` (delete, remove,
  reset, cancel, unsubscribe, log out).
* **GET** submissions are allowed for every class but :data:`GET_REFUSED`; **POST** submissions
  only for :data:`POST_ALLOWED` (search, filter, neutral; such a form has no password field and
  no destructive, auth or commerce word, else it would not be of those classes). ``unknown`` is
  never sent by POST. ``allow`` (``HIDDENWEB_FORMS_ALLOW``) opts in to more classes.
* :func:`refused_choice`: a select's option, radio or checkbox value whose label or value says
  delete, log out, buy… is never chosen; a form whose default choice is one is refused.
* :func:`judge_link` → :class:`Verdict`: a link (or a button outside a form) whose label or URL
  (path, query keys and values) carries a destructive, auth, commerce, subscribe or vote word, or
  whose markup says it is not a plain GET (``data-method="delete"``, ``data-confirm``), is not
  followed. Contact links are followed (a contact page is public content).
* :func:`judge_replay` → :class:`Verdict`: a stored request (method, URL, submitted fields, the
  class its form had) for ``-a recrawl=1``, judged again by the current policy from what the
  store kept; a stored POST without a class is never replayed.
* :func:`judge_script_request` → :class:`Verdict`: a request a page's script makes while
  Chromium renders it that is not a GET, HEAD or OPTIONS: only a POST that reads is sent (a
  GraphQL query, not a mutation; an API endpoint whose path says it searches, lists or gets,
  with no word of a write in its path or body); every other one is refused (``edit``, a
  ``DELETE`` ``destructive``), as a form of that class would be.

Refusal reasons are the refused class names; the spider counts them as
``hiddenweb/safety/refused/<reason>``.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, unquote_plus, urljoin, urlsplit

from hiddenweb.safety_form import FormFacts, FormLike, form_facts, own_text
from hiddenweb.safety_lexicon import (
    LEX,
    LINK_NOUNS,
    ORDER,
    PASSWORD,
    PASSWORD_NAMES,
    SCRIPT_READS,
    SCRIPT_WRITES,
    STATE_NAMES,
    URL_ACTIONS,
    WRITE,
    harmful_classes,
    normalize,
    short_label_classes,
    token_like,
)
from hiddenweb.safety_lexicon import secret_fields as secret_fields  # re-exported (forms.submit)

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)

FORM_CLASSES = ("search", "filter", "neutral", "unknown", "contact", "edit", "login", "signup",
                "password_reset", "payment", "subscribe", "vote", "destructive")
#: refused for GET submissions and links unless allowed
GET_REFUSED = frozenset({"login", "signup", "password_reset", "payment", "subscribe", "vote",
                         "destructive"})
#: the only classes sent by POST unless allowed
POST_ALLOWED = frozenset({"search", "filter", "neutral"})
#: refused link classes (a contact page is followed: it is public content)
LINK_REFUSED = GET_REFUSED
#: ``HIDDENWEB_UNSAFE_FORM_CLASSES`` (deprecated) names → classes of this policy
LEGACY_CLASSES = {"other": ("unknown",), "login": ("login",), "signup": ("signup",),
                  "contact": ("contact",), "payment": ("payment",),
                  "destructive": ("destructive",)}


# -- verdicts -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Verdict:
    """What the policy says of a link or a stored request."""

    allowed: bool
    kind: str  # a class of FORM_CLASSES ("neutral" for a plain link)
    reason: str | None = None  # the refused class, when not allowed
    evidence: str = ""  # the word or sign that decided


@dataclass(frozen=True)
class FormVerdict(Verdict):
    """What the policy says of a form: ``button`` is the index (among the form's submit
    buttons) of the one to click, ``None`` when the form has none (submitted by Enter);
    ``refused_buttons`` the (index, reason) of buttons never clicked."""

    button: int | None = None
    refused_buttons: tuple[tuple[int, str], ...] = ()
    has_password: bool = False


def url_words(url: str) -> str:
    """Normalized words of a URL's path and query (keys and values), not its host."""
    parts = urlsplit(url or "")
    query = " ".join(f"{k} {v}" for k, v in parse_qsl(parts.query, keep_blank_values=True))
    return normalize(f"{unquote_plus(parts.path)} {query} {unquote_plus(parts.fragment)}")


def permitted(kind: str, method: str, allow: frozenset[str] = frozenset()) -> bool:
    """Whether a submission of class ``kind`` by ``method`` may be sent."""
    if kind in allow:
        return True
    if method.upper() == "POST":
        return kind in POST_ALLOWED
    return kind not in GET_REFUSED


def judge_form(form: FormLike, allow: frozenset[str] = frozenset()) -> FormVerdict:
    """The policy's verdict on ``form``: every way to submit it (each submit button, or Enter
    when it has none) is judged as the form's own words plus that button's label, name, value
    and ``formaction``, sent by that button's method; the first allowed one is chosen."""
    facts = form_facts(form)
    base = [normalize(own_text(form)), url_words(form.action), *facts.texts]
    buttons = list(form.buttons)
    if not buttons:
        kind, evidence = _classify(" ".join(base), normalize(form.text), facts, form.method)
        ok = permitted(kind, form.method, allow)
        return FormVerdict(ok, kind, None if ok else kind, evidence, None, (),
                           facts.passwords > 0)
    refused: list[tuple[int, str]] = []
    chosen: tuple[int, str, str] | None = None
    first: tuple[str, str] | None = None
    for i, b in enumerate(buttons):
        label = normalize(b.text)
        own = f"{label} {normalize(b.name)} {normalize(b.value)}"
        if b.action != form.action:
            own += " " + url_words(b.action)
        kind, evidence = _classify(" ".join([*base, own]), label, facts, b.method)
        first = first or (kind, evidence)
        if permitted(kind, b.method, allow):
            chosen = chosen or (i, kind, evidence)
        else:
            refused.append((i, kind))
    if chosen is None:
        assert first is not None
        return FormVerdict(False, first[0], refused[0][1], first[1], None, tuple(refused),
                           facts.passwords > 0)
    return FormVerdict(True, chosen[1], None, chosen[2], chosen[0], tuple(refused),
                       facts.passwords > 0)


def refused_choice(label: str, value: str, post: bool) -> str | None:
    """The harmful class of a choice, a select's option or a radio's or checkbox's value, from
    its label and value: "Delete selected", ``mark_all_read``; in a POST form a choice whose
    label or value is only a short action word ("Archive", "Close") too. None: it may be
    chosen.
    A value the policy refuses is never chosen (:mod:`hiddenweb.forms.extract` leaves it out
    of the field's options); a form that sends one by default is refused (:func:`judge_form`).
    "Order" in a choice is a sort order, as in a sort select (:func:`form_facts`)."""
    label, value = (" ".join(ORDER.sub(" ", normalize(w)).split()) for w in (label, value))
    classes = harmful_classes(f"{label} {value}")
    if post:
        classes += short_label_classes(label) + short_label_classes(value)
    return classes[0] if classes else None


def _classify(text: str, label: str, facts: FormFacts, method: str) -> tuple[str, str]:
    """(class, evidence) of a submission whose words are ``text`` (``label``: its button's)."""
    if facts.refused_default is not None:  # its default choice is an action: "Delete selected"
        return facts.refused_default
    harmful = harmful_classes(text) + short_label_classes(label)
    if facts.payment_fields and "payment" not in harmful:
        harmful.append("payment")
    post = method.upper() == "POST"
    if harmful:
        first = harmful[0]
        if facts.passwords and first in ("subscribe", "vote"):
            first = "signup" if facts.passwords >= 2 else "login"
        return first, (LEX[first].search(text) or label or first)
    if facts.passwords:
        return ("signup" if facts.passwords >= 2 else "login"), "password field"
    if facts.textarea or (facts.contact_fields and (facts.personal or post)):
        return "contact", "message field"
    writes = WRITE.search(text) if post else None
    if writes:  # a POST that adds or changes content ("Add note", "insert into", "Save")
        return "edit", writes
    searchy = LEX["search"].search(text)
    if searchy or facts.search_fields:
        return "search", searchy or "search field"
    contacty = LEX["contact"].search(text)
    if contacty and (facts.personal or post):
        return "contact", contacty
    if facts.personal:
        if facts.only_email:
            return "subscribe", "e-mail field alone"
        return "unknown", "personal data"
    neutral = LEX["neutral"].search(text)
    if facts.finite and not facts.free and (neutral or not post):
        # by POST only with a word that says so: a poll or an RSVP is finite fields too
        return "filter", neutral or "finite fields"
    if neutral:
        return "neutral", neutral
    return "unknown", "no known word"


def judge_link(url: str, label: str = "", markup: Mapping[str, str] | None = None,
               allow: frozenset[str] = frozenset()) -> Verdict:
    """The policy's verdict on following a link (or clicking a button outside a form):
    ``label`` is its text, title or ``aria-label``; ``markup`` its attributes, if known."""
    if not markup:
        return _judge_words(url, label, allow)
    method = (markup.get("data-method") or markup.get("data-turbo-method") or "get").lower()
    if method != "get" and "destructive" not in allow:
        return Verdict(False, "destructive", "destructive", f"data-method={method}")
    if ("data-confirm" in markup or "data-turbo-confirm" in markup) \
            and "destructive" not in allow:
        return Verdict(False, "destructive", "destructive", "data-confirm")
    return _judge_words(url, label, allow)


@lru_cache(maxsize=1 << 15)
def _judge_words(url: str, label: str, allow: frozenset[str]) -> Verdict:
    """:func:`judge_link` on words alone (cached: a site's navigation repeats on every page)."""
    words = normalize(label)
    if len(words.split()) > 3 and set(LEX["payment"].search_all(words)) <= {"order", "orders"}:
        words = ORDER.sub(" ", words)  # a title ("The Order of the Phoenix"), not an action
    segments = {seg.lower() for seg in urlsplit(url or "").path.split("/")}
    if segments & URL_ACTIONS and "destructive" not in allow:
        return Verdict(False, "destructive", "destructive", "/".join(segments & URL_ACTIONS))
    text = f"{words} {url_words(url)}"
    for kind in harmful_classes(text, LINK_NOUNS) + short_label_classes(words):
        if kind in LINK_REFUSED and kind not in allow:
            return Verdict(False, kind, kind, LEX[kind].search(text) or words)
    return Verdict(True, "neutral")


_MARKED = ("//a[@href][@title or @aria-label or @data-method or @data-confirm"
           " or @data-turbo-method or @data-turbo-confirm]")
_MARKUP_KEYS = ("data-method", "data-confirm", "data-turbo-method", "data-turbo-confirm")


def anchor_markup(attrs: Mapping[str, str]) -> tuple[str, dict[str, str]]:
    """One link's ``title`` and ``aria-label`` text and its ``data-method``/``data-confirm``
    attributes, from its ``attrs``: what :func:`judge_link` reads besides the anchor text."""
    label = " ".join(attrs.get(k, "") for k in ("title", "aria-label")).strip()
    return label, {k: attrs[k] for k in _MARKUP_KEYS if k in attrs}


def link_markup(selector: Any, base_url: str) -> dict[str, tuple[str, dict[str, str]]]:
    """Absolute URL → (``title`` and ``aria-label`` text, the ``data-method``/``data-confirm``
    attributes) of a page's links that have any, for :func:`judge_link` (a link extractor keeps
    only the anchor text). ``selector``: the page's parsel ``Selector``; empty when it is not
    markup."""
    out: dict[str, tuple[str, dict[str, str]]] = {}
    try:
        anchors = selector.xpath(_MARKED)
    except (ValueError, AttributeError):
        return out
    for a in anchors:
        url = urljoin(base_url, a.attrib.get("href", "").strip())
        label, marks = anchor_markup(a.attrib)
        old = out.get(url)
        if old is not None:  # the same URL twice: keep every word and mark
            label, marks = f"{old[0]} {label}".strip(), {**old[1], **marks}
        out[url] = (label, marks)
    return out


def judge_replay(method: str, url: str, fields: Mapping[str, Any] | None,
                 form_class: str | None = None, allow: frozenset[str] = frozenset()
                 ) -> Verdict:
    """The policy's verdict on replaying a stored request (``-a recrawl=1``): its URL as a link's;
    a submission only when the class its form was given when it was made (``form_class``, kept
    by the store) is one the policy sends by ``method`` — a POST without one is never replayed —
    and no field name or value is harmful or a password."""
    link = judge_link(url, allow=allow)
    if not link.allowed:
        return link
    if form_class is None:
        if method.upper() == "POST" and "unknown" not in allow:
            return Verdict(False, "unknown", "unknown", "no form class stored")
        if not fields:
            return link
    elif not permitted(form_class, method, allow):
        return Verdict(False, form_class, form_class, "stored form class")
    names = [str(n) for n in (fields or {})]
    if any(set(normalize(n).split()) & PASSWORD_NAMES or PASSWORD.search(normalize(n))
           for n in names) and "login" not in allow:
        return Verdict(False, "login", "login", "password field")
    words = " ".join(normalize(n) for n in names)
    for name, value in (fields or {}).items():
        text = "" if value is None else str(value)
        if not token_like(text):
            words += " " + normalize(text)
        if normalize(str(name)) == "method" and text.lower() in ("delete", "put", "patch"):
            words += " delete"
    for kind in harmful_classes(words):
        if not permitted(kind, method, allow):
            return Verdict(False, kind, kind, LEX[kind].search(words) or kind)
    return Verdict(True, form_class or "neutral")


#: a script's POST body larger than this is not read: refused (an upload, a sync of a document)
MAX_SCRIPT_BODY = 65536
#: a GraphQL document: it starts with an operation, a fragment, a selection set or a comment
_GRAPHQL = re.compile(r"\s*(?:query\b|mutation\b|subscription\b|fragment\b|\{|#)")
#: what a GraphQL document's operations are, once its strings and comments are blanked
_GRAPHQL_WRITES = re.compile(r"\b(?:mutation|subscription)\b")
_GRAPHQL_NOISE = re.compile(r'"""(?:[^"]|"(?!""))*"""|"(?:[^"\\\n]|\\.)*"|#[^\n]*')


def graphql_operations(body: str) -> str | None:
    """``"query"`` when ``body`` is a GraphQL request (a JSON object with a ``query`` document,
    or a batch of them) whose every operation reads, ``"mutation"`` when any operation writes
    (``mutation``, or ``subscription``: it holds a connection), None when it is not GraphQL."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    batch = data if isinstance(data, list) else [data]
    if not batch or not all(isinstance(op, dict) for op in batch):
        return None
    documents = [op.get("query") for op in batch]
    if not all(isinstance(d, str) and _GRAPHQL.match(d) for d in documents):
        return None
    blanked = " ".join(_GRAPHQL_NOISE.sub(" ", d) for d in documents)
    return "mutation" if _GRAPHQL_WRITES.search(blanked) else "query"


def _body_words(body: str) -> tuple[str, str]:
    """Normalized words of a script's request body (a JSON document's keys and string values,
    a form-encoded body's names and values, or the text; values that look like tokens left
    out), and the words of the values of its fields that name an action (``action``, ``op``,
    ``cmd``: :data:`~hiddenweb.safety_lexicon.STATE_NAMES`)."""
    pairs: list[tuple[str, str]] = []

    def walk(node: Any, key: str = "") -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                pairs.append((str(k), ""))
                walk(v, str(k))
        elif isinstance(node, list):
            for v in node:
                walk(v, key)
        elif isinstance(node, str):
            pairs.append((key, node))

    try:
        walk(json.loads(body))
    except ValueError:
        if "=" in body and " " not in body.strip():
            for k, v in parse_qsl(body, keep_blank_values=True):
                pairs += [(k, ""), (k, v)]
        else:
            pairs.append(("", body))
    words = " ".join(normalize(v or k) for k, v in pairs if (v or k) and not token_like(v))
    actions = " ".join(normalize(v) for k, v in pairs
                       if v and normalize(k) in STATE_NAMES and not token_like(v))
    return words, actions


def _unless_allowed(kind: str, evidence: str, allow: frozenset[str]) -> Verdict:
    """A script request of class ``kind``: refused, unless ``allow`` lifts that class."""
    return Verdict(kind in allow, kind, None if kind in allow else kind, evidence)


def judge_script_request(method: str, url: str, body: str | None,
                         allow: frozenset[str] = frozenset()) -> Verdict:
    """The policy's verdict on a request a page's script makes while Chromium renders it
    (``fetch``, XHR, a beacon) that is not a GET, HEAD or OPTIONS (those are read as links):
    ``body`` is its body as text, None when it cannot be read as text (a file, a stream).

    Sent only when it reads, which a POST says by what it is (a GraphQL ``query`` document,
    :func:`graphql_operations`) or by its endpoint: its URL, judged as a link's first, has a
    word of a search or a read in its path (``runs/search``, ``items/list``:
    :data:`~hiddenweb.safety_lexicon.SCRIPT_READS` and the ``search`` words) and no word of a
    write (:data:`~hiddenweb.safety_lexicon.WRITE`,
    :data:`~hiddenweb.safety_lexicon.SCRIPT_WRITES`), and its body carries no harmful word
    and no such verb in a field that names an action (``{"op": "update"}``). Everything else
    is refused: ``PUT``, ``PATCH`` and a POST the policy cannot read as a search are ``edit``,
    ``DELETE`` is ``destructive`` (sent only when ``allow`` lifts that class)."""
    method = method.upper()
    link = judge_link(url, allow=allow)
    if not link.allowed:
        return link
    if method != "POST":
        return _unless_allowed("destructive" if method == "DELETE" else "edit", method, allow)
    if body is not None and len(body) > MAX_SCRIPT_BODY:
        body = None
    if body is None:
        return _unless_allowed("edit", "a body that is not text", allow)
    graphql = graphql_operations(body) if body.strip() else None
    if graphql == "query":
        return Verdict(True, "search", None, "graphql query")
    if graphql == "mutation":
        return _unless_allowed("edit", "graphql mutation", allow)
    path = normalize(unquote_plus(urlsplit(url).path))
    words, actions = _body_words(body) if body.strip() else ("", "")
    words = ORDER.sub(" ", words)
    for kind in harmful_classes(f"{path} {words}"):
        if kind not in allow:
            return Verdict(False, kind, kind, LEX[kind].search(f"{path} {words}") or kind)
    writes = WRITE.search(path) or SCRIPT_WRITES.search(path) or WRITE.search(actions) \
        or SCRIPT_WRITES.search(actions)
    reads = LEX["search"].search(path) or SCRIPT_READS.search(path)
    if writes or not reads:
        return _unless_allowed("edit", writes or "no word of a read in its path", allow)
    return Verdict(True, "search", None, reads)


# -- configuration --------------------------------------------------------------------------------
@dataclass(frozen=True)
class SafetyPolicy:
    """The policy with its opt-ins (``HIDDENWEB_FORMS_ALLOW``)."""

    allow: frozenset[str] = frozenset()

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> SafetyPolicy:
        """Read ``HIDDENWEB_FORMS_ALLOW`` (and its deprecated alias
        ``HIDDENWEB_UNSAFE_FORM_CLASSES``); raise ``ValueError`` naming an unknown class."""
        from hiddenweb import defaults

        allow = set(settings.getlist("HIDDENWEB_FORMS_ALLOW", defaults.HIDDENWEB_FORMS_ALLOW))
        unknown = sorted(c for c in allow if c not in FORM_CLASSES)
        if unknown:
            raise ValueError(f"HIDDENWEB_FORMS_ALLOW: unknown class {', '.join(unknown)} "
                             f"(known: {', '.join(FORM_CLASSES)})")
        legacy = settings.getlist("HIDDENWEB_UNSAFE_FORM_CLASSES",
                                  defaults.HIDDENWEB_UNSAFE_FORM_CLASSES)
        if legacy:
            bad = sorted(c for c in legacy if c not in LEGACY_CLASSES)
            if bad:
                raise ValueError(f"HIDDENWEB_UNSAFE_FORM_CLASSES: unknown class "
                                 f"{', '.join(bad)} (known: {', '.join(LEGACY_CLASSES)})")
            logger.warning("HIDDENWEB_UNSAFE_FORM_CLASSES is deprecated: use "
                           "HIDDENWEB_FORMS_ALLOW (docs/safety.md)")
            for c in legacy:
                allow.update(LEGACY_CLASSES[c])
        return cls(frozenset(allow))

    def form(self, form: FormLike) -> FormVerdict:
        """The verdict on ``form``; the choices of a class the user opted in to
        (:func:`refused_choice`) go back among its fields' options first."""
        if self.allow:
            for f in form.fields:
                back = [v for v, c in f.refused.items() if c in self.allow]
                f.options.extend(back)
                for v in back:
                    del f.refused[v]
        return judge_form(form, self.allow)

    def link(self, url: str, label: str = "", markup: Mapping[str, str] | None = None
             ) -> Verdict:
        return judge_link(url, label, markup, self.allow)

    def replay(self, method: str, url: str, fields: Mapping[str, Any] | None,
               form_class: str | None = None) -> Verdict:
        return judge_replay(method, url, fields, form_class, self.allow)

    def script_request(self, method: str, url: str, body: str | None) -> Verdict:
        return judge_script_request(method, url, body, self.allow)
