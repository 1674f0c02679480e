"""Reports of the real-site benchmark: a terminal table, a Markdown summary and one figure.

:func:`rows` flattens :func:`hiddenweb.bench.realsites.runner.run`'s results into one row per
site and crawler; :func:`table` prints them; :func:`markdown` writes the summary (the same
table, the caps, the skipped sites and the code measured); :func:`figure` draws units found
against documents the server sent (requests less page resources: the downloads of a crawl
with or without Chromium), one panel per site, one line per crawler (matplotlib,
Agg backend).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

COLUMNS = ("site", "crawler", "truth l/f/j", "found l/f/j", "found", "allowed", "own_pages",
           "downloads",
           "requests", "req_to_90", "docs", "docs_to_90", "wall_s", "browser_pages",
           "useful_renders", "dangerous", "changed")


def _lfj(counts: dict[str, int] | None) -> str:
    if not counts:
        return "—"
    return f"{counts['link']}/{counts['form']}/{counts['js']}"


def rows(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for site in results:
        if "crawls" not in site:
            continue
        truth = site.get("truth")
        for crawl in site["crawls"]:
            if "found" not in crawl:
                out.append({"site": site["name"], "crawler": crawl["crawler"],
                            "truth l/f/j": _lfj(truth), "found l/f/j": "error"}
                           | {k: "—" for k in COLUMNS[4:]})
                continue
            found = crawl["found"]
            out.append({
                "site": site["name"], "crawler": crawl["crawler"], "truth l/f/j": _lfj(truth),
                "found l/f/j": _lfj(found), "found": f"{found['total']}/{truth['total']}",
                "allowed": f"{found['allowed']}/{truth['allowed']}",
                "own_pages": None if crawl.get("own_pages") is None
                else f"{crawl['own_pages']}/{truth['total']}",
                "downloads": crawl["downloads"], "requests": crawl["requests"],
                "req_to_90": crawl["requests_to_90"], "docs": crawl.get("documents"),
                "docs_to_90": crawl.get("documents_to_90"), "wall_s": crawl["wall_seconds"],
                "browser_pages": crawl["browser_pages"],
                "useful_renders": crawl.get("useful_renders"), "dangerous": crawl["dangerous"],
                "changed": len(crawl["state_changes"]) if "state_changes" in crawl else None})
    return out


def _cells(table_rows: list[dict[str, Any]]) -> list[list[str]]:
    return [["—" if r.get(k) is None else str(r.get(k)) for k in COLUMNS] for r in table_rows]


def table(results: list[dict[str, Any]]) -> str:
    cells = _cells(rows(results))
    widths = [max(len(k), *(len(c[i]) for c in cells)) if cells else len(k)
              for i, k in enumerate(COLUMNS)]
    lines = ["  ".join(k.rjust(w) for k, w in zip(COLUMNS, widths, strict=True))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(c, widths, strict=True)) for c in cells]
    lines += [f"{s['name']}: {s.get('skipped') or s.get('error')}" for s in results
              if "crawls" not in s]
    return "\n".join(lines)


#: the bars of issue 24 (JavaScript as real sites use it), read from one run
JS_SHARE, RENDER_RATIO, WALL_RATIO = 0.9, 1.2, 0.5


def _crawl(site: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((c for c in site.get("crawls", []) if c["crawler"] == name and "found" in c),
                None)


def bars(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Issue 24's bars per site, for ``hwdla`` against ``naive-browser`` of the same run
    (sites missing either are left out):

    * JS-only units found ≥ the naive browser's and ≥ :data:`JS_SHARE` of the truth's (the
      recall of the render decision, scored from the server's log);
    * browser pages ≤ :data:`RENDER_RATIO` × the useful ones (``useful / browser pages`` is
      the decision's precision; no browser page meets it);
    * wall time ≤ :data:`WALL_RATIO` × the naive browser's;
    * no dangerous request."""
    out = []
    for site in results:
        hw, nb = _crawl(site, "hwdla"), _crawl(site, "naive-browser")
        if hw is None or nb is None:
            continue
        truth = site["truth"]["js"]
        js, js_nb = hw["found"]["js"], nb["found"]["js"]
        pages, useful = hw["browser_pages"] or 0, hw.get("useful_renders") or 0
        ratio = hw["wall_seconds"] / nb["wall_seconds"] if nb["wall_seconds"] else None
        out.append({
            "site": site["name"], "js": js, "js_naive_browser": js_nb, "js_truth": truth,
            "js_met": js >= js_nb and js >= JS_SHARE * truth,
            "browser_pages": pages, "useful": useful,
            "precision": round(useful / pages, 2) if pages else None,
            "renders_met": pages <= RENDER_RATIO * useful,
            "wall": hw["wall_seconds"], "wall_naive_browser": nb["wall_seconds"],
            "wall_ratio": None if ratio is None else round(ratio, 2),
            "wall_met": ratio is not None and ratio <= WALL_RATIO,
            "dangerous": hw["dangerous"], "dangerous_met": hw["dangerous"] == 0})
    return out


