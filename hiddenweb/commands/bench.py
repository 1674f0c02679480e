"""``hiddenweb bench …``: benchmarks that print figures (never pass/fail timings).

* ``coverage``: a strategy against a generated site's ground truth
  (:mod:`hiddenweb.bench.coverage`).
* ``throughput``: ``hwdla`` against a bare Scrapy spider on the same form-less site.
* ``realsites``: third-party web apps served locally, scored from the server's side
  (:mod:`hiddenweb.bench.realsites`).
* ``pagecost``: a real-site run's logged replies read again by the page readers, CPU a page
  (:mod:`hiddenweb.bench.pagecost`).
* ``safety``: the safety policy on its labelled corpus (:mod:`hiddenweb.bench.safety`).
* ``chaos``: a JOBDIR crawl SIGKILLed and resumed K times against an uninterrupted one
  (:mod:`hiddenweb.bench.chaos`).
* ``distributed``: K workers sharing one crawl on a Redis it starts, against one process
  (:mod:`hiddenweb.bench.distributed`).
* ``find``: find mode (lost sheep, SIM, BFS) on the real-site corpus
  (:mod:`hiddenweb.bench.realsites.findbench`).
* ``emris``: the lost-sheep paper's experiment (:mod:`hiddenweb.lostsheep`), when installed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from hiddenweb.bench.revision import code_revision, describe

TABLE_KEYS = ("strategy", "browser", "pages", "seed", "pages_downloaded", "hidden_found",
              "hidden_total", "hidden_coverage", "hidden_found_browser_only",
              "hidden_total_with_browser", "downloads_to_50", "downloads_to_90",
              "blind_floor_to_90", "order_floor_to_90", "downloads_to_90_runs",
              "trap_submissions", "wall_seconds", "pages_per_second", "chromium_peak_rss_mb",
              "renders", "renders_needed", "render_precision", "render_recall")
BROWSER_MODES = {"off": ["never"], "on": ["auto"], "both": ["never", "auto"],
                 "always": ["always"]}


def register(sub: argparse._SubParsersAction) -> None:
    bench = sub.add_parser("bench", help="benchmarks on the proving ground")
    bench_sub = bench.add_subparsers(dest="bench", metavar="BENCH", required=True)

    cov = bench_sub.add_parser("coverage", help="hidden-page coverage of a crawl strategy")
    cov.add_argument("--pages", type=int, default=1000)
    cov.add_argument("--seed", type=int, default=1)
    cov.add_argument("--strategy", default="bfs",
                     help="a strategy name, or several separated by commas (bfs,dfs,oracle)")
    cov.add_argument("--budget", type=int, default=None,
                     help="download budget (default: 3 × the truth's page count; 0: none)")
    cov.add_argument("--json", action="store_true", help="one JSON object per strategy")
    cov.add_argument("--figures", type=Path, default=None, metavar="DIR",
                     help="write the HWDLA paper's figs. 4, 5 and 6 as PNG into DIR "
                     "(every download is then kept as an item)")
    cov.add_argument("--plot", type=Path, default=None,
                     help="write hidden vs PI pages discovered (HWDLA fig. 5) as PNG")
    cov.add_argument("--repeat", type=int, default=1, metavar="N",
                     help="crawl each strategy N times and report its median run by downloads "
                     "to 90 %% (the crawls' answers come back in a different order each time); "
                     "downloads_to_90_runs lists all N")
    cov.add_argument("--workdir", type=Path, default=None, help="keep items and logs here")
    cov.add_argument("-s", "--set", action="append", default=[], metavar="NAME=VALUE",
                     help="extra Scrapy setting for the crawl")
    cov.add_argument("--browser", choices=sorted(BROWSER_MODES), default=None,
                     help="HIDDENWEB_BROWSER for the crawls: off (never), on (auto), both "
                          "(each strategy twice: off, then on), always")
    cov.set_defaults(func=coverage)

    thr = bench_sub.add_parser("throughput",
                               help="hwdla vs a bare Scrapy spider on the same plain site")
    thr.add_argument("--pages", type=int, default=2000)
    thr.add_argument("--seed", type=int, default=1)
    thr.add_argument("--json", action="store_true")
    thr.add_argument("--repeat", type=int, default=1, metavar="N",
                     help="run the four crawls N times in turn; each ratio is the median of "
                          "the rounds' ratios")
    thr.add_argument("--browser", action="store_true",
                     help="instead: hwdla with HIDDENWEB_BROWSER=never vs auto on a site whose "
                          "pages with script-built links (about 1 in 10) need the browser")
    thr.set_defaults(func=throughput)

    frm = bench_sub.add_parser("forms", help="form classifier accuracy on the proving ground")
    frm.add_argument("--pages", type=int, default=1000)
    frm.add_argument("--seed", type=int, default=1)
    frm.add_argument("--json", action="store_true")
    frm.set_defaults(func=forms)

    from hiddenweb.bench.realsites.cli import add_parser as add_realsites_parser

    add_realsites_parser(bench_sub)
    from hiddenweb.bench.realsites.findbench import add_parser as add_find_parser

    add_find_parser(bench_sub)

    pgc = bench_sub.add_parser("pagecost",
                               help="CPU a page of hwdla's page readers, on a realsites run's "
                                    "logged replies")
    pgc.add_argument("run", type=Path, metavar="RUN_DIR",
                     help="a `hiddenweb bench realsites --out` directory")
    pgc.add_argument("--sites", default=None, help="comma-separated (default: all it crawled)")
    pgc.add_argument("--crawler", default="hwdla", help="whose logged replies (default hwdla)")
    pgc.add_argument("--passes", type=int, default=3, help="best of this many passes")
    pgc.add_argument("--json", action="store_true")
    pgc.set_defaults(func=pagecost)

    saf = bench_sub.add_parser("safety", help="the safety policy on its labelled corpus")
    saf.add_argument("--corpus", type=Path, default=None,
                     help="a corpus file (default: tests/safety/corpus.txt)")
    saf.add_argument("--json", action="store_true")
    saf.set_defaults(func=safety)

    cha = bench_sub.add_parser("chaos", help="a JOBDIR crawl SIGKILLed and resumed K times")
    cha.add_argument("--pages", type=int, default=1000)
    cha.add_argument("--kills", type=int, default=20)
    cha.add_argument("--seed", type=int, default=1,
                     help="the site's seed and the kill moments' random seed")
    cha.add_argument("--browser", action="store_true", help="HIDDENWEB_BROWSER=auto")
    cha.add_argument("--workdir", type=Path, default=None, help="keep feeds, logs, JOBDIRs here")
    cha.add_argument("--json", action="store_true")
    cha.set_defaults(func=chaos)

    dis = bench_sub.add_parser("distributed",
                               help="K workers share one crawl on Redis, against one process")
    dis.add_argument("--pages", type=int, default=1000)
    dis.add_argument("--seed", type=int, default=1)
    dis.add_argument("--workers", default="2", metavar="K[,K…]",
                     help="workers per run, e.g. 1,2,4 (one baseline for all); a K written "
                          "4k is run with one worker SIGKILLed, e.g. 1,4,4k")
    dis.add_argument("--latency", type=float, default=0.1, metavar="SECONDS",
                     help="the site's latency on every answer (default 0.1)")
    dis.add_argument("--concurrency", type=int, default=2,
                     help="requests in flight per worker (default 2)")
    dis.add_argument("--kill", action="store_true",
                     help="SIGKILL one worker at 30 %% of the crawl (K >= 2)")
    dis.add_argument("--memory", type=int, default=0, metavar="N",
                     help="only measure Redis memory of N pending requests and fingerprints")
    dis.add_argument("--workdir", type=Path, default=None, help="keep feeds and logs here")
    dis.add_argument("--json", action="store_true")
    dis.set_defaults(func=distributed)

    try:
        from hiddenweb.bench.lostsheep.cli import add_emris_parser
    except ImportError:
        pass
    else:
        add_emris_parser(bench_sub)


def coverage(args: argparse.Namespace) -> int:
    from hiddenweb.bench import coverage as cov

    if args.repeat < 1:
        raise SystemExit("hiddenweb bench coverage: --repeat must be at least 1")

    extra = dict(s.split("=", 1) for s in args.set)
    if args.figures:  # fig. 4 needs the repeats (the actions that brought nothing new) too
        extra.setdefault("HIDDENWEB_EMIT_REPEATS", "1")
    modes = BROWSER_MODES[args.browser] if args.browser else [extra.get("HIDDENWEB_BROWSER")]
    results = []
    for strategy in args.strategy.split(","):
        for mode in modes:
            settings = {**extra, "HIDDENWEB_BROWSER": mode} if mode else extra
            runs = [cov.run(args.pages, args.seed, strategy.strip(), args.budget, settings,
                            progress=not args.json, workdir=args.workdir)
                    for _ in range(args.repeat)]
            result = cov.median_run(runs)
            results.append(result)
            if args.json:
                print(json.dumps({k: v for k, v in result.items() if k != "curve"}), flush=True)
    if not args.json:
        print_table([{k: r[k] for k in TABLE_KEYS} for r in results])
        if results:
            print(f"measured code: {describe(results[0]['code'])}")
    if args.plot:
        cov.plot(results, args.plot, f"{args.pages} pages, seed {args.seed}")
        print(f"plot written to {args.plot}", file=sys.stderr)
    if args.figures:
        from hiddenweb.bench.figures import write
        from hiddenweb.bench.provingground.site import SiteModel

        site = SiteModel(pages=args.pages, seed=args.seed)
        truth = cov.Truth.of(site)
        for path in write(results, site, truth, args.figures):
            print(f"figure written to {path}", file=sys.stderr)
    return 0


def throughput(args: argparse.Namespace) -> int:
    from hiddenweb.bench import throughput as thr

    if args.browser:
        result = thr.run_browser(args.pages, args.seed)
        if args.json:
            print(json.dumps(result))
        else:
            print_table(result["runs"])
            print(f"pages rendered in Chromium: {100 * result['browser_share']:.1f} %; "
                  f"auto / never distinct-pages-per-second ratio: {result['ratio']:.3f} "
                  f"(downloads per second: {result['download_ratio']:.3f}); "
                  f"Chromium peak RSS (sum): {result['chromium_peak_rss_mb']} MB, "
                  f"PSS: {result['chromium_peak_pss_mb']} MB")
            print(f"measured code: {describe(result['code'])}")
        return 0
    if args.repeat < 1:
        raise SystemExit("hiddenweb bench throughput: --repeat must be at least 1")
    result = thr.run(args.pages, args.seed, args.repeat)
    if args.json:
        print(json.dumps(result))
    else:
        print_table(result["runs"])
        of = f" (median of {args.repeat} rounds)" if args.repeat > 1 else ""
        print(f"hwdla / bare pages-per-second ratio: {result['ratio']:.3f}{of}")
        print(f"DLA / Scrapy scheduler pages-per-second ratio: "
              f"{result['scheduler_ratio']:.3f}{of}")
        print(f"visit store: {100 * result['store_overhead']:+.1f} % wall time{of}")
        print(f"measured code: {describe(result['code'])}")
    return 0


def pagecost(args: argparse.Namespace) -> int:
    from hiddenweb.bench import pagecost as pgc

    sites = [s.strip() for s in args.sites.split(",") if s.strip()] if args.sites else None
    code = code_revision(Path(pgc.__file__).resolve().parents[2])  # the package imported
    rows = pgc.run(args.run, sites, args.crawler, args.passes)  # a bad RUN_DIR: main says so
    if args.json:
        print(json.dumps({"rows": rows, "code": code}))
    else:
        print_table(rows)
        print(f"CPU milliseconds a page, best of {args.passes} passes; "
              f"measured code: {describe(code)}")
    return 0


def forms(args: argparse.Namespace) -> int:
    from hiddenweb.bench import forms as frm

    result = frm.run(args.pages, args.seed)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{result['forms']} forms on the site (pages={args.pages} seed={args.seed})")
    for name in ("rules", "formasaurus"):
        if name in result:
            frm.print_confusion(name, result[name])
    if result["formasaurus_error"]:
        print(f"formasaurus not usable: {result['formasaurus_error']}")
    return 0


def safety(args: argparse.Namespace) -> int:
    from hiddenweb.bench import safety as saf

    path = args.corpus or saf.CORPUS
    try:
        result = saf.run(path)
    except (OSError, ValueError) as exc:
        raise SystemExit(f"hiddenweb bench safety: {exc}") from None
    if args.json:
        print(json.dumps(result))
    else:
        saf.print_report(result)
    return 0


def chaos(args: argparse.Namespace) -> int:
    from hiddenweb.bench import chaos as cha

    if args.pages < 1 or args.kills < 0:
        raise SystemExit("hiddenweb bench chaos: --pages must be at least 1, --kills at least 0")
    result = cha.run(args.pages, args.kills, args.seed, args.browser, progress=not args.json,
                     workdir=args.workdir)
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            if key != "code":
                print(f"{key}: {value}")
        print(f"measured code: {describe(result['code'])}")
    return 0


def distributed(args: argparse.Namespace) -> int:
    from hiddenweb.bench import distributed as dis

    if args.memory:
        print(json.dumps(dis.redis_memory(args.memory)))
        return 0
    try:
        workers = [int(k.removesuffix("k")) for k in args.workers.split(",")]
    except ValueError:
        raise SystemExit("hiddenweb bench distributed: --workers takes K or K1,K2,… "
                         "(Kk: with a kill)") from None
    kills = [args.kill or k.endswith("k") for k in args.workers.split(",")]
    if args.pages < 1 or args.concurrency < 1 or min(workers) < 1:
        raise SystemExit("hiddenweb bench distributed: --pages, --concurrency and --workers "
                         "must be at least 1")
    results = dis.run(args.pages, args.seed, workers, args.latency, args.concurrency,
                      kills, args.workdir)
    for result in results:
        if args.json:
            print(json.dumps(result), flush=True)
        else:
            print(" ".join(f"{k}={v}" for k, v in result.items() if k != "code"))
    return 0


def print_table(rows: list[dict]) -> None:
    if not rows:
        return
    keys = list(rows[0])
    cells = [[_cell(r[k]) for k in keys] for r in rows]
    widths = [max(len(k), *(len(c[i]) for c in cells)) for i, k in enumerate(keys)]
    print("  ".join(k.rjust(w) for k, w in zip(keys, widths, strict=True)))
    for c in cells:
        print("  ".join(v.rjust(w) for v, w in zip(c, widths, strict=True)))


def _cell(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, list):
        return "/".join(_cell(v) for v in value)
    return str(value)
