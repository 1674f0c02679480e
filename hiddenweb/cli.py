"""The ``hiddenweb`` console command: everything that is not a crawl.

Sub-commands live one per module in :mod:`hiddenweb.commands`; each module defines
``register(subparsers)`` and is found by name, so adding a command touches no shared file.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sqlite3
import sys

from hiddenweb import __version__, commands
from hiddenweb.store import StoreError
from hiddenweb.terminal import printable


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hiddenweb",
        description="hiddenweb: the proving ground, benchmarks and store tools of the crawler "
        "(crawls run with `scrapy crawl hwdla`).",
    )
    parser.add_argument("--version", action="version", version=f"hiddenweb {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"hiddenweb.commands.{info.name}")
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except (ValueError, FileNotFoundError, StoreError, sqlite3.Error) as exc:
        print(f"hiddenweb {args.command}: error: {printable(str(exc))}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
