"""The DLA scheduler's settings, read once: ``HIDDENWEB_DLA_WAIT``
(docs/settings.md) and the lab knobs ``dla_*`` (``HIDDENWEB_LAB``, docs/design-notes.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hiddenweb import defaults
from hiddenweb.config import lab

#: ``dla_label_words``: which label words are kinds (see :mod:`hiddenweb.dla.kinds`).
#: ``answers``: words of links on a form's answers and of submit labels; ``all``: also the words
#: of links on public pages; ``none``.
LABEL_WORD_SCOPES = ("answers", "all", "none")


@dataclass(frozen=True)
class DLAConfig:
    a: float | None
    b: float
    transfer: bool
    max_steps: int
    converge_p: float
    label_words: str = "answers"
    wait: float = 0.0
    explore_in_flight: int = 0
    nofollow_last: bool = True
    wait_for_browser: bool = True
    hold_full_slot: bool = False  # lab knob dla_hold_full_slot (DLAScheduler._full_slots)
    lifted_go: bool = False  # lab knob dla_lifted_go (DLAScheduler._wait_reason)
    fresh_views: bool = False  # lab knob dla_fresh_views (DLAScheduler._keep_age)
    fewer_keys_first: bool = True  # lab knob dla_fewer_keys_first (GroupHeap._breadth)

    @classmethod
    def from_settings(cls, settings: Any) -> DLAConfig:
        raw_a = lab(settings, "dla_a")
        a = None if raw_a in (None, "", "entropy") else float(raw_a)
        b = lab(settings, "dla_b")
        if a is not None and not 0.0 < a < 1.0:
            raise ValueError(f"HIDDENWEB_LAB dla_a must be 'entropy' or in (0, 1), got {raw_a!r}")
        if not 0.0 <= b < 1.0:
            raise ValueError(f"HIDDENWEB_LAB dla_b must be in [0, 1), got {b!r}")
        if a is not None and b >= a:
            raise ValueError(f"HIDDENWEB_LAB dla_b ({b}) must be below dla_a ({a})")
        converge_p = lab(settings, "dla_converge_p")
        if not 0.0 < converge_p <= 1.0:
            raise ValueError(f"HIDDENWEB_LAB dla_converge_p must be in (0, 1], got {converge_p}")
        raw_words = lab(settings, "dla_label_words")
        words = str(raw_words).strip().lower()
        words = {"true": "all", "1": "all", "false": "none", "0": "none"}.get(words, words)
        if words not in LABEL_WORD_SCOPES:
            raise ValueError(f"HIDDENWEB_LAB dla_label_words must be one of "
                             f"{', '.join(LABEL_WORD_SCOPES)}, got {raw_words!r}")
        wait = settings.getfloat("HIDDENWEB_DLA_WAIT", defaults.HIDDENWEB_DLA_WAIT)
        if not 0.0 <= wait < 1.0:
            raise ValueError(f"HIDDENWEB_DLA_WAIT must be in [0, 1), got {wait}")
        explore = lab(settings, "dla_explore_in_flight")
        if explore < 0:
            raise ValueError(f"HIDDENWEB_LAB dla_explore_in_flight must be >= 0, got {explore}")
        return cls(
            a=a, b=b,
            transfer=lab(settings, "dla_transfer"),
            max_steps=max(0, lab(settings, "dla_max_steps")),
            converge_p=converge_p,
            label_words=words,
            wait=wait,
            explore_in_flight=explore,
            nofollow_last=lab(settings, "dla_nofollow_last"),
            wait_for_browser=lab(settings, "dla_wait_for_browser"),
            hold_full_slot=lab(settings, "dla_hold_full_slot"),
            lifted_go=lab(settings, "dla_lifted_go"),
            fresh_views=lab(settings, "dla_fresh_views"),
            fewer_keys_first=lab(settings, "dla_fewer_keys_first"),
        )
