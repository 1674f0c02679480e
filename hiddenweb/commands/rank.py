"""``hiddenweb rank [--by frequency|weightage|combined] [--limit N] [--json] [--db PATH]``: the
visit store's pages in the paper's rank orders (paper 002, §5, tables 2 and 3 and the combined
filter-and-rank query ``ttl > frequency/2 ORDER BY frequency, weightage, ttl DESC``)."""

from __future__ import annotations

import argparse
import json

from hiddenweb.commands import at_least

COLUMNS = ("url", "frequency", "weightage", "ttl")


def register(sub: argparse._SubParsersAction) -> None:
    rank = sub.add_parser("rank", help="pages of the visit store by frequency, weightage or both")
    rank.add_argument("--by", choices=("frequency", "weightage", "combined"), default="combined",
                      help="ranking (default: combined, which also drops pages available on half "
                      "of their visits or fewer)")  # fmt: skip
    rank.add_argument("--limit", type=at_least(0), help="at most N rows")
    rank.add_argument("--json", action="store_true", help="JSON lines, one page per line")
    rank.add_argument("--db", help="visit store file (default: the project's HIDDENWEB_STORE_PATH)")
    rank.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hiddenweb.store import VisitStore, command_store_path
    from hiddenweb.terminal import printable

    if args.limit is not None and args.limit < 0:
        raise ValueError("--limit must be >= 0")
    with VisitStore(command_store_path(args.db), readonly=True) as store:
        rows = store.rank(args.by, args.limit)
    if args.json:
        for position, row in enumerate(rows, 1):
            print(json.dumps({"rank": position, **row}))
        return 0
    for row in rows:  # a site's URL is printed, never obeyed by the terminal
        row["url"] = printable(row["url"])
    width = max([len("url"), *(len(row["url"]) for row in rows)])
    print(f"{'rank':>4}  {'url':<{width}}  {'frequency':>9}  {'weightage':>10}  {'ttl':>6}")
    for position, row in enumerate(rows, 1):
        print(f"{position:>4}  {row['url']:<{width}}  {row['frequency']:>9}  "
              f"{row['weightage']:>10.6g}  {row['ttl']:>6}")  # fmt: skip
    return 0
