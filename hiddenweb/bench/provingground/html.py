"""HTML of the proving ground: page shell, forms (static or built by a script), trap pages.

A form is described once as a tree of ``(tag, attrs, children)`` nodes (children: a string or a
list of nodes) and rendered either as HTML or as a script that builds it with DOM calls
(``document.createElement``/``setAttribute``/``appendChild``) — the JS-only variant has no
``<noscript>`` copy, so only a browser sees it.
"""

from __future__ import annotations

import calendar as _calendar
import json
from html import escape
from urllib.parse import urlencode

from hiddenweb.bench.provingground import vocab

Node = tuple[str, dict, "str | list[Node]"]

_VOID = {"input", "br"}


def page(title: str, *parts: str, lang: str = "en") -> bytes:
    body = "\n".join(parts)
    return (
        f'<!DOCTYPE html>\n<html lang="{lang}"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title></head>\n<body>\n{body}\n</body></html>\n"
    ).encode()


def a(href: str, text: str) -> str:
    return f'<a href="{escape(href)}">{escape(text)}</a>'


def ul(items: list[str]) -> str:
    return "<ul>\n" + "\n".join(f"<li>{i}</li>" for i in items) + "\n</ul>" if items else ""


def node_html(n: Node) -> str:
    tag, attrs, children = n
    at = "".join(
        f" {k}" if v is True else f' {k}="{escape(str(v))}"'
        for k, v in attrs.items()
        if v is not False and v is not None
    )
    if tag in _VOID:
        return f"<{tag}{at}>"
    inner = escape(children) if isinstance(children, str) else "".join(map(node_html, children))
    return f"<{tag}{at}>{inner}</{tag}>"


def _js_value(s: str) -> str:
    parts = s.split("/")
    return "[" + ",".join(json.dumps(p).replace("<", "\\u003c") for p in parts) + "].join('/')"


def node_js(n: Node, parent: str, counter: list[int]) -> str:
    tag, attrs, children = n
    counter[0] += 1
    var = f"e{counter[0]}"
    out = [f"var {var}=document.createElement({json.dumps(tag)});"]
    for k, v in attrs.items():
        if v is False or v is None:
            continue
        out.append(f"{var}.setAttribute({json.dumps(k)},{_js_value('' if v is True else str(v))});")
    if isinstance(children, str):
        if children:
            out.append(f"{var}.appendChild(document.createTextNode({_js_value(children)}));")
    else:
        for c in children:
            out.append(node_js(c, var, counter))
    out.append(f"{parent}.appendChild({var});")
    return "".join(out)


def scripted(n: Node, slot_id: str) -> str:
    """An empty slot plus a script that builds ``n`` in it (no static copy)."""
    code = node_js(n, "s", [0])
    return (
        f'<div id="{slot_id}"></div>\n<script>(function(){{var s=document.getElementById('
        f"{json.dumps(slot_id)});{code}}})();</script>"
    )


def render_node(n: Node, js: bool, slot_id: str) -> str:
    return scripted(n, slot_id) if js else node_html(n)


