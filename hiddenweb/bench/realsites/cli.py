"""``hiddenweb bench realsites``: the command line of the real-site benchmark.

``hiddenweb bench realsites [--sites a,b] [--source NAME=GIT-URL-OR-PATH] [--json] [--out DIR]
[--crawlers naive,naive-browser,hwdla] [--pages N] [--seconds S] [--docs FILE]``

Prints the table (or, with ``--json``, one JSON document), and writes ``results.json``,
``summary.md`` and ``figure.png`` into ``--out`` (default ``out/realsites``); the crawls' logs,
data copies and request logs stay in ``--out``/``work``. ``--rescore`` crawls nothing: it scores
the request logs of the run in ``--out`` again with the current scorers. ``--docs FILE`` also
writes the Markdown summary there and the figure beside it, same name, ``.png``
(``docs/benchmarks.md`` for a full run); whatever follows the :data:`NOTES` marker in that file
is kept (the notes people write about a run). ``--crawlers …,blackwidow`` adds the peer crawler
Black Widow (:mod:`~hiddenweb.bench.realsites.crawlers`), from the checkout given with
``--source blackwidow=GIT-URL-OR-PATH``. A crawler named twice or more crawls each time (its
run-to-run spread, measured in one run), the second in ``work/SITE/NAME+2`` and so on.
"""

from __future__ import annotations

import argparse
import json
import platform
import shlex
import shutil
import sys
import time
from pathlib import Path

from hiddenweb.bench.realsites.crawlers import CRAWLERS, PEERS, Caps, variant
from hiddenweb.bench.realsites.sites import GIT_ONLY, SITES

NOTES = "<!-- notes: kept when --docs writes this page again -->"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("realsites", help="third-party web apps served locally, three crawlers, "
                                         "truth from the server")
    p.add_argument("--sites", default=",".join([*SITES, *GIT_ONLY]),
                   help=f"comma-separated (default: all: {', '.join([*SITES, *GIT_ONLY])})")
    p.add_argument("--source", action="append", default=[], metavar="NAME=GIT-URL-OR-PATH",
                   help="where a git-only app or a peer crawler comes from (cloned at run "
                        "time, never vendored)")
    p.add_argument("--crawlers", default=",".join(CRAWLERS),
                   help=f"comma-separated (default: {', '.join(CRAWLERS)}); "
                        "hwdla@NAME=VALUE[+NAME=VALUE] is hwdla with those settings; a crawler "
                        "named again crawls again (its spread), in WORK/SITE/NAME+2; the peer "
                        f"{', '.join(PEERS)} needs --source {PEERS[0]}=GIT-URL-OR-PATH")
    p.add_argument("--pages", type=int, default=Caps.pages, help="CLOSESPIDER_PAGECOUNT per crawl")
    p.add_argument("--seconds", type=int, default=Caps.seconds,
                   help="CLOSESPIDER_TIMEOUT per crawl")
    p.add_argument("--json", action="store_true", help="print one JSON document, no table")
    p.add_argument("--out", type=Path, default=Path("out/realsites"),
                   help="results.json, summary.md, figure.png and the crawls' work/ go here")
    p.add_argument("--rescore", action="store_true",
                   help="crawl nothing: score the request logs of the run in --out again")
    p.add_argument("--docs", type=Path, default=None, metavar="FILE",
                   help="also write the Markdown summary here (docs/benchmarks.md)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from hiddenweb.bench.coverage import PROJECT_DIR
    from hiddenweb.bench.realsites import report, runner
    from hiddenweb.bench.revision import code_revision, describe

    sources = {}
    for item in args.source:
        name, sep, where = item.partition("=")
        if not sep or not where:
            raise ValueError(f"--source {item!r}: expected NAME=GIT-URL-OR-PATH")
        sources[name.strip()] = where.strip()
    names = [n.strip() for n in args.sites.split(",") if n.strip()]
    crawlers = tuple(c.strip() for c in split_crawlers(args.crawlers) if c.strip())
    unknown = [c for c in crawlers if variant(c)[0] not in CRAWLERS + PEERS]
    if unknown:
        raise ValueError(f"unknown crawler(s) {unknown}; known: {', '.join(CRAWLERS + PEERS)}")
    caps = Caps(args.pages, args.seconds)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    if args.rescore:
        doc = json.loads((out / "results.json").read_text())
        results = runner.rescore(doc["sites"], out / "work", sources)
        meta = doc["meta"]
        meta["rescored"] = describe(code_revision(PROJECT_DIR))
    else:
        code = code_revision(PROJECT_DIR)  # before the crawls: what they run
        results = runner.run(names, out / "work", caps, sources, crawlers)
        meta = {"command": "hiddenweb bench realsites " + shlex.join(sys.argv[3:]),
                "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                "machine": f"{platform.machine()}, {_cores()} cores, "
                           f"Python {platform.python_version()}",
                "code": describe(code), "caps": {"pages": caps.pages, "seconds": caps.seconds},
                "total_seconds": time.monotonic() - start, "code_revision": code}
    doc = {"meta": meta, "sites": results}
    (out / "results.json").write_text(json.dumps(doc, indent=1))
    summary = report.markdown(results, meta)
    (out / "summary.md").write_text(summary)
    fig = report.figure(results, out / "figure.png")
    if args.docs:
        args.docs.parent.mkdir(parents=True, exist_ok=True)
        image = ""
        if fig:
            copy = args.docs.with_suffix(".png")
            shutil.copyfile(fig, copy)
            image = f"\n![units found against downloads, per crawler and site]({copy.name})\n"
        kept = args.docs.read_text() if args.docs.exists() else ""
        notes = kept[kept.index(NOTES):] if NOTES in kept else ""
        args.docs.write_text(summary + image + (f"\n{notes}" if notes else ""))
    if args.json:
        print(json.dumps(doc))
    else:
        print(report.table(results))
        print(f"measured code: {meta['code']}; results in {out}")
    return 130 if any("interrupted" in s for s in results) else 0


def split_crawlers(text: str) -> list[str]:
    """``--crawlers`` cut at its commas, but not at those inside an arm's JSON value
    (``hwdla@HIDDENWEB_LAB={"a": false, "b": false}``)."""
    out, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += (c in "{[") - (c in "}]")
        if c == "," and depth <= 0:
            out.append(text[start:i])
            start = i + 1
    return [*out, text[start:]]


def _cores() -> int:
    import os

    return len(os.sched_getaffinity(0))
