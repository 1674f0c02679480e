"""Trac (PyPI): its default wiki (the Trac guide, ~60 pages) and 200 seeded tickets.

The environment is made with ``trac-admin initenv`` and 200 tickets are inserted through Trac's
own API (summaries from the GPL-3 text Debian ships); half are closed. Anonymous users may view
everything and change nothing. The control of the corpus: every unit is linked (the title
index lists the wiki, report 6 lists every ticket), while the custom query, the timeline's
day-by-day periods and the reports' sort orders make URL spaces with no end.

Units: wiki pages (``wiki:Name``, found on a 2xx answer to ``/wiki/Name``; ``/`` is WikiStart)
and tickets (``tkt-NNNN`` in their summaries), all of kind ``link``. Dangerous: ``/login`` and
``/logout`` (following the link logs in), ``action=edit|delete|rename|comment``, and any POST
(preferences, new ticket, batch modify…) but the query and search forms' and the wiki's
"view changes" (``action=diff``).
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
import textwrap
from pathlib import Path
from urllib.parse import unquote

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
    import re, sys
    from trac.env import Environment
    from trac.ticket.model import Ticket
    env = Environment(sys.argv[1])
    try:
        text = open("/usr/share/common-licenses/GPL-3").read()
    except OSError:
        text = " ".join(f"Generated sentence number {i} about a ticket." for i in range(400))
    sents = [s.strip().replace("\\n", " ") for s in re.split(r"(?<=[.;:])\\s+", text)
             if 30 < len(s.strip()) < 200]
    for i in range(1, 201):
        t = Ticket(env)
        t["summary"] = f"[tkt-{i:04d}] " + sents[(i * 11) % len(sents)][:70]
        t["description"] = sents[(i * 5) % len(sents)]
        t["reporter"] = "anonymous"
        t["component"] = "component1" if i % 2 else "component2"
        t["milestone"] = f"milestone{1 + i % 4}"
        t["type"] = ("defect", "enhancement", "task")[i % 3]
        t["priority"] = ("blocker", "critical", "major", "minor", "trivial")[i % 5]
        if i % 2 == 0:
            t["status"], t["resolution"] = "closed", "fixed"
        else:
            t["status"] = "new"
        t.insert()
''')
TICKET = r"\btkt-\d{4}\b"  # a ticket's id, written into its summary
TOKENS = token_finder(TICKET)
TICKET_TITLE = title_finder(TICKET)
SAFE_POSTS = ("/query", "/search")  # filter forms: they only read
READING_ACTIONS = ("diff", "history")  # a wiki page's "view changes" form posts action=diff


def _wiki_page(entry: Entry) -> set[str]:
    """The wiki page ``entry``'s route is (``/`` and ``/wiki`` are WikiStart), if any."""
    route = entry.route.rstrip("/")
    if route in ("", "/wiki"):
        return {"wiki:WikiStart"}
    return {"wiki:" + unquote(route[len("/wiki/"):])} if route.startswith("/wiki/") else set()


class Trac(Site):
    name = "trac"
    origin = "PyPI"
    pins = ("trac==1.6", "Jinja2==3.1.6", "MarkupSafe==3.0.4")
    # an anonymous session keeps the last query and its tickets just by reading: not compared
    state_dbs = (("env/db/trac.db", ("cache", "session", "session_attribute")),)
    hidden = "control: everything linked; timeline and query URL spaces without end"

    def install(self) -> None:
        self.venv = pip_venv(self.name, list(self.pins))

    def build(self, data: Path) -> None:
        env = data / "env"
        run = dict(check=True, capture_output=True, timeout=300)
        subprocess.run([str(self.venv / "bin" / "trac-admin"), str(env), "initenv", "Demo",
                        "sqlite:db/trac.db"], **run)
        subprocess.run([str(self.venv / "bin" / "python"), "-c", SEED, str(env)], **run)

    def command(self, data: Path, port: int, public_port: int):
        return ([str(self.venv / "bin" / "tracd"), "--hostname=127.0.0.1", "-p", str(port),
                 "-s", str(data / "env")], data, None)

    def truth(self, data: Path) -> Truth:
        con = sqlite3.connect(data / "env" / "db" / "trac.db")
        try:
            pages = [n for (n,) in con.execute("select distinct name from wiki")]
            summaries = [s for (s,) in con.execute("select summary from ticket")]
        finally:
            con.close()
        tickets = {u for s in summaries for u in TOKENS(Entry(0, "GET", "/", 200, body=s))}
        return Truth.of([Unit(f"wiki:{p}", "link") for p in pages] +
                        [Unit(t, "link") for t in sorted(tickets)])

    def found_in(self, entry: Entry) -> set[str]:
        return TOKENS(entry) | _wiki_page(entry)

    def own_page(self, entry: Entry) -> set[str]:
        """A ticket's own page (``/ticket/17``: the id in its title), a wiki page's (its URL
        with no query but a version: not its history, diff or edit views)."""
        if re.fullmatch(r"/ticket/\d+", entry.route):
            return TICKET_TITLE(entry)
        return set() if set(params(entry)) - {"version"} else _wiki_page(entry)

    def dangerous(self, entry: Entry) -> str | None:
        route = entry.route
        if route.startswith(("/login", "/logout")):  # the link itself logs in (or out)
            return f"{entry.method} {route}"
        action = params(entry).get("action", [""])[0]
        if action in ("edit", "delete", "rename", "comment"):
            return f"{entry.method} {route}?action={action}"
        if entry.method in ("GET", "HEAD") or route.startswith(SAFE_POSTS) or \
                action in READING_ACTIONS:
            return None
        return f"{entry.method} {route}"
