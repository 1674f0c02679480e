from parsel import Selector

from hiddenweb.forms import classify, extract_forms, looks_like_no_results, plan_submissions
from hiddenweb.lvs import LVS, LVSLabel

PAGE = """<html><body>
<form action="/search" method="get"><label for="kw">Keyword</label>
  <input id="kw" name="q" required><input type="hidden" name="csrf" value="t0k">
  <button>Search</button></form>
<form action="/products"><select name="category" required><option value="">Choose</option>
  <option value="tools">Tools</option><option value="toys">Toys</option></select>
  <input type="radio" name="colour" value="red"><input type="radio" name="colour" value="blue">
  <input type="checkbox" name="instock" value="1"></form>
<form action="/login" method="post"><input name="user"><input type="password" name="pw"></form>
<form action="/register" method="post"><input name="email" type="email">
  <input type="password" name="pw"><input type="password" name="pw2"></form>
<form action="/contact" method="post"><input name="name"><input name="email" type="email">
  <textarea name="message"></textarea><button>Send</button></form>
<form action="/account/delete" method="post"><input type="checkbox" name="confirm">
  <button>Delete my account</button></form>
<form action="/checkout" method="post"><input name="card_number"><input name="cvv"></form>
<form action="/logout" method="post"><button>Sign out</button></form>
</body></html>"""


def forms():
    return extract_forms(Selector(text=PAGE), "http://127.0.0.1:8000/page")


def test_extracts_fields_domains_and_labels():
    search, filt, *_ = forms()
    assert search.action == "http://127.0.0.1:8000/search" and search.method == "GET"
    q = next(f for f in search.fields if f.name == "q")
    assert q.kind == "text" and q.required and q.descriptors[0] == "Keyword"
    assert {f.name: f.kind for f in filt.fields} == {
        "category": "select", "colour": "radio", "instock": "checkbox"}
    assert next(f for f in filt.fields if f.name == "colour").options == ["red", "blue"]


def test_classification_of_every_kind():
    assert [classify(f) for f in forms()] == [
        "search", "filter", "login", "signup", "contact", "destructive", "payment",
        "destructive"]


def test_plan_uses_lvs_for_text_and_domains_for_finite_fields():
    lvs = LVS([LVSLabel("keyword", ["keyword", "search"], ["a", "b", "c"])])
    search, filt, *_ = forms()
    plan = plan_submissions(search, lvs, limit=10)
    assert sorted(a["q"] for a in plan.assignments) == ["a", "b", "c"]
    assert plan.lvs_labels == {"q": "keyword"}
    plan = plan_submissions(filt, lvs, limit=100)
    assert plan.space == 2 * 2 * 2  # required select drops its empty option
    assert len({tuple(sorted(a.items(), key=str)) for a in plan.assignments}) == 8


def test_plan_is_bounded_and_deterministic_on_large_spaces():
    lvs = LVS([LVSLabel("keyword", ["keyword"], [str(i) for i in range(10_000)])])
    search = forms()[0]
    one = plan_submissions(search, lvs, limit=25)
    assert len(one.assignments) == 25 and one.space == 10_000
    assert one.assignments == plan_submissions(search, lvs, limit=25).assignments


def test_required_text_field_without_lvs_label_is_unfillable():
    lvs = LVS([LVSLabel("city", ["city"], ["x"])])
    plan = plan_submissions(forms()[0], lvs, limit=10)
    assert plan.assignments == [] and plan.unfillable == ["q"]


def test_required_select_with_only_a_placeholder_is_unfillable():
    # a dependent select before its script ran (issue 5): no city yet, so nothing to submit
    page = ("<form action='/c/4/locate' method='post'><select name='region' required>"
            "<option value='MA'>MA</option><option value='TX'>TX</option></select>"
            "<select name='city'{}><option value=''>Choose a region first</option>"
            "</select><button>Find</button></form>")
    form = extract_forms(Selector(text=page.format(" required")), "http://127.0.0.1:8000/")[0]
    plan = plan_submissions(form, LVS([]), limit=10)
    assert plan.assignments == [] and plan.unfillable == ["city"]
    # the same select, not required: it may be sent empty
    form = extract_forms(Selector(text=page.format("")), "http://127.0.0.1:8000/")[0]
    plan = plan_submissions(form, LVS([]), limit=10)
    assert sorted(a["region"] for a in plan.assignments) == ["MA", "TX"]
    assert {a["city"] for a in plan.assignments} == {""} and plan.unfillable == []


def test_form_without_fields_plans_nothing():
    empty = extract_forms(Selector(text="<form action='/x'></form>"), "http://h/")[0]
    assert plan_submissions(empty, LVS([]), limit=5).assignments == []


def test_no_results_detection():
    assert looks_like_no_results("Search - No results for 'zzz'")
    assert not looks_like_no_results("12 results for 'car'")
