"""Roundup (PyPI), the classic tracker, 300 issues seeded from the GPL-3 text Debian ships.

The tracker is installed with ``roundup-admin install classic sqlite`` and served through its
WSGI handler under waitress (``roundup-server`` refuses to run as root and its ``-u nobody``
cannot read a venv under ``/root``). Every third issue is ``resolved``; the index and the
"Show All" / "Show Unassigned" links filter on every other status, so resolved issues are
reached only through the search form. Every page carries a login form, and the sidebar links to
registration and password reset.

Units: issues, ``iss-NNNN`` in their titles; kind ``link`` unless resolved (``form``). Dangerous:
any request that is not a GET or HEAD (login, register, password reset, edits all POST).
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
import textwrap
from pathlib import Path

from hiddenweb.bench.realsites.install import pip_venv
from hiddenweb.bench.realsites.scoring import (
    Entry,
    Truth,
    Unit,
    params,
    title_finder,
    token_finder,
)
from hiddenweb.bench.realsites.sites.base import Site

SEED = textwrap.dedent('''
    import random, re, sys
    import roundup.instance
    tracker = roundup.instance.open(sys.argv[1])
    db = tracker.open("admin")
    try:
        text = open("/usr/share/common-licenses/GPL-3").read()
    except OSError:
        text = " ".join(f"Generated sentence number {i} about issue tracking." for i in range(400))
    sents = [s.strip().replace("\\n", " ") for s in re.split(r"(?<=[.;:])\\s+", text)
             if 30 < len(s.strip()) < 200]
    rnd = random.Random(7)
    for i in range(1, 301):
        status = "8" if i % 3 == 0 else str(rnd.randint(1, 7))
        title = f"[iss-{i:04d}] " + sents[(i * 7) % len(sents)][:80]
        msg = db.msg.create(content=sents[(i * 13) % len(sents)], author="1")
        db.issue.create(title=title, status=status, priority=str(rnd.randint(1, 5)),
                        messages=[msg])
    db.commit()
    db.close()
''')
SERVE = textwrap.dedent('''
    import sys
    from roundup.cgi.wsgi_handler import RequestDispatcher
    from waitress import serve
    serve(RequestDispatcher(sys.argv[1]), host="127.0.0.1", port=int(sys.argv[2]), threads=4)
''')
RESOLVED = "8"


ISSUE = r"\biss-\d{4}\b"  # an issue's id, written into its title
ISSUE_TITLE = title_finder(ISSUE)


class Roundup(Site):
    name = "roundup"
    origin = "PyPI"
    pins = ("roundup==2.6.0", "waitress==3.0.2")
    state_dbs = (("tracker/db/db", ("__words", "__textids")),)
    hidden = ("100 of 300 issues (resolved) only through the search form; login, register and "
              "password-reset forms on every page")

    def install(self) -> None:
        self.venv = pip_venv(self.name, list(self.pins))

    def _bin(self, name: str) -> str:
        return str(self.venv / "bin" / name)

    def build(self, data: Path) -> None:
        home = data / "tracker"
        run = dict(check=True, capture_output=True, timeout=300)
        subprocess.run([self._bin("roundup-admin"), "-i", str(home), "install", "classic",
                        "sqlite"], **run)
        config = home / "config.ini"
        text = config.read_text()
        text = text.replace("#web = NO DEFAULT", "web = http://127.0.0.1:1/", 1)
        text = text.replace("#domain = NO DEFAULT", "domain = localhost", 1)
        text = text.replace("#host = NO DEFAULT", "host = 127.0.0.1", 1)  # [mail]: none there
        config.write_text(text)
        subprocess.run([self._bin("roundup-admin"), "-i", str(home), "initialise", "admin-pw"],
                       **run)
        subprocess.run([self._bin("python"), "-c", SEED, str(home)], **run)
        (data / "serve.py").write_text(SERVE)

    def command(self, data: Path, port: int, public_port: int):
        config = data / "tracker" / "config.ini"
        config.write_text(re.sub(r"(?m)^web = .*$", f"web = http://127.0.0.1:{public_port}/",
                                 config.read_text(), count=1))
        return ([self._bin("python"), str(data / "serve.py"), str(data / "tracker"), str(port)],
                data, None)

    def truth(self, data: Path) -> Truth:
        con = sqlite3.connect(data / "tracker" / "db" / "db")
        try:
            rows = con.execute("select _title, _status from _issue").fetchall()
        finally:
            con.close()
        units = []
        for title, status in rows:
            ref = re.search(ISSUE, title or "")
            if ref:
                units.append(Unit(ref.group(), "form" if str(status) == RESOLVED else "link"))
        return Truth.of(units)

    found_in = staticmethod(token_finder(ISSUE))

    def own_page(self, entry: Entry) -> set[str]:
        """An issue's own page (``/issue17``, its messages): the id in its title."""
        return ISSUE_TITLE(entry) if re.fullmatch(r"/issue\d+", entry.route) else set()

    def dangerous(self, entry: Entry) -> str | None:
        if entry.method in ("GET", "HEAD"):
            return None
        action = params(entry).get("@action", [""])[0]
        return f"{entry.method} @action={action}" if action else f"{entry.method} {entry.route}"
