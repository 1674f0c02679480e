"""``hiddenweb bench find``: the lost-sheep paper's real-site experiment on the real-site corpus.

Goodwin, "A solution to the exact match on rare item searches", section "Real web sites": on
420 municipal sites the target is the mail-record page, the query the most common words of 10
held-out target pages; LS2F S=100 T=.75 finds it in 84 % of the sites with D = 25.35, SIM in
28 % with 84.03. Rebuilt here, generically (no site name or path in any rule):

1. **Survey** (:func:`survey`): a plain breadth-first crawl of the site from its seed, in
   process, with the spider's own link view (its link extractor, same-host scope, the safety
   policy's verdict on every link, robots.txt): every page's URL, depth and words (the stems
   find mode reads, :func:`hiddenweb.lostsheep.find.page_words`).
2. **Kinds** (:class:`Templates`): a page's kind is its URL template. A path segment or query
   value containing a digit is a variable; so is every value of a path position (after the same
   prefix) with :data:`VARIABLE_AT` or more distinct values in the survey, and of a query key
   some value of which has a digit or with as many distinct values that are also at least
   :data:`IDENTIFIER_SHARE` of its URLs (an identifier, not a kind selector such as an action
   name that many URLs share).
3. **Targets and queries** (:func:`pick_targets`): a target is a page at depth >= ``min_depth``
   whose kind is *rare* (at least 3 pages: the target and 2 held out; at most ``rare`` of the
   surveyed pages) and which has words of its own. Targets are taken round-robin over the rare
   kinds (seeded). Its query is the ``query_words`` most common stems (by the number of pages
   holding them, then by count) of up to 10 *held-out* pages of the same kind, the target
   excluded, leaving out the site's boilerplate (stems on half of the surveyed pages or more).
4. **Finds**: ``scrapy crawl hwdla -a seed=… -a query=… -a find=1 -s
   HIDDENWEB_FIND_STRATEGY=…`` per target and strategy, in a subprocess, same server.

A query made of held-out pages can only say what *kind* of page is wanted (as the paper's,
where each site has one mail-record page): a find is a hit (``accuracy``) when the page it
returns is of the target's kind; ``exact`` is the share that returned the target itself. ``d``
is the paper's D (downloads, the start page excluded, ``lostsheep.d`` of the item).
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import shlex
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter, deque
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urldefrag, urlsplit

from scrapy.http import Response, TextResponse
from scrapy.responsetypes import responsetypes
from scrapy.settings import Settings
from w3lib.url import canonicalize_url

from hiddenweb.bench.realsites.crawlers import variant
from hiddenweb.lostsheep.find import FIND_STRATEGIES, find_links, page_words
from hiddenweb.lostsheep.text import analyze

PROJECT_DIR = Path(__file__).resolve().parents[3]
VARIABLE_AT = 5  # distinct values at a path position / of a query key: an identifier ...
IDENTIFIER_SHARE = 0.25  # ... when they are also this share of its URLs (not a kind selector)
HELD_OUT = 10  # the paper's "10 held-out target pages"
BOILERPLATE = 0.5  # stems on this share of the surveyed pages or more never make a query
_DIGIT = re.compile(r"\d")


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclass
class Page:
    url: str  # canonical final URL
    depth: int
    words: list[str]


class _LinkView:
    """What :func:`~hiddenweb.lostsheep.find.find_links` needs of a spider: the hwdla spider's
    link extractor, same-host scope and safety policy (project settings)."""

    def __init__(self, seed: str) -> None:
        from hiddenweb.safety import SafetyPolicy
        from hiddenweb.spiders.hwdla import link_extractor

        settings = Settings()
        settings.setmodule("hiddenweb.settings", priority="project")
        self.host = urlsplit(seed).hostname
        self.link_extractor = link_extractor()
        self.safety = SafetyPolicy.from_settings(settings)

    def in_scope(self, url: str) -> bool:
        parts = urlsplit(url)
        return parts.scheme in ("http", "https") and parts.hostname == self.host

    def link_allowed(self, url: str, text: str, markup: dict[str, tuple[str, dict]]) -> bool:
        label, attrs = markup.get(url, ("", {}))
        return self.safety.link(url, f"{text} {label}", attrs).allowed


def _get(url: str, timeout: float = 20.0) -> Response | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as reply:
            body, final, headers = reply.read(4 << 20), reply.geturl(), dict(reply.headers)
    except (urllib.error.URLError, OSError, ValueError):
        return None
    cls = responsetypes.from_args(headers=headers, url=final, body=body)
    return cls(url=final, body=body, headers=headers)


def _robots(seed: str) -> Callable[[str], bool]:
    from protego import Protego

    parts = urlsplit(seed)
    reply = _get(f"{parts.scheme}://{parts.netloc}/robots.txt", timeout=10)
    if reply is None or reply.status != 200 or not isinstance(reply, TextResponse):
        return lambda url: True
    rules = Protego.parse(reply.text)
    return lambda url: rules.can_fetch(url, "*")


def canonical(url: str) -> str:
    return canonicalize_url(urldefrag(url)[0])


def survey(seed: str, max_pages: int = 400,
           tick: Callable[[int], None] | None = None) -> list[Page]:
    """A breadth-first crawl of ``seed`` (GET links only, the spider's link view, robots.txt
    obeyed), at most ``max_pages`` pages; each with its depth and words."""
    view, allowed = _LinkView(seed), _robots(seed)
    queue, queued = deque([(seed, 0)]), {canonical(seed)}
    pages: list[Page] = []
    seen_final: set[str] = set()
    while queue and len(pages) < max_pages:
        url, depth = queue.popleft()
        response = _get(url)
        if response is None or response.status >= 400:
            continue
        final = canonical(response.url)
        if final in seen_final:
            continue
        seen_final.add(final)
        pages.append(Page(final, depth, page_words(response, analyze)))
        if tick:
            tick(len(pages))
        for link, _ in find_links(view, response):  # type: ignore[arg-type]
            key = canonical(link)
            if key not in queued and allowed(link):
                queued.add(key)
                queue.append((link, depth + 1))
    return pages


class Templates:
    """URL templates (a page's kind) learned from the surveyed URLs (module docstring, 2)."""

    def __init__(self, urls: Iterable[str]) -> None:
        self.at: dict[tuple, Counter] = {}
        self.keys: dict[str, Counter] = {}
        for url in urls:
            segs, query = self._split(url)
            for i, seg in enumerate(segs):
                self.at.setdefault(tuple(segs[:i]), Counter())[seg] += 1
            for key, value in query:
                self.keys.setdefault(key, Counter())[value] += 1

    @staticmethod
    def variable(values: Counter | None) -> bool:
        """A query key that names things, not kinds: some value has a digit, or many distinct
        values that are also a good share of its URLs."""
        if not values or len(values) < 2:
            return False
        return any(_DIGIT.search(v) for v in values) or (
            len(values) >= VARIABLE_AT and len(values) >= IDENTIFIER_SHARE * sum(values.values()))

    @staticmethod
    def _split(url: str) -> tuple[list[str], list[tuple[str, str]]]:
        parts = urlsplit(url)
        segs = [("{n}" if _DIGIT.search(s) else s) for s in parts.path.split("/") if s]
        return segs, parse_qsl(parts.query, keep_blank_values=True)

    def _prefix(self, segs: list[str]) -> tuple:
        return tuple("*" if len(self.at.get(tuple(segs[:i]), ())) >= VARIABLE_AT else seg
                     for i, seg in enumerate(segs))

    def __call__(self, url: str) -> str:
        segs, query = self._split(url)
        path = "/" + "/".join(self._prefix(segs))
        qs = sorted((k, "*" if _DIGIT.search(v) or self.variable(self.keys.get(k)) else v)
                    for k, v in query)
        return path + ("?" + "&".join(f"{k}={v}" for k, v in qs) if qs else "")


@dataclass
class Target:
    url: str
    kind: str
    depth: int
    query: list[str]
    held_out: list[str] = field(default_factory=list)
    kind_size: int = 0


def pick_targets(pages: list[Page], n: int, *, min_depth: int = 2, rare: float = 0.1,
                 query_words: int = 5, seed: int = 0) -> tuple[list[Target], Templates]:
    """Up to ``n`` targets with their queries (module docstring, 3)."""
    rng = random.Random(seed)
    kinds = Templates(p.url for p in pages)
    members: dict[str, list[Page]] = {}
    for page in pages:
        members.setdefault(kinds(page.url), []).append(page)
    df = Counter(s for p in pages for s in set(p.words))
    boiler = {s for s, c in df.items() if c >= BOILERPLATE * len(pages)}
    limit = max(3, int(rare * len(pages)))
    pools = {}
    for kind, group in sorted(members.items()):
        if not 3 <= len(group) <= limit:
            continue
        pool = [p for p in group if p.depth >= min_depth and set(p.words) - boiler]
        if pool:
            rng.shuffle(pool)
            pools[kind] = pool
    order = sorted(pools)
    rng.shuffle(order)
    targets: list[Target] = []
    while len(targets) < n and any(pools.values()):
        for kind in order:
            if len(targets) >= n or not pools[kind]:
                continue
            page = pools[kind].pop()
            others = [p for p in members[kind] if p.url != page.url]
            held = rng.sample(others, min(HELD_OUT, len(others)))
            counts = Counter(s for p in held for s in set(p.words) if s not in boiler)
            total = Counter(s for p in held for s in p.words if s not in boiler)
            query = sorted(counts, key=lambda s: (-counts[s], -total[s], s))[:query_words]
            if query:
                targets.append(Target(page.url, kind, page.depth, query,
                                      [p.url for p in held], len(members[kind])))
    return targets, kinds


def sheep_reading(pages: list[Page], targets: list[Target], kinds: Templates,
                  settings: dict[str, str] | None = None) -> dict[str, float]:
    """What an LS2F sheep makes of the surveyed pages' text, per target's query (no label):
    the share of pages on which it quits within 8 words (``f <= 8``, the least a twofold
    S=100 sheep from ``B`` can score on misses), and its mean ``f`` on pages of the target's
    kind against the others. Diagnoses why the herder cannot single a kind out."""
    from hiddenweb.lostsheep.herder import Herder

    start = (settings or {}).get("HIDDENWEB_LOSTSHEEP_START", "B")
    low, total, mine, other = 0, 0, [], []
    for t in targets:
        herder = Herder(t.query, start=start)
        for page in pages:
            sheep = herder.sheep()
            sheep.read(page.words, herder.stems)
            total += 1
            low += sheep.f <= 8
            (mine if kinds(page.url) == t.kind else other).append(sheep.f)
    return {"quit_within_8": round(low / total, 3) if total else math.nan,
            "f_kind": round(sum(mine) / len(mine), 1) if mine else math.nan,
            "f_other": round(sum(other) / len(other), 1) if other else math.nan}


def find_command(seed: str, query: list[str], strategy: str, out: Path,
                 settings: dict[str, str] | None = None) -> list[str]:
    cmd = [sys.executable, "-m", "scrapy", "crawl", "hwdla", "-a", f"seed={seed}",
           "-a", f"query={' '.join(query)}", "-a", "find=1", "-O", f"{out}:jsonlines",
           "-s", f"HIDDENWEB_FIND_STRATEGY={strategy}", "-s", "HIDDENWEB_BROWSER=never",
           "-s", "HIDDENWEB_STORE_ENABLED=0", "-s", "LOG_LEVEL=INFO",
           "-s", "TELNETCONSOLE_ENABLED=0", "-s", "LOGSTATS_INTERVAL=0"]
    for key, value in (settings or {}).items():
        cmd += ["-s", f"{key}={value}"]
    return cmd


def run_find(seed: str, target: Target, strategy: str, kinds: Templates,
             settings: dict[str, str] | None = None, timeout: int = 600) -> dict[str, Any]:
    """One ``scrapy crawl hwdla … -a find=1`` run, scored against ``target``."""
    base, extra = variant(strategy)
    settings = {**(settings or {}), **extra}
    with tempfile.TemporaryDirectory(prefix="hw-find-") as tmp:
        out = Path(tmp) / "items.jsonl"
        env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "hiddenweb.settings",
               "PYTHONPATH": os.pathsep.join(p for p in (str(PROJECT_DIR),
                                                         os.environ.get("PYTHONPATH", "")) if p)}
        t0 = time.monotonic()
        try:
            proc = subprocess.run(find_command(seed, target.query, base, out, settings),
                                  cwd=PROJECT_DIR, env=env, capture_output=True, text=True,
                                  timeout=timeout)
            code, err = proc.returncode, proc.stderr
        except subprocess.TimeoutExpired:
            code, err = -9, "timeout"
        wall = round(time.monotonic() - t0, 1)
        items = [json.loads(line) for line in out.read_text().splitlines()] \
            if out.exists() else []
    found = [i for i in items if i.get("lostsheep")]
    if code != 0 or not found:
        return {"strategy": strategy, "error": f"exit {code}: " + err.strip()[-300:],
                "hit": False, "exact": False, "wall_seconds": wall}
    item = found[0]
    info = item["lostsheep"]
    urls = {canonical(u) for u in (item.get("url"), item.get("final_url")) if u}
    return {"strategy": strategy, "returned": item.get("final_url") or item.get("url"),
            "hit": any(kinds(u) == target.kind for u in urls),
            "exact": canonical(target.url) in urls, "d": int(info["d"]),
            "downloads": int(info["downloads"]), "reason": info["reason"],
            "rounds": info["rounds"], "wall_seconds": wall}


