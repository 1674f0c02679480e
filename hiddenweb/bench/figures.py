"""The HWDLA paper's figures from coverage-benchmark runs (``bench coverage --figures DIR``).

* ``fig4-precision-recall.png``: for each threshold θ over the DLA's action scores
  (``action_score`` of the items: the automata's score when the action was chosen), an action is
  predicted to lead to a hidden page when its score ≥ θ; precision = predicted actions that
  brought a new hidden page / predicted actions, recall = those / all actions that brought a new
  hidden page (paper fig. 4). Needs every download as an item: the bench sets
  ``HIDDENWEB_EMIT_REPEATS`` when figures are asked for.
* ``fig5-coverage.png``: hidden vs PI pages discovered (:func:`hiddenweb.bench.coverage.plot`).
* ``fig6-depth.png``: hidden pages found by depth from the seed, against the truth (paper fig. 6).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from hiddenweb.bench.coverage import (
    Truth,
    new_figure,
    plot,
    read_items,
    resolve_item,
    save_figure,
)
from hiddenweb.bench.provingground.site import SiteModel


def precision_recall(site: SiteModel, truth: Truth, items: list[dict]
                     ) -> list[tuple[float, float, float]]:
    """(θ, precision, recall) for every distinct action score, highest θ first."""
    scored: list[tuple[float, bool]] = []
    seen: set[str] = set()
    for item in items:
        score = item.get("action_score")
        if score is None:
            continue
        key = resolve_item(site, item) if item.get("status") == 200 else None
        hit = key in truth.hidden and key not in seen
        if hit:
            seen.add(key)
        scored.append((float(score), hit))
    positives = sum(hit for _, hit in scored)
    if not scored or not positives:
        return []
    scored.sort(key=lambda pair: -pair[0])
    curve, tp = [], 0
    for n, (score, hit) in enumerate(scored, start=1):
        tp += hit
        if n == len(scored) or scored[n][0] != score:
            curve.append((score, tp / n, tp / positives))
    return curve


def write(results: list[dict], site: SiteModel, truth: Truth, directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    fig4, fig5, fig6 = (directory / name for name in (
        "fig4-precision-recall.png", "fig5-coverage.png", "fig6-depth.png"))
    plot(results, fig5)
    items = {r["strategy"]: read_items(Path(r["items_path"])) for r in results}

    fig, ax = new_figure()
    for result in results:
        curve = precision_recall(site, truth, items[result["strategy"]])
        if curve:
            ax.plot([c[2] for c in curve], [c[1] for c in curve], marker=".",
                    label=result["strategy"])
    save_figure(fig, ax, fig4, "recall", "precision",
                "Precision-recall over the automata's thresholds (HWDLA fig. 4)")

    total = Counter(truth.pages[k]["depth"] for k in truth.hidden)
    depths = sorted(total)
    fig, ax = new_figure()
    width = 0.8 / (len(results) + 1)
    ax.bar([d - 0.4 + width / 2 for d in depths], [total[d] for d in depths], width,
           label="truth", color="lightgrey")
    for i, result in enumerate(results, start=1):
        found = {resolve_item(site, it) for it in items[result["strategy"]]
                 if it.get("status") == 200} & truth.hidden
        by_depth = Counter(truth.pages[k]["depth"] for k in found)
        ax.bar([d - 0.4 + width * (i + 0.5) for d in depths], [by_depth[d] for d in depths],
               width, label=result["strategy"])
    save_figure(fig, ax, fig6, "depth from the seed (actions)", "hidden pages found",
                "Hidden pages found by depth (HWDLA fig. 6)", grid=False)
    return [fig5, fig4, fig6]
