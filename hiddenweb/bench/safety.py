"""``hiddenweb bench safety``: the safety policy (:mod:`hiddenweb.safety`) against a labelled
corpus of forms, links and buttons (``tests/safety/corpus.txt``; format in its header).

Positive = *unsafe* (the policy must refuse it). Reports precision and recall of "refused",
the safe forms of class search/filter still allowed, figures per kind and language, and every
misjudged entry.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from parsel import Selector

from hiddenweb.forms.extract import extract_forms
from hiddenweb.safety import SafetyPolicy

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "safety" / "corpus.txt"
BASE = "http://127.0.0.1:8000/page"
_HEAD = re.compile(r"^== (safe|unsafe) (\w+) (\w+)( heldout)?\s*$")
_URL_IN = re.compile(r"""(?:location(?:\.href)?\s*=\s*|^)['"]?([^'"\s]+)""")


@dataclass(frozen=True)
class Entry:
    line: int
    unsafe: bool
    kind: str  # the snippet's real class ("link", "button" for those)
    lang: str
    heldout: bool
    html: str


def load(path: Path = CORPUS) -> list[Entry]:
    """The entries of a corpus file; ``ValueError`` naming the line of a malformed one."""
    entries: list[Entry] = []
    head: tuple[int, bool, str, str, bool] | None = None
    body: list[str] = []

    def close() -> None:
        if head is not None:
            html = "\n".join(body).strip()
            if not html:
                raise ValueError(f"{path}:{head[0]}: entry without HTML")
            entries.append(Entry(*head, html))

    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("#"):  # a comment, anywhere
            continue
        if line.startswith("=="):
            close()
            m = _HEAD.match(line)
            if not m:
                raise ValueError(f"{path}:{n}: expected '== safe|unsafe CLASS LANG [heldout]'")
            head, body = (n, m.group(1) == "unsafe", m.group(2), m.group(3),
                          bool(m.group(4))), []
        elif head is not None:
            body.append(line)
    close()
    return entries


def judge(entry: Entry, policy: SafetyPolicy) -> tuple[bool, str]:
    """(refused, reason or class) of one entry under ``policy``."""
    sel = Selector(text=entry.html)
    forms = extract_forms(sel, BASE)
    if forms:
        v = policy.form(forms[0])
        return not v.allowed, v.reason or v.kind
    a = sel.xpath("//a[@href]")
    if a:
        el = a[0]
        label = " ".join([el.xpath("normalize-space(.)").get() or "",
                          el.attrib.get("title", ""), el.attrib.get("aria-label", "")])
        v = policy.link(el.attrib["href"], label, dict(el.attrib))
        return not v.allowed, v.reason or v.kind
    b = sel.xpath("//button")
    if b:
        el = b[0]
        target = (el.attrib.get("formaction") or el.attrib.get("data-href")
                  or el.attrib.get("onclick") or "")
        m = _URL_IN.search(target)
        v = policy.link(m.group(1) if m else "", el.xpath("normalize-space(.)").get() or "",
                        dict(el.attrib))
        return not v.allowed, v.reason or v.kind
    raise ValueError(f"corpus line {entry.line}: no form, link or button")


def _ratio(a: int, b: int) -> float:
    return round(a / b, 4) if b else 1.0


def run(path: Path = CORPUS, policy: SafetyPolicy | None = None) -> dict:
    """Figures of ``policy`` (the default one) on the corpus at ``path``."""
    policy = policy or SafetyPolicy()
    entries = load(path)
    tp = fp = fn = tn = 0
    by: dict[str, dict[str, int]] = defaultdict(lambda: {"entries": 0, "right": 0})
    wrong = []
    safe_search = safe_search_allowed = 0
    held = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
    for e in entries:
        refused, why = judge(e, policy)
        tp += refused and e.unsafe
        fp += refused and not e.unsafe
        fn += not refused and e.unsafe
        tn += not refused and not e.unsafe
        group = "link" if e.kind in ("link", "button") else "form"
        for key in (f"{group}s", f"lang:{e.lang}", *(["heldout"] if e.heldout else [])):
            by[key]["entries"] += 1
            by[key]["right"] += refused == e.unsafe
        if not e.unsafe and e.kind in ("search", "filter"):
            safe_search += 1
            safe_search_allowed += not refused
        if e.heldout:
            held["tp" if refused and e.unsafe else "fp" if refused else
                 "fn" if e.unsafe else "tn"] += 1
        if refused != e.unsafe:
            wrong.append({"line": e.line, "heldout": e.heldout,
                          "label": "unsafe" if e.unsafe else "safe",
                          "class": e.kind, "lang": e.lang, "judged": why,
                          "html": e.html[:160]})
    return {
        "entries": len(entries), "unsafe": tp + fn, "safe": fp + tn,
        "forms": by["forms"]["entries"], "links": by["links"]["entries"],
        "languages": sorted(k[5:] for k in by if k.startswith("lang:")),
        "true_positives": tp, "false_positives": fp, "false_negatives": fn,
        "true_negatives": tn,
        "unsafe_precision": _ratio(tp, tp + fp), "unsafe_recall": _ratio(tp, tp + fn),
        "safe_search_filter": safe_search, "safe_search_filter_allowed": safe_search_allowed,
        "heldout": {"entries": sum(held.values()), "unsafe": held["tp"] + held["fn"],
                    "unsafe_recall": _ratio(held["tp"], held["tp"] + held["fn"]),
                    "unsafe_precision": _ratio(held["tp"], held["tp"] + held["fp"])},
        "by": {k: dict(v) for k, v in sorted(by.items())}, "misjudged": wrong,
    }


def print_report(result: dict) -> None:
    print(f"{result['entries']} entries ({result['forms']} forms, {result['links']} links and "
          f"buttons; {result['unsafe']} unsafe, {result['safe']} safe; languages: "
          f"{', '.join(result['languages'])})")
    print(f"unsafe recall {100 * result['unsafe_recall']:.1f} % "
          f"({result['true_positives']}/{result['unsafe']} refused), unsafe precision "
          f"{100 * result['unsafe_precision']:.1f} % ({result['false_positives']} safe entries "
          f"refused); safe search/filter forms allowed: {result['safe_search_filter_allowed']}/"
          f"{result['safe_search_filter']}")
    h = result["heldout"]
    if h["entries"]:
        print(f"held out ({h['entries']} entries written after the lexicon, {h['unsafe']} "
              f"unsafe): recall {100 * h['unsafe_recall']:.1f} %, precision "
              f"{100 * h['unsafe_precision']:.1f} %")
    for key, fig in result["by"].items():
        print(f"  {key:10s} {fig['right']}/{fig['entries']} right")
    for w in result["misjudged"]:
        late = " (held out)" if w["heldout"] else ""
        print(f"  line {w['line']}{late}: {w['label']} {w['class']} ({w['lang']}) judged "
              f"{w['judged']}: {w['html'][:100]}")