def collection_form(col, host: int) -> Node:
    """The search/filter form of collection ``col`` as it appears on page ``host``."""
    f, lab, dom, fid = col.fields, col.labels, col.domain, f"c{col.cid}"

    def text(role: str) -> list[Node]:
        return [
            ("label", {"for": f"{fid}-{role}"}, lab[role]),
            ("input", {"type": "text", "id": f"{fid}-{role}", "name": f[role]}, ""),
        ]

    def select(role: str, options: list[tuple[str, str]], required: bool) -> list[Node]:
        return [
            ("label", {"for": f"{fid}-{role}"}, lab[role]),
            (
                "select",
                {"id": f"{fid}-{role}", "name": f[role], "required": required},
                [("option", {"value": v}, t) for v, t in options],
            ),
        ]

    if col.kind == "search":
        kids, button = text("q"), "Search"
    elif col.kind == "filter":
        kids = select(
            "category", [("", "Choose…")] + [(c, c.capitalize()) for c in dom["category"]], True
        )
        radios = [
            (
                "label",
                {},
                [
                    (
                        "input",
                        {
                            "type": "radio",
                            "name": f["colour"],
                            "value": v,
                            "checked": v == "any",
                        },
                        "",
                    ),
                    ("span", {}, t),
                ],
            )
            for v, t in [("any", "Any")] + [(c, c.capitalize()) for c in dom["colour"]]
        ]
        kids += [
            ("fieldset", {}, [("legend", {}, lab["colour"]), *radios]),
            (
                "label",
                {},
                [
                    ("input", {"type": "checkbox", "name": f["instock"], "value": "1"}, ""),
                    ("span", {}, lab["instock"]),
                ],
            ),
        ]
        button = "Filter"
    elif col.style == "dependent":  # region, then a city select a script fills
        kids = select(
            "region", [("", "Choose…")] + [(k, vocab.REGIONS[k]) for k in dom["region"]], True
        ) + select("city", [("", "Choose a region first")], True)
        button = "Find"
    elif col.kind == "locate":  # step 1 of the wizard: the region (step 2: step_form)
        kids = select(
            "region", [("", "Choose…")] + [(k, vocab.REGIONS[k]) for k in dom["region"]], True
        )
        button = "Next"
    else:
        kids = text("author") + select(
            "year", [("any", "Any year")] + [(y, y) for y in dom["year"]], False
        )
        button = "Search archive"
    kids.append(("input", {"type": "hidden", "name": "csrf", "value": col.tokens[host]}, ""))
    wizard = col.kind == "locate" and getattr(col, "style", "plain") != "dependent"
    target = col.step_action if wizard else col.action
    attrs = {"action": target, "method": "get" if wizard else col.method.lower(),
             "id": f"form-{fid}"}
    style = getattr(col, "style", "plain")
    if style == "buttons":  # a dead form action; a trap button first; the real formaction
        attrs["action"] = f"/c/{col.cid}/old-search"
        kids += [
            ("button", {"type": "submit", "name": "op", "value": "clear",
                        "formaction": "/account/delete", "formmethod": "post"},
             "Clear my saved searches"),
            ("button", {"type": "submit", "formaction": target}, button),
        ]
    elif style == "image":
        kids.append(("input", {"type": "image", "name": "go", "src": "/static/go.png",
                               "alt": button}, ""))
    elif style == "xhr":  # submitted by a script only: the action is a dead URL
        attrs.update({"action": f"/c/{col.cid}/noscript", "data-endpoint": target})
        kids.append(("button", {"type": "submit"}, button))
    else:
        kids.append(("button", {"type": "submit"}, button))
    return ("form", attrs, kids)


def step_form(col, region: str) -> Node:
    """Step 2 of a locate wizard: the region as hidden state, a fresh token, the city."""
    fid = f"c{col.cid}"
    return (
        "form",
        {"action": col.action, "method": "post", "id": f"form-{fid}-step2"},
        [
            ("input", {"type": "hidden", "name": col.fields["region"], "value": region}, ""),
            ("input", {"type": "hidden", "name": "csrf", "value": col.main_token}, ""),
            ("label", {"for": f"{fid}-city"}, col.labels["city"]),
            ("input", {"type": "text", "id": f"{fid}-city", "name": col.fields["city"]}, ""),
            ("button", {"type": "submit"}, "Find"),
        ],
    )


def xhr_script(col) -> str:
    """The script of an ``xhr`` form: fetch the results, show them, push the result URL."""
    fid = f"c{col.cid}"
    return (
        f'<div id="res-{fid}"></div>\n<script>(function(){{'
        f'var f=document.getElementById("form-{fid}");'
        'f.addEventListener("submit",function(ev){ev.preventDefault();'
        'var u=f.getAttribute("data-endpoint")+"?"+new URLSearchParams(new FormData(f));'
        'fetch(u).then(function(r){return r.text();}).then(function(t){'
        f'document.getElementById("res-{fid}").innerHTML=t;history.pushState(null,"",u);}});'
        "});})();</script>"
    )


def dependent_script(col) -> str:
    """The script of a ``dependent`` form: when the region changes, fetch its cities and put
    them in the city select (no city is in the page's HTML)."""
    fid = f"c{col.cid}"
    region, city = col.fields["region"], col.fields["city"]
    return (
        f'<script>(function(){{var f=document.getElementById("form-{fid}");'
        f'var r=f.querySelector(\'[name="{region}"]\'),c=f.querySelector(\'[name="{city}"]\');'
        'r.addEventListener("change",function(){'
        'while(c.options.length>1){c.remove(1);}if(!r.value){return;}'
        f'fetch("/c/{col.cid}/options?region="+encodeURIComponent(r.value))'
        '.then(function(x){return x.json();}).then(function(l){'
        'l.forEach(function(v){var o=document.createElement("option");'
        'o.value=v[0];o.textContent=v[1];c.appendChild(o);});'
        'c.setAttribute("data-loaded",r.value);});});})();</script>'
    )


# --- traps ------------------------------------------------------------------------------------


