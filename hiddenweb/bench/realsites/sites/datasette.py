"""Datasette (PyPI) over tables of ``vega_datasets``, with canned queries.

Data (built by a script run in the app's venv): ``cars`` (406 rows) and ``stock_symbols`` (the
five companies of ``stocks``) are public tables; ``stocks`` (560 rows) is closed to anonymous
users (``"allow": false``) and reachable only through the canned query ``stocks_by_symbol``, a
GET form whose valid values are listed on the public ``stock_symbols`` page; arbitrary SQL is
off. ``add_note`` is a writable canned query (a POST form that inserts a row): a trap for
anything that submits forms blindly. Table pages carry sort and facet links that multiply.

Units: every row of ``cars`` (``car-NNNN``, kind ``link``) and of ``stocks`` (``stk-NNNN``,
kind ``form``), found when its id is in an answer. Dangerous: any request that is not a GET,
HEAD or OPTIONS (here only the writable query changes state).
"""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

from hiddenweb.bench.realsites.install import pip_venv
from hiddenweb.bench.realsites.scoring import Entry, Truth, Unit, token_finder
from hiddenweb.bench.realsites.sites.base import Site

BUILD = textwrap.dedent('''
    import json, sys
    import sqlite_utils
    from vega_datasets import local_data
    out = sys.argv[1]
    db = sqlite_utils.Database(out + "/vega.db")
    cars = local_data.cars()
    cars["Year"] = cars["Year"].dt.strftime("%Y")
    rows = [{"ref": f"car-{i:04d}", **r} for i, r in enumerate(cars.to_dict("records"), 1)]
    db["cars"].insert_all(rows, pk="ref")
    stocks = local_data.stocks()
    stocks["date"] = stocks["date"].dt.strftime("%Y-%m-%d")
    rows = [{"ref": f"stk-{i:04d}", **r} for i, r in enumerate(stocks.to_dict("records"), 1)]
    db["stocks"].insert_all(rows, pk="ref")
    names = {"MSFT": "Microsoft", "AMZN": "Amazon", "IBM": "IBM", "GOOG": "Google",
             "AAPL": "Apple"}
    db["stock_symbols"].insert_all([{"symbol": s, "company": names.get(s, s)}
                                    for s in sorted(set(stocks["symbol"]))], pk="symbol")
    db["notes"].create({"id": int, "note": str}, pk="id")
    meta = {"title": "Vega datasets", "databases": {"vega": {
        "allow_sql": False,
        "tables": {"stocks": {"allow": False}, "notes": {"allow": False}},
        "queries": {
            "stocks_by_symbol": {
                "title": "Monthly prices of one company's stock",
                "description": "Symbols are listed in the stock_symbols table.",
                "sql": "select ref, symbol, date, price from stocks where symbol = :symbol "
                       "order by date"},
            "cars_by_origin": {"title": "Cars by origin",
                               "sql": "select ref, Name, Origin, Year from cars "
                                      "where Origin = :origin"},
            "add_note": {"title": "Leave a note", "write": True,
                         "sql": "insert into notes (note) values (:note)"},
        }}}}
    open(out + "/metadata.json", "w").write(json.dumps(meta, indent=2))
''')


class Datasette(Site):
    name = "datasette"
    origin = "PyPI"
    pins = ("datasette==0.65.5", "sqlite-utils==4.2.1", "vega-datasets==0.9.0",
            "pandas==3.1.1", "numpy==2.4.6")
    state_dbs = (("vega.db", ()),)
    hidden = ("560 stock rows only through a GET canned-query form (values on another page); "
              "sort/facet trap; a writable canned query")

    def install(self) -> None:
        self.venv = pip_venv(self.name, list(self.pins))

    def build(self, data: Path) -> None:
        subprocess.run([str(self.venv / "bin" / "python"), "-c", BUILD, str(data)], check=True,
                       capture_output=True, timeout=300)

    def command(self, data: Path, port: int, public_port: int):
        return ([str(self.venv / "bin" / "datasette"), "serve", str(data / "vega.db"),
                 "-h", "127.0.0.1", "-p", str(port), "-m", str(data / "metadata.json"),
                 "--setting", "num_sql_threads", "2"], data, None)

    def truth(self, data: Path) -> Truth:
        import sqlite3

        con = sqlite3.connect(data / "vega.db")
        try:
            cars = [r for (r,) in con.execute("select ref from cars")]
            stocks = [r for (r,) in con.execute("select ref from stocks")]
        finally:
            con.close()
        return Truth.of([Unit(r, "link") for r in cars] + [Unit(r, "form") for r in stocks])

    found_in = staticmethod(token_finder(r"\b(?:car|stk)-\d{4}\b"))

    def dangerous(self, entry: Entry) -> str | None:
        if entry.method not in ("GET", "HEAD", "OPTIONS"):
            return f"{entry.method} {entry.route}"
        return None
