"""``hiddenweb bench pagecost``: a real-site run's logged replies read again by hwdla's page
readers. The input is the logging proxy's ``requests.jsonl`` (its documented format,
``hiddenweb/bench/realsites/proxy.py``); no server is involved in the measure itself."""

from __future__ import annotations

import json

import pytest

from hiddenweb.bench import pagecost
from hiddenweb.cli import main

TABLE = ("<html><body><h1>Cars</h1><form action='/q'><select name='o'><option>USA</option>"
         "<option>Japan</option></select><input type=submit value=Go></form><table>"
         "<tr><th>Name</th><th>Year</th></tr>"
         + "".join(f"<tr><td><a href='/cars/{i}'>car {i}</a></td><td>19{i:02d}</td></tr>"
                   for i in range(40))
         + "</table><a href='/logout'>Log out</a><ul><li>City: Oslo</li></ul></body></html>")


def _entry(path: str, status: int, ctype: str, body: str) -> str:
    return json.dumps({"i": 1, "t": 0.1, "method": "GET", "path": path, "status": status,
                       "ctype": ctype, "req_ctype": "", "req_body": "", "body": body})


@pytest.fixture
def run_dir(tmp_path):
    log = tmp_path / "work" / "demo" / "hwdla" / "requests.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text("\n".join([
        _entry("/", 200, "text/html; charset=utf-8", TABLE),
        _entry("/about", 200, "text/html", "<html><body><p>About us</p></body></html>"),
        _entry("/missing", 404, "text/html", "<html><body>Not found</body></html>"),
        _entry("/api.json", 200, "application/json", '{"a": 1}'),
        _entry("/empty", 200, "text/html", ""),
    ]) + "\n")
    return tmp_path


def test_only_the_logged_html_pages_are_read_and_each_stage_is_timed(run_dir):
    assert [url for url, _ in pagecost.logged_pages(run_dir, "demo")] == [
        "http://127.0.0.1:8000/", "http://127.0.0.1:8000/about"]
    [row] = pagecost.run(run_dir, passes=2)
    assert row["site"] == "demo" and row["pages"] == 2
    stages = [row[f"{stage}_ms"] for stage in pagecost.STAGES]
    assert all(ms >= 0 for ms in stages)
    assert row["total_ms"] > 0
    assert row["total_ms"] == pytest.approx(sum(stages), abs=0.01 * len(stages))


def test_the_command_prints_json_with_the_code_measured(run_dir, capsys):
    assert main(["bench", "pagecost", str(run_dir), "--json", "--passes", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["site"] for r in out["rows"]] == ["demo"]
    assert out["code"]["dir"] and "commit" in out["code"]


def test_a_directory_without_request_logs_is_a_clear_error(tmp_path, capsys):
    assert main(["bench", "pagecost", str(tmp_path)]) == 2
    assert "no site crawled by hwdla" in capsys.readouterr().err
    with pytest.raises(FileNotFoundError, match="no request log"):
        pagecost.logged_pages(tmp_path, "demo")
