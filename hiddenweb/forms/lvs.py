"""The LVS (labelled value set) table: labels that name a form field → candidate values.

The idea is HiWE's (Raghavan & Garcia-Molina 2001), used by the HWDLA paper (ALGORITHMS.md §1)
to fill free-text fields. The files are TOML, one table per label, in a directory (the bundled
``hiddenweb/lvs_data/`` unless ``HIDDENWEB_LVS_DIR`` names another)::

    [city]                                   # the label's name
    labels = ["city", "town", "location"]    # words that name such a field (label text, name, id…)
    values = ["Springfield", "Riverton"]     # candidate values, best first

    [city.within.region]                     # optional: values known to go with a value of a
    MA = ["Springfield", "Boston"]           # related field (a gazetteer's city -> state)

    [keyword]
    open = true                              # optional, default false: see below
    labels = ["keyword", "search", "q"]
    values = ["garden", "piano"]

A form whose fixed state names that field (a wizard's hidden ``region=MA``) tries the values
listed for it first and never the values listed *only* for other keys (Boston is not typed into
the TX form) (:class:`hiddenweb.forms.explorer.FormExplorer`); values the table does not place keep
their turn after them.

An *open* label takes any word: words of a form's result pages (link texts) may become its
values (HiWE's "update action values", ``lvs_learn``). A closed label (the default:
cities, authors) names a type that a bare word from the site is not, so it learns values only
from ``label: value`` records (:mod:`hiddenweb.forms.records`), which name their type.

A bad file raises :class:`LVSError` whose message names the file and the line.
Matching a field to a label scores the overlap of the field's descriptive words (its ``<label>``,
name, id, placeholder, aria-label and nearby text) with each label's keywords, as HiWE's
label-matching step does; the best label above zero wins, ties go to the earlier file/table.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

# package data (pyproject.toml): a real directory in a checkout or a wheel, a zip folder in the
# egg Scrapyd runs, hence importlib.resources
BUNDLED_DIR = resources.files("hiddenweb") / "lvs_data"

_WORD = re.compile(r"[a-z]+")


class LVSError(ValueError):
    """A malformed LVS file; the message names the file and line."""


@dataclass
class LVSLabel:
    name: str
    labels: list[str]
    values: list[str]
    source: str = ""
    within: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    open: bool = False
    keywords: frozenset[str] = field(default=frozenset(), init=False)

    def values_within(self, state: dict[str, str]) -> list[str]:
        """The values listed for a form's fixed ``state`` (``{"region": "MA"}``): a qualifier
        matches a state field sharing a word with it, its keys compare without case."""
        return self.placed(state)[0]

    def values_elsewhere(self, state: dict[str, str]) -> set[str]:
        """The values listed only for other keys than the ``state``'s, under a qualifier that
        the state names (``{"region": "MA"}``: Houston, listed for TX and not for MA). Empty
        when the state names no qualifier or a key the table does not list (nothing known)."""
        return self.placed(state)[1]

    def placed(self, state: dict[str, str]) -> tuple[list[str], set[str]]:
        """Both at once: (:meth:`values_within`, :meth:`values_elsewhere`)."""
        inside: list[str] = []
        others: set[str] = set()
        for qualifier, groups in self.within.items():
            words = set(words_of(qualifier))
            for name, value in state.items():
                if not words & set(words_of(name)):
                    continue
                mine = [k for k in groups if k.casefold() == value.strip().casefold()]
                if not mine:
                    continue
                for key, values in groups.items():
                    if key in mine:
                        inside += [v for v in values if v not in inside]
                    else:
                        others.update(values)
        return inside, others - set(inside)

    def __post_init__(self) -> None:
        words: set[str] = set()
        for label in [self.name, *self.labels]:
            words.update(words_of(label))
        self.keywords = frozenset(words)


def words_of(text: str) -> list[str]:
    """Lower-case alphabetic words of ``text``; ``camelCase`` and ``snake_case`` are split."""
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text or "")
    return _WORD.findall(text.lower())


def _line_of_table(text: str, name: str) -> int:
    pattern = re.compile(r"^[ \t]*\[[ \t]*" + re.escape(name) + r"\s*\]", re.MULTILINE)
    match = pattern.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else 1


def load_file(path: Path | Traversable) -> list[LVSLabel]:
    """Parse one LVS file; raise :class:`LVSError` naming ``path`` and the line on any fault."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise LVSError(f"{path}: not UTF-8 text ({exc})") from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise LVSError(f"{path}: {exc}") from exc  # tomllib's message carries line and column
    labels: list[LVSLabel] = []
    for name, table in data.items():
        line = _line_of_table(text, name)
        where = f"{path}, line {line}, table [{name}]"
        if not isinstance(table, dict):
            raise LVSError(f"{where}: expected a table with 'labels' and 'values'")
        unknown = set(table) - {"labels", "values", "description", "within", "open"}
        if unknown:
            raise LVSError(f"{where}: unknown key(s) {sorted(unknown)}")
        for key in ("labels", "values"):
            value = table.get(key)
            if not isinstance(value, list) or not value:
                raise LVSError(f"{where}: '{key}' must be a non-empty list of strings")
            bad = [v for v in value if not isinstance(v, str) or not v.strip()]
            if bad:
                raise LVSError(f"{where}: '{key}' holds a non-string or empty entry: {bad[0]!r}")
        if not isinstance(table.get("open", False), bool):
            raise LVSError(f"{where}: 'open' must be true or false, got {table['open']!r}")
        within = table.get("within", {})
        if not isinstance(within, dict) or not all(isinstance(g, dict) for g in within.values()):
            raise LVSError(f"{where}: 'within' must hold tables: [{name}.within.<field>]")
        for qualifier, groups in within.items():
            at = (f"{path}, line {_line_of_table(text, f'{name}.within.{qualifier}')}, "
                  f"table [{name}.within.{qualifier}]")
            for key, values in groups.items():
                if (not isinstance(values, list) or not values
                        or not all(isinstance(v, str) and v.strip() for v in values)):
                    raise LVSError(f"{at}: '{key}' must be a non-empty list of strings")
        labels.append(LVSLabel(name, table["labels"], table["values"], source=str(path),
                               within=within, open=table.get("open", False)))
    return labels


