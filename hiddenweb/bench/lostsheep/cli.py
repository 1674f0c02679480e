"""The ``bench emris`` sub-command: the lost-sheep EMRIS experiment in process.

Contract: :func:`add_emris_parser` adds ``emris`` to an argparse sub-parsers object and sets
``func``; ``python -m hiddenweb.bench.lostsheep.cli emris ...`` runs it stand-alone. Prints accuracy
and mean downloads D per (algorithm, N); ``--json`` prints one JSON object per result line
(keys ``algorithm, states, threshold, nodes, runs, accuracy, mean_downloads, seed,
wall_seconds``). ``--algorithm all`` prints the rows of the paper's tables 2/3 (Goodwin,
"A solution to the exact match on rare item searches", appendix).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys

from hiddenweb.bench.lostsheep.emris import ALGORITHMS, USES_STATES, as_dict, run_emris
from hiddenweb.lostsheep.herder import DEFAULT_MAXDEPTH

logger = logging.getLogger(__name__)

#: the algorithms without states, in the paper's table order
BASELINE_ROWS: list[tuple[str, int]] = [
    (name, 0) for name in ("optimal", "random", "sim", "deg", "simdeg", "astar", "focused")]

TABLE_ROWS: list[tuple[str, int]] = [
    *BASELINE_ROWS,
    ("hmm", 3),
    ("hmm", 100),
    ("hmm", 200),
    ("hmm", 400),
    ("ls", 3),
    ("ls", 100),
    ("ls", 200),
    ("ls", 400),
    ("hmm2f", 100),
    ("hmm2f", 200),
    ("hmm2f", 400),
    ("ls2f", 100),
    ("ls2f", 200),
    ("ls2f", 400),
]


def add_emris_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``emris`` sub-command to ``subparsers``."""
    p = subparsers.add_parser("emris", help="the lost-sheep EMRIS experiment (paper tables 2/3)")
    p.add_argument("--nodes", type=int, nargs="+", default=[100], help="graph sizes N")
    p.add_argument("--runs", type=int, default=150, help="iterations per N (default 150)")
    p.add_argument("--algorithm", default="ls2f", choices=[*ALGORITHMS, "all"])
    p.add_argument(
        "--states",
        type=int,
        nargs="+",
        default=None,
        help="automaton states S (default 100, 3 for ls)",
    )
    p.add_argument("--threshold", type=float, default=0.75)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--maxdepth", type=int, default=DEFAULT_MAXDEPTH)
    p.add_argument("--json", action="store_true", help="one JSON object per result")
    p.add_argument(
        "--grid",
        type=float,
        nargs="+",
        default=None,
        metavar="THRESHOLD",
        help="issue-4 table: every row of ISSUE4_ROWS at these thresholds, each site generated "
        "once for all rows (JSON lines; wall_seconds counts the site's generation in each row)",
    )
    p.add_argument(
        "--middle-start",
        action="store_true",
        help="release automata in state S//2 instead of B (the other start reading; not the "
        "paper's literal one)",
    )
    p.set_defaults(func=emris_command)
    h = subparsers.add_parser(
        "emris-http", help="the lost sheep through the real spider vs in process, same tasks"
    )
    h.add_argument("--nodes", type=int, default=1000)
    h.add_argument("--runs", type=int, default=20)
    h.add_argument("--states", type=int, default=100)
    h.add_argument("--plain", action="store_true", help="plain automaton instead of 2F")
    h.add_argument("--threshold", type=float, default=0.75)
    h.add_argument("--seed", type=int, default=0)
    h.add_argument("--maxdepth", type=int, default=DEFAULT_MAXDEPTH)
    h.set_defaults(func=emris_http_command)
    return p


def emris_http_command(args: argparse.Namespace) -> int:
    from hiddenweb.bench.lostsheep.httpcheck import run_check

    result = run_check(args.nodes, args.runs, states=args.states, twofold=not args.plain,
                       threshold=args.threshold, seed=args.seed, maxdepth=args.maxdepth)
    print(json.dumps(result))
    return 0


def _rows(args: argparse.Namespace) -> list[tuple[str, int]]:
    if args.algorithm == "all":
        return TABLE_ROWS
    if args.algorithm not in USES_STATES:
        return [(args.algorithm, 0)]
    states = args.states or [3 if args.algorithm == "ls" else 100]
    return [(args.algorithm, s) for s in states]


ISSUE4_ROWS: list[tuple[str, int]] = [
    *BASELINE_ROWS,
    ("hmm", 100),
    ("ls", 3),
    ("ls2f", 3),
    ("ls2f", 100),
    ("ls2f", 200),
    ("ls2f", 400),
]


def emris_command(args: argparse.Namespace) -> int:
    if args.grid:
        from hiddenweb.bench.lostsheep.emris import run_grid

        for nodes in args.nodes:
            for r in run_grid(ISSUE4_ROWS, nodes, args.grid, args.runs, seed=args.seed,
                              maxdepth=args.maxdepth, middle_start=args.middle_start):
                print(json.dumps(as_dict(r)), flush=True)
        return 0
    results = []
    for algorithm, states in _rows(args):
        for nodes in args.nodes:
            r = run_emris(
                algorithm,
                nodes,
                args.runs,
                states=states or 100,
                threshold=args.threshold,
                seed=args.seed,
                maxdepth=args.maxdepth,
                middle_start=args.middle_start,
            )
            results.append(r)
            if args.json:
                print(json.dumps(as_dict(r)), flush=True)
    if not args.json:
        head = f"{'algorithm':<14}" + "".join(f"{f'N={n}':>20}" for n in args.nodes)
        print(f"threshold={args.threshold} runs={args.runs} seed={args.seed}")
        print(head)
        for algorithm, states in _rows(args):
            name = algorithm.upper() + (f" S={states}" if states else "")
            cells = [r for r in results if r.algorithm == algorithm and (r.states or 0) == states]
            print(
                f"{name:<14}"
                + "".join(f"{f'{r.accuracy:.2f} / {r.mean_downloads:.1f}':>20}" for r in cells)
            )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hiddenweb.bench.lostsheep.cli")
    sub = parser.add_subparsers(dest="command", required=True)
    add_emris_parser(sub)
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
