"""``hiddenweb demo``: serve the bundled demo site on 127.0.0.1 and crawl it (the README's main
command). Prints what was found against the site's ground truth."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    demo = sub.add_parser("demo", help="serve the bundled demo site and crawl it with hwdla")
    demo.add_argument("--out", type=Path, default=Path("out/demo-items.jsonl"),
                      help="JSON lines file for the items (default: out/demo-items.jsonl)")
    demo.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hiddenweb.bench import coverage as cov
    from hiddenweb.bench.provingground.site import DEMO_PAGES, DEMO_SEED

    args.out.parent.mkdir(parents=True, exist_ok=True)
    # no download budget: the crawl ends by itself, as a user's crawl does
    result = cov.run(DEMO_PAGES, DEMO_SEED, "hwdla", budget=0, workdir=args.out.parent,
                     trace=False)
    Path(result["items_path"]).replace(args.out)
    stats = result["crawl_stats"]
    print(f"Crawled the demo site ({DEMO_PAGES} pages, seed {DEMO_SEED}) in "
          f"{result['wall_seconds']} s: {result['pages_downloaded']:,} downloads, "
          f"{stats.get('hiddenweb/pages', 0):,} pages, "
          f"{stats.get('hiddenweb/forms/submissions', 0):,} form submissions; "
          f"hidden pages: {result['hidden_found']} of {result['hidden_total']} "
          f"({100 * (result['hidden_coverage'] or 0):.0f} %) and "
          f"{result['hidden_found_browser_only']} of "
          f"{result['hidden_total_with_browser'] - result['hidden_total']} that need a browser, "
          f"the last found at download {result['downloads_to_final']}; "
          f"trap form submissions: {result['trap_submissions']}; "
          f"stopped: {result['finish_reason']}.")
    print(f"Items: {args.out}  (crawl log: {result['log_path']})")
    return 0
