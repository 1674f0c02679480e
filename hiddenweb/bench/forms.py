"""Form classifier accuracy on the proving ground: ``hiddenweb bench forms --pages N --seed S``.

Every page of a generated site that carries a form (the collections' host pages and the trap
pages ``/login``, ``/contact``, ``/account/delete``) is rendered by the site model — the bytes
the server sends; script-built forms are taken from the same site rendered without scripts, the
DOM a browser builds — and each of its forms is classified by :func:`hiddenweb.forms.classify`
and, when it loads, by formasaurus's bundled model. Each is compared with the site's own class
(:func:`form_truth`: ``search`` for the keyword and archive forms, ``filter`` for the
finite-domain ones (the filter forms and the locator wizard's first step, a region select),
``login``, ``contact``, ``destructive`` for the traps). Prints accuracy and a confusion table
per classifier.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Iterator

from parsel import Selector

from hiddenweb.bench.provingground.html import TRAP_FORMS
from hiddenweb.bench.provingground.site import SiteModel
from hiddenweb.forms.classify import FORM_CLASSES, classify
from hiddenweb.forms.extract import extract_forms

TRAP_CLASSES = {"/login": "login", "/contact": "contact", "/account/delete": "destructive"}
# formasaurus's form types → hiddenweb's classes
FORMASAURUS = {"search": "search", "login": "login", "registration": "signup",
               "password/login recovery": "other", "contact/comment": "contact",
               "join mailing list": "signup", "order/add to cart": "payment", "other": "other"}


def form_truth(site: SiteModel) -> Iterator[dict]:
    """One dict per form of the site: page path, index on the page, and its true class."""
    static = (SiteModel(site.pages, site.seed, js=False, dependent=site.dependent)
              if site.js else site)
    g = site.graph
    for host in sorted(site.host_forms):
        for index, cid in enumerate(site.host_forms[host]):
            col = site.collections[cid]
            yield {"page": g.url(host), "index": index, "cid": cid, "style": col.style,
                   "js": col.js,
                   "class": "filter" if col.kind in ("filter", "locate") else "search",
                   "render": static}
    if site.traps:
        for path in TRAP_FORMS:
            yield {"page": path, "index": 0, "cid": None, "style": "trap", "js": False,
                   "class": TRAP_CLASSES[path], "render": site}


def _formasaurus():
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import formasaurus
            import lxml.html

            formasaurus.extract_forms("<form><input name=q></form>")  # loads the model
    except Exception as exc:  # not installed, or its pickled model does not load
        return None, f"{type(exc).__name__}: {exc}"

    def classify_html(html: str) -> list[str]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = lxml.html.fromstring(html)
            return [FORMASAURUS.get(str(info["form"]), "other")
                    for _, info in formasaurus.extract_forms(tree, proba=False, fields=False)]

    return classify_html, None


def run(pages: int, seed: int) -> dict:
    site = SiteModel(pages=pages, seed=seed)
    fs_classify, fs_error = _formasaurus()
    rows = []
    cache: dict[tuple, tuple] = {}
    for truth in form_truth(site):
        key = (id(truth["render"]), truth["page"])
        if key not in cache:
            _, _, body = truth["render"].render("GET", truth["page"])
            html = body.decode()
            forms = extract_forms(Selector(text=html), "http://127.0.0.1" + truth["page"])
            cache[key] = (forms, fs_classify(html) if fs_classify else None)
        forms, fs = cache[key]
        rows.append({"page": truth["page"], "truth": truth["class"], "style": truth["style"],
                     "rules": classify(forms[truth["index"]]),
                     "formasaurus": fs[truth["index"]] if fs else None})
    result = {"pages": pages, "seed": seed, "forms": len(rows), "formasaurus_error": fs_error}
    for name in ("rules", "formasaurus"):
        if name == "formasaurus" and fs_classify is None:
            continue
        confusion = Counter((r["truth"], r[name]) for r in rows)
        correct = sum(n for (t, p), n in confusion.items() if t == p)
        result[name] = {"accuracy": round(correct / len(rows), 4) if rows else None,
                        "confusion": {f"{t}->{p}": n for (t, p), n in sorted(confusion.items())},
                        "errors": [r for r in rows if r[name] != r["truth"]][:10]}
    return result


def print_confusion(name: str, block: dict) -> None:
    counts = {tuple(k.split("->")): v for k, v in block["confusion"].items()}
    truths = [c for c in FORM_CLASSES if any(t == c for t, _ in counts)]
    preds = [c for c in FORM_CLASSES if any(p == c for _, p in counts)]
    print(f"{name}: accuracy {block['accuracy']:.4f}")
    print("true \\ predicted".ljust(18) + "".join(p.rjust(12) for p in preds))
    for t in truths:
        print(t.ljust(18) + "".join(str(counts.get((t, p), 0)).rjust(12) for p in preds))
