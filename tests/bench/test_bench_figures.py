"""HWDLA fig. 4's precision-recall computation against hand-counted values on a real site."""

from hiddenweb.bench.coverage import Truth
from hiddenweb.bench.figures import precision_recall
from hiddenweb.bench.provingground.site import SiteModel


def test_precision_recall_counts_new_hidden_pages_per_threshold():
    site = SiteModel(pages=200, seed=3)
    truth = Truth.of(site)
    hidden = sorted(k for k in truth.hidden if truth.pages[k]["action"]["method"] == "GET")[:2]
    public = [k for k, p in truth.pages.items() if not p["hidden"] and k != "p/0"][:2]

    def item(key, score):
        return {"url": truth.pages[key]["url"], "method": "GET", "status": 200,
                "reached_by": {"kind": "link", "form": None}, "action_score": score}

    items = [item(hidden[0], 0.9), item(public[0], 0.8), item(hidden[1], 0.5),
             item(hidden[0], 0.5),  # a repeat: not a new hidden page
             item(public[1], 0.2), {**item(public[1], None)}]  # unscored: ignored
    assert precision_recall(site, truth, items) == [
        (0.9, 1.0, 0.5),  # 1 predicted, 1 hit, 1 of 2 hidden pages
        (0.8, 0.5, 0.5),
        (0.5, 0.5, 1.0),  # 4 predicted, 2 hits
        (0.2, 0.4, 1.0),
    ]
    assert precision_recall(site, truth, [item(public[0], 0.7)]) == []
