"""MLflow's tracking server (PyPI), a single-page app that reads its lists by POST.

The server sends one ``index.html`` and a script bundle; the app shows ``#/experiments/N``
hash routes, lists an experiment's runs with ``POST /ajax-api/2.0/mlflow/runs/search`` (a read
sent as a POST, with a JSON body) and GraphQL queries (``POST /graphql``), shows a run at
``#/experiments/N/runs/ID`` (a GraphQL ``GetRun`` query) and its files in an artifact tree
whose nodes are fetched when clicked (``GET /get-artifact?path=…&run_uuid=…``). No page is
linked by an ``href`` a plain crawler can follow, and a crawler that refuses every script POST
sees no run.

Data: three experiments of five runs each, written with MLflow's own client into the SQLite
store; each run has a parameter, a metric's history, a tag ``note`` = ``note-NNN`` and a text
artifact ``notes/summary.txt`` holding ``art-NNNN``.

Units, kind ``js``: the runs (``note-NNN``, shown in the answers of the run searches and of a
run's GraphQL query) and their artifacts (``art-NNNN``, shown only in the artifact's own
answer). Dangerous: a request that is not a GET, HEAD or OPTIONS, but the POSTs that MLflow's
REST API documents as reads (``…/search``, ``…/search-datasets``, ``traces/metrics``) and a
GraphQL request without a mutation. The state compared leaves out ``label_schemas``, which
MLflow fills with its defaults when an experiment's review page first lists them, by a GET.
"""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import textwrap
from pathlib import Path

from hiddenweb.bench.realsites.install import pip_venv
from hiddenweb.bench.realsites.scoring import Entry, Truth, Unit, token_finder
from hiddenweb.bench.realsites.sites.base import Site

EXPERIMENTS, RUNS = 3, 5
BUILD = textwrap.dedent(f'''
    import sys
    from pathlib import Path
    import mlflow
    data = Path(sys.argv[1]).resolve()
    mlflow.set_tracking_uri(f"sqlite:///{{data}}/mlflow.db")
    n = 0
    for e in range({EXPERIMENTS}):
        exp = mlflow.create_experiment(
            f"study-{{e}}", artifact_location=(data / "artifacts" / str(e)).as_uri())
        for r in range({RUNS}):
            n += 1
            with mlflow.start_run(experiment_id=exp, run_name=f"trial-{{n:03d}}"):
                mlflow.log_param("alpha", r / 10)
                for step in range(3):
                    mlflow.log_metric("loss", 1 / (step + r + 1), step=step)
                mlflow.set_tag("note", f"note-{{n:03d}}")
                mlflow.log_text(f"artifact token art-{{n:04d}}\\n", "notes/summary.txt")
''')
#: POSTs of MLflow's REST API that read (its documentation's search and metrics endpoints)
READ_POSTS = re.compile(r"/(?:search|search-datasets|metrics)$")
QUIET = {"MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true"}


class MLflow(Site):
    name = "mlflow"
    origin = "PyPI"
    pins = ("mlflow==3.17.2",)
    ready_path = "/health"
    #: ``label_schemas`` is left out: MLflow writes its default label schemas into it the first
    #: time an experiment's review page asks for them, by a GET (``label-schemas/list``)
    state_dbs = (("mlflow.db", ("label_schemas",)),)
    hidden = (f"{EXPERIMENTS * RUNS} runs listed by POST searches and GraphQL queries in a "
              "hash-routed single page; one artifact each, fetched when its tree node is clicked")

    def install(self) -> None:
        self.venv = pip_venv(self.name, list(self.pins))

    def build(self, data: Path) -> None:
        subprocess.run([str(self.venv / "bin" / "python"), "-c", BUILD, str(data)],
                       check=True, capture_output=True, timeout=600, env=_env())

    def command(self, data: Path, port: int, public_port: int):
        return ([str(self.venv / "bin" / "mlflow"), "server", "--backend-store-uri",
                 f"sqlite:///{data / 'mlflow.db'}", "--host", "127.0.0.1", "--port", str(port),
                 "--workers", "1"], data, _env())

    def truth(self, data: Path) -> Truth:
        con = sqlite3.connect(data / "mlflow.db")
        try:
            notes = [v for (v,) in con.execute("select value from tags where key = 'note'")]
        finally:
            con.close()
        arts = [f"art-{int(n.split('-')[1]):04d}" for n in notes]
        return Truth.of([Unit(n, "js") for n in notes] + [Unit(a, "js") for a in arts])

    found_in = staticmethod(token_finder(r"\b(?:note-\d{3}|art-\d{4})\b"))

    def dangerous(self, entry: Entry) -> str | None:
        if entry.method in ("GET", "HEAD", "OPTIONS"):
            return None
        if entry.method == "POST" and READ_POSTS.search(entry.route):
            return None
        if entry.method == "POST" and entry.route == "/graphql" \
                and "mutation" not in entry.req_body:
            return None
        return f"{entry.method} {entry.route}"


def _env() -> dict[str, str]:
    return {**os.environ, **QUIET}
