"""The settings of form exploration, read once (``HIDDENWEB_*`` in docs/settings.md; lab knobs
``form_*`` and ``lvs_learn`` in docs/design-notes.md)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scrapy.settings import BaseSettings

from hiddenweb import defaults
from hiddenweb.config import lab


@dataclass(frozen=True)
class FormsConfig:
    """The ``HIDDENWEB_*`` settings of form exploration (docs/settings.md)."""

    submit: bool
    max_submissions: int
    wave: int
    patience: int
    blind_budget: int
    lvs_learn: int
    harvest: bool
    affinity: bool
    answers_first: bool
    lvs_dir: str
    keep_tokens: bool = False  # HIDDENWEB_KEEP_TOKENS: tokens and keys sent stay on items
    stop_mass: float = 0.05  # HIDDENWEB_STOP_MASS: retire a form under this missing mass
    stop_window: int = 30  # lab knob stop_window: the answers its missing mass is read over
    stop_blind_rounds: int = 0  # lab knob: blind budgets an endpoint spends before it retires
    page_words: bool = True  # lab knob form_page_words: a search box takes its page's words
    #: lab knob form_reading_patience: requests finished with none of an endpoint's answers
    #: read, after which its guesses wait for them no more (0: they wait until read)
    reading_patience: int = 32
    #: lab knob form_view_copies: a copy of an explored form that only asks again for its own
    #: page's view is not submitted (FormCrawler._view_copy)
    view_copies: bool = True
    #: lab knob form_inert_repeats: values whose answers each show what the one before showed
    #: end the form as inert too, not only answers that show the defaults' answer
    inert_repeats: bool = True
    #: lab knob form_own_page_families: the copies of a POST form that posts back to its own
    #: page are one family across pages, and a copy done with no new page counts against it
    #: (StoppingRule.family_of, FormCrawler.feedback)
    own_page_families: bool = True
    #: lab knob form_family_values: such a family is judged by its copies' answers to values
    #: other than the page's defaults; a copy whose defaults' answer was its one new page is
    #: done with no new page for it (StoppingRule.answered, FormCrawler.feedback)
    family_values: bool = True
    #: lab knob form_family_text: ... and an answer to such a value is a new page for it only
    #: when it shows a text block no page showed before (pagetext.NEW_TEXT_META), not known
    #: text rearranged (FormCrawler.feedback)
    family_text: bool = True
    #: lab knob form_previews_known: an answer the DLA judged a preview (every link on it
    #: leads to a page met before, one not read yet: dla/previews.py) is not a new page for
    #: its form's explorer (FormCrawler.feedback)
    previews_known: bool = True
    #: lab knob form_typed_echoes: the words of every value typed into a form submitted in
    #: Chromium are echoes on its answers (FormCrawler.typed_echoes)
    typed_echoes: bool = True
    #: lab knob form_browser_slow_start: a form submitted in Chromium sends its defaults alone
    #: first, and grows its wave by its answers (FormExplorer.first_wave)
    browser_slow_start: bool = True
    #: lab knob form_page_only_after: a form submitted in Chromium whose first this many
    #: answered submissions sent nothing (no navigation, no script request: it only changed
    #: the page) and none of which sent anything is submitted no more (FormCrawler.heard); 0 off
    page_only_after: int = 2

    @classmethod
    def from_settings(cls, s: BaseSettings) -> FormsConfig:
        def get(name: str, getter: Callable = s.get) -> Any:
            return getter(name, getattr(defaults, name))

        return cls(
            submit=get("HIDDENWEB_SUBMIT_FORMS", s.getbool),
            max_submissions=get("HIDDENWEB_MAX_SUBMISSIONS_PER_FORM", s.getint),
            wave=lab(s, "form_wave"),
            patience=lab(s, "form_patience"),
            blind_budget=lab(s, "form_blind_budget"),
            lvs_learn=lab(s, "lvs_learn"),
            harvest=lab(s, "form_harvest"),
            affinity=lab(s, "form_affinity"),
            answers_first=lab(s, "form_answers_first"),
            lvs_dir=get("HIDDENWEB_LVS_DIR") or "",
            keep_tokens=get("HIDDENWEB_KEEP_TOKENS", s.getbool),
            stop_mass=get("HIDDENWEB_STOP_MASS", s.getfloat),
            stop_window=lab(s, "stop_window"),
            stop_blind_rounds=lab(s, "stop_blind_rounds"),
            page_words=lab(s, "form_page_words"),
            reading_patience=lab(s, "form_reading_patience"),
            view_copies=lab(s, "form_view_copies"),
            own_page_families=lab(s, "form_own_page_families"),
            family_values=lab(s, "form_family_values"),
            family_text=lab(s, "form_family_text"),
            previews_known=lab(s, "form_previews_known"),
            inert_repeats=lab(s, "form_inert_repeats"),
            typed_echoes=lab(s, "form_typed_echoes"),
            browser_slow_start=lab(s, "form_browser_slow_start"),
            page_only_after=lab(s, "form_page_only_after"),
        )
