"""The safety policy on its labelled corpus (tests/safety/corpus.txt): unsafe recall ≥ 99 %, the
safe search and filter forms still allowed, precision reported (``hiddenweb bench safety``)."""

from __future__ import annotations

import json
import subprocess
import sys

from hiddenweb.bench import safety


def test_corpus_is_large_and_varied():
    entries = safety.load()
    forms = [e for e in entries if e.kind not in ("link", "button")]
    links = [e for e in entries if e.kind in ("link", "button")]
    assert len(entries) >= 200 and len(forms) >= 100 and len(links) >= 100
    assert len({e.lang for e in entries}) >= 8
    assert {e.kind for e in forms} >= {"search", "filter", "login", "signup", "password_reset",
                                       "payment", "contact", "subscribe", "vote", "destructive"}


def test_unsafe_recall_and_safe_search_forms(capsys):
    result = safety.run()
    safety.print_report(result)
    print(capsys.readouterr().out)  # the figures, for the record (pytest -s)
    assert result["unsafe_recall"] >= 0.99, result["misjudged"]
    assert result["unsafe_precision"] >= 0.95, result["misjudged"]
    assert result["safe_search_filter_allowed"] >= 0.95 * result["safe_search_filter"]


def test_bench_command_prints_the_figures():
    out = subprocess.run([sys.executable, "-m", "hiddenweb.cli", "bench", "safety", "--json"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["entries"] >= 200 and 0 <= result["unsafe_precision"] <= 1


def test_a_malformed_corpus_is_refused_in_one_line(tmp_path):
    bad = tmp_path / "corpus.txt"
    bad.write_text("== dangerous form en\n<form></form>\n")
    out = subprocess.run([sys.executable, "-m", "hiddenweb.cli", "bench", "safety", "--corpus",
                          str(bad)], capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert "corpus.txt:1: expected" in out.stderr
