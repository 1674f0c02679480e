"""The Tsetlin automaton classifier of the lost sheep, plain and twofold (2F).

Paper: Goodwin, "A solution to the exact match on rare item searches", sections "Hidden Markov
Model Classifier (HMM)" and "(HMM2F)", and steps 3.5 / 3.10 of "Lost sheep description".

Contract. ``S`` states, the integers ``0 .. S-1``: ``B = 0`` (begin, the "relevant" end) and
``Q = S-1`` (quit): the paper's automaton has "S states" with ``B`` and ``Q`` among them
(issue 4: an earlier version had ``S+1`` states, ``Q = S``; with ``Q`` ``S-1`` steps from
``B`` a plain S=3 sheep quits on two non-query words, so "Image Gallery" is pre-filtered as
in the paper's worked example). The automaton reads stems one at a time; ``t`` counts the
stems read. A stem in the query moves it ``step`` states toward ``B`` (it cannot go below
``B``: the walk reflects there), any other stem ``step`` states toward ``Q``. On reaching (or
passing) ``Q`` it stops and records ``f = t``; if the words run out first, ``f = t`` too
("let f(x_j) = t at all times"). The longer it survives, the more relevant the text.

- plain: ``step = 1``.
- twofold (2F): the k-th word read (k = 0, 1, ...) moves ``max(1, S // 2**(k + 1))`` states:
  ``S/2`` on the first word, ``S/4`` on the second, ... (paper: "if t=0 it moves S/2 states, if
  t=1 it moves S/4 states and so on", after Granmo & Oommen's twofold automata [18]).

Start state (issue 28: a setting, ``HIDDENWEB_LOSTSHEEP_START``). The paper names a begin state
``B`` and a quit state ``Q`` but not how far apart they are (its figure 2 is missing from the text),
so both readings are kept (:func:`start_state`):

- ``"B"``: a sheep starts at ``B = 0``, ``S-1`` states from ``Q`` (the literal "beginning state").
- ``"middle"``: the classic Tsetlin start on the boundary between the two actions, ``S//2``
  states from ``Q`` (state ``S-1-S//2``).

The twofold step floors, stated: the steps are ``max(1, S >> (k+1))`` (floored halves, at least
1), so they sum to less than ``S`` and 2F ends as a plain automaton. From ``B`` a 2F sheep needs
8 (S=100), 9 (S=200), 10 (S=400) misses in a row to quit: a label shorter than that is never
pre-filtered. From ``middle`` the first word's step ``S//2`` reaches ``Q``: a 2F sheep whose first
word (t = 0) is not a query word quits at once (f = 1); one whose first word is a query word
falls back to ``B`` and then needs 57 (S=100), 108 (S=200), 209 (S=400) misses in a row, the
steps ``S/4, S/8, ...`` having run down to 1. A plain sheep needs ``S-1`` net misses from ``B``
and ``S//2`` from ``middle`` (S=3: 2 and 1). ``start`` may also be an int state (tests).
``t`` is counted per sheep (the listing initialises it once, but 2F needs each automaton's
own ``t``). The halving steps are floored and kept at least 1, so 2F ends as a plain automaton.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

import numpy as np

from hiddenweb.lostsheep.text import analyze

logger = logging.getLogger(__name__)

#: the two readings of where a sheep starts (see the module docstring)
START_READINGS = ("B", "middle")


def start_state(states: int, start: str | int | None) -> int:
    """The state a sheep starts in: ``"B"``/None -> ``0``, ``"middle"`` -> ``S-1-S//2`` (``S//2``
    from ``Q``, the classic Tsetlin boundary), an int -> itself."""
    if start is None or start == "B":
        return 0
    if start == "middle":
        return states - 1 - states // 2
    if isinstance(start, str):
        raise ValueError(f"start must be one of {START_READINGS} or a state, got {start!r}")
    return int(start)


def step_size(states: int, twofold: bool, k: int) -> int:
    """States moved by the ``k``-th word read (k = 0 for the first word)."""
    if not twofold:
        return 1
    return max(1, states >> (k + 1)) if k < 62 else 1


class TsetlinAutomaton:
    """One sheep: an S-state automaton between ``B = 0`` and ``Q = S - 1`` that reads stems."""

    __slots__ = ("states", "twofold", "state", "t", "quit")

    def __init__(
        self, states: int, twofold: bool = False, start: str | int | None = None
    ) -> None:
        if states < 2:
            raise ValueError(f"states must be >= 2 (B and Q), got {states}")
        self.states = states
        self.twofold = twofold
        self.state = start_state(states, start)
        if not 0 <= self.state < states - 1:
            raise ValueError(f"start must be in [0, {states - 1}), got {self.state}")
        self.t = 0
        self.quit = False

    @property
    def f(self) -> int:
        """The sheep's duration: the number of words read so far (frozen once it quits)."""
        return self.t

    def read_word(self, in_query: bool) -> bool:
        """Read one word; return True if the automaton is (now) in ``Q``."""
        if self.quit:
            return True
        step = step_size(self.states, self.twofold, self.t)
        self.t += 1
        if in_query:
            self.state = max(0, self.state - step)
        else:
            self.state += step
            if self.state >= self.states - 1:
                self.state = self.states - 1
                self.quit = True
        return self.quit

    def read(self, stems: Iterable[str], query: frozenset[str] | set[str]) -> bool:
        """Read stems until they run out or ``Q`` is reached; return whether it quit."""
        for stem in stems:
            if self.read_word(stem in query):
                return True
        return False


