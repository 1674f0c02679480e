"""The visit store: the paper's update algorithm (paper 002 §5), idempotent visit log, freshness."""

from __future__ import annotations

import pytest

from hiddenweb.store import Visit, VisitStore, fresh_until, visit_from_item


@pytest.fixture
def store(tmp_path):
    with VisitStore(tmp_path / "store.db") as s:
        yield s


def page(store, url):
    return next(row for row in store.rank("frequency") if row["url"] == url)


def test_new_url_gets_frequency_1_weightage_time_ttl_availability(store):
    store.record([Visit("c:1", "http://x/a", 12.5, True, 100.0),
                  Visit("c:2", "http://x/b", 3.0, False, 101.0)])  # fmt: skip
    a, b = page(store, "http://x/a"), page(store, "http://x/b")
    assert (a["frequency"], a["weightage"], a["ttl"]) == (1, 12.5, 1)
    assert (b["frequency"], b["weightage"], b["ttl"]) == (1, 3.0, 0)


def test_known_url_adds_one_time_and_availability(store):
    store.record([Visit("c:1", "http://x/a", 2.0, True, 100.0, status=200)])
    result = store.record([Visit("c:2", "http://x/a", 5.0, False, 90.0, status=503),
                           Visit("c:3", "http://x/a", 1.0, True, 110.0, status=304)])  # fmt: skip
    assert (result.new_pages, result.updated_pages, result.duplicates) == (0, 2, 0)
    a = page(store, "http://x/a")
    assert (a["frequency"], a["weightage"], a["ttl"]) == (3, 8.0, 2)
    assert (a["first_seen"], a["last_seen"], a["last_status"]) == (90.0, 110.0, 304)
    assert store.check() == []


def test_latest_fields_follow_visit_time_not_commit_order(store):
    store.record([Visit("c:2", "http://x/a", 1, True, 200.0, status=200, fingerprint="new")])
    store.record([Visit("c:1", "http://x/a", 1, False, 100.0, status=500, fingerprint="old")])
    a = page(store, "http://x/a")
    assert (a["last_status"], a["fingerprint"], a["last_seen"]) == (200, "new", 200.0)


def test_visit_written_twice_counts_once(store):
    visits = [Visit(f"c:{i}", "http://x/a", 1.0, True, float(i)) for i in range(5)]
    store.record(visits[:3])
    result = store.record(visits)
    assert (result.written, result.duplicates) == (2, 3)
    assert page(store, "http://x/a")["frequency"] == 5
    assert store.counts() == {"visits": 5, "pages": 1, "frequency": 5}


def test_failed_batch_writes_nothing(store):
    good = Visit("c:1", "http://x/a", 1.0, True, 1.0)
    bad = Visit("c:2", None, 1.0, True, 2.0)  # type: ignore[arg-type]  # NOT NULL url
    with pytest.raises(Exception, match="NOT NULL"):
        store.record([good, bad])
    assert store.counts() == {"visits": 0, "pages": 0, "frequency": 0}


def test_reopen_keeps_data_and_schema_once(tmp_path):
    with VisitStore(tmp_path / "s.db") as s:
        s.record([Visit("c:1", "http://x/a", 1.0, True, 1.0)])
    with VisitStore(tmp_path / "s.db") as s:
        s.record([Visit("d:1", "http://x/a", 1.0, True, 2.0)])
        assert s.counts() == {"visits": 2, "pages": 1, "frequency": 2}
        applied = [m.name for m in __import__("hiddenweb.store").store.migrations.applied(s.db)]
        assert applied == ["m001_visits_and_pages", "m002_form_class"]
        assert s.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_post_form_answers_are_distinct_pages(store):
    store.record([
        Visit("c:1", "http://x/search", 1, True, 1, method="POST", form={"q": "a"}),
        Visit("c:2", "http://x/search", 1, True, 2, method="POST", form={"q": "b"}),
        Visit("c:3", "http://x/search", 1, True, 3, method="POST", form={"q": "a"}),
    ])  # fmt: skip
    rows = store.rank("frequency")
    assert [(r["frequency"], r["form"]) for r in rows] == [(2, '{"q": "a"}'), (1, '{"q": "b"}')]
    targets = store.recrawl_targets("frequency")
    assert [(t.method, t.formdata) for t in targets] == [("POST", {"q": "a"}), ("POST", {"q": "b"})]


