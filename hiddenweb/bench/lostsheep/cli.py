"""The ``bench emris`` sub-command: the lost-sheep EMRIS experiment in process.

Contract: :func:`add_emris_parser` adds ``emris`` to an argparse sub-parsers object and sets
``func``; ``python -m hiddenweb.bench.lostsheep.cli emris ...`` runs it stand-alone. Prints accuracy
and D per (algorithm, N), D counted as the paper does (``d``: no start page, the random walk's
steps) and the old way (``mean_downloads``: distinct pages with the start page), next to the
paper's figures; ``--json`` prints one JSON object per result line (keys ``algorithm, states,
threshold, nodes, runs, accuracy, mean_downloads, d, start, seed, wall_seconds``).
``--algorithm all`` prints the rows of the paper's tables 2/3 (Goodwin,
"A solution to the exact match on rare item searches", appendix).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys

from hiddenweb.bench.lostsheep.emris import ALGORITHMS, USES_STATES, EmrisResult, as_dict
from hiddenweb.bench.lostsheep.graphs import DEFAULT_VARIANT, VARIANTS
from hiddenweb.bench.lostsheep.paper import paper_figure
from hiddenweb.lostsheep.herder import DEFAULT_MAXDEPTH
from hiddenweb.lostsheep.tsetlin import START_READINGS

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
    p.add_argument("--threshold", type=float, nargs="+", default=[0.75])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--maxdepth", type=int, default=DEFAULT_MAXDEPTH)
    p.add_argument("--json", action="store_true", help="one JSON object per result")
    p.add_argument(
        "--grid",
        type=float,
        nargs="+",
        default=None,
        metavar="THRESHOLD",
        help="issue-4 table: every row of ISSUE4_ROWS at these thresholds",
    )
    p.add_argument(
        "--start",
        nargs="+",
        choices=START_READINGS,
        default=list(START_READINGS),
        help="where the automata start: B (S-1 states from Q), middle (S//2 from Q, the classic "
        "Tsetlin boundary); default both, side by side",
    )
    p.add_argument(
        "--maxdepth-sweep",
        type=int,
        nargs="*",
        default=None,
        metavar="MAXDEPTH",
        help="LS2F rows again at these maxdepths (default with --algorithm all: 5 10 20 40; "
        "no value: none)",
    )
    p.add_argument(
        "--generator",
        choices=sorted(VARIANTS),
        default=DEFAULT_VARIANT,
        help="the site generator: calibrated (fitted to the paper's baselines, "
        "docs/lostsheep.md), issue4 (the generator before issue 28), evolving (acyclic)",
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


def _cells(r: EmrisResult | None) -> str:
    if r is None:
        return f"{'-':>6}{'-':>9}{'-':>9}"
    return f"{r.accuracy:>6.2f}{r.d:>9.1f}{r.mean_downloads:>9.1f}"


def _paper_cell(algorithm: str, states: int, threshold: float, nodes: int) -> str:
    fig = paper_figure(algorithm, states, threshold, nodes)
    return f"{fig[0]:.2f} / {fig[1]:g}" if fig else "-"


def paper_distance(results: list[EmrisResult], start: str) -> tuple[float, float, int]:
    """How far the automaton rows read with ``start`` are from the paper's: the mean of
    ``|accuracy - paper's|`` and of ``|ln(D / paper's D)|`` over the cells the paper has (D as
    the paper counts it)."""
    acc, dl = [], []
    for r in results:
        if r.start != start:
            continue
        fig = paper_figure(r.algorithm, r.states, r.threshold, r.nodes)
        if fig is None or fig[1] <= 0 or r.d <= 0:
            continue
        acc.append(abs(r.accuracy - fig[0]))
        dl.append(abs(math.log(r.d / fig[1])))
    if not acc:
        return math.nan, math.nan, 0
    return sum(acc) / len(acc), sum(dl) / len(dl), len(acc)


def print_table(results: list[EmrisResult], nodes: list[int], header: str) -> None:
    """One table: a line per (algorithm, S, threshold, start); per N our accuracy, D as the paper
    counts it (no start page; random walk: steps), D with the start page (the old count), and
    the paper's ``accuracy / D``."""
    print(header)
    print(f"{'':<26}" + "".join(f"{f'N={n}':^39}" for n in nodes))
    print(f"{'algorithm':<14}{'T':>5}{'start':>7}"
          + f"{'acc':>6}{'D':>9}{'D+start':>9}{'paper':>15}" * len(nodes))
    maxdepth = results[0].maxdepth if results else 0
    results = [r for r in results if r.maxdepth == maxdepth]
    keys = list(dict.fromkeys((r.algorithm, r.states or 0, r.threshold, r.start)
                              for r in results))
    for algorithm, states, threshold, start in keys:
        name = algorithm.upper() + (f" S={states}" if states else "")
        line = f"{name:<14}{threshold:>5.2f}{start:>7}"
        for n in nodes:
            r = next((x for x in results if (x.algorithm, x.states or 0, x.threshold, x.start,
                                             x.nodes) == (algorithm, states, threshold, start, n)),
                     None)
            line += f"{_cells(r)}{_paper_cell(algorithm, states, threshold, n):>15}"
        print(line)
    starts = sorted({r.start for r in results if r.start != "-"})
    for start in starts:
        acc, dl, cells = paper_distance(results, start)
        if cells:
            print(f"start={start}: mean |acc - paper| {acc:.3f}, mean |ln(D / paper D)| {dl:.3f} "
                  f"over {cells} automaton cells")


