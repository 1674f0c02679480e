"""The apps of the real-site benchmark, by name (:data:`SITES`), in the order a full run takes.

Registry apps (PyPI, npm, Debian) install by themselves; :data:`GIT_ONLY` apps live only in a
public git repository and run only when ``--source NAME=URL-OR-PATH`` is given.
"""

from __future__ import annotations

from hiddenweb.bench.realsites.sites.base import Site, SiteSkipped
from hiddenweb.bench.realsites.sites.datasette import Datasette
from hiddenweb.bench.realsites.sites.docsify import Docsify
from hiddenweb.bench.realsites.sites.dokuwiki import DokuWiki
from hiddenweb.bench.realsites.sites.mlflow import MLflow
from hiddenweb.bench.realsites.sites.roundup import Roundup
from hiddenweb.bench.realsites.sites.sqliteweb import SqliteWeb
from hiddenweb.bench.realsites.sites.tiddlywiki import TiddlyWiki
from hiddenweb.bench.realsites.sites.trac import Trac
from hiddenweb.bench.realsites.sites.wivet import Wivet

SITES: dict[str, type[Site]] = {
    cls.name: cls for cls in (Datasette, Roundup, Trac, SqliteWeb, TiddlyWiki, DokuWiki, Wivet,
                                     Docsify, MLflow)}
GIT_ONLY: dict[str, str] = {  # named here so that a run says why they are missing
    "juice-shop": "OWASP Juice Shop: an Angular shop full of dangerous forms",
}

__all__ = ["GIT_ONLY", "SITES", "Site", "SiteSkipped"]
