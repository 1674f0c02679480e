"""The herder's stopping rule, maxdepth and label pre-filter on small hand-made sites."""

from hiddenweb.lostsheep.herder import Herder


class DictSite:
    def __init__(self, links, texts):
        self.links, self.texts, self.downloads = links, texts, []

    def out_links(self, page):
        return self.links.get(page, [])

    def text(self, page):
        return self.texts[page]

    def download(self, page):
        self.downloads.append(page)


def test_threshold_reached_returns_the_lost_sheep():
    site = DictSite(
        {"home": [("a", "contact"), ("b", "contact gallery"), ("c", "news")]},
        {"home": "", "a": "contact phone address contact", "b": "phone image", "c": "x"},
    )
    # plain S=3 (B=0, Q=2). a: label hit -> 0, page hit,hit,hit... never quits: f = 1+4 = 5.
    # b: label hit 0, miss 1; page: phone hit 0, image miss 1 -> f = 4, survives.
    # c: label "news" miss -> 1, survives; page "x" miss -> 2 = Q: f = 2.
    herder = Herder("contact phone address", states=3, twofold=False, threshold=0.4, start="B")
    result = herder.run(site, "home")
    assert result.reason == "threshold" and result.page == "a"
    assert result.f_best == 5 and abs(result.ratio - 5 / 11) < 1e-9
    assert site.downloads == ["home", "a", "b", "c"]


def test_prefilter_drops_a_sheep_on_its_label_and_never_downloads_it():
    site = DictSite(
        {"home": [("a", "contact us"), ("g", "image gallery photos")]},
        {"home": "", "a": "contact phone contact phone contact", "g": "contact contact contact"},
    )
    # plain S=3 from B: "image", "gallery" are two misses: 1, 2 = Q, f = 2 ("photos" unread), page
    # g is never fetched. a: "us" is a stop-word, contact stays B, five hits: f = 6; 6 / 8.
    herder = Herder("contact phone", states=3, twofold=False, threshold=0.6, start="B")
    result = herder.run(site, "home")
    assert "g" not in site.downloads
    assert result.page == "a" and result.reason == "threshold"
    assert result.downloads == 2  # home and a
    assert abs(result.ratio - 6 / 8) < 1e-9  # the pre-filtered sheep's f = 2 is in the sum


def test_maxdepth_stops_a_walk_below_the_threshold():
    # a chain where every page has two equally good children: the ratio stays 1/2 < 0.75
    links = {f"p{i}": [(f"p{i + 1}", "contact"), (f"q{i}", "contact")] for i in range(10)}
    texts = {f"p{i}": "contact" for i in range(11)} | {f"q{i}": "contact" for i in range(10)}
    site = DictSite(links, texts)
    herder = Herder("contact", states=3, twofold=False, threshold=0.75, maxdepth=3,
                    start="B")
    result = herder.run(site, "p0")
    assert result.reason == "maxdepth" and result.rounds == 3
    assert result.path == ["p0", "p1", "p2", "p3"]
    assert len(set(site.downloads)) == len(site.downloads) == result.downloads == 7


class StringsOnly:
    """A generated site seen only through strings (no fast path): the herder analyses text."""

    def __init__(self, graph):
        from hiddenweb.bench.lostsheep.graphs import GraphSite

        self.site = GraphSite(graph)

    def out_links(self, page):
        return self.site.out_links(page)

    def text(self, page):
        return self.site.text(page)

    def download(self, page):
        self.site.download(page)


def test_graph_fast_path_equals_reading_the_strings():
    import numpy as np

    from hiddenweb.bench.lostsheep.graphs import GraphSite, draw_task, generate_site

    for i in range(6):
        rng = np.random.default_rng([5, 300, i])
        graph = generate_site(300, rng)
        _, query = draw_task(graph, rng)
        words = [graph.vocab[w] for w in query.tolist()]
        for states, twofold in ((3, False), (100, True)):
            herder = Herder(words, states=states, twofold=twofold, threshold=0.75)
            fast, slow = GraphSite(graph), StringsOnly(graph)
            a, b = herder.run(fast, 0), herder.run(slow, 0)
            assert (a.page, a.path, a.reason, a.f_best) == (b.page, b.path, b.reason, b.f_best)
            assert fast.downloaded == slow.site.downloaded and a.downloads == len(fast.downloaded)
