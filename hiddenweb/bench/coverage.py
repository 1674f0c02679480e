"""The coverage benchmark: crawl a generated site with a strategy, compare with its ground truth.

``hiddenweb bench coverage --pages N --seed S --strategy NAME`` serves the proving ground's site
in a separate process (so the server never competes with the crawler for the GIL), runs
``scrapy crawl hwdla`` in another with the strategy's settings and a download budget, follows the
items it writes (a progress bar of pages and hidden pages found), and scores them against
``SiteModel.truth()`` with ``SiteModel.resolve()``.

Strategies (:data:`STRATEGIES`) are sets of Scrapy settings and spider arguments, so every one
runs through the same spider: ``bfs`` and ``dfs`` are Scrapy's own scheduler with
``DEPTH_PRIORITY`` and FIFO/LIFO queues; ``hwdla`` is the project's default, the DLA scheduler
(``hwdla-notransfer``: its ablation without learning shared between pages); ``oracle`` knows
the truth and takes only the actions on the chains that lead to hidden pages (the lower bound
of downloads).

Metrics (``--json`` keys): ``strategy``, ``pages``, ``seed``, ``pages_downloaded`` (responses
and failed downloads, robots.txt excluded), ``hidden_total`` (hidden truth pages a plain-HTTP
crawler can reach: pages that need a browser are counted separately), ``hidden_found``,
``hidden_coverage``, ``downloads_to_50``, ``downloads_to_90`` (null when not reached),
``downloads_to_final`` (the download at which the run's final coverage, hidden and
browser-only, was first reached: ``pages_downloaded`` over it is what the crawl spent after it
had found everything hidden it would find), ``downloads_to_last_page`` (the download at which
the last page with content not seen before, public or hidden, arrived: what a crawl that reads
the whole site cannot stop before), ``estimate_error`` (the crawl's estimate of the hidden
pages left against the truth at 25, 50 and 75 % of its downloads: :func:`estimate_error`),
``finish_reason`` (Scrapy's; ``hiddenweb_exhausted`` when the stopping rule ended it),
``blind_floor_to_90`` (the expected downloads to 90 % for a crawler that knows everything but
where the forms are, :mod:`hiddenweb.bench.floor`: the same for every strategy),
``order_floor_to_90`` (this run's own floor: what it would have needed reading the public pages
in the order it did, had every other download been a new hidden page;
:func:`~hiddenweb.bench.floor.order_floor_to_90`), ``public_read_to_90`` (public pages read
by the 90 % mark),
``trap_submissions``, ``wall_seconds``, ``pages_per_second``, plus ``budget``,
``repeat`` and ``downloads_to_90_runs`` (``--repeat N``: the row is the median of N runs,
:func:`median_run`),
``hidden_total_with_browser``, ``robots_violations``, ``offsite_requests``, ``browser``
(the crawl's ``HIDDENWEB_BROWSER``), ``chromium_peak_rss_mb`` (peak summed RSS of the crawl's
Chromium processes, sampled every 0.5 s; 0 when no browser ran), ``code`` (the checkout the
crawls ran from and its commit, :mod:`hiddenweb.bench.revision`).

The render decision (issue 24; :func:`render_decision`, from the lab knob ``render_trace``):
``renders`` (pages rendered, as the render gate judged them: again after plain HTTP, or
straight in Chromium against the document it received),
``renders_needed`` (public pages the crawl read whose links or forms a script builds:
:meth:`SiteModel.script_built_pages`), ``renders_hit`` (rendered and needed),
``render_precision`` (hit / renders), ``render_recall`` (hit / needed), and
``renders_useful`` (those the gate judged to add something, its own verdict).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hiddenweb.bench.floor import blind_floor_to_90, order_floor_to_90
from hiddenweb.bench.procmem import ChromiumRSS
from hiddenweb.bench.provingground.site import SiteModel
from hiddenweb.bench.revision import code_revision
from hiddenweb.config import setting_args

PROJECT_DIR = Path(__file__).resolve().parent.parent.parent

COMMON_SETTINGS = {
    "CONCURRENT_REQUESTS": "16",
    "CONCURRENT_REQUESTS_PER_DOMAIN": "16",
    "LOG_LEVEL": "INFO",
    "LOGSTATS_INTERVAL": "10",
    "HIDDENWEB_KEEP_TOKENS": "1",  # items are scored against the truth, which checks CSRF tokens
}

SCRAPY_SCHEDULER = "scrapy.core.scheduler.Scheduler"

STRATEGIES: dict[str, dict[str, Any]] = {
    "bfs": {"settings": {
        "SCHEDULER": SCRAPY_SCHEDULER,
        "DEPTH_PRIORITY": "1",
        "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
        "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
    }},
    "dfs": {"settings": {
        "SCHEDULER": SCRAPY_SCHEDULER,
        "DEPTH_PRIORITY": "-1",
        "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleLifoDiskQueue",
        "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.LifoMemoryQueue",
    }},
    # The project's default: the DLA scheduler (hiddenweb.dla), learning shared by kinds.
    "hwdla": {"settings": {"SCHEDULER": "hiddenweb.dla.scheduler.DLAScheduler"}},
    # Ablation: one automaton per page, nothing shared between pages.
    "hwdla-notransfer": {"settings": {"SCHEDULER": "hiddenweb.dla.scheduler.DLAScheduler",
                                      "HIDDENWEB_LAB": {"dla_transfer": False}}},
    "oracle": {"settings": {"SCHEDULER": SCRAPY_SCHEDULER, "DEPTH_PRIORITY": "1",
                            "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue"},
               "oracle": True},
}


@dataclass
class Truth:
    """The ground truth of a site, indexed for scoring."""

    pages: dict[str, dict]
    hidden: set[str] = field(init=False)
    hidden_browser: set[str] = field(init=False)

    def __post_init__(self) -> None:
        self.hidden = {k for k, p in self.pages.items()
                       if p["hidden"] and not p.get("needs_browser")}
        self.hidden_browser = {k for k, p in self.pages.items()
                               if p["hidden"] and p.get("needs_browser")}

    @classmethod
    def of(cls, site: SiteModel) -> Truth:
        return cls({page["key"]: page for page in site.truth()})


@contextmanager
def serve_site(pages: int, seed: int, extra: list[str] | None = None) -> Iterator[str]:
    """Serve the site in a child process; yield its base URL; stop it afterwards."""
    cmd = [sys.executable, "-m", "hiddenweb.cli", "site", "serve", "--pages", str(pages),
           "--seed", str(seed), "--port", "0", *(extra or [])]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, cwd=PROJECT_DIR)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        if not line.startswith("Serving "):
            raise RuntimeError(f"site server did not start: {line!r}")
        yield line.split()[1].rstrip("/")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def server_stats(base_url: str) -> dict:
    with urllib.request.urlopen(f"{base_url}/__hw/stats", timeout=10) as resp:
        return json.loads(resp.read())


def crawl_command(strategy: str, seed_url: str, out: Path, budget: int,
                  truth_path: Path | None, extra_settings: dict[str, str] | None = None
                  ) -> list[str]:
    spec = STRATEGIES[strategy]
    settings = {**COMMON_SETTINGS, **spec.get("settings", {}),
                "CLOSESPIDER_PAGECOUNT": str(budget),
                # a benchmark never writes into the user's visit store
                "HIDDENWEB_STORE_PATH": str(out.with_suffix(".db")),
                "HIDDENWEB_STATS_FILE": str(out.with_suffix(".stats.json")),
                **(extra_settings or {})}
    cmd = [sys.executable, "-m", "scrapy", "crawl", spec.get("spider", "hwdla"),
           "-a", f"seed={seed_url}/", "-O", f"{out}:jsonlines"]
    if spec.get("oracle"):
        cmd += ["-a", f"oracle={truth_path}"]
    for key, value in spec.get("spider_args", {}).items():
        cmd += ["-a", f"{key}={value}"]
    cmd += setting_args(settings)
    return cmd


def read_items(path: Path) -> list[dict]:
    if not path.exists():
        return []
    items = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.endswith("\n"):
                items.append(json.loads(line))
    return items


def resolve_item(site: SiteModel, item: dict) -> str | None:
    form = (item.get("reached_by") or {}).get("form")
    data = list(form["fields"].items()) if form and item.get("method") == "POST" else None
    return site.resolve(item.get("method") or "GET", item["url"], data)


def score(site: SiteModel, truth: Truth, items: list[dict],
          downloads: int | None = None) -> dict[str, Any]:
    """Coverage figures from the items, in download order.

    The x axis is the item's ``downloads`` (the crawl's download count when it arrived), so pages
    the spider downloaded but did not emit (repeats) still count; ``downloads`` is the crawl's
    final count (its stats), else the last item's.
    """
    found: set[str] = set()
    found_browser: set[str] = set()
    curve: list[tuple[int, int, int]] = []  # (downloads, public found, hidden found)
    public_found: set[str] = set()
    public_order: list[int] = []  # public page ids, first reads, in download order
    public_to_90: int | None = None
    to_50 = to_90 = None
    to_final = 0  # the download at which the last hidden page (either kind) was first found
    to_last_page = 0  # ... and the last page of any kind with content not seen before
    contents: set[str] = set()
    total = len(truth.hidden)
    n = 0
    for index, item in enumerate(items, start=1):
        n = item.get("downloads") or index
        key = resolve_item(site, item) if item.get("status") == 200 else None
        if key is not None and item.get("fingerprint") not in contents:
            contents.add(item.get("fingerprint"))
            to_last_page = n
        if key in truth.hidden:
            to_final = n if key not in found else to_final
            found.add(key)
        elif key in truth.hidden_browser:
            to_final = n if key not in found_browser else to_final
            found_browser.add(key)
        elif key is not None and key in truth.pages and key not in public_found:
            public_found.add(key)
            head, _, page = key.partition("/")
            if head == "p" and page.isdigit():
                public_order.append(int(page))
        if total and to_50 is None and len(found) >= 0.5 * total:
            to_50 = n
        if total and to_90 is None and len(found) >= 0.9 * total:
            to_90 = n
            public_to_90 = len(public_found)
        curve.append((n, len(public_found), len(found)))
    own = order_floor_to_90(site, truth.hidden, public_order)
    return {
        "pages_downloaded": max(downloads or 0, n),
        "hidden_total": total,
        "hidden_found": len(found),
        "hidden_coverage": round(len(found) / total, 4) if total else None,
        "hidden_total_with_browser": total + len(truth.hidden_browser),
        "hidden_found_browser_only": len(found_browser),
        "downloads_to_50": to_50,
        "downloads_to_90": to_90,
        "downloads_to_final": to_final or None,
        "downloads_to_last_page": to_last_page or None,
        "public_read_to_90": public_to_90,
        "order_floor_to_90": (own or {}).get("floor"),
        "curve": curve,
    }


def run(pages: int, seed: int, strategy: str, budget: int | None = None,
        extra_settings: dict[str, str] | None = None, progress: bool = True,
        workdir: Path | None = None, trace: bool = True) -> dict[str, Any]:
    """Run one strategy on one generated site; return the metrics (see module docstring;
    ``trace``: keep the estimate's trace for ``estimate_error``)."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; choose from {sorted(STRATEGIES)}")
    site = SiteModel(pages=pages, seed=seed)
    truth = Truth.of(site)
    budget = 3 * len(truth.pages) if budget is None else budget  # 0: no budget
    tmp = Path(workdir or tempfile.mkdtemp(prefix="hiddenweb-bench-"))
    tmp.mkdir(parents=True, exist_ok=True)
    truth_path = tmp / "truth.jsonl"
    with truth_path.open("w", encoding="utf-8") as fh:
        for page in truth.pages.values():
            fh.write(json.dumps(page) + "\n")
    out = tmp / f"items-{strategy}.jsonl"
    out.unlink(missing_ok=True)
    log = tmp / f"crawl-{strategy}.log"
    trace_path = out.with_suffix(".estimate.jsonl")
    if trace:
        extra_settings, trace_path = with_estimate_trace(extra_settings, trace_path)
    trace_path.unlink(missing_ok=True)
    extra_settings, render_path = with_lab(extra_settings, "render_trace",
                                           out.with_suffix(".renders.jsonl"))
    render_path.unlink(missing_ok=True)
    with serve_site(pages, seed) as base_url:
        cmd = crawl_command(strategy, base_url, out, budget, truth_path, extra_settings)
        env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "hiddenweb.settings"}
        started = time.monotonic()
        with log.open("w") as log_fh:
            proc = subprocess.Popen(cmd, cwd=PROJECT_DIR, env=env, stdout=log_fh,
                                    stderr=subprocess.STDOUT)
            with ChromiumRSS(proc.pid) as chromium:
                _follow(proc, out, site, truth, progress, strategy)
        wall = time.monotonic() - started
        if proc.returncode != 0:
            raise RuntimeError(f"crawl failed (exit {proc.returncode}); log: {log}")
        stats = server_stats(base_url)
    items = read_items(out)
    crawl_stats = json.loads(out.with_suffix(".stats.json").read_text())
    result = {"strategy": strategy, "pages": pages, "seed": seed, "budget": budget,
              **score(site, truth, items, crawl_stats.get("hiddenweb/downloads"))}
    result["blind_floor_to_90"] = blind_floor_to_90(site, truth.hidden)["mean"]
    traps = stats.get("trap_submissions", {})
    result.update({
        "trap_submissions": sum(traps.values()),
        "trap_submissions_by_form": traps,
        "robots_violations": stats.get("robots_disallowed_fetches", 0),
        "offsite_requests": stats.get("offsite", 0),
        "browser": (extra_settings or {}).get("HIDDENWEB_BROWSER", "auto"),
        "chromium_peak_rss_mb": chromium.peak_mb,
        "chromium_peak_pss_mb": chromium.peak_pss_mb,
        "wall_seconds": round(wall, 2),
        "pages_per_second": round(result["pages_downloaded"] / wall, 1) if wall else None,
        "crawl_stats": {k: v for k, v in crawl_stats.items() if k.startswith("hiddenweb/")},
        "finish_reason": crawl_stats.get("finish_reason"),
        "items_path": str(out),
        "log_path": str(log),
        "code": code_revision(PROJECT_DIR),
        "estimate_error": estimate_error(trace_path, result),
        **render_decision(site, items, render_path),
    })
    return result


