"""Docsify's own documentation (git only: ``--source docsify=URL-OR-PATH``), served as its
authors ship it: one ``index.html`` whose script fetches each page's Markdown by XHR.

Docsify (npm ``docsify``, pinned) turns a folder of Markdown into a single-page site: the
server sends ``index.html`` and static files only; the script reads ``_sidebar.md`` and
``_navbar.md``, shows ``#/page`` hash routes, and fetches ``/page.md`` when a route is shown
(and, with the search plugin the docs enable, the sidebar's pages to index them). No page is
linked by an ``href`` a plain crawler can follow.

The checkout's ``docs/`` folder is copied as it is; its ``index.html`` is the docs' own, with
the scripts and styles it loads from a CDN taken from the pinned npm package instead
(``/_docsify/``) and the ones no package here provides (ads, analytics, Vue, Prism languages)
left out, with the one plugin call that needs them: the site must not reach off this machine.
Served by Python's ``http.server`` (a static server, as docsify sites are).

Units: the documentation pages, every ``*.md`` file of ``docs/`` but the site's chrome
(``_sidebar.md``, ``_navbar.md``, ``_coverpage.md`` at the top), kind ``js``; found on a 2xx
answer to its path. Dangerous: any request that is not a GET, HEAD or OPTIONS (a static server
changes nothing, but a crawler that sends one is counted).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path
from urllib.parse import unquote

from hiddenweb.bench.realsites.install import npm_prefix
from hiddenweb.bench.realsites.scoring import Entry, Truth, Unit
from hiddenweb.bench.realsites.sites.base import Site, SiteSkipped

CDN = re.compile(r"(?:https?:)?//cdn\.jsdelivr\.net/npm/docsify@5/dist/")
OFF_SITE = re.compile(r"""\s*<(?:script|link)\b[^>]*\b(?:src|href)\s*=\s*["'](?:https?:)?//[^>]*>"""
                      r"(?:\s*</script>)?", re.I)
#: plugins of the docs' config that call scripts left out (ads, analytics)
PLUGIN_CALLS = re.compile(r"^\s*DocsifyCarbon\.create\([^)]*\),?\s*$", re.M)
CHROME = {"_sidebar.md", "_navbar.md", "_coverpage.md"}


class Docsify(Site):
    name = "docsify"
    origin = "git"
    pins = ("docsify@5.0.0",)
    hidden = "docs pages as Markdown fetched by script into a hash-routed single page"

    @property
    def data_version(self) -> str:  # type: ignore[override]
        """Built anew for another source."""
        return self.source_version("1")

    def install(self) -> None:
        if not self.source:
            raise SiteSkipped("lives only in git; give --source docsify=URL-OR-PATH")
        self.prefix = npm_prefix(self.name, list(self.pins), scripts=False)  # served files only

    def build(self, data: Path) -> None:
        if self.src is None or not (self.src / "docs" / "index.html").exists():
            raise SiteSkipped("no docsify checkout with docs/index.html: "
                              "give --source docsify=URL-OR-PATH")
        www = data / "www"
        shutil.copytree(self.src / "docs", www, ignore=shutil.ignore_patterns(".git"))
        shutil.copytree(self.prefix / "node_modules" / "docsify" / "dist", www / "_docsify")
        index = www / "index.html"
        html = CDN.sub("/_docsify/", index.read_text())
        html = OFF_SITE.sub("", html)
        html = PLUGIN_CALLS.sub("", html)
        for plugin in ("gtag", "matomo"):  # analytics: they load trackers from off the machine
            html = re.sub(rf"\s*<script[^>]*/_docsify/plugins/{plugin}[^>]*>\s*</script>", "",
                          html)
        index.write_text(html)
        paths = (p.relative_to(www).as_posix() for p in www.rglob("*.md"))
        pages = sorted(p for p in paths if not p.startswith("_docsify/") and p not in CHROME)
        (data / "pages.json").write_text(json.dumps(pages))
        print(f"docsify: {len(pages)} pages", file=sys.stderr)

    def command(self, data: Path, port: int, public_port: int):
        return ([sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port),
                 "--directory", str(data / "www")], data, None)

    def truth(self, data: Path) -> Truth:
        return Truth.of(Unit(p, "js") for p in json.loads((data / "pages.json").read_text()))

    def found_in(self, entry: Entry) -> set[str]:
        route = unquote(entry.route).lstrip("/")
        return {route} if route.endswith(".md") else set()

    def dangerous(self, entry: Entry) -> str | None:
        if entry.method in ("GET", "HEAD", "OPTIONS"):
            return None
        return f"{entry.method} {entry.route}"