def _bars_markdown(results: list[dict[str, Any]]) -> list[str]:
    got = bars(results)
    if not got:
        return []

    def mark(ok: bool) -> str:
        return "met" if ok else "**not met**"

    md = ["", "## Issue 24's bars (hwdla against the naive browser of this run)", "",
          f"JS-only units: hwdla's ≥ the naive browser's and ≥ {JS_SHARE:.0%} of the truth's "
          "(the recall of the decision to render, scored from the server's log); browser "
          f"pages ≤ {RENDER_RATIO}× the useful ones (`useful / browser pages` is its "
          f"precision); wall time ≤ {WALL_RATIO}× the naive browser's; no dangerous request.",
          "", "| site | JS-only hwdla / naive browser / truth | | useful / browser pages "
          "(precision) | | wall s hwdla / naive browser (ratio) | | dangerous |",
          "|---|---|---|---|---|---|---|---|"]
    for b in got:
        precision = "—" if b["precision"] is None else f"{b['precision']:.2f}"
        ratio = "—" if b["wall_ratio"] is None else f"{b['wall_ratio']:.2f}"
        md.append(f"| {b['site']} | {b['js']} / {b['js_naive_browser']} / {b['js_truth']} | "
                  f"{mark(b['js_met'])} | {b['useful']} / {b['browser_pages']} ({precision}) | "
                  f"{mark(b['renders_met'])} | {b['wall']:.1f} / "
                  f"{b['wall_naive_browser']:.1f} ({ratio}) | {mark(b['wall_met'])} | "
                  f"{b['dangerous']} |")
    return md


