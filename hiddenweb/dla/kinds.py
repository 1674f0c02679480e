"""Kinds of actions: what lets one automaton's learning inform automata on other pages.

A URL is usually fetched once, so an automaton bound to one page learns little that is used
again (ALGORITHMS.md section 1, "Reading it for a real crawler"). An action is therefore also
described by its *kinds*, strings shared by actions of the same sort on any page:

* ``form:<signature>``: a form, by its action URL template and sorted field names
  (the spider's ``hiddenweb_action["form"]["signature"]`` when given);
* ``fv:<field>=<value>``: one field and the value submitted in it (an LVS value that worked);
* ``url:<template>``: host and path with digit runs replaced by ``{n}``, plus sorted query keys
  (``example.org/item/{n}?id&page``);
* ``word:<w>``: a lower-cased word (2+ letters or digits) of the link label; ``hword:<w>`` for
  a link on a page reached through a form (``"hidden": True`` in the action). A word's worth
  depends on where the link is: in a form's answers "fern" labels a record (a hidden page), on
  the public pages it labels an article about ferns, and what one taught must not pull the
  other (measured at 10^4 pages, seed 1: 5905 downloads to 90 % of the hidden pages with the
  split, 7716 without it; issue 3). With ``words="answers"`` (the scheduler's default,
  ``dla_label_words``) :func:`kinds` leaves out the ``word:`` kinds of public links
  (docs/settings.md: on the proving ground, whose public links are labelled with page titles,
  they only pulled links depth-first);
* ``src:harvest``: a submission whose values the form's own answers showed
  (:mod:`hiddenweb.forms.records`), as opposed to values taken blind from the LVS.
* ``url:<template> rel=nofollow``: the primary kind of a link its page marks ``rel="nofollow"``
  (``"nofollow": True`` in the action), with ``url:<template>`` as its parent. Sites mark so
  the links that are not content: a wiki's edit, history, backlinks and login links, a
  tracker's other download formats, comment authors' links. The scheduler serves such links
  only when no other request is pending (:func:`is_nofollow`; ``dla_nofollow_last``): their
  own bucket keeps them apart from content links of the same template;
* ``src:<source>``: a link found elsewhere than in an anchor, by the source that named it
  (:mod:`hiddenweb.urlsources`: ``src:sitemap``, ``src:json``, ``src:script`` …; ``"source"`` in
  the action), listed after its URL template's kinds: what one sitemap or API reply taught
  carries to the URLs the others name. A *guessed* source (a path quoted in a script, a comment,
  a data attribute, a stylesheet) and a JSON value also have ``"nofollow": True``: served last,
  as a link marked nofollow is (see below), since no person follows it from the page as shown;
  and ``"guess": True``: it has no ``links:public`` kind, so what its replies teach stays with
  its own kinds and never lifts or sinks the site's public links;
* ``links:public``: every link on a public page (the last of its kinds). Its automaton learns
  what the site's public links are worth; a URL template seen for the first time starts there
  (its *root*, see the scheduler) rather than at 1/2. Links on a form's answers have no root:
  their templates (a record's detail page) start at 1/2.

The first kind of an action is its *primary* kind (``form:`` for forms, ``url:`` for links);
the scheduler queues requests by kind (:mod:`hiddenweb.dla.scheduler`). A primary kind may have
a *parent* (:func:`parent_kind`), the kind one level coarser, listed right after it: a form
without the fixed state of its signature (a wizard's step-2 form for ``region=MA`` and for
``region=TX`` share ``form:POST /c/2/locate [city]``), a URL template without its query keys
(``/catalog?brand`` and ``/catalog?colour&size`` share ``url:ex.org/catalog``), a nofollow
link's kind without its mark. A kind seen for
the first time starts from its parent's probability instead of the uniform 1/2, so what a
site's ten region forms or fifty facet combinations taught is not unlearnt for the next one.

Meta read (set by the spider; :func:`action_of` infers it when missing)::

    request.meta["hiddenweb_action"] = {
        "kind": "link" | "form",
        "page": "<URL of the page the action is on>",
        "label": "<anchor text or submit label>",
        "form": {"signature": str, "fields": {name: value}} | None,
        "hidden": True,  # optional: the page is a form's answer (its label words: hword:)
        "nofollow": True,  # optional: a link marked rel="nofollow" (or a guessed URL source)
        "guess": True,  # optional: a guessed URL source (no links:public kind)
        "source": "harvest",  # optional: values shown by the form's own answers; for a link,
                              # the URL source that named it (src:<source>)
    }
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from scrapy import Request

from hiddenweb.pagetext import fold_path
from hiddenweb.routes import route_of

ACTION_META = "hiddenweb_action"
#: a request whose group the scheduler serves first until it empties, as a group the stale rule
#: lifts (``serve_first``): a proven view asked for under another record (:mod:`hiddenweb.
#: routesiblings`, lab knob ``route_siblings_first``)
SERVE_FIRST_META = "hiddenweb_serve_first"
#: a request served before any other but the re-renders and the lifted groups, itself only: its
#: group is lifted for one request when it is the group's only pending one (the first route of
#: a URL template, lab knob ``route_templates_first``)
SERVE_NEXT_META = "hiddenweb_serve_next"

_WORD = re.compile(r"[^\W_]{2,}")
MAX_LABEL_WORDS = 8
MAX_VALUE_CHARS = 64


def url_template(url: str) -> str:
    """``https://ex.org/a/12/b?x=1&q=2`` -> ``ex.org/a/{n}/b?q&x``; a hash route's path, folded,
    follows the document's (:mod:`hiddenweb.routes`): ``https://ex.org/?v=1#/runs/7`` ->
    ``ex.org/#/runs/{n}?v``, so that a single-page app's views are kinds of their own, not all
    the kind of its one document."""
    parts = urlsplit(url)
    path = fold_path(parts.path or "/")
    route = route_of(url)
    if route is not None:
        path += "#" + fold_path(route.split("?", 1)[0])
    keys = sorted({k for k, _ in parse_qsl(parts.query, keep_blank_values=True)})
    return f"{parts.netloc.lower()}{path}" + ("?" + "&".join(keys) if keys else "")


def form_signature(action_url: str, field_names: list[str] | tuple[str, ...]) -> str:
    """A form's identity on any page: its action URL template and its sorted field names."""
    return f"{url_template(action_url).split('?', 1)[0]}|{','.join(sorted(set(field_names)))}"


