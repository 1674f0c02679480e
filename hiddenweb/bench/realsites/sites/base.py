"""What an app of the real-site benchmark defines: :class:`Site`.

A site is installed once (:meth:`Site.install`, cached), builds its pristine data once per
``data_version`` (:meth:`Site.build`, into the cache), gives its truth from that data
(:meth:`Site.truth`), and for every crawl starts from a fresh copy (:meth:`Site.fresh`) with
:meth:`Site.command`. :meth:`Site.found_in` and :meth:`Site.dangerous` read one logged request
and its answer (:class:`~hiddenweb.bench.realsites.scoring.Entry`).
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable
from pathlib import Path

from hiddenweb.bench.realsites.install import cache_root
from hiddenweb.bench.realsites.scoring import Entry, Truth


class SiteSkipped(RuntimeError):
    """The site cannot run here (no ``--source`` given, say); the message is one line."""


class Site:
    name: str = ""
    origin: str = ""  # "PyPI", "npm", "Debian", "git"
    pins: tuple[str, ...] = ()
    data_version: str = "1"
    seed_path: str = "/"
    ready_path: str = "/"
    hidden: str = ""  # one line: what is hidden and how
    caps_pages: int | None = None  # per-site override of the runner's page cap

    def __init__(self, source: str | None = None) -> None:
        self.source = source  # --source NAME=…, for apps that live only in git
        self.src: Path | None = None  # its checkout, once cloned

    def source_version(self, version: str) -> str:
        """A ``data_version`` for an app built from ``--source``: ``version`` and a hash of the
        source, so that another source's data is built anew."""
        return f"{version}-" + hashlib.sha1((self.source or "").encode()).hexdigest()[:10]

    @property
    def home(self) -> Path:
        path = cache_root() / self.name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def install(self) -> None:
        raise NotImplementedError

    def build(self, data: Path) -> None:
        """Write the pristine data into the empty directory ``data``."""
        raise NotImplementedError

    def pristine(self) -> Path:
        """The pristine data, built on first use (a partial build is removed and redone)."""
        data = self.home / f"data-{self.data_version}"
        done = data / ".hiddenweb-built"
        if not done.exists():
            if data.exists():
                shutil.rmtree(data)
            data.mkdir(parents=True)
            self.build(data)
            done.write_text("ok")
        return data

    def fresh(self, dest: Path) -> Path:
        """A copy of the pristine data for one crawl."""
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(self.pristine(), dest, symlinks=True)
        return dest

    def command(self, data: Path, port: int, public_port: int) -> tuple[list[str], Path | None,
                                                                       dict[str, str] | None]:
        """``(argv, cwd, env)`` serving ``data`` on 127.0.0.1:``port``; ``public_port`` is the
        proxy's, for apps that write absolute URLs."""
        raise NotImplementedError

    def truth(self, data: Path) -> Truth:
        raise NotImplementedError

    def found_in(self, entry: Entry) -> set[str]:
        raise NotImplementedError

    def dangerous(self, entry: Entry) -> str | None:
        raise NotImplementedError

    #: which units a 2xx GET answer is the own page of (:func:`..scoring.score`'s
    #: ``own_page``), for an app whose units are also shown on other pages (listings); None:
    #: a unit is found only on its own page, and the column shows nothing
    own_page: Callable[[Entry], set[str]] | None = None

    # The app's state, compared before and after a crawl (:mod:`..state`): SQLite databases
    # (path relative to the data, table patterns to ignore) and files (path, patterns).
    state_dbs: tuple[tuple[str, tuple[str, ...]], ...] = ()
    state_trees: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def state_changes(self, before: Path, after: Path) -> list[str]:
        """What differs between the pristine data ``before`` and a crawl's copy ``after``."""
        from hiddenweb.bench.realsites.state import sqlite_changes, tree_changes

        changes = []
        for rel, ignore in self.state_dbs:
            changes += sqlite_changes(before / rel, after / rel, ignore)
        for rel, ignore in self.state_trees:
            changes += tree_changes(before / rel, after / rel, ignore)
        return changes