def print_sweep(results: list[EmrisResult], nodes: list[int]) -> None:
    """The maxdepth sensitivity of LS2F: per maxdepth and N, accuracy, D (the paper's count)
    and the share of runs that ended at maxdepth."""
    sweep = sorted({r.maxdepth for r in results if r.algorithm == "ls2f"})
    if len(sweep) < 2:
        return
    print("LS2F maxdepth sensitivity (cells: accuracy / D / share of runs ended at maxdepth)")
    print(f"{'algorithm':<14}{'T':>5}{'start':>7}{'maxdepth':>9}"
          + "".join(f"{f'N={n}':>22}" for n in nodes))
    keys = list(dict.fromkeys((r.states, r.threshold, r.start)
                              for r in results if r.algorithm == "ls2f"))
    for states, threshold, start in keys:
        for depth in sweep:
            line = f"{f'LS2F S={states}':<14}{threshold:>5.2f}{start:>7}{depth:>9}"
            for n in nodes:
                r = next((x for x in results if x.algorithm == "ls2f" and (
                    x.states, x.threshold, x.start, x.maxdepth, x.nodes) == (
                    states, threshold, start, depth, n)), None)
                cell = f"{r.accuracy:.2f} / {r.d:.1f} / {r.at_maxdepth:.2f}" if r else "-"
                line += f"{cell:>22}"
            print(line)


def emris_command(args: argparse.Namespace) -> int:
    from hiddenweb.bench.lostsheep.emris import run_grid

    rows = ISSUE4_ROWS if args.grid else _rows(args)
    thresholds = args.grid or args.threshold
    sweep = args.maxdepth_sweep
    if sweep is None:
        sweep = [5, 10, 20, 40] if args.algorithm == "all" else []
    results: list[EmrisResult] = []
    for nodes in args.nodes:
        for r in run_grid(rows, nodes, thresholds, args.runs, seed=args.seed,
                          maxdepth=args.maxdepth, starts=tuple(args.start),
                          progress=not args.json, sweep=tuple(sweep),
                          params=VARIANTS[args.generator]):
            results.append(r)
            if args.json:
                print(json.dumps(as_dict(r) | {"generator": args.generator}), flush=True)
    if not args.json:
        print_table(results, args.nodes,
                    f"generator={args.generator} runs={args.runs} seed={args.seed} "
                    f"maxdepth={args.maxdepth} "
                    "(D: the paper's count, no start page, random walk = steps; "
                    "D+start: the old count)")
        print_sweep(results, args.nodes)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hiddenweb.bench.lostsheep.cli")
    sub = parser.add_subparsers(dest="command", required=True)
    add_emris_parser(sub)
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
