"""Co-occurrence of LVS values on the site's pages, and how a form's answers reorder its values
(hiddenweb.forms.values, FormExplorer affinity)."""

from math import sqrt

from parsel import Selector

from hiddenweb.forms.explorer import FormExplorer
from hiddenweb.forms.extract import extract_forms
from hiddenweb.forms.lvs import LVS, LVSLabel
from hiddenweb.forms.values import WordPages


def test_similarity_is_the_cosine_of_the_page_sets():
    pages = WordPages(["fern", "tulip", "stock", "garden"])
    pages.add_page({"fern", "tulip", "other"})  # page 0
    pages.add_page({"fern", "tulip"})  # page 1
    pages.add_page({"fern", "stock"})  # page 2
    assert pages.pages == 3
    assert pages.bits["fern"] == 0b111 and pages.bits["tulip"] == 0b011
    assert "other" not in pages.bits  # untracked words cost nothing
    assert pages.similarity("fern", "tulip") == 2 / sqrt(3 * 2)
    assert pages.similarity("tulip", "stock") == 0.0
    assert pages.similarity("garden", "fern") == 0.0  # on no page
    assert pages.similarity("Tulip", "tulip") == 1.0  # words, case-folded
    assert pages.value_bits("stock fern") == 0b111  # a value's pages: any of its words
    # the kin of one value among many: its pages read once, only those sharing a page
    assert dict(pages.kin("fern", ["tulip", "stock", "garden", None])) == {
        "tulip": 2 / sqrt(3 * 2), "stock": 1 / sqrt(3 * 1)}
    assert list(pages.kin("garden", ["fern"])) == []


def test_pages_past_the_cap_are_not_recorded():
    pages = WordPages(["fern"], max_pages=2)
    for _ in range(5):
        pages.add_page({"fern"})
    assert pages.pages == 2 and pages.bits["fern"] == 0b11


def test_only_open_labels_are_tracked():
    lvs = LVS([LVSLabel("keyword", ["keyword"], ["fern", "Stock market"], open=True),
               LVSLabel("city", ["city"], ["Boston"])])
    assert set(WordPages.for_lvs(lvs).bits) == {"fern", "stock", "market"}


def _search_form():
    html = '<form action="/s"><label for="q">Keyword</label><input id="q" name="q"></form>'
    return extract_forms(Selector(text=html), "http://h/")[0]


GARDEN = ["fern", "tulip", "rose", "moss", "ivy", "oak"]
FINANCE = ["stock", "bond", "bank", "loan", "tax", "fund"]


def _topic_site() -> tuple[LVS, WordPages]:
    """Two subjects: garden words go together on the site's pages, finance words too."""
    a, b = GARDEN, FINANCE
    lvs = LVS([LVSLabel("keyword", ["keyword"], a + b, open=True)])
    pages = WordPages.for_lvs(lvs)
    for k in range(6):
        pages.add_page(set(a[:k + 1]) | set(a[k:]))  # every a-word, on 2 to 6 a-pages
        pages.add_page(set(b) - {b[k]})
    return lvs, pages


def _ask(explorer: FormExplorer, answer, n: int) -> list[str]:
    queue, asked = explorer.first(), []
    while queue and len(asked) < n:
        d = queue.pop(0)
        asked.append(d["q"])
        hit = answer(d["q"])
        queue += explorer.feedback(d, hit, empty=not hit)
    return asked


def test_a_miss_sends_its_company_back_and_a_hit_brings_it_forward():
    """The form's page speaks of the garden (a slight prior), but the box indexes finance
    words: after one garden word answers "no results", the finance words go first, and after
    one of them answers with results they stay first. Without co-occurrence the garden words
    keep their place."""
    def answer(q: str) -> bool:
        return q in FINANCE

    def prior(v: str) -> float:  # every value is on the site's pages; garden ones on its own
        return 1.0 + 1.0 * (v in GARDEN)

    lvs, pages = _topic_site()
    with_company = FormExplorer(_search_form(), lvs, limit=100, wave=1, patience=1000, learn=0,
                                prior=prior, cooccur=pages)
    asked = _ask(with_company, answer, 6)
    assert asked[0] in GARDEN
    assert all(q in FINANCE for q in asked[1:6])
    assert with_company.reorders >= 2

    lvs, pages = _topic_site()
    without = FormExplorer(_search_form(), lvs, limit=100, wave=1, patience=1000, learn=0,
                           prior=prior)
    asked = _ask(without, answer, 6)
    assert all(q in GARDEN for q in asked[:6])


def test_a_repeat_that_is_not_no_results_moves_nothing():
    """An answer that is neither new nor "no results" (a synonym's result page seen before)
    says nothing about the value's subject."""
    lvs, pages = _topic_site()
    explorer = FormExplorer(_search_form(), lvs, limit=100, wave=1, patience=1000, learn=0,
                            prior=lambda v: 1.0 * (v in GARDEN), cooccur=pages)
    d = explorer.first()[0]
    explorer.feedback(d, False, empty=False)
    assert explorer.reorders == 0 and not any(explorer.affinity_score[0].values())


