"""Import of user visit records (CSV, JSON lines, access logs): all or nothing, clear errors."""

from __future__ import annotations

import pytest

from hiddenweb.cli import main
from hiddenweb.store import VisitStore
from hiddenweb.visits import VisitImportError, import_visits, read_visits


@pytest.fixture
def store(tmp_path):
    with VisitStore(tmp_path / "store.db") as s:
        yield s


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def pages(store):
    return {r["url"]: (r["frequency"], r["weightage"], r["ttl"]) for r in store.rank("frequency")}


def test_csv(store, tmp_path):
    path = write(tmp_path, "v.csv", "url,seconds,available,extra\n"
                 "http://a/1,3.5,1,x\nhttp://a/2,2,false,\n\nhttp://a/1,1.5,yes,\n")  # fmt: skip
    read, result = import_visits(store, path)
    assert (read, result.written, result.new_pages) == (3, 3, 2)
    assert pages(store) == {"http://a/1": (2, 5.0, 2), "http://a/2": (1, 2.0, 0)}


def test_jsonl_and_reimport_counts_once(store, tmp_path):
    path = write(tmp_path, "v.jsonl", '{"url": "http://a/1", "seconds": 4, "available": true}\n\n'
                 '{"url": "http://a/1", "seconds": 1, "available": 0, "at": "2024-01-01T00:00:00+00:00"}\n')  # fmt: skip  # noqa: E501
    import_visits(store, path)
    _, again = import_visits(store, path)
    assert (again.written, again.duplicates) == (0, 2)
    assert pages(store) == {"http://a/1": (2, 5.0, 1)}
    assert store.rank("frequency")[0]["first_seen"] == 1704067200.0


LOG = (
    '10.0.0.1 - - [10/Oct/2024:13:55:00 +0000] "GET /a HTTP/1.1" 200 100 "-" "UA1"\n'
    '10.0.0.2 - - [10/Oct/2024:13:55:10 +0000] "GET /a HTTP/1.1" 200 100 "-" "UA2"\n'
    '10.0.0.1 - - [10/Oct/2024:13:55:30 +0000] "GET /b?q=1 HTTP/1.1" 404 10 "-" "UA1"\n'
    '10.0.0.1 - - [10/Oct/2024:15:00:00 +0000] "GET /a HTTP/1.1" 200 100 "-" "UA1"\n'
    '10.0.0.1 - - [10/Oct/2024:15:00:45 +0000] "GET /b?q=1 HTTP/1.1" 200 100 "-" "UA1"\n'
)


def test_access_log_dwell_time(store, tmp_path):
    path = write(tmp_path, "access.log", LOG)
    import_visits(store, path, base_url="http://site.test/")
    # /a: 30 s (next request of 10.0.0.1), 0 s (last of 10.0.0.2), 45 s; /b: 0 s (gap > 30 min
    # ends the session), 0 s (last request); /b was a 404 once.
    assert pages(store) == {
        "http://site.test/a": (3, 75.0, 3),
        "http://site.test/b?q=1": (2, 0.0, 1),
    }


def test_access_log_served_time(store, tmp_path):
    path = write(tmp_path, "served.log",
                 '1.2.3.4 - - [10/Oct/2024:13:55:00 +0000] "GET /a HTTP/1.1" 200 5 2500000\n'
                 '1.2.3.4 - bob [10/Oct/2024:13:55:01 +0000] "GET /a HTTP/1.0" 503 5 500000\n')  # fmt: skip  # noqa: E501
    import_visits(store, path, "log", log_seconds="served")
    assert pages(store) == {"/a": (2, 3.0, 1)}


@pytest.mark.parametrize(
    ("name", "text", "fmt", "message"),
    [
        ("v.csv", "url,seconds\nhttp://a,1\n", None, ":1: CSV header needs url,seconds,available; "
         "missing available"),
        ("v.csv", "url,seconds,available\nhttp://a,1,1\nhttp://b,-2,1\n", None,
         ":3: seconds must be a finite number >= 0"),
        ("v.csv", "url,seconds,available\nhttp://a,1,1\nhttp://b,1,maybe\n", None,
         ":3: available must be 1/0 or true/false, not 'maybe'"),
        ("v.csv", "url,seconds,available\nhttp://a,1,1,9\n", None,
         ":2: more fields than the header"),
        ("v.csv", "url,seconds,available\n,1,1\n", None, ":2: url is missing or empty"),
        ("v.jsonl", '{"url": "http://a", "seconds": 1, "available": 1}\n{"url": \n', None,
         ":2: invalid JSON"),
        ("v.jsonl", '[1, 2]\n', None, ":1: expected a JSON object"),
        ("v.jsonl", '{"url": "http://a", "seconds": "x", "available": 1}\n', None,
         ":1: seconds must be a number, not 'x'"),
        ("v.jsonl", '{"url": "http://a", "seconds": 1, "available": 1, "at": "yesterday"}\n', None,
         ":1: at must be UNIX time or ISO 8601"),
        ("access.log", LOG + "garbage\n", None, ":6: not a Common/Combined Log Format line"),
        ("a.log", LOG, None, ":1: no %D field"),
    ],
)  # fmt: skip
def test_errors_name_file_and_line_and_write_nothing(store, tmp_path, name, text, fmt, message):
    path = write(tmp_path, name, text)
    with pytest.raises(VisitImportError) as info:
        import_visits(store, path, fmt, log_seconds="served" if name == "a.log" else "dwell")
    assert str(info.value).startswith(str(path) + ":")
    assert message in str(info.value)
    assert store.counts() == {"visits": 0, "pages": 0, "frequency": 0}


def test_not_utf8(tmp_path):
    path = tmp_path / "v.csv"
    path.write_bytes(b"url,seconds,available\nhttp://a/\xff,1,1\n")
    with pytest.raises(VisitImportError, match=r"v\.csv:2: not UTF-8"):
        read_visits(path)


def test_unknown_format(tmp_path):
    with pytest.raises(ValueError, match="give --format"):
        read_visits(write(tmp_path, "visits.dat", ""))


def test_command(tmp_path, capsys):
    path = write(tmp_path, "v.dat", "url,seconds,available\nhttp://a/1,2,1\n")
    db = tmp_path / "cli.db"
    assert main(["visits", "import", str(path), "--db", str(db), "--format", "csv"]) == 0
    assert "1 visits read, 1 written (1 new pages, 0 updated)" in capsys.readouterr().out
    bad = write(tmp_path, "bad.csv", "url,seconds,available\nhttp://a/2,2,1\nhttp://a/3,x,1\n")
    assert main(["visits", "import", str(bad), "--db", str(db)]) == 2
    assert f"{bad}:3: seconds must be a number" in capsys.readouterr().err
    with VisitStore(db) as store:
        assert store.counts()["visits"] == 1
