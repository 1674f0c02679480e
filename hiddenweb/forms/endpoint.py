"""The forms of one endpoint (method + action path): what they share while they are explored.

A wizard's step-2 form for every region, or one search form on many pages, query one
collection. Their :class:`Endpoint` keeps what the collection's answers showed:

* ``budget``: the :class:`~hiddenweb.forms.records.BlindBudget` of misses its forms share
  until its first result, and the values its answers showed beyond their queries;
* ``records``: the ``label: value`` records its hidden pages showed (at most
  :data:`MAX_RECORDS`), offered to forms of the endpoint found later;
* ``reading``: tokens of its answers scheduled and not yet read
  (``form_answers_first``: blind guesses wait while they are read);
* ``explorers``: its forms' :class:`~hiddenweb.forms.explorer.FormExplorer`.

:func:`offer_record` matches a record's labels to one form's fields (a label sharing a word
with the field's label, name or id, or naming the same LVS label as the field) and suggests
the values to the form's explorer, each alone and, when it matches two fields or more with one
value each, together (a narrowing its answer is known to hold). A record that *contradicts*
the form's fixed state (a wizard's earlier choice kept in a hidden field, ``region=MA``, or a
dependent select's pinned parent) is not offered to it. (HiWE's "update action values",
ALGORITHMS.md section 1; adaptive query selection, Ntoulas, Zerfos & Cho 2005.)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hiddenweb.forms.explorer import FormExplorer
from hiddenweb.forms.lvs import LVS, words_of
from hiddenweb.forms.records import BlindBudget, form_state
from hiddenweb.forms.vocabulary import field_words

MAX_RECORDS = 2000  # records kept per endpoint for forms found later


@dataclass
class Endpoint:
    """What the forms of one endpoint share (see the module docstring)."""

    key: str
    budget: BlindBudget | None = None
    records: list[dict[str, list[str]]] = field(default_factory=list)
    reading: set[int] = field(default_factory=set)
    explorers: list[FormExplorer] = field(default_factory=list)

    def keep(self, record: dict[str, list[str]]) -> None:
        if len(self.records) < MAX_RECORDS:
            self.records.append(record)


def _same(a: str, b: str) -> bool:
    return a.strip().casefold() == b.strip().casefold()


def _label_matches(label: str, words: set[str], lvs_label: str | None, lvs: LVS) -> bool:
    if set(label.split()) & words:
        return True
    if lvs_label is None:
        return False
    found = lvs.match([label])
    return found is not None and found.name == lvs_label


def matched_fields(explorer: FormExplorer, record: dict[str, list[str]], lvs: LVS
                   ) -> dict[str, str]:
    """``record label -> field name`` for the explorer's fields the record's labels match (a
    label sharing a word with the field's label, name or id, or naming the field's LVS label)."""
    fields = {f.name: f for f in explorer.form.fields}
    out: dict[str, str] = {}
    for name in explorer.names:
        info = fields.get(name)
        words = field_words(info) if info is not None else set(words_of(name))
        for label in record:
            if label not in out and _label_matches(label, words,
                                                   explorer.lvs_labels.get(name), lvs):
                out[label] = name
    return out


def offer_record(explorer: FormExplorer, record: dict[str, list[str]], lvs: LVS) -> int:
    """Suggest a record's values to the explorer's matching fields; new submissions queued."""
    if not record:
        return 0
    for name, value in form_state(explorer.signature).items():
        words = set(words_of(name))
        for label, values in record.items():
            if set(label.split()) & words and not any(_same(v, value) for v in values):
                return 0  # the record answers another choice of the wizard
    queued = 0
    matched = matched_fields(explorer, record, lvs)
    for label, name in matched.items():
        for value in record[label]:
            queued += explorer.suggest(name, value)
    # and the record's single values together: a narrowing its answer is known to hold
    together = {name: record[label][0] for label, name in matched.items()
                if len(record[label]) == 1}
    return queued + explorer.suggest_together(together)