#: Kinds that start as if rewarded this many times: a value the form's own answers showed is
#: known, before any feedback, to be a better bet than a blind one (the HiWE / adaptive query
#: selection premise, :mod:`hiddenweb.forms.records`). Every other kind starts at 1/2 or its
#: parent's.
#: the two actions of a kind's automaton: pursue the kind's requests, or skip them
PURSUE, SKIP = "+", "-"

PRIOR_REWARDS = {"src:harvest": 1}
#: the kind every link on a public page also has (the last of its kinds): what the site's
#: public links taught, where a URL template seen for the first time starts
PUBLIC_LINKS = "links:public"
ROOT_KINDS = frozenset({PUBLIC_LINKS})
#: what a link marked rel="nofollow" adds to its URL template's kind (its primary kind)
NOFOLLOW = " rel=nofollow"
#: what the group of a page's second read in Chromium adds to its primary kind (the request
#: meta ``hiddenweb_rerender``): served before every other group (the scheduler's "Order")
RENDER = " render"


def is_nofollow(kind: str) -> bool:
    """Whether ``kind`` is the primary kind of links marked ``rel="nofollow"``."""
    return kind.endswith(NOFOLLOW)


def is_render(kind: str) -> bool:
    """Whether ``kind`` is the group of pages rendered again in Chromium (:data:`RENDER`)."""
    return kind.endswith(RENDER)


