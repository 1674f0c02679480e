"""The paper's generated sites: copy model, Zipf degrees, topical text, labels and queries.

Paper: Goodwin, "A solution to the exact match on rare item searches", section "Generated
directed graphs" (experimental protocol). Contract: :func:`generate_site` returns a
:class:`SiteGraph` whose every page is reachable from the start page ``0``; :func:`draw_task`
draws the target page (uniform over all pages) and the query; :class:`GraphSite` exposes the
graph through the herder's site interface and counts downloads.

Instrument change (issue 4, second session): the link structure is no longer acyclic. What
changed: the first calibration ("evolving", still available as ``GraphParams(evolving=True)``)
took every in-link of page ``v`` from an *older* page, a DAG in which every walk runs into
newer, sparser pages and ends at a leaf (half of the LS walks at N=100 ended there). The paper
says the evolving part of the copy model "is not relevant and is not implemented", and gives the
herder a ``maxdepth`` "to prevent infinite loops", which only a graph with cycles can have; real
sites link back too. Now (``evolving=False``, the default): every page keeps one copy-model
*tree* in-link from an older page (so page 0 still reaches every page and hubs still form), and
its other ``d_v - 1`` in-links come from pages of any age (:func:`_links_static`). Second
change, same session: a page's links are listed in random order (``shuffle_links``); they were
sorted by target id, i.e. by page age, so "the first link" -- every tie-break of the herder and
of SIM/DEG/SIMDEG -- meant "the oldest page", a hub; the paper's edge set has no order. No other
parameter was changed, and every algorithm was measured again after both changes
(``out/emris-table.jsonl``, 150 runs). The first calibration is ``GraphParams(evolving=True,
shuffle_links=False)``. Non-LS reference points afterwards (threshold 0.75, N = 100 / 1000 /
10000, automaton with ``Q = S-1``): OPTIMAL D 2.8 / 3.1 / 3.6 (paper 2.74 / 2.87 / 2.01); HMM
S=3 0.63 / 0.45 / 0.20 (paper 0.69 / 0.45 / 0.09); HMM S=100 0.77 / 0.46 / 0.13 (paper 0.71 /
0.30 / 0.07); SIM 0.38 / 0.10 / 0.03 (paper 0.07 / 0.05 / 0.04: ours downloads every neighbour,
so it sees the target more often). The change did not help every algorithm alike: on the same
automaton, LS2F S=100 went from 0.25 to 0.49 (N=100) and 0.10 to 0.20 (N=1000), A* from 0.37 to
0.45 and 0.13 to 0.12, SIM from 0.37 to 0.38 and 0.14 to 0.10, HMM S=100 0.75 to 0.77 and 0.46
to 0.46: walkers no longer end in a leaf of a DAG. It was made for the paper's text above, not
for those figures.

First calibration (unchanged parameters, evolving graph). The unstated parameters were chosen
so that the *non-LS* reference points approach the paper's difficulty, without looking at any
LS figure while choosing: OPTIMAL's D (paper 2.74/2.87/2.01), HMM S=3 accuracy (downloads all;
paper 0.69/0.45/0.09 at threshold 0.75) and SIM accuracy (paper 0.07/0.05/0.04), N =
100/1000/10000. Before (10-40 words, 20x100 words drawn afresh, labels 1-4, middle start):
OPTIMAL D 3.5/4.4/5.2, HMM S=3 0.23/0.15/0.07, SIM 0.23/0.03/0.01. After (the defaults below:
Zipf exponent 1.2, 40 topics x 100 keywords = 4000, pages of 100-400 words over K=10 keywords
with Zipf(1) frequencies, labels 1-5 words, 4 query words drawn by position, start at B):
OPTIMAL D 2.9/3.3/3.7, HMM S=3 0.69/0.53/0.33 (100 runs), SIM 0.37/0.14/0.02.

Issue 28: named generators (:data:`VARIANTS`). ``issue4`` is ``GraphParams()``, the generator
described above; ``calibrated`` switches on a second link structure (:func:`_links_sectioned`:
a start page of ``round(a N^b)`` section links, a shallower copy-model hierarchy, a text-less
site map whose reach grows with N) and text fitted to the paper's *baseline* rows (OPTIMAL,
SIM, HMM; never LS) by :mod:`~.calibrate`. Every parameter's source and the fit are in
``docs/lostsheep.md``.

Choices where the paper is vague (fixed a priori, not tuned to any algorithm):

- Copy model (Kumar et al. 2000 [6]) run in the direction that makes a *site* (with
  ``evolving=True``; the default differs as described above): pages arrive one by one; new
  page ``v`` picks a prototype ``u`` uniformly among older pages and gets ``d_v`` in-links,
  ``d_v`` Zipf-distributed (exponent ``zipf_exponent``, at most ``max_degree``); each in-link
  comes from a uniformly random older page with probability ``copy_random`` and otherwise
  copies one of ``u``'s in-link sources.
  Copying makes out-degrees Zipf (old pages, the start page first, become hubs); ``d_v >= 1``
  from an older page makes every page reachable from page 0. That graph is acyclic.
- Text: ``topics`` topics of ``topic_words`` words each (disjoint slices of a synthetic
  vocabulary standing in for the Norwegian LOS keywords [28], which are not available here).
  A page takes its first parent's topic with probability ``topic_inherit`` (linked pages are
  topically related [3], [4]), else a uniform topic. It has ``Uniform[min_words, max_words]``
  words, each from its topic with probability ``topic_focus`` else from the whole vocabulary.
  Vocabulary words are letters-only pseudo-words that are their own English stem and no
  stop-word, so a page's text *is* its stem sequence (checked at build time).
- Label of link ``j -> k``: ``Uniform[min_label, max_label]`` words, each with probability
  ``alpha`` a word of page ``k``'s text (a random position, so frequent words are likelier),
  else a random vocabulary word not on page ``k``.
- Query: ``query_words`` distinct words (4, as the paper's example ``q = [contact, about, phone,
  address]``), each with probability ``alpha`` a word at a random position of the target's text
  (``query_by_position``; frequent words likelier, as for labels), else a word of the site
  outside the target. ``alpha = 0.75``.
- Text with ``page_keywords = K > 0``: a page draws K keywords (from its topic with probability
  ``topic_focus``) and its words from them with Zipf(``keyword_zipf``) frequencies by rank.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from hiddenweb.lostsheep.text import STOP_WORDS, _stemmer

logger = logging.getLogger(__name__)

_CONSONANTS = "bdfgklmnprstv"
_VOWELS = "aeiou"


@dataclass(frozen=True)
class GraphParams:
    """Generator parameters (see the module docstring for their meaning)."""

    alpha: float = 0.75
    zipf_exponent: float = 1.2
    max_degree: int = 100
    copy_random: float = 0.5
    topics: int = 40
    topic_words: int = 100
    topic_inherit: float = 0.5
    topic_focus: float = 0.8
    min_words: int = 100
    max_words: int = 400
    page_keywords: int = 10  # 0: every word drawn afresh; K > 0: K keywords, Zipf frequencies
    keyword_zipf: float = 1.0
    min_label: int = 1
    max_label: int = 5
    query_words: int = 4
    query_by_position: bool = True
    evolving: bool = False  # True: the acyclic generator of the first calibration
    shuffle_links: bool = True  # False: links in target-id order, as in the first calibration
    # issue 28, the calibrated structure (used when start_a > 0; docs/lostsheep.md):
    start_a: float = 0.0  # the start page links to round(start_a * N ** start_b) pages
    start_b: float = 0.0
    shortcut_a: float = 0.0  # a page gets a link from the site-map hub with probability
    shortcut_b: float = 0.0  # min(1, shortcut_a * (N / 100) ** shortcut_b)
    hub_words: int = -1  # the site-map hub's text length (-1: drawn like any page's)
    parent_power: float = 1.0  # a tree parent is drawn among the oldest ceil(v ** p) pages


#: named generators: ``issue4`` is the generator of issues 4 and 28's first steps (the
#: ``GraphParams()`` defaults), ``evolving`` its first, acyclic calibration, ``calibrated`` the
#: structure and text fitted to the paper's baselines (issue 28, ``docs/lostsheep.md``)
VARIANTS: dict[str, GraphParams] = {
    "issue4": GraphParams(),
    "evolving": GraphParams(evolving=True, shuffle_links=False),
    "calibrated": GraphParams(
        start_a=2.5, start_b=0.235, parent_power=0.9, zipf_exponent=3.0, copy_random=0.7,
        shortcut_a=0.0025, shortcut_b=1.3, hub_words=0, min_label=1, max_label=2,
        min_words=400, max_words=800, page_keywords=40, keyword_zipf=1.5, query_words=4,
        topic_inherit=0.9, topic_focus=0.95),
}
DEFAULT_VARIANT = "calibrated"


@lru_cache(maxsize=4)
def vocabulary(size: int, language: str = "english") -> tuple[str, ...]:
    """``size`` distinct pseudo-words, each its own stem and not a stop-word."""
    stemmer = _stemmer(language)
    stop = STOP_WORDS.get(language, frozenset())
    syllables = [c + v for c in _CONSONANTS for v in _VOWELS]
    words: list[str] = []
    seen: set[str] = set()
    rng = np.random.default_rng(12345)
    while len(words) < size:
        n_syl = int(rng.integers(2, 4))
        cand = "".join(syllables[i] for i in rng.integers(0, len(syllables), n_syl))
        cand += _CONSONANTS[int(rng.integers(0, len(_CONSONANTS)))]
        if cand in seen or cand in stop or stemmer.stemWord(cand) != cand:
            continue
        seen.add(cand)
        words.append(cand)
    return tuple(words)


@dataclass
class SiteGraph:
    """A generated site in CSR form. Page ``i``'s words are ``words[word_off[i]:word_off[i+1]]``
    (vocabulary ids); its out-links are edges ``out_off[i]:out_off[i+1]`` with destination
    ``out_dst[e]`` and label words ``label_words[label_off[e]:label_off[e+1]]``."""

    vocab: tuple[str, ...]
    topic: np.ndarray
    words: np.ndarray
    word_off: np.ndarray
    out_off: np.ndarray
    out_dst: np.ndarray
    label_words: np.ndarray
    label_off: np.ndarray
    params: GraphParams = field(default_factory=GraphParams)

    @property
    def n(self) -> int:
        return len(self.word_off) - 1

    def page_words(self, page: int) -> np.ndarray:
        return self.words[self.word_off[page] : self.word_off[page + 1]]

    def out_degree(self) -> np.ndarray:
        return np.diff(self.out_off)

    def children(self, page: int) -> np.ndarray:
        return self.out_dst[self.out_off[page] : self.out_off[page + 1]]

    def label(self, edge: int) -> np.ndarray:
        return self.label_words[self.label_off[edge] : self.label_off[edge + 1]]

    def text(self, page: int) -> str:
        return " ".join(self.vocab[w] for w in self.page_words(page))

    def label_text(self, edge: int) -> str:
        return " ".join(self.vocab[w] for w in self.label(edge))

    def query_counts(self, qmask: np.ndarray) -> np.ndarray:
        """Occurrences of query words on every page (vectorised)."""
        hits = qmask[self.words].astype(np.int64)
        csum = np.concatenate(([0], np.cumsum(hits)))
        return csum[self.word_off[1:]] - csum[self.word_off[:-1]]

    def tf_norms(self) -> np.ndarray:
        """Euclidean norm of every page's term-frequency vector."""
        page = np.repeat(np.arange(self.n), np.diff(self.word_off))
        key = page * len(self.vocab) + self.words
        uniq, counts = np.unique(key, return_counts=True)
        sq = np.zeros(self.n)
        np.add.at(sq, uniq // len(self.vocab), counts.astype(float) ** 2)
        return np.sqrt(sq)


def _zipf_degrees(rng: np.random.Generator, n: int, exponent: float, cap: int) -> np.ndarray:
    support = np.arange(1, cap + 1)
    p = support.astype(float) ** -exponent
    return rng.choice(support, size=n, p=p / p.sum())


def _links_evolving(
    n: int, rng: np.random.Generator, params: GraphParams
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The acyclic generator (``evolving=True``): every in-link comes from an older page."""
    degrees = _zipf_degrees(rng, n, params.zipf_exponent, params.max_degree)
    protos = (rng.random(n) * np.arange(n)).astype(np.int64)
    parents: list[list[int]] = [[] for _ in range(n)]
    src_list: list[int] = []
    dst_list: list[int] = []
    n_draws = int(degrees.sum())
    coin = (rng.random(n_draws) < params.copy_random).tolist()
    unif = rng.random(n_draws).tolist()
    pick = rng.random(n_draws).tolist()
    topic = np.empty(n, dtype=np.int64)
    topic[0] = rng.integers(params.topics)
    inherit = (rng.random(n) < params.topic_inherit).tolist()
    rand_topic = rng.integers(0, params.topics, n).tolist()
    cursor = 0
    for v in range(1, n):
        u = int(protos[v])
        pu = parents[u]
        chosen: list[int] = []
        for _ in range(min(int(degrees[v]), v)):
            if coin[cursor] or not pu:
                s = int(unif[cursor] * v)
            else:
                s = pu[int(pick[cursor] * len(pu))]
            cursor += 1
            if s not in chosen:
                chosen.append(s)
        parents[v] = chosen
        src_list.extend(chosen)
        dst_list.extend([v] * len(chosen))
        topic[v] = topic[chosen[0]] if inherit[v] else rand_topic[v]
    return np.asarray(src_list, dtype=np.int64), np.asarray(dst_list, dtype=np.int64), topic


def _links_static(
    n: int, rng: np.random.Generator, params: GraphParams
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The default generator: a copy-model tree from page 0, then cross links of any age.

    Page ``v >= 1`` first gets its *tree parent*, an older page: uniform with probability
    ``copy_random``, else the tree parent of a uniform older prototype (copying: hubs form,
    page 0 first). Its other ``d_v - 1`` in-links come from pages of *any* age, uniform with
    probability ``copy_random``, else the tree parent of a uniform prototype; self-links and
    repeats are dropped. Vectorised (pointer jumping resolves the copy chains).
    """
    degrees = _zipf_degrees(rng, n, params.zipf_exponent, params.max_degree)
    idx = np.arange(n, dtype=np.int64)
    protos = (rng.random(n) * idx).astype(np.int64)
    uniform = (rng.random(n) * idx).astype(np.int64)
    copy = (rng.random(n) >= params.copy_random) & (protos >= 1)
    copy[0] = False
    ref = np.where(copy, protos, idx)  # a copying page takes its prototype's parent
    parent = np.where(copy, -1, uniform)
    parent[0] = -1
    _resolve_copies(parent, copy, ref)
    extra = np.maximum(degrees - 1, 0)
    extra[0] = 0
    dst_x = np.repeat(idx, extra)
    m = dst_x.size
    rand_src = rng.integers(0, n, m)
    proto_x = rng.integers(1, n, m) if n > 1 else np.zeros(m, dtype=np.int64)
    src_x = np.where(rng.random(m) < params.copy_random, rand_src, parent[proto_x])
    src = np.concatenate((parent[1:], src_x))
    dst = np.concatenate((idx[1:], dst_x))
    # the tree edge of every page survives the de-duplication, so page 0 reaches every page
    src, dst = _unique_edges(src, dst, n)
    return src, dst, _tree_topics(parent, rng, params)


def _resolve_copies(parent: np.ndarray, copy: np.ndarray, ref: np.ndarray) -> None:
    """Pointer jumping, in place: a copying page (``parent < 0``) takes the parent of the page
    ``ref`` points at, once that one is known (every chain ends at a non-copying page)."""
    while True:
        pending = copy & (parent < 0)
        if not pending.any():
            break
        r = ref[pending]
        done = parent[r] >= 0
        hit = np.flatnonzero(pending)
        parent[hit[done]] = parent[r[done]]
        ref[hit[~done]] = ref[r[~done]]


def _unique_edges(src: np.ndarray, dst: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The edges without self-links, negative sources and repeats, sorted by (src, dst)."""
    keep = (src != dst) & (src >= 0)
    key = np.sort(src[keep] * n + dst[keep])
    key = key[np.concatenate(([True], key[1:] != key[:-1]))]
    return key // n, key % n


def _tree_topics(parent: np.ndarray, rng: np.random.Generator, params: GraphParams) -> np.ndarray:
    """Topics along the tree: a page takes its parent's with probability ``topic_inherit``."""
    n = len(parent)
    topic = np.empty(n, dtype=np.int64)
    inherit = rng.random(n) < params.topic_inherit
    rand_topic = rng.integers(0, params.topics, n)
    topic[0] = rand_topic[0]
    # resolve in page order by depth (parents are older)
    for level in _tree_order(parent):
        topic[level] = np.where(inherit[level], topic[parent[level]], rand_topic[level])
    return topic


def start_degree(n: int, params: GraphParams) -> int:
    """The start page's out-degree in the calibrated structure: ``round(a * N^b)``, 1 .. N-1."""
    return int(min(max(1, round(params.start_a * n**params.start_b)), max(1, n - 1)))


def shortcut_share(n: int, params: GraphParams) -> float:
    """The share of pages the site-map hub links to: ``min(1, a * (N/100)^b)``."""
    return float(min(1.0, params.shortcut_a * (n / 100) ** params.shortcut_b))


def _links_sectioned(
    n: int, rng: np.random.Generator, params: GraphParams
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The calibrated structure (issue 28): a start page of few links, a copy-model body, and a
    site-map hub whose reach grows with N.

    Pages ``1 .. d0`` (``d0`` = :func:`start_degree`) are the start page's only links (its
    sections; page 1 is the site-map hub). Every page ``v > d0`` gets a *tree parent* among the
    oldest ``ceil((v-1)^parent_power)`` pages as in :func:`_links_static` (uniform with
    probability ``copy_random``, else the tree parent of a uniform prototype among them: copying,
    so hubs form; ``parent_power < 1`` makes the hierarchy shallower), then ``d_v - 1`` more
    in-links (``d_v`` Zipf, exponent ``zipf_exponent``, at most ``max_degree``) from pages of any
    age but the start page, and with probability :func:`shortcut_share` a link from the hub.
    """
    d0 = start_degree(n, params)
    degrees = _zipf_degrees(rng, n, params.zipf_exponent, params.max_degree)
    idx = np.arange(n, dtype=np.int64)
    older = np.maximum(np.ceil(np.maximum(idx - 1, 0) ** params.parent_power), 1).astype(np.int64)
    older = np.minimum(older, np.maximum(idx - 1, 1))
    protos = 1 + (rng.random(n) * older).astype(np.int64)
    uniform = 1 + (rng.random(n) * older).astype(np.int64)
    copy = (rng.random(n) >= params.copy_random) & (idx > d0) & (protos > d0)
    ref = np.where(copy, protos, idx)
    parent = np.where(copy, -1, uniform)
    parent[: d0 + 1] = 0
    parent[0] = -1
    _resolve_copies(parent, copy, ref)
    extra = np.maximum(degrees - 1, 0)
    extra[: d0 + 1] = 0
    dst_x = np.repeat(idx, extra)
    m = dst_x.size
    rand_src = rng.integers(1, n, m) if n > 1 else np.zeros(m, dtype=np.int64)
    proto_x = rng.integers(d0 + 1, n, m) if n > d0 + 1 else np.ones(m, dtype=np.int64)
    src_x = np.where(rng.random(m) < params.copy_random, rand_src, parent[proto_x])
    hub = np.flatnonzero((rng.random(n) < shortcut_share(n, params)) & (idx > d0))
    src = np.concatenate((parent[1:], src_x, np.ones(hub.size, dtype=np.int64)))
    dst = np.concatenate((idx[1:], dst_x, hub))
    src, dst = _unique_edges(src, dst, n)
    return src, dst, _tree_topics(parent, rng, params)


def _tree_order(parent: np.ndarray) -> list[np.ndarray]:
    """Pages grouped by tree depth (depth >= 1), shallowest first."""
    n = len(parent)
    depth = np.zeros(n, dtype=np.int64)
    known = np.zeros(n, dtype=bool)
    known[0] = True
    while not known.all():
        ok = ~known & known[np.maximum(parent, 0)]
        depth[ok] = depth[parent[ok]] + 1
        known |= ok
    return [np.flatnonzero(depth == d) for d in range(1, int(depth.max(initial=0)) + 1)]


def generate_site(n: int, rng: np.random.Generator, params: GraphParams | None = None) -> SiteGraph:
    """Generate a site of ``n`` pages (page 0 is the start page)."""
    params = params or GraphParams()
    vocab = vocabulary(params.topics * params.topic_words)
    v_size = len(vocab)
    if params.start_a > 0:
        src, dst, topic = _links_sectioned(n, rng, params)
    elif params.evolving:
        src, dst, topic = _links_evolving(n, rng, params)
    else:
        src, dst, topic = _links_static(n, rng, params)
    if params.shuffle_links:  # a page's links in random order, not by the target's age
        order = np.lexsort((rng.random(len(src)), src))
    else:
        order = np.argsort(src, kind="stable")
    src, dst = src[order], dst[order]
    out_off = np.concatenate(([0], np.cumsum(np.bincount(src, minlength=n)))).astype(np.int64)

    lengths = rng.integers(params.min_words, params.max_words + 1, n)
    if params.start_a > 0 and params.hub_words >= 0 and n > 1:
        lengths[1] = params.hub_words  # the site map: links, hardly any text
    word_off = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    total = int(word_off[-1])
    page_of = np.repeat(np.arange(n), lengths)
    if params.page_keywords:
        k = params.page_keywords
        focus = rng.random((n, k)) < params.topic_focus
        in_topic = topic[:, None] * params.topic_words + rng.integers(0, params.topic_words, (n, k))
        keywords = np.where(focus, in_topic, rng.integers(0, v_size, (n, k)))
        weights = np.arange(1, k + 1, dtype=float) ** -params.keyword_zipf
        cdf = np.cumsum(weights / weights.sum())
        ranks = np.minimum(np.searchsorted(cdf, rng.random(total), side="right"), k - 1)
        words = keywords.ravel()[page_of * k + ranks].astype(np.int64)
    else:
        focus = rng.random(total) < params.topic_focus
        in_topic = topic[page_of] * params.topic_words + rng.integers(0, params.topic_words, total)
        words = np.where(focus, in_topic, rng.integers(0, v_size, total)).astype(np.int64)
    if not params.page_keywords:  # the words on a page: a sorted key list to search
        page_keys = np.sort(page_of * v_size + words)

    n_edges = len(dst)
    llen = rng.integers(params.min_label, params.max_label + 1, n_edges)
    label_off = np.concatenate(([0], np.cumsum(llen))).astype(np.int64)
    edge_of = np.repeat(np.arange(n_edges), llen)
    target = dst[edge_of]
    from_page = (rng.random(len(edge_of)) < params.alpha) & (lengths[target] > 0)
    pos = word_off[target] + (rng.random(len(edge_of)) * lengths[target]).astype(np.int64)
    label_words = np.where(from_page, words[pos], -1)
    todo = np.flatnonzero(label_words < 0)
    while todo.size:
        cand = rng.integers(0, v_size, todo.size)
        if params.page_keywords:  # a page's words are among its keywords
            bad = (keywords[target[todo]] == cand[:, None]).any(axis=1)
        else:
            key = target[todo] * v_size + cand
            at = np.minimum(np.searchsorted(page_keys, key), len(page_keys) - 1)
            bad = page_keys[at] == key
        label_words[todo[~bad]] = cand[~bad]
        todo = todo[bad]
    return SiteGraph(
        vocab=vocab,
        topic=topic,
        words=words,
        word_off=word_off,
        out_off=out_off,
        out_dst=dst,
        label_words=label_words.astype(np.int64),
        label_off=label_off,
        params=params,
    )


def draw_task(graph: SiteGraph, rng: np.random.Generator) -> tuple[int, np.ndarray]:
    """Draw ``(target, query word ids)``: a uniform target page and its query."""
    params = graph.params
    target = int(rng.integers(graph.n))
    page_words = graph.page_words(target)
    on_page = np.unique(page_words)
    present = np.bincount(graph.words, minlength=len(graph.vocab)) > 0
    present[on_page] = False
    off_page = np.flatnonzero(present)
    query: list[int] = []
    for _ in range(params.query_words * 20):
        if len(query) == params.query_words:
            break
        pool = on_page if (rng.random() < params.alpha and on_page.size) or off_page.size == 0 \
            else off_page
        if pool is on_page and params.query_by_position:
            pool = page_words  # a random position: frequent words are likelier, as in labels
        w = int(pool[rng.integers(pool.size)])
        if w not in query:
            query.append(w)
    return target, np.asarray(query, dtype=np.int64)


class GraphSite:
    """A :class:`SiteGraph` behind the herder's site interface; counts downloads.

    Pages are ints. ``out_links(page)`` is free (the page is downloaded already when its links
    are read); ``download(page)`` adds the page to :attr:`downloaded`. ``link_flags`` and
    ``text_flags`` are the herder's fast path: the query flags of the labels and of a page's
    text straight from the word ids (vocabulary words are their own stems and no stop-word, so
    this equals analysing ``label_text`` / ``text``; pinned by a test).
    """

    def __init__(self, graph: SiteGraph) -> None:
        self.graph = graph
        self.downloaded: set[int] = set()
        self._qmask: tuple[frozenset[str], np.ndarray] | None = None

    def out_links(self, page: int) -> list[tuple[int, str]]:
        g = self.graph
        lo, hi = int(g.out_off[page]), int(g.out_off[page + 1])
        return [(int(g.out_dst[e]), g.label_text(e)) for e in range(lo, hi)]

    def text(self, page: int) -> str:
        return self.graph.text(page)

    def download(self, page: int) -> None:
        self.downloaded.add(page)

    def qmask(self, stems: frozenset[str]) -> np.ndarray:
        """Vocabulary mask of the query stems (cached for the last query)."""
        if self._qmask is None or self._qmask[0] is not stems:
            index = _vocab_index(self.graph.vocab)
            mask = np.zeros(len(self.graph.vocab), dtype=bool)
            mask[[index[s] for s in stems if s in index]] = True
            self._qmask = (stems, mask)
        return self._qmask[1]

    def link_flags(
        self, page: int, stems: frozenset[str]
    ) -> tuple[list[int], list[str], list[np.ndarray]]:
        """``(targets, labels, label query flags)`` of ``page``'s links."""
        g = self.graph
        lo, hi = int(g.out_off[page]), int(g.out_off[page + 1])
        mask = self.qmask(stems)
        flags = mask[g.label_words[g.label_off[lo] : g.label_off[hi]]]
        cuts = (g.label_off[lo + 1 : hi] - g.label_off[lo]).tolist()
        return g.out_dst[lo:hi].tolist(), [""] * (hi - lo), np.split(flags, cuts)

    def text_flags(self, page: int, stems: frozenset[str]) -> np.ndarray:
        """Query flags of ``page``'s text."""
        return self.qmask(stems)[self.graph.page_words(page)]


@lru_cache(maxsize=4)
def _vocab_index(vocab: tuple[str, ...]) -> dict[str, int]:
    return {w: i for i, w in enumerate(vocab)}
