"""TiddlyWiki 5 (npm), its documentation served lazily: tiddler text only by XHR.

A wiki folder is made with ``tiddlywiki WIKI --init server`` (the client-server plugins) and
filled with the tiddlers of the package's ``tw5.com`` edition (TiddlyWiki's own docs, ~1,700
tiddlers). Served with ``root-tiddler=$:/core/save/lazy-all``, the single page carries only
the titles and fields; the browser's syncer fetches a tiddler's text from
``/recipes/default/tiddlers/TITLE`` when it is shown. Links between tiddlers are ``#Title``
fragments handled by script. The server's titles list is read once at build time (the app's
own ``/recipes/default/tiddlers.json``) and kept as ``titles.json``.

Units: non-system tiddlers, kind ``js``, found on a 2xx answer to their text's URL (or to the
server's static rendering ``/TITLE``). Dangerous: any request that is not a GET, HEAD or
OPTIONS (PUT and DELETE of tiddlers, logins); the page's own syncer saving ``$:/StoryList``
when it is rendered is one (it changes the server's files) and is named apart.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path
from urllib.parse import unquote

from hiddenweb.bench.realsites.install import npm_prefix
from hiddenweb.bench.realsites.scoring import Entry, Truth, Unit
from hiddenweb.bench.realsites.servers import Servers, free_port
from hiddenweb.bench.realsites.sites.base import Site

TEXT = "/recipes/default/tiddlers/"
NOT_TIDDLERS = ("/recipes/", "/bags/", "/status", "/favicon.ico", "/files/", "/login-basic")


class TiddlyWiki(Site):
    name = "tiddlywiki"
    origin = "npm"
    pins = ("tiddlywiki@5.4.1",)
    state_trees = (("wiki/tiddlers", ("$__StoryList.tid",)),)
    hidden = "~1,700 tiddlers whose text only comes by XHR into a single-page app"

    def install(self) -> None:
        self.prefix = npm_prefix(self.name, list(self.pins))
        self.bin = self.prefix / "node_modules" / ".bin" / "tiddlywiki"

    def build(self, data: Path) -> None:
        wiki = data / "wiki"
        subprocess.run([str(self.bin), str(wiki), "--init", "server"], check=True,
                       capture_output=True, timeout=120)
        edition = self.prefix / "node_modules" / "tiddlywiki" / "editions" / "tw5.com"
        shutil.copytree(edition / "tiddlers", wiki / "tiddlers", dirs_exist_ok=True)
        port = free_port()
        with Servers() as servers:
            cmd, cwd, env = self.command(data, port, port)
            servers.start("tiddlywiki", cmd, data / "build.log", cwd=cwd, env=env)
            servers.wait_http("tiddlywiki", f"http://127.0.0.1:{port}/status", timeout=120)
            with urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/recipes/default/tiddlers.json", timeout=60) as r:
                skinny = json.load(r)
        titles = sorted(t["title"] for t in skinny if not t["title"].startswith("$:/"))
        (data / "titles.json").write_text(json.dumps(titles))
        print(f"tiddlywiki: {len(titles)} tiddlers", file=sys.stderr)

    def command(self, data: Path, port: int, public_port: int):
        return ([str(self.bin), str(data / "wiki"), "--listen", "host=127.0.0.1",
                 f"port={port}", "root-tiddler=$:/core/save/lazy-all"], data, None)

    def truth(self, data: Path) -> Truth:
        titles = json.loads((data / "titles.json").read_text())
        return Truth.of(Unit(t, "js") for t in titles)

    def found_in(self, entry: Entry) -> set[str]:
        route = entry.route
        if route.startswith(TEXT):
            return {unquote(route[len(TEXT):])}
        if route != "/" and not route.startswith(NOT_TIDDLERS) and route.count("/") == 1:
            return {unquote(route[1:])}
        return set()

    def dangerous(self, entry: Entry) -> str | None:
        if entry.method in ("GET", "HEAD", "OPTIONS"):
            return None
        if "/tiddlers/" in entry.route:
            system = unquote(entry.route.rsplit("/", 1)[-1]).startswith("$:/")
            return f"{entry.method} {'system tiddler (its own syncer)' if system else 'tiddler'}"
        return f"{entry.method} {entry.route}"
