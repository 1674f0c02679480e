"""``hiddenweb visits import FILE [--db PATH] [--format csv|jsonl|log]``: add user visit records to
the visit store (paper 002, §5), all or nothing; see :mod:`hiddenweb.visits` for the formats."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    visits = sub.add_parser("visits", help="user visit records in the visit store")
    actions = visits.add_subparsers(dest="action", metavar="ACTION", required=True)
    imp = actions.add_parser(
        "import",
        help="import visits from CSV (url,seconds,available), JSON lines or an access log",
    )
    imp.add_argument("file", metavar="FILE")
    imp.add_argument("--db", help="visit store file (default: the project's HIDDENWEB_STORE_PATH)")
    imp.add_argument("--format", choices=("csv", "jsonl", "log"),
                     help="file format (default: guessed from the file name)")  # fmt: skip
    imp.add_argument("--base-url", help="access logs: join request paths to this URL")
    imp.add_argument("--log-seconds", choices=("dwell", "served"), default="dwell",
                     help="access logs: time spent = time to the client's next request (dwell, "
                     "default) or the %%D serving time (served)")  # fmt: skip
    imp.set_defaults(func=run_import)


def run_import(args: argparse.Namespace) -> int:
    from hiddenweb.store import VisitStore, command_store_path
    from hiddenweb.visits import import_visits

    path = command_store_path(args.db, must_exist=False)
    with VisitStore(path) as store:
        read, result = import_visits(
            store, args.file, args.format, base_url=args.base_url, log_seconds=args.log_seconds
        )
        counts = store.counts()
    print(
        f"{args.file}: {read} visits read, {result.written} written "
        f"({result.new_pages} new pages, {result.updated_pages} updated), "
        f"{result.duplicates} already imported. Store {path}: {counts['pages']} pages, "
        f"{counts['visits']} visits."
    )
    return 0
