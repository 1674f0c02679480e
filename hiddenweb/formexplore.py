"""Adaptive form exploration: the submissions of a form as a feedback loop (issue 5).

A :class:`FormExplorer` holds one form's candidate values per field (:func:`field_domains`: the
LVS for free-text fields, the form's own domain for finite ones) and, per (field, value), how
often it was submitted and how often it gave a *new* result page. It hands out a first wave of
``HIDDENWEB_FORM_WAVE`` submissions; every answer (``feedback``) updates the counts and releases
the next submission — two after a success. First comes a one-field-at-a-time sweep: each value
with the other fields at their first value (the form's default; LVS values in a seeded random
order), so an answer speaks of one value. Then the untried combination whose values have the
best smoothed success rates ((wins + 1/2) / (tries + 1)): values that gave results are combined
with the other fields' values first; values that gave "no results" sink. No full cross product:
at most ``limit`` submissions per form, and a form that gave results stops after ``patience``
answers in a row that gave nothing new (one that never did runs to ``limit``: its hits may just
be rare). Words of result pages' link texts become new candidate values of the form's LVS fields
(HiWE's "update action values"), tried with a good prior (they come from the site).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from math import prod

from hiddenweb.forms import FormInfo, field_domains
from hiddenweb.lvs import LVS, words_of

Assignment = dict[str, "str | None"]
_ENUMERATE_MAX = 1000  # spaces up to this size are scored exhaustively; larger ones sampled


class FormExplorer:
    def __init__(self, form: FormInfo, lvs: LVS, limit: int, wave: int = 8,
                 patience: int = 100, learn: int = 30, seed: int = 0,
                 prior: Callable[[str], float] | None = None) -> None:
        self.signature = form.signature
        domains, self.lvs_labels, self.unfillable = field_domains(form, lvs)
        self.names = [name for name, _ in domains]
        self.values: list[list[str | None]] = [list(v) for _, v in domains]
        self.stats: list[dict[str | None, list[int]]] = [
            {v: [0, 0] for v in vals} for vals in self.values]
        self.limit, self.wave, self.patience, self.learn = limit, wave, patience, learn
        self.tried: set[tuple] = set()
        self.submitted = 0
        self.answers = 0
        self.new_pages = 0
        self.since_new = 0
        self.learnt = 0
        self.lvs = lvs
        self.context: dict = {}  # the spider's: the form, its page, how to submit it
        self.rng = random.Random(int(hashlib.sha1(f"{seed}{self.signature}".encode())
                                     .hexdigest()[:8], 16))
        # LVS values in a seeded random order: an LVS is often grouped by topic, and a site's
        # values sit in one group; finite domains keep their order (the default first)
        # ... then, with a ``prior`` (the site's own vocabulary, see the spider), values whose
        # words the site already shows come first: a site's search index covers the words of
        # its pages (query selection from the site's text: Barbosa & Freire 2004, Ntoulas et
        # al. 2005). The sort is stable, so ties keep the random order.
        for i, name in enumerate(self.names):
            if name in self.lvs_labels:
                self.rng.shuffle(self.values[i])
                if prior is not None:
                    self.values[i].sort(key=lambda v: -prior(v) if v else 0.0)
        # first, one field at a time: each value with the other fields at their first value
        # (the form's default); an answer then speaks of that one value
        self.sweep: list[tuple[tuple, int]] = []
        if self.values:
            base = tuple(v[0] for v in self.values)
            order = sorted(range(len(self.values)), key=lambda i: -len(self.values[i]))
            seen = {base}
            self.sweep.append((base, -1))
            for i in order:
                for v in self.values[i][1:]:
                    combo = base[:i] + (v,) + base[i + 1:]
                    if combo not in seen:
                        seen.add(combo)
                        self.sweep.append((combo, i))
            self.sweep.reverse()  # popped from the end
        self.varied: dict[tuple, int] = {}

    @property
    def fillable(self) -> bool:
        return bool(self.names) and not self.unfillable

    @property
    def space(self) -> int:
        return prod(len(v) for v in self.values) if self.values else 0

    @property
    def done(self) -> bool:
        return (self.submitted >= self.limit or len(self.tried) >= self.space
                or (self.new_pages > 0 and self.since_new >= self.patience))

    # -- the loop ----------------------------------------------------------------------------
    def first(self) -> list[Assignment]:
        return self._take(min(self.wave, self.limit))

    def feedback(self, data: Assignment, new: bool, found_words: list[str] | None = None
                 ) -> list[Assignment]:
        """Record the answer to ``data``; return the submissions it releases."""
        self.answers += 1
        combo = tuple(data.get(name) for name in self.names)
        varied = self.varied.pop(combo, None)
        for i, name in enumerate(self.names):
            counts = self.stats[i].get(data.get(name))
            if counts is not None and (varied is None or varied in (i, -1)):
                counts[1] += int(new)
        if new:
            self.new_pages += 1
            self.since_new = 0
            if found_words and self.learn:
                self._learn(found_words)
        else:
            self.since_new += 1
        return self._take(2 if new else 1)

    def _learn(self, words: list[str]) -> None:
        for i, name in enumerate(self.names):
            label = self.lvs_labels.get(name)
            if label is None or self.learnt >= self.learn:
                continue
            known = {v.lower() for v in self.values[i] if v}
            for w in words:
                if w.lower() in known or self.learnt >= self.learn:
                    continue
                known.add(w.lower())
                self.values[i].append(w)
                self.stats[i][w] = [0, 1]  # a prior success: the word is on the site
                self.learnt += 1
                self.lvs.add_values(label, [w])

    def _take(self, n: int) -> list[Assignment]:
        out = []
        while len(out) < n and not self.done:
            varied = None
            while self.sweep and varied is None:
                combo, varied = self.sweep.pop()
                if combo in self.tried:
                    varied = None
            if varied is None:
                combo = self._best()
                if combo is None:
                    break
            else:
                self.varied[combo] = varied
            self.tried.add(combo)
            self.submitted += 1
            for i, v in enumerate(combo):
                if varied is None or varied in (i, -1):
                    self.stats[i][v][0] += 1
            out.append(dict(zip(self.names, combo, strict=True)))
        return out

    def _score(self, combo: tuple) -> float:
        s = 1.0
        for i, v in enumerate(combo):
            tries, wins = self.stats[i][v]
            s *= (wins + 0.5) / (tries + 1)
        return s

    def _best(self) -> tuple | None:
        sizes = [len(v) for v in self.values]
        space = prod(sizes)
        if space <= _ENUMERATE_MAX:
            candidates = (self._combo(k, sizes) for k in range(space))
        else:
            candidates = (self._combo(self.rng.randrange(space), sizes) for _ in range(300))
        best, best_score = None, -1.0
        for combo in candidates:
            if combo in self.tried:
                continue
            score = self._score(combo)
            if score > best_score:  # ties: the earlier combination (defaults, LVS order)
                best, best_score = combo, score
        return best

    def _combo(self, k: int, sizes: list[int]) -> tuple:
        out = []
        for vals, size in zip(self.values, sizes, strict=True):
            k, digit = divmod(k, size)
            out.append(vals[digit])
        return tuple(out)


def result_words(texts: list[str], limit: int = 40) -> list[str]:
    """Candidate values from a result page's link texts: its longer words, most frequent first."""
    counts: dict[str, int] = {}
    for text in texts:
        for w in words_of(text):
            if len(w) >= 4:
                counts[w] = counts.get(w, 0) + 1
    return sorted(counts, key=lambda w: -counts[w])[:limit]
