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
    result = cov.run(DEMO_PAGES, DEMO_SEED, "hwdla", budget=0, workdir=args.out.parent)
    Path(result["items_path"]).replace(args.out)
    print(f"Crawled the demo site ({DEMO_PAGES} pages, seed {DEMO_SEED}): "
          f"{result['pages_downloaded']} pages downloaded in {result['wall_seconds']} s, "
          f"{result['hidden_found']} of {result['hidden_total']} hidden pages found "
          f"({100 * (result['hidden_coverage'] or 0):.0f} %) and "
          f"{result['hidden_found_browser_only']} of "
          f"{result['hidden_total_with_browser'] - result['hidden_total']} that need a browser, "
          f"trap form submissions: {result['trap_submissions']}.")
    print(f"Items: {args.out}  (crawl log: {result['log_path']})")
    return 0