class Bar:
    """A one-line progress bar on stderr."""

    def __init__(self, label: str, total: int) -> None:
        self.label, self.total, self.done, self.t0 = label, max(total, 1), 0, time.monotonic()

    def step(self, note: str = "") -> None:
        self.done += 1
        width = 30
        full = int(width * self.done / self.total)
        end = "\n" if self.done >= self.total else "\r"
        sys.stderr.write(f"  {self.label} [{'#' * full}{'.' * (width - full)}] "
                         f"{self.done}/{self.total} {time.monotonic() - self.t0:.0f} s "
                         f"{note[:50]:<50}{end}")
        sys.stderr.flush()


def summarize(runs: list[dict[str, Any]], strategies: Iterable[str]) -> dict[str, dict]:
    """Per strategy: ``accuracy`` (kind), ``exact``, mean ``d``, mean ``downloads``, ``n``,
    ``errors``, ``threshold`` (share of finds that stopped on the threshold)."""
    out = {}
    for strategy in strategies:
        mine = [r for r in runs if r["strategy"] == strategy]
        ok = [r for r in mine if "error" not in r]
        n = len(mine)
        out[strategy] = {
            "n": n, "errors": n - len(ok),
            "accuracy": round(sum(r["hit"] for r in mine) / n, 3) if n else math.nan,
            "exact": round(sum(r["exact"] for r in mine) / n, 3) if n else math.nan,
            "d": round(sum(r["d"] for r in ok) / len(ok), 2) if ok else math.nan,
            "downloads": round(sum(r["downloads"] for r in ok) / len(ok), 2) if ok else math.nan,
            "threshold": round(sum(r.get("reason") == "threshold" for r in ok) / len(ok), 3)
            if ok else math.nan,
        }
    return out


