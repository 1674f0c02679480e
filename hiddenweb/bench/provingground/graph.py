"""The public (PI) part of a proving-ground site: a copy-model link graph with topical text.

Lost-sheep protocol (ALGORITHMS.md §2): Kumar et al.'s copy model, so in- and out-degrees follow
power laws; page text = random words, mostly from the page's topic; a link label describes the
target with probability α = 0.75 (words of the target's text) and uses other words otherwise.

Reachability is guaranteed: every core node gets a *parent* among the earlier nodes, chosen with
probability proportional to its degree (preferential attachment, so out-degrees are power-law
too), and the parent links to it. Then the node copies links (Kumar's linear copy model, β = 0.5:
the i-th link of a random prototype, or a uniform earlier node). Besides the core nodes there
are *JS-only* pages (their in-links are built by a script) and *robots-disallowed* pages under
``/private/``; neither is needed to reach anything else, so a polite static crawler still reaches
every other public page.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import lru_cache

from hiddenweb.bench.provingground import vocab

ALPHA = 0.75  # probability that a link label uses words of the target's text
COPY_BETA = 0.5  # copy-model probability of copying the prototype's i-th link
TOPIC_STICKINESS = 0.7  # probability that a page inherits its parent's topic
JS_EDGE_FRACTION = 0.03  # non-tree links rendered by JavaScript only
SLOW_FRACTION = 0.005  # public pages that answer after 0.5–1.5 s


def rng_for(seed: int, purpose: str, *ids: object) -> random.Random:
    """A generator seeded by (seed, purpose, ids): same draws every time, in any order.

    ``random.Random`` seeds a ``str`` through SHA-512, so this is stable across processes
    (unlike ``hash()``)."""
    return random.Random(":".join([str(seed), purpose, *map(str, ids)]))


@dataclass
class PublicGraph:
    seed: int
    n_core: int
    n_js: int
    n_priv: int
    out: list[list[int]]
    topic: list[int]
    js_edges: set[tuple[int, int]] = field(default_factory=set)
    slow: dict[int, float] = field(default_factory=dict)

    @property
    def n_nodes(self) -> int:
        return self.n_core + self.n_js + self.n_priv

    def is_private(self, u: int) -> bool:
        return self.n_core + self.n_js <= u < self.n_nodes

    def url(self, u: int) -> str:
        if u == 0:
            return "/"
        return f"/private/{u}" if self.is_private(u) else f"/p/{u}"

    def text(self, u: int) -> list[str]:
        return _text(self.seed, u, self.topic[u])

    def label(self, u: int, v: int) -> str:
        """Anchor text of the link u → v: target words with probability α, else other words."""
        rnd = rng_for(self.seed, "label", u, v)
        k = rnd.randint(1, 3)
        target = self.text(v)
        if rnd.random() < ALPHA:
            words = [target[rnd.randrange(len(target))] for _ in range(k)]
        else:
            have = set(target)
            words = []
            while len(words) < k:
                w = vocab.ALL_WORDS[rnd.randrange(len(vocab.ALL_WORDS))]
                if w not in have:
                    words.append(w)
        return " ".join(words)

    def title(self, u: int) -> str:
        if u == 0:
            return "Welcome"
        words = list(dict.fromkeys(self.text(u)))[:3]
        return " ".join(w.capitalize() for w in words)


@lru_cache(maxsize=1 << 16)
def _text(seed: int, u: int, topic: int) -> list[str]:
    rnd = rng_for(seed, "text", u)
    own = vocab.TOPICS[vocab.TOPIC_NAMES[topic]]
    words = vocab.ALL_WORDS
    n = rnd.randint(40, 120)
    return [
        own[rnd.randrange(len(own))] if rnd.random() < 0.8 else words[rnd.randrange(len(words))]
        for _ in range(n)
    ]


def build_public(n_public: int, seed: int) -> PublicGraph:
    rnd = rng_for(seed, "graph")
    n_js = max(1, n_public // 50)
    n_priv = max(1, n_public // 100)
    n_core = max(3, n_public - n_js - n_priv)
    total = n_core + n_js + n_priv
    n_topics = len(vocab.TOPIC_NAMES)
    out: list[list[int]] = [[] for _ in range(total)]
    topic = [0] * total
    topic[0] = rnd.randrange(n_topics)
    js_edges: set[tuple[int, int]] = set()
    bag = [0]  # one entry per edge end: uniform draws from it are degree-preferential
    cap = 60
    for v in range(1, n_core):
        parent = bag[rnd.randrange(len(bag))]
        out[parent].append(v)
        bag.append(parent)
        bag.append(v)
        topic[v] = topic[parent] if rnd.random() < TOPIC_STICKINESS else rnd.randrange(n_topics)
        # out-degree ~ Pareto(x_m=2, a=1.5), i.e. Zipf-like, capped
        d = min(cap, v, int(2.0 * (1.0 - rnd.random()) ** (-1 / 1.5)))
        proto = out[rnd.randrange(v)]
        mine = out[v]
        seen = {v}
        for i in range(d):
            t = proto[i] if i < len(proto) and rnd.random() < COPY_BETA else rnd.randrange(v)
            if t in seen:
                continue
            seen.add(t)
            mine.append(t)
            bag.append(t)
            if rnd.random() < JS_EDGE_FRACTION:
                js_edges.add((v, t))
    # JS-only pages: 1–2 in-links built by a script; robots-disallowed pages: 1–2 plain in-links.
    for u in range(n_core, total):
        topic[u] = rnd.randrange(n_topics)
        for _ in range(rnd.randint(1, 2)):
            src = rnd.randrange(n_core)
            if u not in out[src]:
                out[src].append(u)
                if u < n_core + n_js:
                    js_edges.add((src, u))
        out[u] = list(dict.fromkeys(rnd.randrange(n_core) for _ in range(rnd.randint(3, 6))))
    slow: dict[int, float] = {}
    candidates = list(range(1, n_core))
    for u in rnd.sample(candidates, min(len(candidates), max(1, round(n_core * SLOW_FRACTION)))):
        slow[u] = round(0.5 + rnd.random(), 3)
    return PublicGraph(seed, n_core, n_js, n_priv, out, topic, js_edges, slow)
