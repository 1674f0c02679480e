"""Run the real-site benchmark: for each app, install, build, truth; then each crawler in turn.

:func:`run` returns one result per site (``name``, ``origin``, ``version`` pins, ``truth`` by kind,
``crawls``: per crawler ``found`` by kind, ``requests`` the server received, ``downloads``
(the crawler's responses; None for a peer crawler, which keeps no count), ``requests_to_90``,
``wall_seconds``, ``browser_pages`` (None for a peer: it loads every page in Chromium),
``useful_renders`` (hwdla: its render gate's renders that added something, else None),
``dangerous`` and its reasons, ``state_changes``: what differs in the app's data afterwards,
``returncode``), or ``skipped``/``error`` with a one-line reason.
Every crawl gets a fresh copy of the app's data, a fresh app process and proxy on free loopback
ports, and both are stopped after it (``leftover_pids`` lists any that survived: it should be
empty). Ctrl-C stops the crawl and the servers and returns what was measured so far (the site
then has ``interrupted``: the crawler it stopped). Progress goes to stderr, one line per step
and a live request count per crawl.
"""

from __future__ import annotations

import re
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from hiddenweb.bench.realsites.crawlers import (
    CRAWLERS,
    PEERS,
    Caps,
    Peer,
    install_peer,
    run_crawler,
    variant,
)
from hiddenweb.bench.realsites.install import InstallError, git_source
from hiddenweb.bench.realsites.proxy import READY
from hiddenweb.bench.realsites.scoring import Truth, read_log, score
from hiddenweb.bench.realsites.servers import ServerError, Servers, free_port
from hiddenweb.bench.realsites.sites import GIT_ONLY, SITES, Site, SiteSkipped


def crawl_dir(workdir: Path, site: str, crawler: str) -> Path:
    """A crawl's work directory: a variant's name (``hwdla@HIDDENWEB_LAB={"k": 0.5}``) has
    quotes and spaces, which an app's own paths under it (PHP's session files) may not take."""
    return workdir / site / re.sub(r"[^A-Za-z0-9_.@=+-]", "_", crawler)


PORT_TRIES = 3  # times the app and proxy are started on new ports when a port was taken


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class _Ticker:
    """Prints the requests the proxy has logged so far, on one line, about every 5 s."""

    def __init__(self, label: str, log: Path) -> None:
        self.label, self.log, self.lines, self.pos = label, log, 0, 0
        self.start = self.last = time.monotonic()

    def __call__(self) -> None:
        try:
            with open(self.log, "rb") as fh:
                fh.seek(self.pos)
                chunk = fh.read()
        except OSError:
            return
        self.pos += len(chunk)
        self.lines += chunk.count(b"\n")
        now = time.monotonic()
        if now - self.last >= 5:
            self.last = now
            say(f"  {self.label}: {self.lines} requests, {now - self.start:.0f} s")


def install_site(site: Site, name: str) -> None:
    """Fetch a git-only app's checkout (``SiteSkipped`` without a source) and install ``site``,
    saying so."""
    if site.origin == "git":
        if not site.source:
            raise SiteSkipped(f"lives only in git; give --source {name}=URL-OR-PATH")
        site.src = git_source(name, site.source)
    say(f"[{name}] installing ({site.origin}: {', '.join(site.pins) or site.source})")
    site.install()


def start_site(servers: Servers, site: Site, data: Path, wd: Path, log: Path) -> str:
    """Start ``site``'s app on ``data`` and the logging proxy in front of it (its log:
    ``log``); return the seed URL, on the proxy. The two ports are free when picked but may be
    taken before they are bound: a proxy that could not listen exits, and both are started
    again on other ports, :data:`PORT_TRIES` times at most. A port that answers is not enough,
    the proxy's own line says it listens (:data:`~hiddenweb.bench.realsites.proxy.READY`): a
    crawl once read 757 pages of a port the proxy could not bind, none of them in its log (the
    app's own, most likely: two calls of :func:`free_port` may return the same port)."""
    for attempt in range(1, PORT_TRIES + 1):
        port = public = free_port()
        while public == port:  # the kernel may hand out one free port twice in a row
            public = free_port()
        cmd, cwd, env = site.command(data, port, public)
        servers.start("app", cmd, wd / "app.log", cwd=cwd, env=env)
        servers.wait_http("app", f"http://127.0.0.1:{port}{site.ready_path}", timeout=90)
        servers.start("proxy", [sys.executable, "-m", "hiddenweb.bench.realsites.proxy",
                                "--port", str(public), "--upstream", f"http://127.0.0.1:{port}",
                                "--log", str(log)], wd / "proxy.log")
        if servers.wait_line("proxy", READY):
            return f"http://127.0.0.1:{public}{site.seed_path}"
        errors = [line for line in servers.tail("proxy").splitlines() if "Error" in line]
        say(f"[{site.name}] the proxy could not listen on port {public} (try {attempt} of "
            f"{PORT_TRIES}): {(errors or ['it exited'])[-1].strip()}")
        servers.stop_all()
    raise ServerError(f"the proxy could not listen in {PORT_TRIES} tries:\n"
                      f"{servers.tail('proxy')}")