def run_site_finds(name: str, seed: str, *, targets: int, strategies: tuple[str, ...],
                   survey_pages: int = 400, min_depth: int = 2, rare: float = 0.1,
                   query_words: int = 5, seed_rng: int = 0, jobs: int = 2,
                   settings: dict[str, str] | None = None, cache: Path | None = None
                   ) -> dict[str, Any]:
    """Survey ``seed``, pick the targets, run every strategy on every target (``cache``: a
    Scrapy HTTP cache directory shared by the finds of this site)."""
    unknown = [s for s in strategies if variant(s)[0] not in FIND_STRATEGIES]
    if unknown:
        raise ValueError(f"unknown strategies {unknown}; known: {', '.join(FIND_STRATEGIES)}")
    say(f"[{name}] survey: breadth-first from {seed}, at most {survey_pages} pages")
    t0 = time.monotonic()
    pages = survey(seed, survey_pages)
    chosen, kinds = pick_targets(pages, targets, min_depth=min_depth, rare=rare,
                                 query_words=query_words, seed=seed_rng)
    entry: dict[str, Any] = {
        "name": name, "seed": seed, "surveyed": len(pages),
        "survey_seconds": round(time.monotonic() - t0, 1),
        "kinds": len({kinds(p.url) for p in pages}),
        "survey": [[p.url, p.depth] for p in pages],
        "targets": [t.__dict__ for t in chosen]}
    say(f"[{name}] {len(pages)} pages, {entry['kinds']} kinds, {len(chosen)} targets")
    for t in chosen:
        say(f"  target {t.url} (kind {t.kind}, {t.kind_size} pages, depth {t.depth}): "
            f"{' '.join(t.query)}")
    if not chosen:
        entry["skipped"] = "no target: no rare kind at the required depth"
        return entry
    entry["sheep_reading"] = sheep_reading(pages, chosen, kinds)
    if cache is not None:  # every find of the site reads the same pristine GET pages: the
        # app answers each once, the others come from disk (D counts the finder's fetches)
        settings = {"HTTPCACHE_ENABLED": "True", "HTTPCACHE_DIR": str(cache),
                    "HTTPCACHE_EXPIRATION_SECS": "0", **(settings or {})}
    tasks = [(t, s) for t in chosen for s in strategies]
    bar = Bar(name, len(tasks))
    runs: list[dict[str, Any]] = []

    def one(task: tuple[Target, str]) -> dict[str, Any]:
        target, strategy = task
        result = run_find(seed, target, strategy, kinds, settings)
        result["target"] = target.url
        return result

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for result in pool.map(one, tasks):
            runs.append(result)
            bar.step(f"{result['strategy']} {'hit' if result['hit'] else 'miss'} "
                     f"D={result.get('d', '?')}")
    entry["runs"] = runs
    entry["summary"] = summarize(runs, strategies)
    return entry


