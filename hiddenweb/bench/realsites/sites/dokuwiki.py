"""DokuWiki (Debian), a PHP wiki on flat files, served by PHP's built-in server.

Debian's ``dokuwiki`` package is copied (code, ``/etc/dokuwiki`` configuration and
``/var/lib/dokuwiki`` data, links resolved) into a directory of the benchmark's own, with a
``preload.php`` pointing DokuWiki there, and served with ``php -S``. The wiki gets pages
made from the licence texts Debian ships (``/usr/share/common-licenses``: 108 pages of 60
lines on Debian 12), each part linked from the one before and every licence from the start
page; the search index is built with DokuWiki's own ``bin/indexer.php``. Anonymous visitors
may read (Debian's ACL); every page offers login, and the login page offers registration and
password reset, so a crawler that submits forms meets them at once.

Units: pages (``dw-NNNN`` at the top of each), kind ``link`` (the sitemap and the chains reach
all). Dangerous: POSTs that log in, register, reset a password, save or preview an edit,
subscribe, administer, and any other POST but the forms that only read (search, revisions,
diff, the media manager's search); GETs that act (save, revert, draftdel, subscribe); media
uploads, deletions and restores.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from hiddenweb.bench.realsites.install import apt_packages
from hiddenweb.bench.realsites.scoring import Entry, Truth, Unit, params, token_finder
from hiddenweb.bench.realsites.sites.base import Site

LICENSES = Path("/usr/share/common-licenses")
PRELOAD = """<?php
if (!defined('DOKU_CONF')) define('DOKU_CONF', __DIR__ . '/../conf/');
"""
# Actions that log in, register, reset a password, save (a preview saves a draft), subscribe or
# administer: dangerous when submitted (POST); those in ACTING_GET act even through a GET.
ACTING = {"login", "register", "resendpwd", "profile", "profile_delete", "subscribe",
          "unsubscribe", "save", "preview", "draftdel", "revert", "recover", "admin"}
ACTING_GET = {"save", "draftdel", "revert", "subscribe", "unsubscribe", "profile_delete"}
# POST forms that only read: the media manager's search, the revisions and diff selectors, and
# "Show pagesource" (``do=edit`` shows the source read-only: the ACL lets anonymous users read).
READING = {"search", "diff", "revisions", "recent", "index", "media", "show", "edit", ""}
MEDIA_ACTING = {"delete", "restore", "upload"}
SAFE_AJAX = {"qsearch", "index", "linkwiz", "suggestions", "medians", "medialist"}


class DokuWiki(Site):
    name = "dokuwiki"
    origin = "Debian"
    pins = ("dokuwiki=0.0.20220731.a-2", "php-cli", "php-cgi", "php-xml", "php-sqlite3")
    ready_path = "/doku.php"
    seed_path = "/doku.php"
    state_trees = (("www/data/pages", ()), ("www/data/attic", ()), ("www/data/media", ()),
                   ("www/conf/users.auth.php", ()), ("www/conf/acl.auth.php", ()))
    hidden = ("control: 108 pages, all linked; login, register and password-reset forms a "
              "click away")

    def install(self) -> None:
        apt_packages(list(self.pins))
        self.php = shutil.which("php") or "/usr/bin/php"

    def build(self, data: Path) -> None:
        www = data / "www"
        shutil.copytree("/usr/share/dokuwiki", www, symlinks=False,
                        ignore=shutil.ignore_patterns(".htaccess"))
        shutil.copytree("/etc/dokuwiki", www / "conf", symlinks=False,
                        ignore=shutil.ignore_patterns("htaccess", "apache.conf", "lighttpd.conf"))
        shutil.copytree("/var/lib/dokuwiki/data", www / "data", symlinks=False)
        (www / "inc" / "preload.php").write_text(PRELOAD)
        local = www / "conf" / "local.php"
        local.write_text(local.read_text() + "\n$conf['savedir'] = './data';\n"
                         "$conf['title'] = 'Licences wiki';\n")
        pages = www / "data" / "pages"
        n, index = 0, []
        for lic in sorted(p for p in LICENSES.iterdir() if p.is_file()):
            lines = lic.read_text(errors="replace").splitlines()
            slug = re.sub(r"[^a-z0-9]+", "_", lic.name.lower())
            parts = [lines[i:i + 60] for i in range(0, len(lines), 60)] or [[]]
            for k, chunk in enumerate(parts, 1):
                n += 1
                body = [f"====== {lic.name}, part {k} ======", "", f"Reference dw-{n:04d}.", ""]
                body += ["  " + line if line.strip() else "" for line in chunk]
                if k < len(parts):
                    body += ["", f"[[licenses:{slug}:part{k + 1}|Next part]]"]
                path = pages / "licenses" / slug / f"part{k}.txt"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text("\n".join(body) + "\n")
            index.append(f"  * [[licenses:{slug}:part1|{lic.name}]]")
        start = ["====== Licences wiki ======", "",
                 "The licence texts Debian ships, one page per part.", "", *index]
        (pages / "start.txt").write_text("\n".join(start) + "\n")
        subprocess.run([self.php, str(www / "bin" / "indexer.php"), "-q"], check=False,
                       capture_output=True, timeout=300, cwd=www)
        subprocess.run(["chmod", "-R", "a+rwX", str(www / "data")], check=False)

    def command(self, data: Path, port: int, public_port: int):
        env = {**os.environ, "PHP_CLI_SERVER_WORKERS": "4"}
        return ([self.php, "-S", f"127.0.0.1:{port}", "-t", str(data / "www")],
                data / "www", env)

    def truth(self, data: Path) -> Truth:
        refs = set()
        for page in (data / "www" / "data" / "pages").rglob("*.txt"):
            refs.update(re.findall(r"\bdw-\d{4}\b", page.read_text(errors="replace")))
        return Truth.of(Unit(r, "link") for r in sorted(refs))

    found_in = staticmethod(token_finder(r"\bdw-\d{4}\b"))

    def dangerous(self, entry: Entry) -> str | None:
        fields = params(entry)
        do = (fields.get("do") or [""])[0]
        if entry.route.endswith("/lib/exe/ajax.php"):
            call = (fields.get("call") or [""])[0]
            return None if call in SAFE_AJAX else f"ajax call={call}"
        mediado = (fields.get("mediado") or [""])[0]
        if mediado in MEDIA_ACTING or "upload" in fields or "multipart" in entry.req_ctype:
            return f"{entry.method} media {mediado or 'upload'}"
        if entry.method in ("GET", "HEAD"):
            return f"GET do={do}" if do in ACTING_GET else None
        if do in ACTING or do not in READING:
            return f"{entry.method} do={do}"
        return None
