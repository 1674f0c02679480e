"""The visit store's schema (:mod:`hiddenweb.store`): its tables, and the SQL that writes and
ranks them.

Contract
--------
* :data:`migrations` creates the ``visits`` and ``pages`` tables and their indexes, then adds
  columns; a schema change is a new migration. Its set is named ``hiddenweb.store``: each store
  file records its applied migrations under that name, so it never changes.
* :class:`Visit`: one visit; :meth:`Visit.row` is its ``visits`` row, in the column order of
  :data:`INSERT_VISIT` (which skips a visit id already written); :attr:`Visit.key` its page.
* :data:`UPSERT_PAGE`: the paper's update algorithm, as one upsert of the ``pages`` aggregate
  from a new visit row; it returns the page's frequency (1: a new page).
* :data:`RANKINGS`: the filter and order of each ranking; :data:`PAGE_COLUMNS`: the columns a
  ranking returns.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from sqlite_utils import Database
from sqlite_utils.db import DescIndex
from sqlite_utils.migrations import Migrations

RANKINGS: dict[str, str] = {
    # Ties as in the paper's tables: table 2 keeps table order, table 3 puts higher frequency first.
    "frequency": "ORDER BY frequency DESC, id",
    "weightage": "ORDER BY weightage DESC, frequency DESC, id",
    "combined": "WHERE ttl > frequency / 2 ORDER BY frequency DESC, weightage DESC, ttl DESC, id",
}
PAGE_COLUMNS = (
    "id, url, method, form, frequency, weightage, ttl, first_seen, last_seen, last_status, "
    "final_url, fresh_until, fingerprint, hidden, reached_by, depth, title, form_class"
)

migrations = Migrations("hiddenweb.store")


@migrations()
def m001_visits_and_pages(db: Database) -> None:
    latest: dict[str, Any] = {
        "final_url": str, "fresh_until": float, "fingerprint": str, "hidden": int,
        "reached_by": str, "depth": int, "title": str,
    }  # fmt: skip
    db["visits"].create(
        {"visit_id": str, "key": str, "url": str, "method": str, "form": str, "source": str,
         "at": float, "seconds": float, "available": int, "status": int, **latest},
        pk="visit_id", not_null={"key", "url", "at", "seconds", "available"},
    )  # fmt: skip
    db["visits"].create_index(["key"])
    db["pages"].create(
        {"id": int, "key": str, "url": str, "method": str, "form": str, "frequency": int,
         "weightage": float, "ttl": int, "first_seen": float, "last_seen": float,
         "last_status": int, **latest},
        pk="id", not_null={"key", "url", "frequency", "weightage", "ttl"},
    )  # fmt: skip
    db["pages"].create_index(["key"], unique=True)
    db["pages"].create_index([DescIndex("frequency"), "id"], index_name="pages_by_frequency")
    db["pages"].create_index(
        [DescIndex("weightage"), DescIndex("frequency"), "id"], index_name="pages_by_weightage"
    )
    # Partial index: exactly the combined ranking's filter and order.
    db.execute(
        "CREATE INDEX pages_combined ON pages "
        "(frequency DESC, weightage DESC, ttl DESC, id) WHERE ttl > frequency / 2"
    )


@migrations()
def m002_form_class(db: Database) -> None:
    """The safety policy's class of the form a submission was made with (``search``, …), so a
    recrawl replays a POST only when the policy had allowed it (``hiddenweb.safety``)."""
    for table in ("visits", "pages"):
        db[table].add_column("form_class", str)


@dataclass(frozen=True, slots=True)
class Visit:
    """One visit of one page, by the crawler or by a user."""

    visit_id: str
    url: str
    seconds: float
    available: bool
    at: float
    source: str = "crawl"
    method: str = "GET"
    form: Mapping[str, Any] | None = None
    status: int | None = None
    final_url: str | None = None
    fresh_until: float | None = None
    fingerprint: str | None = None
    hidden: bool | None = None
    reached_by: str | None = None
    depth: int | None = None
    title: str | None = None
    form_class: str | None = None

    @property
    def key(self) -> str:
        if self.method.upper() == "GET" or self.form is None:
            return self.url
        body = urlencode(sorted(self.form.items()), doseq=True)
        return f"{self.method.upper()} {self.url} {body}"

    def row(self) -> tuple[Any, ...]:
        form = json.dumps(dict(self.form), sort_keys=True) if self.form is not None else None
        hidden = None if self.hidden is None else int(self.hidden)
        return (
            self.visit_id, self.key, self.url, self.method.upper(), form, self.source, self.at,
            float(self.seconds), int(bool(self.available)), self.status, self.final_url,
            self.fresh_until, self.fingerprint, hidden, self.reached_by, self.depth, self.title,
            self.form_class,
        )  # fmt: skip


INSERT_VISIT = (
    # ON CONFLICT(visit_id), not OR IGNORE: only a known visit id is skipped, a NULL still fails.
    "INSERT INTO visits (visit_id, key, url, method, form, source, at, seconds, "
    "available, status, final_url, fresh_until, fingerprint, hidden, reached_by, depth, title, "
    "form_class) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT(visit_id) DO NOTHING"
)
_LATEST = ("last_status", "final_url", "fresh_until", "fingerprint", "reached_by", "depth", "title",
           "form_class")
# The paper's update algorithm, as one upsert per new visit row.
UPSERT_PAGE = (
    "INSERT INTO pages (key, url, method, form, frequency, weightage, ttl, first_seen, last_seen, "
    "last_status, final_url, fresh_until, fingerprint, hidden, reached_by, depth, title, "
    "form_class) SELECT key, url, method, form, 1, seconds, available, at, at, status, final_url, "
    "fresh_until, fingerprint, hidden, reached_by, depth, title, form_class FROM visits "
    "WHERE visit_id = ? "
    "ON CONFLICT(key) DO UPDATE SET frequency = frequency + 1, "
    "weightage = weightage + excluded.weightage, ttl = ttl + excluded.ttl, "
    "first_seen = min(first_seen, excluded.first_seen), "
    "hidden = CASE WHEN hidden IS NULL THEN excluded.hidden WHEN excluded.hidden IS NULL "
    "THEN hidden ELSE min(hidden, excluded.hidden) END, "
    + ", ".join(
        f"{c} = CASE WHEN excluded.last_seen >= last_seen AND excluded.{c} IS NOT NULL "
        f"THEN excluded.{c} ELSE {c} END"
        for c in _LATEST
    )
    + ", last_seen = max(last_seen, excluded.last_seen) RETURNING frequency"
)