def markdown(results: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    md = ["# Real-site benchmark", "",
          "Third-party web apps installed from PyPI, npm and Debian, served on 127.0.0.1 behind "
          "a logging reverse proxy, each crawled by three crawlers from a fresh copy of its "
          "data: `naive` (the spider a Scrapy user writes: same-host links, each form once "
          "with its defaults), `naive-browser` (the same, every page in Chromium) and `hwdla` "
          "(`scrapy crawl hwdla` with its defaults); and, when `--crawlers` names it, the "
          "peer `blackwidow`: Black Widow (IEEE S&P 2021), the research crawler, unchanged, "
          "headless in Chromium, killed at the time cap (it fills forms with attack strings "
          "and logs in where it can). The truth comes from each app's data; "
          "what a crawl found and its dangerous requests come from the server's log. Run it "
          "with `hiddenweb bench realsites` (code: `hiddenweb/bench/realsites/`; each app's "
          "module says what its units and dangerous requests are).", "",
          f"Latest run: `{meta['command']}` — {meta['date']}, {meta['machine']}; measured "
          f"code: {meta['code']}"
          + (f" (scored again at {meta['rescored']})" if meta.get("rescored") else "") + ".",
          "",
          f"Caps per crawl: `CLOSESPIDER_PAGECOUNT={meta['caps']['pages']}`, "
          f"`CLOSESPIDER_TIMEOUT={meta['caps']['seconds']}` s (a crawl still running a minute "
          f"later is killed). Total time {meta['total_seconds']:.0f} s.", "",
          "Truth and found are split by kind: **l**ink-reachable / **f**orm-only / "
          "**j**s-only units. `allowed`: units the safety policy allows reaching. "
          "`own_pages`: units whose own page the crawl read (a tracker's issue or ticket "
          "page, with its messages, where its listings already show its id; — where a unit "
          "is found only on its own page). "
          "`downloads`: the crawler's responses (— for the peer, which keeps no such "
          "count); `requests`: what the server received "
          "(with Chromium, page resources and XHR too); `req_to_90`: requests until 90 % of "
          "what the crawl finally found; `docs`, `docs_to_90`: the same without page resources "
          "(styles, scripts, images, fonts), comparable across crawlers; `browser_pages`: pages "
          "loaded in Chromium (— for the peer: it loads every page in Chromium and counts "
          "none); `useful_renders` (hwdla): renders that added a link, frame, form "
          "or same-site request that what plain HTTP reads of the page lacked (its plain copy, "
          "or for a page sent straight to Chromium the document Chromium received; the pages "
          "known to need the browser; the render gate's stats); `dangerous`: "
          "requests that log in, sign up, post, edit, delete or otherwise change state, "
          "counted from the server's log; `changed`: tables and files of the app's data that "
          "differ after the crawl (listed below).", "",
          "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    md += ["| " + " | ".join(c) + " |" for c in _cells(rows(results))]
    md += _bars_markdown(results)
    crawls = [c for site in results for c in site.get("crawls", [])]
    left = sorted({p for c in crawls for p in c.get("leftover_pids", [])})
    md += ["", f"Processes left running after the crawls (apps, proxies, crawlers, checked by "
               f"PID and process group after each of the {len(crawls)} crawls): "
               f"{', '.join(map(str, left)) if left else 'none'}."]
    md += ["", "## Sites", ""]
    for s in results:
        if "crawls" in s:
            md.append(f"- **{s['name']}** ({s['origin']}: {', '.join(s['pins'])}): {s['hidden']}")
            for c in s["crawls"]:
                if c.get("dangerous_by_reason"):
                    reasons = ", ".join(f"{k} ×{v}" for k, v in
                                        sorted(c["dangerous_by_reason"].items()))
                    md.append(f"  - {c['crawler']} dangerous: {reasons}")
                if c.get("state_changes"):
                    shown = "; ".join(c["state_changes"][:6])
                    more = len(c["state_changes"]) - 6
                    md.append(f"  - {c['crawler']} changed: {shown}"
                              + (f"; and {more} more" if more > 0 else ""))
                if c.get("error"):
                    md.append(f"  - {c['crawler']} error: {c['error']}")
                elif c.get("returncode"):
                    md.append(f"  - {c['crawler']} exited with {c['returncode']} "
                              f"(finish reason {c.get('finish_reason')})")
        else:
            md.append(f"- **{s['name']}**: {s.get('skipped') or s.get('error')}")
    return "\n".join(md) + "\n"


def figure(results: list[dict[str, Any]], path: Path) -> Path | None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sites = [s for s in results if s.get("crawls")]
    if not sites:
        return None
    cols = min(3, len(sites))
    nrows = (len(sites) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(5 * cols, 3.6 * nrows), squeeze=False)
    for ax, site in zip(axes.flat, sites, strict=False):
        for crawl in site["crawls"]:
            curve = crawl.get("curve") or []
            if curve:
                xs = [0] + [p[1] for p in curve]  # documents: page resources left out
                ys = [0] + [p[-1] for p in curve]
                ax.step(xs, ys, where="post", label=crawl["crawler"])
        ax.axhline(site["truth"]["total"], color="grey", linestyle=":", linewidth=1,
                   label="truth")
        ax.set_title(site["name"])
        ax.set_xlabel("documents the server sent (downloads)")
        ax.set_ylabel("units found")
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(sites):]:
        ax.set_visible(False)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
