"""``hiddenweb report [--db PATH] [--items items.jsonl] -o DIR``: figures of a crawl and its visit
store, as PNG files and an ``index.html`` that shows them.

- ``coverage.png`` (needs ``--items``): hidden pages found and PI pages found against
  downloads, in download order (paper 000's fig. 5, "coverage"). A hidden page is an item with
  ``form_only`` true and a status below 400. Downloads are the items' ``downloads`` (every
  response, repeats included), else their count; with ``--crawl-report``, the curve runs on to
  the crawl's last download.
- ``depth.png``: hidden pages by depth (paper 000's fig. 6): from the items when given, else from
  the store's ``hidden`` pages.
- ``ranking.png``: the top of the store's ranking (``--by``, default combined; paper 002 §5).
- with ``--stats`` (the crawl's ``HIDDENWEB_STATS_FILE``): what the safety policy refused
  (``docs/safety.md``), forms, buttons, links and replays, by reason.
- with ``--crawl-report`` (the crawl's report, :mod:`hiddenweb.crawlreport`): its figures at the
  top (downloads, pages, hidden pages, submissions, forms, browser pages and why, refusals, the
  estimate of what is left), forms not submitted and refusals by reason, the browser's pages.
  The ranking needs the visit store: without one (``--db`` missing, the store off) it is left out.
"""

from __future__ import annotations

import argparse
import html
import json
from collections import Counter
from pathlib import Path
from typing import Any

from hiddenweb.commands import at_least


def register(sub: argparse._SubParsersAction) -> None:
    report = sub.add_parser("report", help="PNG figures and an index.html of a crawl and its store")
    report.add_argument("--db", help="visit store (default: the project's HIDDENWEB_STORE_PATH)")
    report.add_argument("--items", type=Path, help="the crawl's items (JSON lines, scrapy -O)")
    report.add_argument("-o", "--out", type=Path, required=True, help="output directory")
    report.add_argument("--by", choices=("frequency", "weightage", "combined"), default="combined")
    report.add_argument("--top", type=at_least(0), default=20, help="rows of the ranking figure")
    report.add_argument("--crawl-report", type=Path,
                        help="the crawl's report (HIDDENWEB_REPORT_FILE, or <LOG_FILE>.report.json)"
                        ": its figures at the top of the page")
    report.add_argument("--stats", type=Path,
                        help="the crawl's final stats (HIDDENWEB_STATS_FILE): adds what the "
                        "safety policy refused, by reason")
    report.set_defaults(func=run)


def read_items(path: Path) -> list[dict[str, Any]]:
    items = []
    with path.open(encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                items.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: invalid JSON: {exc.msg}") from None
    items.sort(key=lambda item: item.get("fetched_at") or 0.0)  # stable: file order on ties
    return items


def refusals(path: Path) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
    """(refusals by reason, refusals by kind: forms, buttons, links, replays, forms not sent by
    reason: the policy's classes, ``no_control``, ``needs_browser``, ``offsite``) of a stats
    file."""
    try:
        stats = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: invalid JSON: {exc.msg}") from None
    if not isinstance(stats, dict):
        raise ValueError(f"{path}: not a stats object")
    by_reason = {k.rsplit("/", 1)[1]: int(v) for k, v in stats.items()
                 if k.startswith("hiddenweb/safety/refused/")}
    by_kind = {k.rsplit("/", 1)[1].removesuffix("_refused"): int(v) for k, v in stats.items()
               if k.startswith("hiddenweb/safety/") and k.endswith("_refused")}
    skipped = {k.rsplit("/", 1)[1]: int(v) for k, v in stats.items()
               if k.startswith("hiddenweb/forms/skipped/")}
    return by_reason, by_kind, skipped


def refusals_html(by_reason: dict[str, int], by_kind: dict[str, int],
                  skipped: dict[str, int] | None = None) -> str:
    kinds = ", ".join(f"{n} {html.escape(k)}" for k, n in sorted(by_kind.items())) or "nothing"
    rows = "".join(f"<tr><td>{html.escape(r)}</td><td>{n}</td></tr>"
                   for r, n in sorted(by_reason.items(), key=lambda kv: (-kv[1], kv[0])))
    forms = "".join(f"<tr><td>{html.escape(r)}</td><td>{n}</td></tr>"
                    for r, n in sorted((skipped or {}).items(), key=lambda kv: (-kv[1], kv[0])))
    return ("<h2>Refused by the safety policy</h2>"
            f"<p>{kinds} (docs/safety.md)</p>"
            f"<table><tr><th>reason</th><th>refusals</th></tr>{rows}</table>"
            "<h2>Forms not submitted</h2><table><tr><th>reason</th><th>forms</th></tr>"
            f"{forms}</table>")


def read_crawl_report(path: Path) -> dict[str, Any]:
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: invalid JSON: {exc.msg}") from None
    if not isinstance(report, dict) or "downloads" not in report:
        raise ValueError(f"{path}: not a crawl report (hiddenweb.crawlreport)")
    return report


def _rows(counts: dict[str, int], head: str) -> str:
    rows = "".join(f"<tr><td>{html.escape(str(k))}</td><td>{n:,}</td></tr>"
                   for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0]))))
    return f"<table><tr><th>{head}</th><th>count</th></tr>{rows}</table>" if rows else \
        "<p>none</p>"


