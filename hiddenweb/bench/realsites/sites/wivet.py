"""WIVET (git only: ``--source wivet=URL-OR-PATH``), crawler test cases in PHP, on ``php -S``.

The checkout is cloned at run time from the given source (never vendored), its one PHP 5
string offset (``$s{$i}``) rewritten for PHP 8 in the copy, and served with Debian's
``php-cli``; its file data store records visits under ``offscanpages/statistics``. Its
absolute URLs carry the proxy's port (``SERVER_PORT`` set by an ``auto_prepend_file``).
``CHEATPROOF`` stays off, so every test case keeps its file name (``innerpages/N_xxxx.php``) and
the proxy's log names it.

Units: the test cases, the ``innerpages/*.php`` files but ``index``. A unit's kind comes from
the markup on the way to it from the ``pages/*.php`` (listed in a ``pages/index.html`` made at
build time, as Apache's directory listing would): a plain ``href`` or ``src`` outside any script
is a ``link`` step, a form's ``action`` a ``form`` step, anything else (script, event handler,
Flash) a ``js`` step; a path is as hard as its hardest step and a unit takes its plainest path.
A unit is *allowed* when some path to it takes no form step the crawler's safety policy refuses
(:func:`hiddenweb.safety.judge_form` on the form's markup, as the crawler reads it: an unknown
POST form is never sent); its kind is that of its plainest allowed path (of its plainest path
when none is allowed). Steps inside scripts are not judged (counted as allowed).
Found on a 2xx answer to its URL. Dangerous: ``logout.php``
(resets the session WIVET counts in) and ``offscanpages/remove-all-stats.php``.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from hiddenweb.bench.realsites.install import apt_packages
from hiddenweb.bench.realsites.scoring import Entry, Truth, Unit
from hiddenweb.bench.realsites.sites.base import Site, SiteSkipped

OFFSET = re.compile(r"(\$[A-Za-z_]\w*)\{(\$?\w+)\}")
CASE = re.compile(r"innerpages/(\d+_[0-9a-f]+)\.php")
SCRIPT = re.compile(r"<script.*?</script>|\son\w+\s*=\s*(\"[^\"]*\"|'[^']*')",
                    re.S | re.I)
FORM_ACTION = re.compile(r"<form[^>]*action\s*=\s*[\"'][^\"']*?(?:tc\('|)(\d+_[0-9a-f]+)",
                         re.I)
PLAIN = re.compile(r"(?:href|src)\s*=\s*[\"'][^\"']*?(?:tc\('|)(\d+_[0-9a-f]+)", re.I)


def _edges(text: str) -> dict[str, tuple[str, bool]]:
    """The test cases ``text`` points to, each by its plainest kind of reference, and whether
    that reference is one the safety policy allows (a form it refuses is not)."""
    plain = SCRIPT.sub(" ", text)
    here: dict[str, tuple[str, bool]] = {}
    for case in PLAIN.findall(plain):
        here[case] = ("link", True)
    refused = _refused_forms(plain)
    for case in FORM_ACTION.findall(plain):
        if case not in here or not here[case][1]:
            here[case] = ("form", case not in refused)
    for case in re.findall(r"(\d+_[0-9a-f]+)", text):
        here.setdefault(case, ("js", True))
    return here


def _refused_forms(markup: str) -> set[str]:
    """The test cases named by the action of a form the safety policy refuses to submit."""
    from parsel import Selector

    from hiddenweb.forms.extract import extract_forms
    from hiddenweb.safety import judge_form

    refused: set[str] = set()
    for form in extract_forms(Selector(text=markup), "http://wivet.invalid/innerpages/"):
        if not judge_form(form).allowed:
            refused.update(re.findall(r"(\d+_[0-9a-f]+)", form.action))
    return refused


def kinds(root: Path) -> dict[str, tuple[str, bool]]:
    """Each test case's kind and whether the safety policy allows reaching it: the plainest
    allowed path to it from the ``pages/*.php`` (linked from the directory listing), a path
    being as hard as its hardest step (link < form < js); the plainest path of all when no
    path is allowed."""
    rank = {"link": 0, "form": 1, "js": 2}
    cases = {p.stem for p in (root / "innerpages").glob("*_*.php")}
    best: dict[str, tuple[str, bool]] = {}

    def better(new: tuple[str, bool], old: tuple[str, bool] | None) -> bool:
        return old is None or (new[1], -rank[new[0]]) > (old[1], -rank[old[0]])

    frontier = [(case, edge) for page in (root / "pages").glob("*.php")
                for case, edge in _edges(page.read_text(errors="replace")).items()]
    while frontier:
        case, (kind, allowed) = frontier.pop()
        if case not in cases or not better((kind, allowed), best.get(case)):
            continue
        best[case] = (kind, allowed)
        text = (root / "innerpages" / f"{case}.php").read_text(errors="replace")
        for nxt, (step, ok) in _edges(text).items():
            frontier.append((nxt, (max(kind, step, key=rank.__getitem__), allowed and ok)))
    return {c: best.get(c, ("js", True)) for c in sorted(cases)}


class Wivet(Site):
    name = "wivet"
    origin = "git"
    pins = ("php-cli",)

    @property
    def data_version(self) -> str:  # type: ignore[override]
        """Built anew for another source."""
        return self.source_version("3")
    seed_path = "/index.php"
    ready_path = "/index.php"
    hidden = "62 crawler test cases: JS events, frames, forms, Flash, session state; a logout"

    def install(self) -> None:
        if not self.source:
            raise SiteSkipped("lives only in git; give --source wivet=URL-OR-PATH")
        apt_packages(list(self.pins))
        self.php = shutil.which("php") or "/usr/bin/php"

    def build(self, data: Path) -> None:
        if self.src is None:
            raise SiteSkipped("no checkout: give --source wivet=URL-OR-PATH")
        shutil.copytree(self.src, data / "www", ignore=shutil.ignore_patterns(".git"))
        for php in (data / "www").rglob("*.php"):  # PHP 8 dropped $s{$i} string offsets
            text = php.read_text(errors="replace")
            fixed = OFFSET.sub(r"\1[\2]", text)
            if fixed != text:
                php.write_text(fixed)
        stats = data / "www" / "offscanpages" / "statistics"
        stats.mkdir(parents=True, exist_ok=True)
        # WIVET's menu links to the directory pages/, listed by Apache; php -S lists nothing
        listing = "".join(f'<a href="{p.name}">{p.name}</a><br>\n'
                          for p in sorted((data / "www" / "pages").glob("*.php")))
        (data / "www" / "pages" / "index.html").write_text(
            f"<html><body><h1>Index of /pages</h1>\n{listing}</body></html>\n")
        (data / "kinds.json").write_text(__import__("json").dumps(kinds(data / "www")))

    def command(self, data: Path, port: int, public_port: int):
        # WIVET writes absolute URLs with $_SERVER["SERVER_PORT"], php -S's own port: without
        # the proxy's port there, every crawler followed them past the proxy, unlogged (all
        # crawlers scored 0 before this)
        prepend = data / "public_port.php"
        prepend.write_text(f"<?php $_SERVER['SERVER_PORT'] = '{int(public_port)}';\n")
        return ([self.php, "-d", f"auto_prepend_file={prepend}", "-S", f"127.0.0.1:{port}",
                 "-t", str(data / "www")], data / "www", None)

    def truth(self, data: Path) -> Truth:
        import json

        return Truth.of(Unit(c, k, allowed) for c, (k, allowed)
                        in json.loads((data / "kinds.json").read_text()).items())

    def found_in(self, entry: Entry) -> set[str]:
        return set(CASE.findall(entry.route))

    def dangerous(self, entry: Entry) -> str | None:
        if entry.route.endswith(("/logout.php", "/remove-all-stats.php")):
            return f"{entry.method} {entry.route.rsplit('/', 1)[-1]}"
        return None
