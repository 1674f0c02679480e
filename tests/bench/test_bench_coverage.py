"""The coverage benchmark's repeated runs (``--repeat N``: the median run)."""

import json
import subprocess
import sys

import pytest

from hiddenweb.bench.coverage import PROJECT_DIR, median_run


def test_median_run_is_the_middle_run_with_all_runs_listed():
    runs = [{"downloads_to_90": 530, "wall_seconds": 3.0},
            {"downloads_to_90": 480, "wall_seconds": 1.0},
            {"downloads_to_90": 505, "wall_seconds": 2.0}]
    median = median_run(runs)
    assert median == {"downloads_to_90": 505, "wall_seconds": 2.0,  # one run's own figures
                      "repeat": 3, "downloads_to_90_runs": [480, 505, 530]}
    assert runs[2] == {"downloads_to_90": 505, "wall_seconds": 2.0}  # not changed


def test_a_run_that_never_reached_90_counts_as_the_worst():
    runs = [{"downloads_to_90": None}, {"downloads_to_90": 400}]
    median = median_run(runs)  # an even count: the lower median
    assert median["downloads_to_90"] == 400
    assert median["downloads_to_90_runs"] == [400, None]
    assert median_run([runs[0], dict(runs[0]), runs[1]])["downloads_to_90"] is None
    with pytest.raises(ValueError):
        median_run([])


@pytest.mark.slow
def test_cli_repeats_a_real_crawl_and_reports_the_median(tmp_path):
    """Two oracle crawls of a small generated site, served on 127.0.0.1."""
    out = subprocess.run(
        [sys.executable, "-m", "hiddenweb.cli", "bench", "coverage", "--pages", "100",
         "--seed", "3", "--strategy", "oracle", "--repeat", "2", "--json",
         "--workdir", str(tmp_path), "-s", "HIDDENWEB_BROWSER=never"],
        cwd=PROJECT_DIR, capture_output=True, text=True, timeout=300, check=True)
    (row,) = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert row["repeat"] == 2 and len(row["downloads_to_90_runs"]) == 2
    assert row["downloads_to_90"] == row["downloads_to_90_runs"][0] is not None
    assert row["hidden_coverage"] == 1.0
    # its own floor: the public pages it had read when the forms among them held 90 % (no more
    # than it read by its 90 % mark), plus one download per hidden page needed: the run can not
    # have done better
    need = -(-9 * row["hidden_total"] // 10)
    assert need < row["order_floor_to_90"] <= row["public_read_to_90"] + need
    assert row["order_floor_to_90"] <= row["downloads_to_90"]
    # the code it measured: this checkout, at its commit (hiddenweb.bench.revision)
    head = subprocess.run(["git", "-C", str(PROJECT_DIR), "rev-parse", "HEAD"],
                          capture_output=True, text=True)
    assert row["code"]["dir"] == str(PROJECT_DIR)
    assert row["code"]["commit"] == (head.stdout.strip() if head.returncode == 0 else None)
    bad = subprocess.run([sys.executable, "-m", "hiddenweb.cli", "bench", "coverage",
                          "--repeat", "0"], cwd=PROJECT_DIR, capture_output=True, text=True)
    assert bad.returncode != 0 and "--repeat must be at least 1" in bad.stderr


def test_render_decision_scored_against_the_pages_scripts_build(tmp_path):
    """Precision and recall of the render decision: a rendered page counts as a hit when a
    script builds a link or form on it (the site's truth); recall is over the pages read."""
    from hiddenweb.bench.coverage import render_decision
    from hiddenweb.bench.provingground.site import SiteModel

    site = SiteModel(pages=100, seed=3)
    built = sorted(site.script_built_pages(), key=lambda k: int(k[2:]))
    plain = next(f"p/{u}" for u in range(1, 100) if f"p/{u}" not in built)
    assert len(built) >= 2
    url = "http://127.0.0.1:1/{}".format
    trace = tmp_path / "renders.jsonl"
    trace.write_text("".join(json.dumps({"url": url(k), "useful": k != plain, "failed": False})
                             + "\n" for k in (built[0], plain, built[0])))
    items = [{"url": url(k), "status": 200, "method": "GET"} for k in (*built[:2], plain)]
    got = render_decision(site, items, trace)
    assert got == {"renders": 2, "renders_needed": 2, "renders_hit": 1, "renders_useful": 1,
                   "render_precision": 0.5, "render_recall": 0.5}
    assert render_decision(site, items, tmp_path / "none.jsonl")["render_precision"] is None
    assert SiteModel(pages=100, seed=3, js=False).script_built_pages() == set()
