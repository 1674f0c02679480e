"""Values harvested from hidden pages, blind budgets per endpoint, parent kinds in the DLA, and
the effect of both on a crawl of a served proving-ground site."""

from __future__ import annotations

import pytest
from crawlrun import hidden_found_on_off  # tests/ is on sys.path (rootdir)
from dlakit import SITE, drain, link, make
from parsel import Selector

from hiddenweb.dla.kinds import kinds, parent_kind
from hiddenweb.forms.endpoint import offer_record
from hiddenweb.forms.explorer import FormExplorer
from hiddenweb.forms.extract import extract_forms
from hiddenweb.forms.lvs import LVS, LVSError, LVSLabel
from hiddenweb.forms.records import BlindBudget, endpoint, form_state, record_fields

RECORD = """<html><body><h1>Tulip Fence 1</h1>
<ul><li>city: Springfield</li><li>region: MA</li><li>keywords: fern, tulip</li>
<li>author: Orwell, George</li><li><a href="/x">Not a pair</a></li></ul>
<dl><dt>Publisher</dt><dd>Secker &amp; Warburg</dd></dl>
<table><tr><th>Year</th><td>1949</td></tr><tr><td>a</td><td>b</td><td>c</td></tr></table>
<p>Note: prose with a colon is not a record field</p></body></html>"""

LOCATE = """<form action="/c/2/locate" method="post">
<input type="hidden" name="region" value="MA">
<input type="hidden" name="csrf" value="9f8e7d6c5b4a3f2e">
<label for="c">City</label><input id="c" name="city"></form>"""


def locate_explorer(region: str = "MA", budget: BlindBudget | None = None,
                    cities: int = 100) -> FormExplorer:
    html = LOCATE.replace('value="MA"', f'value="{region}"')
    form = extract_forms(Selector(text=html), "http://h/s")[0]
    lvs = LVS([LVSLabel("city", ["city", "town"], [f"c{i}" for i in range(cities)])])
    explorer = FormExplorer(form, lvs, limit=400, wave=4, patience=5, learn=0, blind=budget)
    return explorer


def test_record_fields_reads_label_value_pairs() -> None:
    record = record_fields(Selector(text=RECORD))
    assert record == {"city": ["Springfield"], "region": ["MA"], "keywords": ["fern", "tulip"],
                      "author": ["Orwell, George"], "publisher": ["Secker & Warburg"],
                      "year": ["1949"]}


def test_form_state_and_endpoint() -> None:
    assert form_state("POST /c/2/locate [city] {region=MA}") == {"region": "MA"}
    assert form_state("GET /s [q]") == {}
    assert endpoint("post", "http://h:8080/c/2/locate?x=1") == "POST /c/2/locate"


def test_offer_record_matches_fields_and_respects_the_wizard_state() -> None:
    explorer = locate_explorer("MA")
    lvs = LVS([LVSLabel("city", ["city", "town"], [])])
    # another region's record is not an answer this form can give
    assert offer_record(explorer, {"city": ["Houston"], "region": ["TX"]}, lvs) == 0
    # the label matches through the LVS label ("town" is a keyword of "city")
    assert offer_record(explorer, {"town": ["Springfield"], "region": ["MA"]}, lvs) == 1
    assert offer_record(explorer, {"city": ["springfield"]}, lvs) == 0  # already queued
    first = explorer.first()
    assert first[0]["city"] == "Springfield" and explorer.is_suggested(first[0])
    assert not any(explorer.is_suggested(d) for d in first[1:])  # then the blind LVS order


def test_suggestions_leave_at_once_even_with_the_wave_in_flight() -> None:
    explorer = locate_explorer()
    assert len(explorer.first()) == 4 and explorer.in_flight == 4
    for i in range(3):
        explorer.suggest("city", f"shown{i}")
    released = explorer.release()
    assert [d["city"] for d in released] == ["shown0", "shown1", "shown2"]