def test_misses_never_bring_forward_a_value_the_site_does_not_show():
    """Affinity scales the prior (a value's odds): a value on none of the site's pages has no
    prior and no company, so after the site's garden words answer nothing it stays behind the
    finance words the site does show (an additive score would lift it past them, and at 10^4
    pages that cost 250 downloads: docs/design-notes.md, form_affinity)."""
    lvs, pages = _topic_site()
    lvs = LVS([LVSLabel("keyword", ["keyword"], GARDEN + FINANCE + ["zebra", "quasar"],
                        open=True)])
    explorer = FormExplorer(_search_form(), lvs, limit=100, wave=1, patience=1000, learn=0,
                            prior=lambda v: (2.0 * (v in GARDEN) + 1.0 * (v in FINANCE)),
                            cooccur=pages)
    asked = _ask(explorer, lambda q: False, 12)
    assert asked[0] in GARDEN and set(asked) == set(GARDEN + FINANCE)


def test_a_crawl_reorders_by_company_only_when_asked(served_site, tmp_path):
    """The demo site crawled with lab knob form_affinity on and off: on, the spider feeds the
    site's pages to the explorers and their probes reorder the search boxes' values (the stat);
    off, nothing is reordered. Reordering changes when a value is sent, not which hidden pages
    the crawl ends with."""
    from crawlrun import hidden_found_on_off  # tests/ is on sys.path (rootdir)

    on, on_stats, off, off_stats = hidden_found_on_off(served_site, tmp_path,
                                                       "form_affinity")
    assert on_stats.get("hiddenweb/forms/affinity_reorders", 0) > 0
    assert "hiddenweb/forms/affinity_reorders" not in off_stats
    assert len(off) > 50 and set(on) == set(off)


def test_a_search_box_sweeps_its_own_page_words_first():
    """The words of the form's own page (:class:`PagePrior`) go to its open field, and are
    swept before the LVS's other values even after some of them answered "no results" and
    their company on the site's pages (which is the form's page itself) lost odds: the box
    indexes a few of the page's words, not the LVS's general ones (the demo site's science
    search box met one of its words after 4 to 880 downloads without this)."""
    from collections import Counter

    from hiddenweb.forms.values import PagePrior

    page = "Home Logout Galaxy survey: galaxy nebula quasar orbit pulsar. Delete. Links: sport"
    # the finance words are on more of the site's pages than the page's own words
    site = Counter({"home": 20, "links": 20, "sport": 5, "galaxy": 1, "nebula": 1,
                    **dict.fromkeys(FINANCE, 19)})
    prior = PagePrior(page, site, site_pages=20)
    # no stop words, no navigation (on 90 % of the pages), nothing harmful, first seen first
    assert prior.words == ["galaxy", "survey", "nebula", "quasar", "orbit", "pulsar", "sport"]
    lvs = LVS([LVSLabel("keyword", ["keyword"], FINANCE + ["orbit", "nebula"], open=True)])
    pages = WordPages.for_lvs(lvs)
    pages.add_page(set(prior.page))  # the form's page: every page word keeps company there
    for word in FINANCE:
        pages.add_page({word})
    explorer = FormExplorer(_search_form(), lvs, limit=100, wave=1, patience=1000, learn=0,
                            prior=prior, cooccur=pages, page_words=True)
    asked = _ask(explorer, lambda q: q == "pulsar", 7)
    assert set(asked) == set(prior.words)  # the page's seven words, before any finance word
    assert explorer.new_pages == 1

    off = FormExplorer(_search_form(), lvs, limit=100, wave=1, patience=1000, learn=0,
                       prior=prior, cooccur=pages)
    assert "pulsar" not in off.values[0]  # the lab knob off: the LVS's values only


def test_page_words_that_never_answer_lose_their_place(monkeypatch):
    """A box that indexes none of its page's words: after PAGE_TRIES of them answered "no
    results", the others (here the finance words, on more of the site's pages) go first."""
    from collections import Counter

    import hiddenweb.forms.explorer as explorer_module
    from hiddenweb.forms.values import PagePrior

    monkeypatch.setattr(explorer_module, "PAGE_TRIES", 3)
    page = "galaxy nebula quasar orbit pulsar comet meteor"
    prior = PagePrior(page, Counter(dict.fromkeys(FINANCE, 40)), site_pages=50)
    lvs = LVS([LVSLabel("keyword", ["keyword"], FINANCE, open=True)])
    pages = WordPages.for_lvs(lvs)
    explorer = FormExplorer(_search_form(), lvs, limit=100, wave=1, patience=1000, learn=0,
                            prior=prior, cooccur=pages, page_words=True)
    asked = _ask(explorer, lambda q: q in FINANCE, 7)
    assert all(q in prior.words for q in asked[:3])
    assert all(q in FINANCE for q in asked[3:7])


def test_page_words_come_from_the_pages_own_text():
    """Links, headings, labels and buttons name the site's parts, not what a box indexes: with
    the page's content text, only the paragraph's words are offered (the prior still counts
    every word the page shows)."""
    from collections import Counter

    from scrapy.http import HtmlResponse

    from hiddenweb.forms.values import PagePrior
    from hiddenweb.pagetext import content_text

    html = (b"<html><body><nav><a href='/'>Archive</a></nav><h2>Search the collection</h2>"
            b"<p>galaxy nebula pulsar</p><form><label>Keywords <input name=q></label>"
            b"<button>Find</button></form><ul><li><a href='/p/2'>virus</a></li></ul></body></html>")
    response = HtmlResponse("http://h/p/1", body=html, encoding="utf-8")
    text = "Archive Search the collection galaxy nebula pulsar Keywords Find virus"
    prior = PagePrior(text, Counter(), content=content_text(response))
    assert prior.words == ["galaxy", "nebula", "pulsar"]
    assert prior("virus") > prior("stock")  # shown on the page: still weighs
