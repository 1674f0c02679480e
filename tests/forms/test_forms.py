from parsel import Selector

from hiddenweb.forms.classify import classify
from hiddenweb.forms.explorer import FormExplorer
from hiddenweb.forms.extract import extract_forms
from hiddenweb.forms.lvs import LVS, LVSLabel
from hiddenweb.forms.records import looks_like_no_results
from hiddenweb.forms.values import field_domains

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


def test_domains_use_lvs_for_text_and_own_options_for_finite_fields():
    lvs = LVS([LVSLabel("keyword", ["keyword", "search"], ["a", "b", "c"])])
    search, filt, *_ = forms()
    domains, labels, unfillable = field_domains(search, lvs)
    assert sorted(dict(domains)["q"]) == ["a", "b", "c"]
    assert labels == {"q": "keyword"} and unfillable == []
    domains, _, _ = field_domains(filt, lvs)
    assert [len(values) for _, values in domains] == [2, 2, 2]  # required select: no empty


def test_an_explorer_is_bounded_on_large_spaces_and_deterministic():
    lvs = LVS([LVSLabel("keyword", ["keyword"], [str(i) for i in range(10_000)])])
    search = forms()[0]

    def run() -> list[dict]:
        explorer = FormExplorer(search, lvs, limit=25, wave=4, patience=10_000, learn=0)
        sent, pending = [], explorer.first()
        while pending:
            data = pending.pop(0)
            sent.append(data)
            pending += explorer.feedback(data, False)
        return sent + [d for d in explorer.resume()]

    one = run()
    assert len(one) == 25 and len({d["q"] for d in one}) == 25
    assert one == run()


def test_a_text_field_no_lvs_label_matches_takes_the_site_values_not_nothing():
    lvs = LVS([LVSLabel("city", ["city"], ["x"])])
    domains, labels, unfillable = field_domains(forms()[0], lvs)
    assert unfillable == [] and labels["q"] == "site:q" and dict(domains)["q"] == [""]
    assert FormExplorer(forms()[0], lvs, limit=10).fillable


def test_the_first_submission_is_the_form_as_the_page_gives_it():
    lvs = LVS([LVSLabel("keyword", ["keyword", "search"], ["a", "b", "c"])])
    explorer = FormExplorer(forms()[0], lvs, limit=10, wave=3, defaults_first=True)
    first = explorer.first()
    assert first[0] == {} and len(first) == 3 and all(d.get("q") for d in first[1:])
    assert len(explorer.feedback({}, True)) == 1  # its answer frees one slot of the wave
    empty = extract_forms(Selector(text="<form action='/x'><button>Show all</button></form>"),
                          "http://h/")[0]
    once = FormExplorer(empty, LVS([]), limit=5, defaults_first=True)
    assert once.first() == [{}] and once.done and once.feedback({}, True) == []


def test_required_select_with_only_a_placeholder_is_unfillable():
    # a dependent select before its script ran (issue 5): no city yet, so nothing to submit
    page = ("<form action='/c/4/locate' method='post'><select name='region' required>"
            "<option value='MA'>MA</option><option value='TX'>TX</option></select>"
            "<select name='city'{}><option value=''>Choose a region first</option>"
            "</select><button>Find</button></form>")
    form = extract_forms(Selector(text=page.format(" required")), "http://127.0.0.1:8000/")[0]
    assert field_domains(form, LVS([]))[2] == ["city"]
    # the same select, not required: it may be sent empty
    form = extract_forms(Selector(text=page.format("")), "http://127.0.0.1:8000/")[0]
    domains, _, unfillable = field_domains(form, LVS([]))
    assert dict(domains) == {"region": ["MA", "TX"], "city": [""]} and unfillable == []


def test_form_without_fields_has_nothing_to_fill():
    empty = extract_forms(Selector(text="<form action='/x'></form>"), "http://h/")[0]
    assert field_domains(empty, LVS([]))[0] == []
    assert not FormExplorer(empty, LVS([]), limit=5).fillable


def test_no_results_detection():
    assert looks_like_no_results("Search - No results for 'zzz'")
    assert not looks_like_no_results("12 results for 'car'")