def render_decision(site: SiteModel, items: list[dict], trace: Path) -> dict[str, Any]:
    """The render decision against the truth (module docstring): which pages the crawl read
    over plain HTTP were rendered again (``trace``: the lab knob ``render_trace``), and which
    of them a render shows more of (:meth:`SiteModel.script_built_pages`)."""
    rendered: set[str] = set()
    useful = 0
    if trace.exists():
        with trace.open(encoding="utf-8") as fh:
            for line in fh:
                if line.endswith("\n"):
                    entry = json.loads(line)
                    key = site.resolve("GET", entry["url"])
                    if key is not None and key not in rendered:
                        rendered.add(key)
                        useful += bool(entry["useful"])
    read = {site.resolve("GET", item["url"]) for item in items
            if item.get("status") == 200 and item.get("method", "GET") == "GET"}
    needed = site.script_built_pages() & read
    hit = len(rendered & needed)
    return {"renders": len(rendered), "renders_needed": len(needed), "renders_hit": hit,
            "renders_useful": useful,
            "render_precision": round(hit / len(rendered), 3) if rendered else None,
            "render_recall": round(hit / len(needed), 3) if needed else None}


def with_estimate_trace(extra: dict[str, str] | None, trace: Path
                        ) -> tuple[dict[str, str], Path]:
    """``extra`` settings with the lab knob ``estimate_trace`` (``trace`` unless they set one),
    and the trace file the crawl will write."""
    return with_lab(extra, "estimate_trace", trace)