class LVS:
    """All labels of an LVS directory, and the field → label matcher."""

    def __init__(self, labels: list[LVSLabel]):
        self.labels = labels

    @classmethod
    def from_dir(cls, directory: str | Path | None = None) -> LVS:
        directory = Path(directory) if directory else BUNDLED_DIR
        if not directory.is_dir():
            raise LVSError(f"{directory}: LVS directory not found")
        files = sorted((p for p in directory.iterdir() if p.name.endswith(".toml")),
                       key=lambda p: p.name)
        if not files:
            raise LVSError(f"{directory}: no *.toml LVS files")
        labels: list[LVSLabel] = []
        for path in files:
            labels.extend(load_file(path))
        return cls(labels)

    def match(self, descriptors: list[str]) -> LVSLabel | None:
        """The label whose keywords best overlap the field's descriptive texts, or ``None``.

        ``descriptors`` are, most telling first: label text, name, id, placeholder, nearby text.
        Earlier descriptors weigh more (HiWE matches the visible label first).
        """
        best, best_score = None, 0.0
        for label in self.labels:
            score = 0.0
            for rank, text in enumerate(descriptors):
                hits = sum(1 for w in words_of(text) if w in label.keywords)
                score += hits / (rank + 1)
            if score > best_score:
                best, best_score = label, score
        return best

    def get(self, name: str) -> LVSLabel | None:
        """The label called ``name``, or ``None``."""
        return next((label for label in self.labels if label.name == name), None)

    def add_values(self, name: str, values: list[str]) -> int:
        """Add values found in result pages to a label (the paper's "update action values")."""
        for label in self.labels:
            if label.name == name:
                known = set(label.values)
                new = [v for v in values if v not in known]
                label.values.extend(new)
                return len(new)
        return 0