def login_form() -> Node:
    return (
        "form",
        {"action": "/login", "method": "post", "id": "login"},
        [
            ("label", {"for": "username"}, "Username"),
            ("input", {"type": "text", "id": "username", "name": "username"}, ""),
            ("label", {"for": "password"}, "Password"),
            ("input", {"type": "password", "id": "password", "name": "password"}, ""),
            ("button", {"type": "submit"}, "Log in"),
        ],
    )


def contact_form() -> Node:
    return (
        "form",
        {"action": "/contact", "method": "post", "id": "contact"},
        [
            ("label", {"for": "cname"}, "Your name"),
            ("input", {"type": "text", "id": "cname", "name": "name"}, ""),
            ("label", {"for": "cemail"}, "Email"),
            ("input", {"type": "email", "id": "cemail", "name": "email"}, ""),
            ("label", {"for": "cmsg"}, "Message"),
            ("textarea", {"id": "cmsg", "name": "message"}, ""),
            ("button", {"type": "submit"}, "Send"),
        ],
    )


def delete_form() -> Node:
    return (
        "form",
        {"action": "/account/delete", "method": "post", "id": "delete-account"},
        [
            (
                "label",
                {},
                [
                    ("input", {"type": "checkbox", "name": "confirm", "value": "yes"}, ""),
                    ("span", {}, "I understand this cannot be undone"),
                ],
            ),
            (
                "button",
                {"type": "submit", "name": "action", "value": "delete"},
                "Delete my account",
            ),
        ],
    )


TRAP_FORMS = {
    "/login": ("Log in", login_form),
    "/contact": ("Contact us", contact_form),
    "/account/delete": ("Delete account", delete_form),
}
TRAP_NAMES = {"/login": "login", "/contact": "contact", "/account/delete": "delete"}


def trap_page(path: str, method: str) -> bytes:
    title, form = TRAP_FORMS[path]
    if method == "POST":
        return page(
            title, f"<h1>{escape(title)}</h1><p>Your request was received.</p>", a("/", "Home")
        )
    return page(title, f"<h1>{escape(title)}</h1>", node_html(form()), a("/", "Home"))


def calendar_page(month: str) -> tuple[int, bytes]:
    """``/calendar?month=YYYY-MM``: prev/next links forever (an infinite, near-identical space)."""
    try:
        y, m = (int(x) for x in month.split("-"))
        if not (1 <= y <= 9999 and 1 <= m <= 12):
            raise ValueError
    except ValueError:
        return 404, page("Not found", "<h1>Not found</h1>")
    py, pm = (y, m - 1) if m > 1 else (y - 1, 12)
    ny, nm = (y, m + 1) if m < 12 else (y + 1, 1)
    links = []
    if py >= 1:
        links.append(a(f"/calendar?month={py:04d}-{pm:02d}", "« Previous month"))
    if ny <= 9999:
        links.append(a(f"/calendar?month={ny:04d}-{nm:02d}", "Next month »"))
    days = _calendar.monthrange(y, m)[1]
    cells = " ".join(str(d) for d in range(1, days + 1))
    return 200, page(
        f"Events {y:04d}-{m:02d}",
        f"<h1>Events in {y:04d}-{m:02d}</h1>",
        f"<p>No events this month.</p><p>{cells}</p>",
        " | ".join(links),
        a("/", "Home"),
    )


FACETS = {
    "brand": ["acme", "globex", "initech", "umbrella", "stark", "wayne"],
    "colour": ["red", "green", "blue", "black", "white"],
    "size": ["xs", "s", "m", "l", "xl"],
    "price": ["0-10", "10-50", "50-100", "100-"],
    "sort": ["relevance", "price", "newest"],
    "view": ["grid", "list"],
}
PRODUCTS = ["Acme anvil", "Globex widget", "Initech stapler", "Umbrella raincoat"]


def catalog_page(params: dict[str, str]) -> bytes:
    """``/catalog?…``: every page links to the toggle of every facet value (faceted trap)."""
    state = {k: v for k, v in params.items() if k in FACETS and v in FACETS[k]}
    links = []
    for facet, values in FACETS.items():
        for v in values:
            s = dict(state)
            if s.get(facet) == v:
                del s[facet]
            else:
                s[facet] = v
            q = urlencode([(k, s[k]) for k in FACETS if k in s])
            links.append(a("/catalog" + (f"?{q}" if q else ""), f"{facet}: {v}"))
    shown = ", ".join(f"{k}={v}" for k, v in state.items()) or "all"
    return page(
        "Catalog",
        f"<h1>Catalog ({escape(shown)})</h1>",
        ul([escape(p) for p in PRODUCTS]),
        "<nav>" + " ".join(links) + "</nav>",
        a("/", "Home"),
    )
