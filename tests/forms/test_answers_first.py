"""Answers first (lab knob ``form_answers_first``): after an endpoint's first result, its forms'
blind guesses wait while its answers are read and while what they show leaves nothing to guess
(:class:`hiddenweb.harvest.ShownValues`, :attr:`hiddenweb.formexplore.FormExplorer.holding`)."""

from __future__ import annotations

from typing import Any

from crawlrun import hidden_found_on_off
from parsel import Selector
from test_harvest import LOCATE, locate_explorer  # tests/ is on sys.path (rootdir)

from hiddenweb.forms.endpoint import offer_record
from hiddenweb.forms.explorer import FormExplorer
from hiddenweb.forms.extract import extract_forms
from hiddenweb.forms.lvs import LVS, LVSLabel
from hiddenweb.forms.records import BlindBudget, ShownValues

AUTHOR = {"author": "name"}  # record label -> form field


def test_chao1_counts_only_values_beyond_the_query() -> None:
    shown = ShownValues()
    # a record listed for the query shows the query's own value: no evidence of others
    assert shown.add({"author": ["Orwell"]}, AUTHOR, {"name": "orwell "}) == 0
    assert shown.unseen() is None and not shown.complete
    # a label the form has no field for is not counted
    assert shown.add({"year": ["1949"]}, AUTHOR, {"name": "Orwell"}) == 0
    for author in ("Woolf", "Kafka", "Camus"):
        shown.add({"author": [author]}, AUTHOR, {"name": "Orwell"})
    # f1 = 3, f2 = 0: f1 (f1 - 1) / 2 = 3 values not shown yet
    assert shown.unseen() == 3.0 and not shown.complete
    shown.add({"author": ["woolf"]}, AUTHOR, {"name": "Orwell"})  # case does not matter
    # f1 = 2 (Kafka, Camus), f2 = 1 (Woolf): f1^2 / (2 f2) = 2
    assert shown.counts["name"] == {"woolf": 2, "kafka": 1, "camus": 1}  # the form's field
    assert shown.unseen() == 2.0 and not shown.complete
    shown.add({"author": ["Kafka", "Camus"]}, AUTHOR, {"name": "Orwell"})
    # every value seen twice: f1 = 0, nothing left to guess
    assert shown.unseen() == 0.0 and shown.complete
    # the worst label decides: a second label still showing new values
    for kw in ("fern", "tulip"):
        shown.add({"keywords": [kw]}, {"keywords": "q"}, {"q": "rose"})
    assert shown.unseen() == 1.0 and not shown.complete


def test_guesses_wait_while_answers_are_read_and_while_nothing_is_left_to_guess() -> None:
    budget = BlindBudget(0)
    explorer = locate_explorer(budget=budget, cities=20)
    first = explorer.first()
    assert len(first) == 4  # no result yet: nothing is held
    # the first result; its answers are not read yet, and nothing was sampled: go on guessing
    released = explorer.feedback(first[0], True)
    assert budget.hits == 1 and len(released) == 1 and not explorer.holding  # wave 4
    # the answer's links are now to be read (the spider keeps the count): guesses wait
    budget.reading = 3
    assert explorer.holding and explorer.feedback(first[1], False) == []
    assert explorer.holds == 1  # a slot was free, and left empty
    # ... but a value an answer showed goes at once
    assert explorer.suggest("city", "Springfield") == 1
    assert [d["city"] for d in explorer.release()] == ["Springfield"]
    # read; the records beyond the queries show one LVS city twice and nothing else: no value
    # is left that they have not shown, so only that city may leave, no guess (their label,
    # "town", is not the field's name: the sample is kept by field)
    budget.reading = 0
    city = next(v for v in explorer.values[0] if (v,) not in explorer.tried)
    for _ in range(2):
        budget.shown.add({"town": [city]}, {"town": "city"}, {"city": "elsewhere"})
    assert budget.shown.complete and explorer.holding
    assert [d["city"] for d in explorer.feedback(first[2], False)] == [city]  # a slot frees
    assert explorer.feedback(first[3], False) == [] and explorer.holds == 2
    # a record shows a city seen once: something may be left to find, guesses go again
    budget.shown.add({"city": ["c9"]}, {"city": "city"}, {"city": "c1"})
    budget.shown.add({"city": ["c11"]}, {"city": "city"}, {"city": "c1"})
    assert not budget.shown.complete and not explorer.holding
    out = explorer.release()
    assert out
    # the spider is idle: nothing else is left to download, so a hold ends for good
    budget.shown.add({"city": ["c9"]}, {"city": "city"}, {"city": "c1"})
    budget.shown.add({"city": ["c11"]}, {"city": "city"}, {"city": "c1"})
    assert budget.shown.complete and explorer.holding
    pending = [released[0], {"city": city}, {"city": "Springfield"}, *out]
    while pending:  # every answer comes back; only values the records showed leave
        more = explorer.feedback(pending.pop(0), False)
        assert all(d["city"] in ("c9", "c11") for d in more)
        pending += more
    assert budget.flying == 0 and explorer.in_flight == 0 and explorer.holding
    assert explorer.resume() and not explorer.holding


