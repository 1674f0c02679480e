"""A learning automaton (LA) with a variable action set: the paper's reward and penalty rules.

Contract: an :class:`Automaton` holds an action probability vector ``p`` over ``r`` actions
(named by hashable keys, added as they are discovered). ``p`` is a distribution at all times.
With action ``m`` chosen, the paper (``seeds/000_0c3830255053559c.txt``) updates it as:

* reward, eqs. (4)-(7) (entropy-scaled step)::

      p_m <- p_m + a_m (1 - p_m)              (4)
      p_j <- (1 - a_m) p_j,  j != m           (5)
      a_m = E_m / (1 + E_m)                   (6)
      E_m = -(p_m ln p_m + (1 - p_m) ln(1 - p_m))   (7)

  ``E_m`` is the binary entropy of ``p_m`` in nats (the paper writes ``log``; natural log is
  the usual reading), so ``0 <= a_m <= ln 2 / (1 + ln 2) ~ 0.409``. A fixed step ``a`` (the
  classic linear rule, the paper's eq. 1) can be configured instead for ablations.
* penalty, eq. (2)::

      p_m <- p_m (1 - b)
      p_j <- b / (r - 1) + p_j (1 - b),  j != m

  (the paper labels eqs. 1 and 2 the wrong way round, see ALGORITHMS.md section 1). With
  ``r == 1`` a penalty is a no-op: the single action keeps probability 1.

A newly discovered action enters with the uniform share ``1 / (r + 1)`` and the others are
scaled by ``r / (r + 1)``: still a distribution, and the order of the old actions is unchanged.

Cost: every update maps all ``j != m`` through one affine map with positive slope, so ``p`` is
stored lazily as ``p_j = s * q_j + t`` and an update costs O(1), not O(r). The lazy form is
folded back (``q_j <- p_j``, ``s = 1``, ``t = 0``, renormalised to sum 1) after ``r`` updates or
when ``s`` leaves ``[1e-100, 1e100]``: amortised O(1), and rounding drift stays bounded. A
useful consequence for the scheduler: an update never changes the relative order of the
*other* actions, so ``q`` orders them (see :mod:`hiddenweb.dla.scheduler`).

Stopping (the paper's ``p > threshold`` criterion): once an action's probability exceeds
``converge_p`` the automaton is *converged* and ignores further updates.
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Iterator
from typing import Any

_FOLD_LOW = 1e-100
_FOLD_HIGH = 1e100


def entropy_step(p: float) -> float:
    """``a_m = E / (1 + E)`` with ``E`` the binary entropy of ``p`` in nats (eqs. 6-7)."""
    if p <= 0.0 or p >= 1.0:
        return 0.0
    e = -(p * math.log(p) + (1.0 - p) * math.log1p(-p))
    return e / (1.0 + e)


class Automaton:
    """One learning automaton: keys of its actions and their probabilities."""

    __slots__ = ("_index", "_keys", "_q", "_s", "_t", "_since_fold", "a", "b", "converge_p",
                 "converged", "epoch", "steps")

    def __init__(self, *, a: float | None = None, b: float = 0.01,
                 converge_p: float = 1.0) -> None:
        """``a=None``: entropy-scaled reward step (eqs. 6-7); a float: fixed step (eq. 1)."""
        if a is not None and not 0.0 < a < 1.0:
            raise ValueError(f"reward step a must be in (0, 1), got {a!r}")
        if not 0.0 <= b < 1.0:
            raise ValueError(f"penalty step b must be in [0, 1), got {b!r}")
        self.a = a
        self.b = b
        self.converge_p = converge_p
        self.converged = False
        self.steps = 0
        self.epoch = 0  # incremented by every fold: order_key values of older epochs are stale
        self._keys: list[Hashable] = []
        self._index: dict[Hashable, int] = {}
        self._q: list[float] = []
        self._s = 1.0
        self._t = 0.0
        self._since_fold = 0

    # -- reading ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._index

    def keys(self) -> list[Hashable]:
        return list(self._keys)

    def prob(self, key: Hashable) -> float:
        return self._s * self._q[self._index[key]] + self._t

    def probs(self) -> list[float]:
        s, t = self._s, self._t
        return [s * q + t for q in self._q]

    def relative(self, key: Hashable) -> float:
        """``r * p_key``: 1 means "no information", comparable across automata of any size."""
        return len(self._keys) * self.prob(key)

    def order_key(self, key: Hashable) -> float:
        """A value that orders actions like ``p``, unchanged by updates of other actions within
        one :attr:`epoch` (a fold rescales all of them, keeping their order)."""
        return self._q[self._index[key]]

    def items(self) -> Iterator[tuple[Hashable, float]]:
        return zip(self._keys, self.probs(), strict=True)

    # -- changing --------------------------------------------------------------------------
    def add_action(self, key: Hashable) -> bool:
        """Add an action with the uniform share ``1/(r+1)``; False when it is already known."""
        if key in self._index:
            return False
        r = len(self._keys)
        if r:
            self._affine(r / (r + 1), 0.0)
        self._index[key] = r
        self._keys.append(key)
        self._q.append(0.0)
        self._set(r, 1.0 / (r + 1))
        return True

    def reward(self, key: Hashable) -> bool:
        """Eqs. (4)-(7); False when nothing changed (converged automaton or zero step)."""
        if self.converged:
            return False
        m = self._index[key]
        pm = self._s * self._q[m] + self._t
        a = self.a if self.a is not None else entropy_step(pm)
        if a <= 0.0:
            return False
        self._affine(1.0 - a, 0.0)
        self._set(m, pm + a * (1.0 - pm))
        self._after_update(m)
        return True

    def penalize(self, key: Hashable) -> bool:
        """Eq. (2); False when nothing changed (converged, ``b == 0`` or a single action)."""
        r = len(self._keys)
        if self.converged or self.b == 0.0 or r < 2:
            return False
        m = self._index[key]
        pm = self._s * self._q[m] + self._t
        self._affine(1.0 - self.b, self.b / (r - 1))
        self._set(m, pm * (1.0 - self.b))
        self._after_update(m)
        return True

    def choose(self, rng: random.Random | None = None) -> Hashable:
        """Draw an action by ``p`` (the paper's action selection)."""
        if not self._keys:
            raise IndexError("choose from an automaton without actions")
        return (rng or random).choices(self._keys, weights=self.probs())[0]

    # -- state -----------------------------------------------------------------------------
    def to_state(self) -> dict[str, Any]:
        return {"keys": list(self._keys), "p": self.probs(), "steps": self.steps,
                "converged": self.converged}

    def load_state(self, state: dict[str, Any]) -> None:
        keys, p = state["keys"], state["p"]
        if len(keys) != len(p):
            raise ValueError("automaton state: keys and p differ in length")
        self._keys = [tuple(k) if isinstance(k, list) else k for k in keys]
        self._index = {k: i for i, k in enumerate(self._keys)}
        self._q = [float(x) for x in p]
        self._s, self._t = 1.0, 0.0
        self.steps = int(state.get("steps", 0))
        self.converged = bool(state.get("converged", False))
        self._fold()

    # -- internals -------------------------------------------------------------------------
    def _affine(self, c: float, d: float) -> None:
        """Apply ``p_j <- c p_j + d`` to every action (the caller then sets ``p_m``)."""
        self._s *= c
        self._t = c * self._t + d

    def _set(self, i: int, p: float) -> None:
        self._q[i] = (p - self._t) / self._s

    def _after_update(self, m: int) -> None:
        self.steps += 1
        self._since_fold += 1
        if (self._since_fold >= len(self._keys) or not _FOLD_LOW < self._s < _FOLD_HIGH):
            self._fold()
        if self.prob(self._keys[m]) > self.converge_p:
            self.converged = True

    def _fold(self) -> None:
        ps = [max(0.0, p) for p in self.probs()]
        total = math.fsum(ps)
        if total > 0.0:
            self._q = [p / total for p in ps]
        self._s, self._t = 1.0, 0.0
        self._since_fold = 0
        self.epoch += 1