def with_lab(extra: dict[str, str] | None, knob: str, path: Path
             ) -> tuple[dict[str, str], Path]:
    """``extra`` settings with the lab knob ``knob`` set to ``path`` unless they set it, and
    the file the crawl will write."""
    extra = dict(extra or {})
    lab = extra.get("HIDDENWEB_LAB") or {}
    lab = json.loads(lab) if isinstance(lab, str) else dict(lab)
    lab.setdefault(knob, str(path))
    extra["HIDDENWEB_LAB"] = json.dumps(lab)
    return extra, Path(lab[knob])


def estimate_error(trace: Path, result: dict[str, Any]) -> list[dict[str, Any]]:
    """The crawl's estimate of the hidden pages left (:class:`hiddenweb.estimate.HiddenMass`,
    its trace) against the truth, at 25, 50 and 75 % of the crawl's downloads: ``true_left``
    (hidden truth not yet found), ``est_left`` and its interval ``low`` .. ``high``."""
    if not trace.exists():
        return []  # not traced (the demo), or the crawl made no estimate
    with trace.open(encoding="utf-8") as fh:
        lines = [json.loads(line) for line in fh if line.endswith("\n")]
    total, curve, out = result["hidden_total"], result["curve"], []
    for share in (0.25, 0.5, 0.75):
        at = round(share * result["pages_downloaded"])
        found = max((h for n, _, h in curve if n <= at), default=0)
        est = [line for line in lines if line["downloads"] <= at]
        last = est[-1] if est else {"left": 0.0, "low": 0.0, "high": 0.0}
        out.append({"share": share, "downloads": at, "true_left": total - found,
                    "est_left": last["left"], "low": last["low"], "high": last["high"]})
    return out


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The median of repeated runs of one strategy, by ``downloads_to_90`` (a run that never
    reached 90 % counts as the worst; with an even count, the lower median): that run's
    figures, with ``repeat`` (how many runs) and ``downloads_to_90_runs`` (all of them, in
    ascending order, ``None`` last). With 16 requests in flight the answers come back in a
    different order each run, so one run of a 10^3-page site can be off by up to 10 %."""
    if not runs:
        raise ValueError("median_run needs at least one run")

    def key(run: dict[str, Any]) -> float:
        to_90 = run.get("downloads_to_90")
        return float("inf") if to_90 is None else float(to_90)

    ordered = sorted(runs, key=key)
    median = dict(ordered[(len(ordered) - 1) // 2])
    median["repeat"] = len(runs)
    median["downloads_to_90_runs"] = [run.get("downloads_to_90") for run in ordered]
    return median


def _follow(proc: subprocess.Popen, out: Path, site: SiteModel, truth: Truth, progress: bool,
            strategy: str) -> None:
    """Wait for the crawl; show its downloads, pages and hidden pages found (the units of
    :mod:`hiddenweb.progress`) as its items are written."""
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(desc=f"{strategy}", unit="download", file=sys.stderr, dynamic_ncols=True)
    seen = downloads = 0
    hidden: set[str] = set()
    offset = 0
    buffer = ""
    while True:
        done = proc.poll() is not None
        if bar is not None and out.exists():
            with out.open(encoding="utf-8") as fh:
                fh.seek(offset)
                chunk = fh.read()
                offset = fh.tell()
            buffer += chunk
            *lines, buffer = buffer.split("\n")
            for line in lines:
                item = json.loads(line)
                seen += 1
                downloads = max(downloads, item.get("downloads") or seen)
                key = resolve_item(site, item) if item.get("status") == 200 else None
                if key in truth.hidden:
                    hidden.add(key)
            bar.n = downloads
            bar.set_postfix(pages=seen, hidden=f"{len(hidden)}/{len(truth.hidden)}",
                            refresh=False)
            bar.refresh()
        if done:
            break
        time.sleep(0.5)
    if bar is not None:
        bar.close()


def new_figure() -> tuple[Any, Any]:
    """A figure and its axes, drawn off-screen (Agg)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(6.4, 4.2))


def save_figure(fig: Any, ax: Any, path: Path, xlabel: str, ylabel: str, title: str,
                grid: bool = True) -> None:
    """Label, lay out, write as PNG and close (every benchmark figure looks the same)."""
    import matplotlib.pyplot as plt

    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if grid:
        ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot(results: list[dict], path: Path, title: str = "") -> None:
    """Hidden vs PI pages discovered, one line per strategy (HWDLA paper, fig. 5)."""
    fig, ax = new_figure()
    for result in results:
        curve = result["curve"]
        ax.plot([c[1] for c in curve], [c[2] for c in curve], label=result["strategy"])
    save_figure(fig, ax, path, "public (PI) pages discovered", "hidden pages discovered",
                title or "Hidden vs PI pages discovered (HWDLA fig. 5)")