def crawl_report_html(report: dict[str, Any]) -> str:
    """The crawl report's figures (:mod:`hiddenweb.crawlreport`) as HTML."""
    from hiddenweb.crawlreport import summary_lines, summary_rows

    forms, browser, refused = report["forms"], report["browser"], report["refused"]
    figures = "".join(f"<tr><th>{html.escape(what)}</th><td class='n'>{html.escape(figure)}</td>"
                      f"<td>{html.escape(note)}</td></tr>"
                      for what, figure, note in summary_rows(report))
    pages = browser.get("urls", [])
    urls = "".join(f"<tr><td>{html.escape(u['url'])}</td><td>{html.escape(u['why'])}</td>"
                   f"<td>{u['loads']:,}</td></tr>" for u in pages[:50])
    more = len(pages) - 50
    seed = html.escape(str(report.get("seed") or "a site"))
    return (f"<h2>Crawl of {seed}</h2><p>{html.escape(summary_lines(report)[0])}</p>"
            f"<table class='figures'>{figures}</table>"
            f"<h2>Forms not submitted</h2>{_rows(forms['skipped_by_reason'], 'reason')}"
            f"<h2>Refused by the safety policy</h2>{_rows(refused['by_reason'], 'reason')}"
            f"<h2>Pages loaded in the browser</h2>{_rows(browser['by_reason'], 'why')}"
            + (f"<table><tr><th>page</th><th>why</th><th>loads</th></tr>{urls}</table>"
               if urls else "")
            + (f"<p>… and {more:,} more pages (in the report file)</p>" if more > 0 else ""))


def is_hidden(item: dict[str, Any]) -> bool:
    status = item.get("status")
    return bool(item.get("form_only")) and status is not None and status < 400


