"""`scrapy crawl hwdla -a recrawl=1`: revisit the visit store's pages in rank order and update it
(the paper's crawl → record → rank → filter loop), against a served proving-ground site."""

from __future__ import annotations

from crawlrun import crawl

from hiddenweb.store import VisitStore


def test_recrawl_revisits_due_pages_and_updates_the_store(served_site, tmp_path):
    store = tmp_path / "store.db"
    common = {"HIDDENWEB_STORE_ENABLED": "1", "HIDDENWEB_STORE_PATH": str(store),
              "HIDDENWEB_BROWSER": "never"}
    first, log, code = crawl(tmp_path / "a", "-a", f"seed={served_site.url}/",
                             settings={**common, "CLOSESPIDER_PAGECOUNT": "60"})
    assert code == 0, log[-2000:]
    with VisitStore(store) as db:
        due = db.recrawl_targets(by="combined")
        before = db.counts()
    assert before["visits"] == len(first) and due
    expected = {(t.url, t.method) for t in due}

    second, log, code = crawl(tmp_path / "b", "-a", "recrawl=1", settings=common)
    assert code == 0, log[-2000:]
    assert f"Recrawl: {len(due)} stored pages due" in log
    assert {(i["url"], i["method"]) for i in second} <= expected
    assert len(second) == len(due)  # revisited, not expanded: no link or form followed
    assert all(i["reached_by"]["kind"] == "recrawl" for i in second)
    with VisitStore(store) as db:
        after = db.counts()
        assert db.check() == []
    assert after["visits"] == before["visits"] + len(second)
    assert after["pages"] == before["pages"]  # the same pages, one more visit each


def test_recrawl_without_a_store_says_so(tmp_path):
    items, log, code = crawl(tmp_path, "-a", "recrawl=1",
                             settings={"HIDDENWEB_STORE_ENABLED": "1",
                                       "HIDDENWEB_STORE_PATH": str(tmp_path / "none.db")})
    assert code == 0 and items == []
    assert "no visit store at" in log or "no stored page is due" in log
