"""The one place where a response's outcome becomes reward, penalty, fresh or nothing.

Contract: :func:`feedback` maps the meta of the request that produced a response and the
response's outcome to ``"reward"``, ``"penalty"``, ``"fresh"`` (no update; the scheduler
keeps the link kind's age) or ``None`` (neutral: no update):

==============================================  ==========  ====================================
outcome                                          result      why
==============================================  ==========  ====================================
no ``hiddenweb_action`` meta                     ``None``    not an automaton's action (seed)
download failed (``status`` None) or 5xx         ``None``    the network's fault, not the action's
hidden (``form_only``) and new content           reward      a washy edge found a hidden page,
                                                             paper cases (i) and (ii), eqs. 4-7
hidden but a repeat (``new_content`` False)      penalty     "no results" and duplicate answer
                                                             pages: the assignment was wasted
hidden, new, but not ``novel``                   penalty     a page that shows nothing no page
                                                             showed before (another sort order
                                                             of the same records, an echo of
                                                             the query): pagetext.ShownText
hidden, new, novel, but no word new to the       penalty     another view of what was read (a
crawl (``fresh`` 0: the stale rule's reading)                diff's layout, a known subset):
                                                             its form shows nothing new
hidden, new, novel, but a ``preview``            penalty     its links all lead to pages met
                                                             before, one of them not read yet
                                                             (a search's list of queued pages:
                                                             its snippets are their text):
                                                             dla/previews.py
public page showing a form not seen before       reward      a boldface edge that made a washy
(``new_forms``), new content                                 edge reachable: the step before a
                                                             hidden page (the paper's walk goes
                                                             on from the page it reached)
public page showing a word no page showed        ``fresh``   a boldface edge that read the
before (``fresh``: the stale rule's reading)                 site's content: no update, and its
                                                             link kind keeps its age in the
                                                             scheduler's ties
public page (not ``form_only``), or a 4xx       penalty     a boldface edge, paper case (iii),
                                                             eq. 2 (a 404 is a wasted action too)
==============================================  ==========  ====================================

Without the row of public pages showing a new form every public link is penalised, so link
kinds all sink together and a crawler trap's fresh URL templates (a calendar, a catalogue's
facets) outrank the site's pages; with it, the links that lead to search forms keep a share
(issue 3).

A repeat is penalised rather than ignored: most form submissions with a useless value produce
the same "no results" page, and that is exactly what the automata must learn to avoid. The
penalty step ``b`` is small (``b << a``), so a few misses do not bury a kind that once paid.
``form_only`` and ``new_content`` are decided by the spider (``PageItem.form_only`` and the
page's content fingerprint); see :mod:`hiddenweb.dla.middleware`.

The third row from the end (lab knob ``dla_fresh_public``) keeps the link kinds that read
content ahead of those that do not. Penalised for every page read and capped at what all
public links taught, every link kind of a site whose pages never pay scores the same, and the
oldest group wins the tie; a group emptied and made again was a new one: a tracker's ticket
links, whose group empties with each listing page read, lost to each wiki page's other
versions, diffs and history met later (each page words already read), and a Trac crawl read
121 of its 260 ticket and wiki pages in its 1,000 downloads. Counted:
``hiddenweb/dla/feedback/fresh``.
"""

from __future__ import annotations

from typing import Any, Literal

from hiddenweb.dla.kinds import ACTION_META
from hiddenweb.pagetext import WORDS_NEW

Outcome = Literal["reward", "penalty", "fresh"]

#: Signal sent (``crawler.signals.send_catch_log``) with ``request_meta``, ``url`` (of the
#: request) and ``outcome`` for each judged response; the scheduler's ``learn`` receives it.
feedback_signal = object()


def feedback(request_meta: dict[str, Any], *, status: int | None, form_only: bool,
             new_content: bool, new_forms: int = 0, novel: bool = True,
             preview: bool = False, fresh: int | None = None) -> Outcome | None:
    """Reward, penalty, fresh or ``None`` for the action that produced a response (table
    above; ``fresh``: what the page showed that no earlier page showed,
    :data:`~hiddenweb.pagetext.FRESH_META`, ``None`` when not judged)."""
    if not isinstance(request_meta.get(ACTION_META), dict):
        return None
    if status is None or status >= 500:
        return None
    if new_content and status < 400 and (
            form_only and novel and not preview and fresh != 0 or new_forms > 0):
        return "reward"
    if fresh == WORDS_NEW and new_content and status < 400 and not form_only:
        return "fresh"
    return "penalty"
