"""The throughput benchmark on a real generated site served on 127.0.0.1: rounds and ratios."""

import json
import subprocess
import sys

import pytest

from hiddenweb.bench.coverage import PROJECT_DIR


@pytest.mark.slow
def test_rounds_run_in_turn_and_each_ratio_is_the_median_of_the_rounds() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "hiddenweb.cli", "bench", "throughput", "--pages", "200",
         "--seed", "2", "--repeat", "3", "--json"],
        cwd=PROJECT_DIR, capture_output=True, text=True, timeout=600, check=True)
    result = json.loads(out.stdout)
    spiders = ["bare", "hwdla (store off)", "hwdla, Scrapy's scheduler", "hwdla (store on)"]
    assert [(r["round"], r["spider"]) for r in result["runs"]] == [
        (n, s) for n in (1, 2, 3) for s in spiders]
    for run in result["runs"]:
        assert run["pages"] > 50 and run["pages_per_second"] > 0
    by_round = {(r["round"], r["spider"]): r for r in result["runs"]}
    for n in (1, 2, 3):
        dla, fifo = by_round[n, spiders[1]], by_round[n, spiders[2]]
        assert dla["pages"] == fifo["pages"]  # the same site, every page, either scheduler
        expected = dla["pages_per_second"] / fifo["pages_per_second"]
        assert result["scheduler_ratio_rounds"][n - 1] == pytest.approx(expected, abs=1e-4)
    for key in ("ratio", "scheduler_ratio", "store_overhead"):
        assert result[key] == pytest.approx(sorted(result[f"{key}_rounds"])[1], abs=1e-4)
    assert result["repeat"] == 3 and result["code"]["dir"] == str(PROJECT_DIR)
    bad = subprocess.run([sys.executable, "-m", "hiddenweb.cli", "bench", "throughput",
                          "--repeat", "0"], cwd=PROJECT_DIR, capture_output=True, text=True)
    assert bad.returncode != 0 and "--repeat must be at least 1" in bad.stderr