def crawl_site(site: Site, truth: Truth, crawler: str, workdir: Path,
               caps: Caps, peer: Peer | None = None, dirname: str | None = None
               ) -> dict[str, Any]:
    """One crawl of a fresh copy of ``site``; its score from the proxy's log (``peer``: the
    installed peer crawler, for one). Its work directory is named ``dirname`` (default: the
    crawler's name; :func:`crawl_dir`), recorded as the result's ``dir``."""
    dirname = dirname or crawler
    wd = crawl_dir(workdir, site.name, dirname)
    data = site.fresh(wd / "data")
    log = wd / "requests.jsonl"
    log.unlink(missing_ok=True)
    with Servers() as servers:
        seed = start_site(servers, site, data, wd, log)
        pages = site.caps_pages or caps.pages
        result = run_crawler(crawler, seed, wd / "crawl", Caps(pages, caps.seconds),
                             tick=_Ticker(f"{site.name}/{crawler}", log), peer=peer)
        if servers.procs["proxy"].poll() is not None:  # its log is not the crawl's requests
            raise ServerError(f"the proxy exited during the crawl:\n{servers.tail('proxy')}")
        servers.stop_all()
        leftover = servers.alive()
    if log.exists():
        s = score(read_log(log), truth, site.found_in, site.dangerous, site.own_page)
    else:
        s = score([], truth, site.found_in, site.dangerous, site.own_page)
    changes = site.state_changes(site.pristine(), data)
    return {"crawler": crawler, "dir": dirname, **s.as_dict(), "state_changes": changes,
            "downloads": result.downloads,
            "wall_seconds": result.wall_seconds, "browser_pages": result.browser_pages,
            "useful_renders": result.stats.get("hiddenweb/browser/renders_useful", 0)
            if variant(crawler)[0] == "hwdla" else None,
            "returncode": result.returncode, "finish_reason": result.stats.get("finish_reason"),
            "leftover_pids": leftover, "seed": seed,
            "log_tail": result.log_tail if result.returncode else ""}


def run(names: list[str], workdir: Path, caps: Caps, sources: dict[str, str] | None = None,
        crawlers: tuple[str, ...] = CRAWLERS) -> list[dict[str, Any]]:
    sources = sources or {}
    peers: dict[str, Peer] = {}
    for crawler in {variant(c)[0] for c in crawlers} & set(PEERS):
        if crawler not in sources:
            raise ValueError(f"crawler {crawler}: give --source {crawler}=GIT-URL-OR-PATH "
                             "(its checkout)")
        say(f"[{crawler}] installing the peer crawler ({sources[crawler]})")
        peers[crawler] = install_peer(crawler, sources[crawler])
    results = []
    for name in names:
        if name in GIT_ONLY and name not in SITES:
            say(f"[{name}] skipped: lives only in git ({GIT_ONLY[name]}); "
                f"give --source {name}=URL-OR-PATH")
            results.append({"name": name, "skipped": "git-only app; no --source given"})
            continue
        if name not in SITES:
            raise ValueError(f"unknown site {name!r}; known: {', '.join([*SITES, *GIT_ONLY])}")
        site = SITES[name](sources.get(name))
        entry: dict[str, Any] = {"name": name, "origin": site.origin, "pins": list(site.pins),
                                 "hidden": site.hidden}
        results.append(entry)
        try:
            t0 = time.monotonic()
            install_site(site, name)
            say(f"[{name}] building data")
            truth = site.truth(site.pristine())
            entry["setup_seconds"] = round(time.monotonic() - t0, 1)
            entry["truth"] = truth.by_kind()
            say(f"[{name}] truth: {entry['truth']}")
        except SiteSkipped as exc:
            say(f"[{name}] skipped: {exc}")
            entry["skipped"] = str(exc)
            continue
        except (InstallError, OSError, RuntimeError, ValueError) as exc:
            say(f"[{name}] set-up failed: {exc}")
            entry["error"] = f"set-up: {exc}".splitlines()[0]
            continue
        entry["crawls"] = []
        runs: dict[str, int] = {}  # a crawler named twice (to measure its spread): own dirs
        for crawler in crawlers:
            runs[crawler] = runs.get(crawler, 0) + 1
            dirname = crawler if runs[crawler] == 1 else f"{crawler}+{runs[crawler]}"
            say(f"[{name}] crawling with {crawler}")
            try:
                crawl = crawl_site(site, truth, crawler, workdir, caps,
                                   peers.get(variant(crawler)[0]), dirname)
            except KeyboardInterrupt:  # servers are stopped already; keep what was measured
                say(f"[{name}] interrupted during {crawler}; every app and proxy stopped")
                entry["interrupted"] = crawler
                return results
            except Exception as exc:  # record and go on with the next crawler
                traceback.print_exc(file=sys.stderr)
                crawl = {"crawler": crawler, "error": f"{type(exc).__name__}: {exc}"
                         .splitlines()[0]}
            entry["crawls"].append(crawl)
            if "found" in crawl:
                say(f"[{name}] {crawler}: found {crawl['found']}, {crawl['requests']} requests, "
                    f"{crawl['wall_seconds']} s, dangerous {crawl['dangerous']}")
    return results


def rescore(results: list[dict[str, Any]], workdir: Path,
            sources: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Score the crawls of an earlier run again from their request logs (in ``workdir``) with
    the current scorers and truth; what was measured of the crawls themselves is kept."""
    sources = sources or {}
    for entry in results:
        if "crawls" not in entry or entry["name"] not in SITES:
            continue
        site = SITES[entry["name"]](sources.get(entry["name"]))
        if site.origin == "git":
            if not site.source:
                continue  # it was skipped: nothing to score
            site.src = git_source(site.name, site.source)
        site.install()
        truth = site.truth(site.pristine())
        entry.update(truth=truth.by_kind(), pins=list(site.pins), hidden=site.hidden)
        for crawl in entry["crawls"]:
            log = crawl_dir(workdir, site.name, crawl.get("dir", crawl["crawler"])) \
                / "requests.jsonl"
            if "found" in crawl and log.exists():
                crawl.update(score(read_log(log), truth, site.found_in, site.dangerous,
                                   site.own_page).as_dict())
            data = log.parent / "data"
            if "found" in crawl and data.exists():
                crawl["state_changes"] = site.state_changes(site.pristine(), data)
    return results