def run_automaton(
    flags: Sequence[bool], states: int, twofold: bool = False, start: str | int | None = None
) -> tuple[bool, int]:
    """Run a fresh automaton over ``flags`` (True = word in the query); return ``(quit, f)``."""
    sheep = TsetlinAutomaton(states, twofold, start)
    for flag in flags:
        if sheep.read_word(bool(flag)):
            break
    return sheep.quit, sheep.f


def score_label(
    query_stems: frozenset[str] | set[str],
    label_text: str,
    states: int,
    twofold: bool,
    *,
    start: str | int | None = None,
    language: str = "english",
) -> tuple[bool, int]:
    """Pre-filter one link on its label: ``(quit, f)`` of a fresh sheep that read the label.

    ``quit`` True means the lost sheep would never download the link's page (steps 3.1-3.5).
    """
    sheep = TsetlinAutomaton(states, twofold, start)
    sheep.read(analyze(label_text, language), query_stems)
    return sheep.quit, sheep.f


def batch_durations(
    flags: np.ndarray,
    offsets: np.ndarray,
    states: int,
    twofold: bool = False,
    start: str | int | None = None,
    prefix: int = 64,
) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised :func:`run_automaton` over many texts at once (the HMM baselines).

    ``flags`` is the concatenation of the texts' query-membership booleans and ``offsets`` the
    ``len + 1`` segment boundaries. Returns ``(quit, f)`` arrays, one entry per text. Most
    automata quit early, so every text's first ``prefix`` words are read first and only the
    texts still running are read again in full (exact: the walk only depends on its words).
    """
    start = start_state(states, start)
    offsets = np.asarray(offsets, dtype=np.int64)
    lengths = np.diff(offsets)
    if prefix <= 0 or int(lengths.max(initial=0)) <= prefix:
        return _batch(flags, offsets, states, twofold, start)
    flags = np.asarray(flags, dtype=bool)
    short = np.minimum(lengths, prefix)
    short_off = np.concatenate(([0], np.cumsum(short)))
    seg = np.repeat(np.arange(len(lengths)), short)
    idx = offsets[:-1][seg] + np.arange(int(short_off[-1])) - short_off[:-1][seg]
    quit_, f = _batch(flags[idx], short_off, states, twofold, start)
    again = np.flatnonzero(~quit_ & (lengths > prefix))
    if again.size:
        seg = np.repeat(np.arange(again.size), lengths[again])
        sub_off = np.concatenate(([0], np.cumsum(lengths[again])))
        idx = offsets[:-1][again][seg] + np.arange(int(sub_off[-1])) - sub_off[:-1][seg]
        quit_[again], f[again] = _batch(flags[idx], sub_off, states, twofold, start)
    return quit_, f


def _batch(
    flags: np.ndarray,
    offsets: np.ndarray,
    states: int,
    twofold: bool = False,
    start: str | int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """One vectorised pass. Uses the reflected-walk identity
    ``s_t = X_t + max(start, -min_{k<=t} X_k)`` for a walk reflected at ``B = 0`` (valid up to
    the first passage to ``Q``), X the segment's cumulative moves."""
    offsets = np.asarray(offsets, dtype=np.int64)
    n = len(offsets) - 1
    lengths = np.diff(offsets)
    start = start_state(states, start)
    total = int(offsets[-1])
    quit_ = np.zeros(n, dtype=bool)
    f = lengths.copy()
    if total == 0:
        return quit_, f
    seg = np.repeat(np.arange(n, dtype=np.int64), lengths)
    k = np.arange(total, dtype=np.int64) - offsets[:-1][seg]
    if twofold:
        shift = np.minimum(k + 1, 62)
        step = np.maximum(1, np.int64(states) >> shift)
    else:
        step = np.ones(total, dtype=np.int64)
    moves = np.where(np.asarray(flags, dtype=bool), -step, step)
    csum = np.cumsum(moves)
    before = np.concatenate(([0], csum))[offsets[:-1]]
    x = csum - before[seg]
    big = 2 * (int(np.abs(x).max()) + states + 1)
    shifted = x - seg * big
    runmin = np.minimum.accumulate(shifted) + seg * big
    s = x + np.maximum(start, -runmin)
    hit = np.flatnonzero(s >= states - 1)
    if hit.size:
        hit_seg = seg[hit]
        first = np.ones(hit.size, dtype=bool)
        first[1:] = hit_seg[1:] != hit_seg[:-1]
        quit_[hit_seg[first]] = True
        f[hit_seg[first]] = k[hit[first]] + 1
    return quit_, f