def parent_kind(kind: str) -> str | None:
    """The kind one level coarser than ``kind`` (see the module docstring), or None."""
    if is_render(kind):
        return kind.removesuffix(RENDER)
    if kind.startswith("form:"):
        head, sep, _ = kind.partition(" {")
        return head if sep else None
    if is_nofollow(kind):
        return kind.removesuffix(NOFOLLOW)
    if kind.startswith("url:") and "?" in kind:
        return kind.split("?", 1)[0]
    return None


def query_keys(kind: str) -> int:
    """How many query keys the URL template of link kind ``kind`` has (its nofollow or render
    group's too): ``url:h/vega/cars?Horsepower&_facet`` 2, ``url:h/vega/cars`` 0; 0 for a
    kind that is not a URL template."""
    if not kind.startswith("url:"):
        return 0
    _, sep, query = kind.removesuffix(RENDER).removesuffix(NOFOLLOW).partition("?")
    return query.count("&") + 1 if sep and query else 0


def label_words(label: str | None) -> list[str]:
    """Distinct lower-cased words of a label, first :data:`MAX_LABEL_WORDS` of them."""
    seen: dict[str, None] = {}
    for w in _WORD.findall((label or "").lower()):
        seen.setdefault(w, None)
        if len(seen) >= MAX_LABEL_WORDS:
            break
    return list(seen)


def action_of(request: Request) -> dict[str, Any]:
    """The request's ``hiddenweb_action`` meta, or one inferred from the request itself."""
    action = request.meta.get(ACTION_META)
    if isinstance(action, dict):
        return action
    return infer_action(request, page="")


def infer_action(request: Request, *, page: str) -> dict[str, Any]:
    """An action dict for a request the spider did not tag: POST (or a query GET built by
    ``FormRequest``) is a form submission, anything else a link."""
    is_form = request.method == "POST" or type(request).__name__ == "FormRequest"
    if not is_form:
        return {"kind": "link", "page": page, "label": "", "form": None}
    if request.method == "POST":
        body = request.body.decode("utf-8", "replace")
    else:
        body = urlsplit(request.url).query
    fields = dict(parse_qsl(body, keep_blank_values=True))
    signature = form_signature(request.url, list(fields))
    return {"kind": "form", "page": page, "label": "",
            "form": {"signature": signature, "fields": fields}}


def kinds(action: dict[str, Any], url: str, words: str = "all",
          nofollow: bool = True) -> list[str]:
    """Kinds of an action whose request goes to ``url``; the first one is the primary kind.
    ``words`` says which label words are kinds (``dla_label_words``): ``all``;
    ``answers``, not those of a link on a public page; ``none``. ``nofollow``: whether a link
    marked nofollow has a kind of its own (``dla_nofollow_last``)."""
    form = action.get("form")
    out: list[str]
    if action.get("kind") == "form" and isinstance(form, dict):
        fields = form.get("fields") or {}
        signature = form.get("signature") or form_signature(url, list(fields))
        out = [f"form:{signature}"]
        parent = parent_kind(out[0])
        if parent:
            out.append(parent)
        if action.get("source") == "harvest":
            out.append("src:harvest")
        out += [f"fv:{name}={str(value)[:MAX_VALUE_CHARS]}"
                for name, value in sorted(fields.items())]
    else:
        mark = NOFOLLOW if nofollow and action.get("nofollow") else ""
        out = [f"url:{url_template(url)}{mark}"]
        parent = parent_kind(out[0])
        if parent:
            out.append(parent)
        if action.get("source"):
            out.append(f"src:{action['source']}")
    public_link = action.get("kind") != "form" and not action.get("hidden")
    if words == "all" or (words == "answers" and not public_link):
        prefix = "hword" if action.get("hidden") else "word"
        out += [f"{prefix}:{w}" for w in label_words(action.get("label"))]
    if public_link and not action.get("guess"):
        out.append(PUBLIC_LINKS)
    return out
