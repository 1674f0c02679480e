"""sqlite-web (PyPI), a database browser, over two tables of ``vega_datasets``, writable.

``seattle_weather`` (1,461 rows) and ``iris`` (150 rows) are read from the CSV and JSON files
``vega_datasets`` ships. Rows are paged 50 at a time and each has a detail page; every table
page also links to forms that insert, edit, delete rows, add and drop columns and indexes, import
data and drop the table: a minefield for a spider that submits whatever form it meets.

Units: rows, ``wx-NNNN`` / ``iris-NNNN`` in their ``ref`` column, all of kind ``link``.
Dangerous: every POST except an SQL query that only reads (``SELECT``/``WITH``/``EXPLAIN``)
and an export.
"""

from __future__ import annotations

import sqlite3
import subprocess
import textwrap
from pathlib import Path

from hiddenweb.bench.realsites.install import pip_venv
from hiddenweb.bench.realsites.scoring import Entry, Truth, Unit, params, token_finder
from hiddenweb.bench.realsites.sites.base import Site

BUILD = textwrap.dedent('''
    import csv, json, sqlite3, sys
    from pathlib import Path
    import vega_datasets
    src = Path(vega_datasets.__file__).parent / "_data"
    con = sqlite3.connect(sys.argv[1])
    con.execute("create table seattle_weather (ref text primary key, date text, "
                "precipitation real, temp_max real, temp_min real, wind real, weather text)")
    with open(src / "seattle-weather.csv") as fh:
        rows = [(f"wx-{i:04d}", r["date"], r["precipitation"], r["temp_max"], r["temp_min"],
                 r["wind"], r["weather"]) for i, r in enumerate(csv.DictReader(fh), 1)]
    con.executemany("insert into seattle_weather values (?, ?, ?, ?, ?, ?, ?)", rows)
    con.execute("create table iris (ref text primary key, sepalLength real, sepalWidth real, "
                "petalLength real, petalWidth real, species text)")
    iris = json.loads((src / "iris.json").read_text())
    con.executemany("insert into iris values (?, ?, ?, ?, ?, ?)",
                    [(f"iris-{i:04d}", r["sepalLength"], r["sepalWidth"], r["petalLength"],
                      r["petalWidth"], r["species"]) for i, r in enumerate(iris, 1)])
    con.commit()
''')
READING = ("select", "with", "explain", "pragma")


class SqliteWeb(Site):
    name = "sqlite-web"
    origin = "PyPI"
    pins = ("sqlite-web==0.8.2", "flask==3.1.3", "peewee==4.5.3", "werkzeug==3.1.9",
            "vega-datasets==0.9.0", "pandas==3.1.1")
    state_dbs = (("db.sqlite", ()),)
    hidden = ("1,611 rows, all linked (50 a page); insert/edit/delete/drop forms on every table "
              "page")

    def install(self) -> None:
        self.venv = pip_venv(self.name, list(self.pins))

    def build(self, data: Path) -> None:
        subprocess.run([str(self.venv / "bin" / "python"), "-c", BUILD, str(data / "db.sqlite")],
                       check=True, capture_output=True, timeout=300)

    def command(self, data: Path, port: int, public_port: int):
        return ([str(self.venv / "bin" / "sqlite_web"), "-H", "127.0.0.1", "-p", str(port),
                 "-x", "-q", str(data / "db.sqlite")], data, None)

    def truth(self, data: Path) -> Truth:
        con = sqlite3.connect(data / "db.sqlite")
        try:
            refs = [r for t in ("seattle_weather", "iris")
                    for (r,) in con.execute(f"select ref from {t}")]  # noqa: S608
        finally:
            con.close()
        return Truth.of(Unit(r, "link") for r in refs)

    found_in = staticmethod(token_finder(r"\b(?:wx|iris)-\d{4}\b"))

    def dangerous(self, entry: Entry) -> str | None:
        if entry.method in ("GET", "HEAD"):
            return None
        route = entry.route
        if route.endswith("/export/"):
            return None
        if route.endswith("/query/"):
            sql = params(entry).get("sql", [""])[0].strip().lower()
            return None if sql.startswith(READING) or not sql else f"POST {route} (writing SQL)"
        parts = [p for p in route.split("/") if p]  # /create-table/, /TABLE/ACTION/[PK/]
        action = parts[1] if len(parts) > 1 else (parts[0] if parts else "")
        return f"{entry.method} /{action}/"
