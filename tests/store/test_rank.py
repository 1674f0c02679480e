"""The three rankings of paper 002 §5 against its table 1 (fixture) and the orders it prints."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from hiddenweb.cli import main
from hiddenweb.store import Visit, VisitStore

TABLE1 = Path(__file__).parents[1] / "fixtures" / "paper_table1.csv"
# Page numbers in the order the paper prints them: table 2, table 3 and the combined query.
BY_FREQUENCY = [11, 22, 8, 14, 23, 7, 12, 13, 10, 21, 1, 3, 9, 2, 6, 20, 19, 5, 4, 16, 15, 17, 18]
BY_WEIGHTAGE = [19, 21, 18, 22, 4, 10, 8, 5, 17, 20, 13, 6, 15, 11, 3, 7, 14, 9, 16, 12, 2, 1, 23]
COMBINED = [11, 14, 13, 7, 12, 10, 1, 3, 9, 2, 6, 5, 4, 15]


def table1() -> list[dict[str, str]]:
    with TABLE1.open(newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture
def paper_db(tmp_path) -> Path:
    """Table 1 rebuilt through the update algorithm: each page gets `frequency` visits, the first
    `ttl` of them available, the first one carrying all of its weightage."""
    path = tmp_path / "paper.db"
    visits = []
    for row in table1():
        for i in range(int(row["frequency"])):
            seconds = float(row["weightage"]) if i == 0 else 0.0
            visits.append(Visit(f"paper:{row['sno']}:{i}", row["url"], seconds,
                                i < int(row["ttl"]), float(i), source="import"))  # fmt: skip
    with VisitStore(path) as store:
        store.record(visits)
    return path


def numbers(rows) -> list[int]:
    return [int(row["url"].rsplit("page", 1)[1]) for row in rows]


def test_update_algorithm_rebuilds_table1(paper_db):
    with VisitStore(paper_db) as store:
        rows = store.rank("frequency")
        assert store.check() == []
    stored = {r["url"]: (r["frequency"], r["weightage"], r["ttl"]) for r in rows}
    expected = {
        r["url"]: (int(r["frequency"]), float(r["weightage"]), int(r["ttl"])) for r in table1()
    }
    assert stored == expected


@pytest.mark.parametrize(
    ("by", "expected"),
    [("frequency", BY_FREQUENCY), ("weightage", BY_WEIGHTAGE), ("combined", COMBINED)],
)
def test_rankings_match_the_paper(paper_db, by, expected):
    with VisitStore(paper_db) as store:
        assert numbers(store.rank(by)) == expected


def test_combined_ranking_uses_its_partial_index(paper_db):
    from hiddenweb.store import RANKINGS

    with VisitStore(paper_db) as store:
        sql = f"EXPLAIN QUERY PLAN SELECT url FROM pages {RANKINGS['combined']}"
        plan = store.conn.execute(sql)
        assert "pages_combined" in " ".join(str(row) for row in plan)


def test_rank_command_prints_the_combined_ranking(paper_db, capsys):
    assert main(["rank", "--db", str(paper_db)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["rank", "url", "frequency", "weightage", "ttl"]
    assert [int(line.split()[1].rsplit("page", 1)[1]) for line in lines[1:]] == COMBINED
    assert lines[1].split() == ["1", "http://trdinfotech.com/page11", "100", "34", "80"]


def test_rank_command_json_and_limit(paper_db, capsys):
    assert main(["rank", "--db", str(paper_db), "--by", "weightage", "--limit", "3", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["rank"] for r in rows] == [1, 2, 3]
    assert numbers(rows) == BY_WEIGHTAGE[:3]


def test_rank_command_missing_store(tmp_path, capsys):
    assert main(["rank", "--db", str(tmp_path / "none.db")]) == 2
    assert "no visit store" in capsys.readouterr().err
    assert not (tmp_path / "none.db").exists()


def test_report_command_writes_figures_and_index(paper_db, tmp_path, capsys):
    items = tmp_path / "items.jsonl"
    items.write_text(
        "\n".join(json.dumps({"url": f"http://x/{i}", "status": 200, "form_only": i % 2 == 0,
                              "depth": i % 3, "fetched_at": float(i)}) for i in range(20)),
        encoding="utf-8",
    )  # fmt: skip
    out = tmp_path / "report"
    assert main(["report", "--db", str(paper_db), "--items", str(items), "-o", str(out)]) == 0
    for name in ("coverage.png", "depth.png", "ranking.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "coverage.png" in page and "http://trdinfotech.com/page11" in page