def test_blind_budget_is_shared_by_an_endpoint_then_suggestions_take_over() -> None:
    budget = BlindBudget(20)
    forms = [locate_explorer(region, budget) for region in ("MA", "TX")]
    queue = [(e, d) for e in forms for d in e.first()]
    answered = 0
    while queue:
        e, d = queue.pop(0)
        answered += 1
        queue += [(e, n) for n in e.feedback(d, False)]
    # both forms stop once the endpoint's 20 misses are spent (plus what was in flight)
    assert budget.spent and 20 <= answered <= 20 + 2 * 4
    assert all(e.paused and not e.exhausted for e in forms)
    # idle: another budget; TX finds something, MA (never hit) stops guessing but a value
    # shown by TX's results for MA still goes out
    ma, tx = forms
    sent = tx.resume()
    assert sent and not budget.spent
    tx.feedback(sent[0], True)
    assert budget.hits == 1 and ma.paused
    assert ma.suggest("city", "Springfield") == 1 and not ma.paused
    assert [d["city"] for d in ma.release()] == ["Springfield"]


def test_parent_kinds() -> None:
    assert parent_kind("form:POST /c/2/locate [city] {region=MA}") == "form:POST /c/2/locate [city]"
    assert parent_kind("url:ex.org/catalog?brand&size") == "url:ex.org/catalog"
    assert parent_kind("url:ex.org/p/{n}") is None
    action = {"kind": "form", "page": "/", "label": "", "source": "harvest",
              "form": {"signature": "POST /l [city] {region=MA}", "fields": {"city": "x"}}}
    assert kinds(action, SITE + "/l")[:3] == [
        "form:POST /l [city] {region=MA}", "form:POST /l [city]", "src:harvest"]


def test_new_kind_starts_from_its_parent_and_follows_it() -> None:
    s = make()
    for path in ("/start", "/catalog", "/catalog?brand=a", "/catalog?size=1", "/p/1"):
        s.enqueue_request(link("/", path))
    start, first = s.next_request(), s.next_request()
    assert first.url == SITE + "/catalog"
    for _ in range(5):  # the facets' parent keeps failing
        s.learn(first.meta, first.url, "penalty")
    s.learn(start.meta, start.url, "reward")  # ... while a public link found a form
    parent = s.kind_score("url:ex.org/catalog")
    assert parent < 0.5 < s.kind_score("links:public")
    # facet templates never fetched score as their parent (below links:public, where the
    # unseen /p/{n} starts), and were re-ordered when it fell
    assert s.kind_score("url:ex.org/catalog?brand") == parent
    assert drain(s) == ["/p/1", "/catalog?brand=a", "/catalog?size=1"]
    # a harvested submission is a better bet than an unknown kind before any feedback
    assert s.kind_score("src:harvest") > 0.5


def test_harvest_finds_hidden_pages_sooner_on_a_served_site(served_site, tmp_path) -> None:
    """Same site, same crawl, harvesting on and off: at least the same hidden pages in the end
    (every form still gets its submissions), all of them reached with fewer downloads, and
    harvested values are really sent."""
    on, on_stats, off, off_stats = hidden_found_on_off(served_site, tmp_path,
                                                       "form_harvest")
    assert on_stats.get("hiddenweb/forms/harvested_values", 0) > 0
    assert "hiddenweb/forms/harvested_values" not in off_stats
    assert set(on) >= set(off) and len(off) > 50

    def downloads_to(found: dict[str, int], share: float) -> int:
        return sorted(found.values())[int(share * len(found)) - 1]

    # the last hidden pages, behind values only the results show, come much sooner
    assert downloads_to(on, 1.0) < downloads_to(off, 1.0)