def test_a_crawl_holds_guesses_only_with_the_setting_and_finds_the_same_pages(
        served_site, tmp_path) -> None:
    """The demo site, crawled with the setting on and off: on, guesses are held (the stat);
    off, never, and nothing is read for it; both end with the same hidden pages (a hold only
    moves guesses later: the last ones go when nothing else is left)."""
    on, on_stats, off, off_stats = hidden_found_on_off(served_site, tmp_path,
                                                       "form_answers_first")
    assert on_stats.get("hiddenweb/forms/guesses_held", 0) > 0
    assert "hiddenweb/forms/guesses_held" not in off_stats
    assert set(on) == set(off) and len(on) > 50


def test_the_forms_of_an_endpoint_share_one_wave_of_guesses() -> None:
    """A wizard's region forms query one collection: before any answer, their guesses together
    stay within one wave; an answer frees a slot for any of them; suggestions go beyond it."""
    budget = BlindBudget(0)
    ma, tx = (locate_explorer(region, budget, cities=10) for region in ("MA", "TX"))
    sent = ma.first()
    assert len(sent) == 4 and budget.flying == 4
    assert tx.first() == []  # the endpoint's wave is out
    assert tx.suggest("city", "Houston") == 1
    assert [d["city"] for d in tx.release()] == ["Houston"] and budget.flying == 4
    assert ma.feedback(sent[0], False) and budget.flying == 4  # MA's answer, MA's next guess
    ma.feedback(sent[1], False)
    ma.feedback(sent[2], False)  # ... each answer releases one: still a wave
    assert budget.flying == 4 and tx.release() == []
    ma.limit = ma.submitted  # MA has nothing more to send: its answers free slots for TX
    ma.feedback(sent[3], False)
    assert budget.flying == 3 and len(tx.release()) == 1 and budget.flying == 4


ARCHIVE = """<form method="post" action="/c/3/archive">
<label for="a">Author</label> <input id="a" name="name">
<label for="y">Year</label> <select id="y" name="yr"><option value="any">Any</option>
<option>2012</option><option>2013</option><option>2014</option></select>
<input type="submit" value="Search the archive"></form>"""


def test_a_record_narrows_its_value_and_unshown_narrowings_wait() -> None:
    """A record shows its author and year side by side: that pair is a narrowing its answer
    holds, suggested at once; a narrowing no record showed (Christie in 2012) is a guess, held
    like any other until the spider is idle."""
    budget = BlindBudget(0)
    form = extract_forms(Selector(text=ARCHIVE), "http://h/s")[0]
    lvs = LVS([LVSLabel("author", ["author", "name"], ["Agatha Christie", "Ian Fleming"])])
    explorer = FormExplorer(form, lvs, limit=400, wave=4, patience=50, learn=0, blind=budget)
    author = explorer.values[0][1]  # not the default: a narrowing of it moves two fields
    pending = explorer.first()  # the default, then one field at a time
    while (hit := {"name": author, "yr": "any"}) not in pending:
        pending += explorer.feedback(pending.pop(0), False)
    pending.remove(hit)
    budget.reading = 1  # the spider counts the answer's links before its feedback
    pending += explorer.feedback(hit, True)  # a result: its narrowings become candidates
    assert explorer.holding and explorer._guess((author, "2012"))  # no record showed it
    assert not [d for d in pending if d["name"] == author and d["yr"] != "any"]
    # the answer's record: each value alone (both known already), and the two together
    assert offer_record(explorer, {"author": [author], "year": ["2013"]}, lvs) == 1
    together = {"name": author, "yr": "2013"}
    assert explorer.release() == [together] and explorer.is_suggested(together)
    assert not explorer._guess((author, "2013")) and not explorer._guess((author, "any"))
    pending += explorer.feedback(together, True)
    assert explorer.stats[1]["2013"][1] == 0  # a known narrowing teaches no year's worth
    while pending:  # every other answer comes back empty: no unshown narrowing leaves
        more = explorer.feedback(pending.pop(0), False)
        assert not [d for d in more if d["name"] == author and d["yr"] not in ("any", "2013")]
        pending += more
    assert explorer.holds
    budget.reading = 0  # read, and the spider is idle: the held narrowings go
    resumed = explorer.resume()
    assert not explorer.holding and {"name": author, "yr": "2012"} in resumed