def test_hidden_is_cleared_by_one_link_visit(store):
    store.record([Visit("c:1", "http://x/h", 1, True, 1, hidden=True),
                  Visit("c:2", "http://x/p", 1, True, 1, hidden=True),
                  Visit("c:3", "http://x/p", 1, True, 2, hidden=False),
                  Visit("c:4", "http://x/h", 1, True, 3, hidden=None)])  # fmt: skip
    assert page(store, "http://x/h")["hidden"] == 1
    assert page(store, "http://x/p")["hidden"] == 0


@pytest.mark.parametrize(
    ("cache_control", "expires", "expected"),
    [
        ("public, max-age=60", None, 1060.0),
        ("max-age=60", "Thu, 01 Jan 1970 00:00:00 GMT", 1060.0),  # max-age wins
        ("no-store", None, 1000.0),
        ('no-cache="set-cookie"', None, 1000.0),
        ("max-age=abc", None, 1000.0),
        (None, "Thu, 01 Jan 1970 00:16:40 GMT", 1000.0),
        (None, "Thu, 01 Jan 1970 01:00:00 GMT", 3600.0),
        (None, "0", 1000.0),  # invalid Expires: already expired
        ("private", None, None),
        (None, None, None),
        ([b"max-age=10"], None, 1010.0),
    ],
)
def test_fresh_until(cache_control, expires, expected):
    assert fresh_until(cache_control, expires, 1000.0) == expected


def item(**overrides):
    base = {
        "url": "http://x/a", "final_url": "http://x/a", "method": "GET", "status": 200,
        "error": None, "depth": 2, "referrer": "http://x/", "title": "A", "fingerprint": "f",
        "reached_by": {"kind": "link", "form": None}, "form_only": False,
        "fetch_seconds": 0.5, "fetched_at": 1000.0, "content_type": "text/html",
    }  # fmt: skip
    return {**base, **overrides}


def test_visit_from_item():
    v = visit_from_item(item(), "c:1")
    assert (v.url, v.seconds, v.available, v.at, v.hidden, v.reached_by) == (
        "http://x/a", 0.5, True, 1000.0, False, "link")  # fmt: skip
    assert v.fresh_until is None
    assert visit_from_item(item(status=404), "c:2").available is False
    assert visit_from_item(item(status=None, error="DNS"), "c:3").available is False
    v = visit_from_item(item(cache_control="max-age=30", expires=None), "c:4")
    assert v.fresh_until == 1030.0
    form = {"action": "http://x/s", "method": "POST", "fields": {"q": "x"}, "form_class": "search"}
    v = visit_from_item(item(method="POST", form_only=True,
                             reached_by={"kind": "form", "form": form}), "c:5")  # fmt: skip
    assert (v.method, v.form, v.hidden, v.reached_by) == ("POST", {"q": "x"}, True, "form")


def test_recrawl_targets_skip_dead_and_fresh(store):
    store.record([
        Visit("c:1", "http://x/live", 1, True, 1),
        Visit("c:2", "http://x/dead", 1, False, 1),
        Visit("c:3", "http://x/fresh", 1, True, 1, fresh_until=5000.0),
        Visit("c:4", "http://x/stale", 1, True, 1, fresh_until=500.0),
    ])  # fmt: skip
    urls = [t.url for t in store.recrawl_targets("frequency", now=1000.0)]
    assert urls == ["http://x/live", "http://x/stale"]
    urls = [t.url for t in store.recrawl_targets("frequency", now=1000.0, skip_fresh=False)]
    assert urls == ["http://x/live", "http://x/fresh", "http://x/stale"]
    assert len(store.recrawl_targets("frequency", now=1000.0, limit=1)) == 1