def test_lvs_within_orders_a_wizard_forms_values(tmp_path) -> None:
    (tmp_path / "geo.toml").write_text(
        '[city]\nlabels = ["city"]\nvalues = ["Boston", "Houston", "Worcester", "Austin", '
        '"Springfield", "Riverton"]\n\n'
        '[city.within.region]\nMA = ["Worcester", "Boston", "Springfield"]\n'
        'TX = ["Houston", "Austin"]\nIL = ["Springfield"]\n')
    lvs = LVS.from_dir(tmp_path)
    city = lvs.get("city")
    assert city.values_within({"Region": "ma"}) == ["Worcester", "Boston", "Springfield"]
    assert city.values_within({"colour": "MA"}) == []
    # placed only under another region: Springfield is in MA too, Riverton is not placed
    assert city.values_elsewhere({"Region": "ma"}) == {"Houston", "Austin"}
    assert city.values_elsewhere({"region": "WA"}) == set()  # a key the table does not know
    assert city.values_elsewhere({"colour": "MA"}) == set()
    form = extract_forms(Selector(text=LOCATE), "http://h/s")[0]  # region=MA, fixed
    explorer = FormExplorer(form, lvs, limit=10, wave=4, patience=5, learn=0)
    queue, asked = explorer.first(), []
    while queue:
        d = queue.pop(0)
        asked.append(d["city"])
        queue += explorer.feedback(d, False)
    assert set(asked[:3]) == {"Boston", "Worcester", "Springfield"}
    assert sorted(asked) == ["Boston", "Riverton", "Springfield", "Worcester"]  # no TX city
    # nor when the form's answers show one (a record from the TX form of the same endpoint)
    assert explorer.suggest("city", "houston") == 0 and explorer.suggest("city", "Waco") == 1


def test_lvs_within_errors_name_the_file_and_line(tmp_path) -> None:
    bad = tmp_path / "geo.toml"
    bad.write_text('[city]\nlabels = ["city"]\nvalues = ["Boston"]\n\n'
                   '[city.within.region]\nMA = []\n')
    with pytest.raises(LVSError) as exc:
        LVS.from_dir(tmp_path)
    assert str(exc.value) == (f"{bad}, line 5, table [city.within.region]: "
                              "'MA' must be a non-empty list of strings")


def test_label_word_kinds_can_be_switched_off() -> None:
    def kinds_of(settings: dict, hidden: bool = False) -> list[str]:
        s = make(settings)
        request = link("/", "/a", label="Garden tools")
        if hidden:
            request.meta["hiddenweb_action"]["hidden"] = True
        s.enqueue_request(request)
        ks = s.next_request().meta["hiddenweb_dla_kinds"]
        assert (ks[-1] == "links:public") is not hidden  # the public links' root, always
        return [k for k in ks[1:] if k != "links:public"]

    assert kinds_of({"HIDDENWEB_LAB": {"dla_label_words": False}}) == []
    assert kinds_of({"HIDDENWEB_LAB": {"dla_label_words": "none"}}, hidden=True) == []
    assert kinds_of({}) == []  # default "answers": a public link's label is not a kind
    assert kinds_of({}, hidden=True) == ["hword:garden", "hword:tools"]
    assert kinds_of({"HIDDENWEB_LAB": {"dla_label_words": "all"}}) == ["word:garden", "word:tools"]
    assert kinds_of({"HIDDENWEB_LAB": {"dla_label_words": "1"}}) == ["word:garden", "word:tools"]
    with pytest.raises(ValueError, match="dla_label_words must be one of"):
        make({"HIDDENWEB_LAB": {"dla_label_words": "some"}})


def test_a_slow_start_sends_the_defaults_alone_and_grows_by_the_answers() -> None:
    """``first_wave`` (a form submitted in Chromium: lab knob ``form_browser_slow_start``):
    the defaults go alone; an answer that found nothing releases one submission, a new page
    two, never more than ``wave`` in flight."""
    form = extract_forms(Selector(text=LOCATE), "http://h/s")[0]
    lvs = LVS([LVSLabel("city", ["city", "town"], [f"c{i}" for i in range(50)])])
    slow = FormExplorer(form, lvs, limit=400, wave=4, patience=50, learn=0,
                        defaults_first=True, first_wave=1)
    first = slow.first()
    assert first == [{}] and slow.in_flight == 1
    nothing = slow.feedback({}, False)
    assert len(nothing) == 1 and slow.in_flight == 1
    new = slow.feedback(nothing[0], True)
    assert len(new) == 2 and slow.in_flight == 2
    more = slow.feedback(new[0], True) + slow.feedback(new[1], True)
    assert len(more) == 2 + 2 and slow.in_flight == 4 == slow.wave  # capped by the wave
    whole = FormExplorer(form, lvs, limit=400, wave=4, patience=50, learn=0,
                         defaults_first=True)
    assert len(whole.first()) == 4  # without it: the defaults and a whole wave at once
