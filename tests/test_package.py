"""hiddenweb as a Scrapy user adopts it: build the wheel, install it into a fresh virtual
environment (no system site packages; dependencies at requirements.txt's pins), make a project
with ``scrapy startproject``, add the one add-on line, and crawl the bundled demo site.

- ``scrapy crawl hwdla`` in that project finds the same hidden pages as ``make demo`` (the same
  crawl, :func:`hiddenweb.bench.coverage.run`, from this checkout), and the wheel carries the
  LVS (no ``HIDDENWEB_LVS_DIR``).
- The user's own ``CrawlSpider`` runs under the add-on with the DLA scheduler ordering its
  requests, but gets no form discovery: only ``hwdla`` submits forms (the README says so).

Slow: make demo's crawl, then pip installs the crawler's stack, then the user's two crawls (one
at a time, so that neither crawl's renders are judged on a machine the other loads); still part
of the suite.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hiddenweb.bench import coverage as cov
from hiddenweb.bench.provingground.site import DEMO_PAGES, DEMO_SEED
from hiddenweb.config import setting_args

ROOT = Path(__file__).resolve().parent.parent

USER_SPIDER = '''
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


class SiteSpider(CrawlSpider):
    """A user's own spider: follow every link of the site, one item a page."""
    name = "site"
    rules = [Rule(LinkExtractor(), callback="parse_page", follow=True)]

    def __init__(self, seed=None, *args, **kwargs):
        self.start_urls = [seed]
        super().__init__(*args, **kwargs)

    def parse_page(self, response):
        yield {"url": response.url, "status": response.status}
'''


#: Both crawls read the site to its end. The crawl-level stopping rule (hiddenweb.stale) closes
#: a crawl at a point that depends on the order its answers come back in, which the load of the
#: machine decides: in a clean-clone CI run one of the two closed stale with a new form's queued
#: submissions unsent (159 against 190 hidden pages; reproduced here, 60 against 91 that need a
#: browser, with pip and the other crawl loading the machine). The rule has its own tests
#: (tests/spider/test_close_stale.py); this one compares the wheel's crawler with the checkout's.
UNTIL_EXHAUSTED = {"HIDDENWEB_CLOSE_STALE": "0"}


def run(cmd: list[str], cwd: Path, timeout: int = 600) -> str:
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{cmd}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def hidden_keys(site, items: list[dict]) -> set[str]:
    """The demo site's hidden truth pages among ``items`` (as the coverage benchmark scores
    them; the browser-only ones too)."""
    hidden = {t["key"] for t in site.truth() if t["hidden"]}
    return {key for item in items if item.get("status") == 200
            and (key := cov.resolve_item(site, item)) in hidden}


@pytest.mark.slow
def test_a_user_installs_the_wheel_into_a_new_project(tmp_path, served_site):
    # make demo's crawl, from this checkout, then the user's project: the same hidden pages as
    # the user's crawl (both to the end of the site: see UNTIL_EXHAUSTED). One after the other:
    # run beside pip and the user's crawl (two Chromiums on two cores), the demo crawl once
    # found 61 of the 91 pages that need a browser against the user's 91 (a clean-clone CI run;
    # most likely the render gate: whether a template's first renders show what its scripts
    # build in time, and so whether its other pages are rendered, depends on the load), and
    # the load is not what this test compares
    demo = cov.run(DEMO_PAGES, DEMO_SEED, "hwdla", budget=0, workdir=tmp_path / "demo",
                   extra_settings=dict(UNTIL_EXHAUSTED))
    found = user_project(tmp_path, served_site)
    demo_items = [json.loads(line) for line in Path(demo["items_path"]).read_text().splitlines()]
    assert len(found) == demo["hidden_found"] + demo["hidden_found_browser_only"] > 0
    assert found == hidden_keys(served_site.site, demo_items)
    print(f"wheel project: {len(found)} hidden pages; make demo's crawl: "
          f"{demo['hidden_found']} of {demo['hidden_total']} (+ "
          f"{demo['hidden_found_browser_only']} that need a browser)")


def user_project(tmp_path: Path, served_site) -> set[str]:
    """Wheel, venv, project, crawls; the hidden pages ``hwdla`` found there."""
    wheels = tmp_path / "wheels"
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(ROOT)],
        tmp_path)
    (wheel,) = wheels.glob("hiddenweb-*.whl")
    listing = run([sys.executable, "-m", "zipfile", "-l", str(wheel)], tmp_path)
    assert "hiddenweb/lvs_data/default.toml" in listing

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)], tmp_path)
    py, scrapy = venv / "bin" / "python", venv / "bin" / "scrapy"
    run([str(py), "-m", "pip", "install", "-q", str(wheel), "-c", str(ROOT / "requirements.txt")],
        tmp_path)
    run([str(scrapy), "startproject", "shop"], tmp_path)
    project = tmp_path / "shop"
    settings = project / "shop" / "settings.py"
    settings.write_text(settings.read_text() + '\nADDONS = {"hiddenweb.Addon": 500}\n')
    (project / "shop" / "spiders" / "site.py").write_text(USER_SPIDER)

    # startproject's settings crawl a site one request a second (DOWNLOAD_DELAY = 1,
    # CONCURRENT_REQUESTS_PER_DOMAIN = 1: over 20 min for the demo site's downloads); the README
    # says so. Here at make demo's pace; tokens kept on items only so that the truth can
    # resolve them, as make demo's are.
    pace = ["-s", "DOWNLOAD_DELAY=0", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=16"]
    run([str(scrapy), "crawl", "hwdla", "-a", f"seed={served_site.url}/", "-O", "items.jsonl",
         "-s", "HIDDENWEB_STATS_FILE=stats.json", "-s", "HIDDENWEB_KEEP_TOKENS=1", *pace,
         *setting_args(UNTIL_EXHAUSTED)],
        project)
    items = [json.loads(line) for line in (project / "items.jsonl").read_text().splitlines()]
    site = served_site.site
    found = hidden_keys(site, items)
    stats = json.loads((project / "stats.json").read_text())
    assert stats["hiddenweb/forms/submissions"] > 0
    assert (project / ".scrapy" / "hiddenweb.db").exists()  # the visit store, in the project

    # the user's own CrawlSpider: DLA ordering of its requests, no forms
    run([str(scrapy), "crawl", "site", "-a", f"seed={served_site.url}/", "-O", "site.jsonl",
         "-s", "HIDDENWEB_STATS_FILE=site-stats.json", *pace], project)
    pages = [json.loads(line) for line in (project / "site.jsonl").read_text().splitlines()]
    stats = json.loads((project / "site-stats.json").read_text())
    assert len(pages) > 50
    # every request but robots.txt's went through the DLA scheduler
    assert stats["hiddenweb/dla/dequeued"] >= stats["downloader/request_count"] - 1 > 50
    assert "hiddenweb/forms/submissions" not in stats
    assert not hidden_keys(site, [{**p, "method": "GET"} for p in pages])  # no form's answers
    print(f"the user's CrawlSpider: {len(pages)} pages, no form submitted")
    return found