def run(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["text.parse_math"] = False  # a URL with two "$" is text, not TeX
    import matplotlib.pyplot as plt

    from hiddenweb.store import VisitStore, command_store_path

    items = read_items(args.items) if args.items else None
    safety = refusals_html(*refusals(args.stats)) if args.stats else ""
    crawl_report = read_crawl_report(args.crawl_report) if args.crawl_report else None
    crawl = crawl_report_html(crawl_report) if crawl_report else ""
    store_path = command_store_path(args.db, must_exist=not args.crawl_report)
    ranking: list = []
    stored_depths: list = []
    if store_path.exists():
        with VisitStore(store_path, readonly=True) as store:
            ranking = store.rank(args.by, args.top)
            stored_depths = store.conn.execute(
                "SELECT depth, count(*) FROM pages WHERE hidden = 1 AND depth IS NOT NULL "
                "GROUP BY depth"
            ).fetchall()
    args.out.mkdir(parents=True, exist_ok=True)
    figures: list[tuple[str, str]] = []

    if items is not None:
        hidden = pi = 0
        xs, hidden_ys, pi_ys = [], [], []
        for n, item in enumerate(items, 1):
            status = item.get("status")
            if is_hidden(item):
                hidden += 1
            elif status is not None and status < 400:
                pi += 1
            xs.append(max(item.get("downloads") or n, xs[-1] if xs else 0))  # the crawl's unit
            hidden_ys.append(hidden)
            pi_ys.append(pi)
        total = (crawl_report or {}).get("downloads") or 0
        if xs and total > xs[-1]:  # the downloads after the last new page: nothing new
            xs.append(total)
            hidden_ys.append(hidden)
            pi_ys.append(pi)
        fig, ax = plt.subplots(figsize=(7, 4.5))
        ax.plot(xs, hidden_ys, label="hidden pages found")
        ax.plot(xs, pi_ys, label="PI pages found", linestyle="--")
        ax.set(xlabel="downloads", ylabel="pages found", title="Coverage over the crawl")
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.out / "coverage.png", dpi=100)
        plt.close(fig)
        figures.append(("coverage.png", f"{hidden} hidden and {pi} PI pages in {len(items)} "
                        f"pages, {xs[-1] if xs else 0:,} downloads"))  # fmt: skip
        depths = Counter(item.get("depth") for item in items if is_hidden(item))
        source = "items"
    else:
        depths = Counter(dict(stored_depths))
        source = "visit store"

    fig, ax = plt.subplots(figsize=(7, 4.5))
    keys = sorted(d for d in depths if d is not None)
    ax.bar([str(k) for k in keys], [depths[k] for k in keys])
    ax.set(xlabel="depth (actions from the seed)", ylabel="hidden pages",
           title=f"Hidden pages by depth ({source})")  # fmt: skip
    fig.tight_layout()
    fig.savefig(args.out / "depth.png", dpi=100)
    plt.close(fig)
    figures.append(("depth.png", f"{sum(depths.values())} hidden pages, from the {source}"))

    if ranking:
        ranking_figure(plt, args, ranking, figures)
    rows = "".join(
        f"<tr><td>{n}</td><td>{html.escape(r['url'])}</td><td>{r['frequency']}</td>"
        f"<td>{r['weightage']:.6g}</td><td>{r['ttl']}</td></tr>"
        for n, r in enumerate(ranking, 1)
    )
    body = "".join(
        f"<figure><img src='{name}' alt='{html.escape(caption)}'>"
        f"<figcaption>{html.escape(caption)}</figcaption></figure>"
        for name, caption in figures
    )
    ranked = (f"<h2>{args.by} ranking</h2><table><tr><th>rank</th><th>url</th>"
              f"<th>frequency</th><th>weightage</th><th>ttl</th></tr>{rows}</table>"
              if ranking else "")
    (args.out / "index.html").write_text(
        "<!doctype html><meta charset='utf-8'><title>hiddenweb report</title>"
        "<style>body{font-family:sans-serif;max-width:60em;margin:auto}"
        "td,th{padding:0 .6em;text-align:left}table.figures th{font-weight:normal}"
        "td.n{text-align:right;font-weight:bold}</style>"
        f"<h1>hiddenweb report</h1>{crawl}{body}{ranked}{safety}\n",
        encoding="utf-8",
    )
    print(f"Report: {args.out / 'index.html'} ({', '.join(name for name, _ in figures)})")
    return 0


def ranking_figure(plt: Any, args: argparse.Namespace, ranking: list,
                   figures: list[tuple[str, str]]) -> None:
    fig, ax = plt.subplots(figsize=(8, max(3.0, 0.3 * len(ranking) + 1.5)))
    labels = [row["url"] if len(row["url"]) <= 60 else "…" + row["url"][-59:] for row in ranking]
    ax.barh(range(len(ranking)), [row["frequency"] for row in ranking])
    ax.set_yticks(range(len(ranking)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set(xlabel="frequency (visits)", title=f"Top {len(ranking)} pages, {args.by} ranking")
    fig.tight_layout()
    fig.savefig(args.out / "ranking.png", dpi=100)
    plt.close(fig)
    figures.append(("ranking.png", f"top {len(ranking)} by {args.by}"))