def _guesses_held_for_two_answers(forms: Any) -> tuple[FormExplorer, Any]:
    """A search form of the spider's ``forms`` (a :class:`~hiddenweb.forms.crawl.FormCrawler`)
    whose first answer was a result, two of whose answers' links are still to be read (tokens
    1 and 2): its next guess is held, a slot of its wave left empty."""
    budget = BlindBudget(0)
    form = extract_forms(Selector(text=LOCATE, base_url="http://h/s"), "http://h/s")[0]
    lvs = LVS([LVSLabel("city", ["city", "town"], [f"c{i}" for i in range(20)])])
    explorer = FormExplorer(form, lvs, limit=400, wave=4, patience=50, learn=0, blind=budget)
    ep = forms._endpoint(explorer.endpoint)
    ep.budget = budget
    ep.explorers.append(explorer)
    forms.explorers[explorer.signature] = explorer
    first = explorer.first()
    explorer.feedback(first[0], True)  # a result: its answers' links are to be read
    ep.reading.update({1, 2})
    forms._reading_changed(ep)
    assert explorer.feedback(first[1], False) == [] and explorer.holding  # a slot left empty
    return explorer, ep


def test_guesses_held_for_answers_still_to_be_read_go_when_the_crawl_may_close_stale() -> None:
    """The stale rule's ``stale_limit_reached``: a crawl about to close will not read the
    answers an endpoint's guesses wait for, so the hold ends (as when the spider is idle) and
    what it releases is sent at once, marked awaited (the rule then waits for it as for a new
    form's first answers). Nothing held: nothing sent."""
    from scrapy.utils.test import get_crawler

    from hiddenweb.pagetext import AWAITED_META
    from hiddenweb.signals import stale_limit_reached
    from hiddenweb.spiders.hwdla import HwdlaSpider

    crawler = get_crawler(HwdlaSpider, {"HIDDENWEB_BROWSER": "never"})
    spider = HwdlaSpider.from_crawler(crawler, seed="http://h/")
    crawler.stats.open_spider()
    sent: list = []
    crawler.engine = type("Engine", (), {"crawl": staticmethod(sent.append)})()
    forms = spider.forms
    assert forms.stale_limit(spider) == 0 and sent == []

    explorer, ep = _guesses_held_for_two_answers(forms)
    answers = crawler.signals.send_catch_log(stale_limit_reached, spider=spider)
    assert [n for _, n in answers] == [len(sent)] and len(sent) >= 1
    assert not ep.reading and not explorer.holding
    assert all(r.meta[AWAITED_META] is True and r.meta["hiddenweb_explore"] for r in sent)


def test_guesses_wait_for_answers_the_scheduler_keeps_back_only_a_while() -> None:
    """An endpoint's answers still to be read that the scheduler does not serve (their links'
    kind sank) hold its guesses for ``form_reading_patience`` downloaded requests at most: once
    that many were read with none of its answers among them, the hold ends and the held guess
    is released (stat ``hiddenweb/forms/reading_given_up``). A read answer starts the count
    again; a request dropped as a duplicate is not a download and does not count. With the
    knob at 0 the guesses wait until the answers are read (or the crawl may close)."""
    from scrapy.utils.test import get_crawler

    from hiddenweb.spiders.hwdla import HwdlaSpider

    for patience in (5, 0):
        crawler = get_crawler(HwdlaSpider, {"HIDDENWEB_BROWSER": "never",
                                            "HIDDENWEB_LAB": {"form_reading_patience": patience}})
        spider = HwdlaSpider.from_crawler(crawler, seed="http://h/")
        crawler.stats.open_spider()
        forms = spider.forms
        explorer, ep = _guesses_held_for_two_answers(forms)
        other = {"hiddenweb_origin": "GET /elsewhere"}
        for _ in range(3):
            forms.answer_read(other)  # other pages read
        forms.answer_read({"hiddenweb_origin": ep.key, "hiddenweb_reading": 1})  # one answer
        for _ in range(10):
            forms.answer_read(other, downloaded=False)  # duplicates dropped: no download
        for _ in range(4):
            forms.answer_read(other)
        assert ep.reading == {2} and explorer.holding  # 4 downloads since the answer was read
        forms.answer_read(other)
        if patience:
            assert not ep.reading and not explorer.holding
            assert crawler.stats.get_value("hiddenweb/forms/reading_given_up") == 1
            assert [r.meta["hiddenweb_explore"] for r in forms.release_read()] \
                == [explorer.signature]
        else:
            assert ep.reading == {2} and explorer.holding
            assert crawler.stats.get_value("hiddenweb/forms/reading_given_up") is None
            assert list(forms.release_read()) == []