def over_sites(entries: list[dict[str, Any]], strategies: Iterable[str]) -> dict[str, dict]:
    """The mean over sites of each site's accuracy, exact and D (the paper's averaging)."""
    done = [e for e in entries if "summary" in e]
    out = {}
    for s in strategies:
        rows = [e["summary"][s] for e in done if s in e["summary"]]
        out[s] = {k: round(sum(r[k] for r in rows) / len(rows), 3) if rows else math.nan
                  for k in ("accuracy", "exact", "d", "downloads")}
        out[s]["sites"] = len(rows)
    return out


def table(entries: list[dict[str, Any]], strategies: tuple[str, ...]) -> str:
    """Markdown: one row per site, accuracy / exact / D per strategy, then the mean."""
    head = "| site | pages | kinds | targets | " + " | ".join(
        f"{s} acc | {s} exact | {s} D" for s in strategies) + " |"
    lines = [head, "|" + "---|" * (4 + 3 * len(strategies))]
    for e in entries:
        if "summary" not in e:
            lines.append(f"| {e['name']} | {e.get('surveyed', '—')} | {e.get('kinds', '—')} | "
                         f"— | {e.get('skipped') or e.get('error', '')} |")
            continue
        cells = []
        for s in strategies:
            r = e["summary"][s]
            cells += [f"{r['accuracy']:.2f}", f"{r['exact']:.2f}", f"{r['d']:.1f}"]
        lines.append(f"| {e['name']} | {e['surveyed']} | {e['kinds']} | {len(e['targets'])} | "
                     + " | ".join(cells) + " |")
    mean = over_sites(entries, strategies)
    cells = []
    for s in strategies:
        r = mean[s]
        cells += [f"**{r['accuracy']:.2f}**", f"{r['exact']:.2f}", f"**{r['d']:.1f}**"]
    lines.append("| mean over sites | | | | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# -- the corpus: each app served on 127.0.0.1 (the real-site benchmark's start-up code) ----------

def run_corpus(names: list[str], workdir: Path, sources: dict[str, str],
               on_site: Callable[[list[dict[str, Any]]], None] | None = None, **kw: Any
               ) -> list[dict[str, Any]]:
    """Install, build and serve each app of the real-site corpus in turn (a fresh copy of its
    data, one app process for all its finds), and run :func:`run_site_finds` on it;
    ``on_site`` gets the entries so far after each site."""
    import shutil

    from hiddenweb.bench.realsites.install import InstallError
    from hiddenweb.bench.realsites.runner import install_site
    from hiddenweb.bench.realsites.servers import ServerError, Servers, free_port
    from hiddenweb.bench.realsites.sites import GIT_ONLY, SITES, SiteSkipped

    entries: list[dict[str, Any]] = []
    for name in names:
        if name not in SITES:
            known = ", ".join([*SITES, *GIT_ONLY])
            raise ValueError(f"unknown site {name!r}; known: {known}")
        site = SITES[name](sources.get(name))
        try:
            install_site(site, name)
            wd = workdir / name
            data = site.fresh(wd / "data")
            shutil.rmtree(wd / "httpcache", ignore_errors=True)
            with Servers() as servers:
                port = free_port()
                cmd, cwd, env = site.command(data, port, port)
                servers.start("app", cmd, wd / "app.log", cwd=cwd, env=env)
                servers.wait_http("app", f"http://127.0.0.1:{port}{site.ready_path}",
                                  timeout=90)
                entry = run_site_finds(name, f"http://127.0.0.1:{port}{site.seed_path}",
                                       cache=wd / "httpcache", **kw)
                servers.stop_all()
                entry["leftover_pids"] = servers.alive()
        except SiteSkipped as exc:
            say(f"[{name}] skipped: {exc}")
            entry = {"name": name, "skipped": str(exc)}
        except (InstallError, ServerError, OSError, RuntimeError) as exc:
            say(f"[{name}] failed: {exc}")
            entry = {"name": name, "error": str(exc).splitlines()[0]}
        entries.append(entry)
        if on_site:
            on_site(entries)
        if "summary" in entry:
            say(f"[{name}] " + "; ".join(
                f"{s} acc {r['accuracy']:.2f} D {r['d']:.1f}"
                for s, r in entry["summary"].items()))
    return entries


def add_parser(sub: Any) -> None:
    from hiddenweb.bench.realsites.sites import GIT_ONLY, SITES

    p = sub.add_parser("find", help="find mode (lost sheep, SIM, BFS) on the real-site corpus: "
                                    "the lost-sheep paper's real-site experiment")
    p.add_argument("--sites", default=",".join(SITES),
                   help=f"comma-separated (default: all: {', '.join([*SITES, *GIT_ONLY])})")
    p.add_argument("--source", action="append", default=[], metavar="NAME=GIT-URL-OR-PATH",
                   help="where a git-only app comes from")
    p.add_argument("--targets", type=int, default=20, help="targets per site (default 20)")
    p.add_argument("--strategies", default=",".join(FIND_STRATEGIES),
                   help="comma-separated HIDDENWEB_FIND_STRATEGY values (default ls2f,sim,bfs); "
                        "ls2f@NAME=VALUE[+NAME=VALUE] is ls2f with those settings")
    p.add_argument("--survey-pages", type=int, default=400,
                   help="pages of the breadth-first survey that picks targets (default 400)")
    p.add_argument("--min-depth", type=int, default=2, help="a target's least depth (default 2)")
    p.add_argument("--rare", type=float, default=0.1,
                   help="a target's kind holds at most this share of the surveyed pages")
    p.add_argument("--query-words", type=int, default=5,
                   help="words of a query (the held-out pages' most common; default 5)")
    p.add_argument("--seed", type=int, default=0, help="random seed of the target choice")
    p.add_argument("--jobs", type=int, default=2, help="finds run at once (default 2)")
    p.add_argument("-s", "--set", action="append", default=[], metavar="NAME=VALUE",
                   help="extra Scrapy setting for every find (e.g. HIDDENWEB_LOSTSHEEP_START)")
    p.add_argument("--out", type=Path, default=Path("out/findbench"),
                   help="results.json goes here (default out/findbench)")
    p.add_argument("--json", action="store_true", help="print one JSON document, no table")
    p.set_defaults(func=main)


def main(args: Any) -> int:
    import platform

    from hiddenweb.bench.revision import code_revision, describe

    sources = dict(item.split("=", 1) for item in args.source)
    strategies = tuple(s.strip() for s in args.strategies.split(",") if s.strip())
    settings = dict(item.split("=", 1) for item in args.set)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    code = describe(code_revision(PROJECT_DIR))
    meta = {"command": "hiddenweb bench find " + shlex.join(sys.argv[3:]),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
                       f"Python {platform.python_version()}", "code": code}

    def write(entries: list[dict[str, Any]]) -> dict[str, Any]:
        meta["total_seconds"] = round(time.monotonic() - t0, 1)
        doc = {"meta": meta, "sites": entries, "mean": over_sites(entries, strategies)}
        (out / "results.json").write_text(json.dumps(doc, indent=1))
        return doc

    entries = run_corpus([n.strip() for n in args.sites.split(",") if n.strip()], out / "work",
                         sources, on_site=write, targets=args.targets, strategies=strategies,
                         survey_pages=args.survey_pages, min_depth=args.min_depth,
                         rare=args.rare, query_words=args.query_words, seed_rng=args.seed,
                         jobs=args.jobs, settings=settings)
    doc = write(entries)
    if args.json:
        print(json.dumps(doc))
    else:
        print(table(entries, strategies))
        print(f"measured code: {code}; results in {out / 'results.json'}")
    return 0
