"""The visit store: one row per page with its visit frequency, weightage and TTL (paper 002, §5).

Contract
--------
A SQLite file (WAL mode) with two tables, created and upgraded through ``sqlite_utils``
:class:`~sqlite_utils.migrations.Migrations` (set ``hiddenweb.store``; the schema and its SQL:
:mod:`hiddenweb.store_schema`):

``visits``
    the log: one row per visit, keyed by a unique ``visit_id`` (``<crawl id>:<sequence>`` for a
    crawl, ``import:<file digest>:<line>`` for an import). Writing a visit id twice is a no-op.
``pages``
    the aggregate, the paper's ``CRAWLER`` table: ``frequency`` (visits), ``weightage`` (seconds
    spent, summed), ``ttl`` (visits that found the page available), plus ``first_seen``,
    ``last_seen``, ``last_status``, ``fresh_until`` (HTTP freshness), ``fingerprint``, ``hidden``
    and ``reached_by``.

:meth:`VisitStore.record` applies the paper's update algorithm ("database updation as user
visit URL"): a new page gets frequency 1, weightage = time spent, ttl = 1 if available else 0; a
known page gets frequency += 1, weightage += time spent, ttl += 1 if available. Each visit row and
its aggregate update are written in one ``BEGIN IMMEDIATE`` transaction, only when the visit id is
new, so a crash loses at most the uncommitted batch and a replay doubles nothing; the aggregate
always equals a recomputation from ``visits`` (:meth:`VisitStore.check`).

Choices where the paper is silent:

- *Page key.* GET: the requested URL. POST: method, action URL and the submitted fields (a POST
  form's action URL alone is shared by all its answers); ``form`` keeps the fields for a recrawl.
- *Available* (for ``ttl``): the request got an HTTP status below 400.
- *Time spent* for a crawl visit is ``fetch_seconds``; imported user visits give their own.
- *Form class*: the safety policy's class of the form a submission was made with
  (``form_class``, ``hiddenweb.safety``): a recrawl replays a POST only when it is one the policy
  submits; a store written before it has none, and its POSTs are not replayed.
- *Hidden*: 1 when every crawl visit reached the page only through a form (``form_only``); one
  visit over links alone makes it 0.
- *Latest-visit fields* (``last_status``, ``fresh_until``, ``fingerprint`` …) come from the visit
  with the greatest time, not the last committed, so concurrent writers agree.
- *Freshness*: ``Cache-Control: no-store|no-cache`` → stale at fetch time; ``max-age`` wins over
  ``Expires`` (RFC 9111 §5.3); an invalid ``Expires`` means already expired; neither → NULL.
- *Combined ranking* ``ttl > frequency / 2`` uses SQLite's integer division, which for integer
  ``ttl`` keeps exactly the pages available on more than half of their visits.
"""

from __future__ import annotations

import json
import logging
import math
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

from scrapy.exceptions import NotConfigured
from scrapy.utils.project import data_path, get_project_settings
from sqlite_utils import Database

from hiddenweb.store_schema import (
    INSERT_VISIT,
    PAGE_COLUMNS,
    RANKINGS,
    UPSERT_PAGE,
    Visit,
    migrations,
)

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class RecordResult:
    new_pages: int = 0
    updated_pages: int = 0
    duplicates: int = 0

    @property
    def written(self) -> int:
        return self.new_pages + self.updated_pages


@dataclass(frozen=True, slots=True)
class RecrawlTarget:
    """A stored page to fetch again: build ``Request(url, method=…)`` or a form request."""

    url: str
    method: str
    formdata: dict[str, Any] | None
    frequency: int
    weightage: float
    ttl: int
    fresh_until: float | None
    hidden: bool = False
    form_class: str | None = None  # the safety policy's class of a form submission


class StoreError(Exception):
    """A visit store that cannot be opened, read or written: the message names the file."""


#: SQLite errors worth retrying: another process holds the lock
TRANSIENT = ("database is locked", "database table is locked", "database is busy")


def transient(exc: BaseException) -> bool:
    """Whether ``exc`` is another writer's lock (retry later), not a broken store."""
    return isinstance(exc, sqlite3.OperationalError) and any(
        t in str(exc).lower() for t in TRANSIENT)


def _set_wal(conn: sqlite3.Connection, timeout: float) -> None:
    """``PRAGMA journal_mode=wal``, retried for up to *timeout* seconds: switching a fresh file
    to WAL takes an exclusive lock and SQLite does not wait for it (no busy handler), so two
    crawls opening one new store at once would otherwise fail one of them at once."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            conn.execute("PRAGMA journal_mode=wal")
            return
        except sqlite3.OperationalError as exc:
            if not transient(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.05)


class VisitStore:
    """A visit store file; one connection, explicit transactions (``BEGIN IMMEDIATE``).

    ``readonly=True`` (``hiddenweb rank``, ``report``): the file is opened read-only, never
    created nor migrated, takes no write lock, and a store written by an older version is read
    as it is (columns it lacks read as NULL). A file that is not a visit store, or that SQLite
    cannot read, raises :class:`StoreError` naming it.
    """

    def __init__(self, path: str | Path, *, timeout: float = 30.0, readonly: bool = False
                 ) -> None:
        self.path = Path(path)
        self.readonly = readonly
        try:
            if readonly:
                if not self.path.exists():
                    raise StoreError(f"no visit store at {self.path}")
                conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True,
                                       timeout=timeout, isolation_level=None)
                self.db = Database(conn)
                if "pages" not in self.db.table_names():
                    conn.close()
                    raise StoreError(f"{self.path} is not a visit store (no pages table)")
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # isolation_level=None: no implicit BEGIN, every transaction here is explicit.
            conn = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)
            _set_wal(conn, timeout)
            conn.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable across kills
            self.db = Database(conn)
            if migrations.pending(self.db):  # a read: an up-to-date store takes no write lock
                with self.transaction():  # serialises concurrent first openings
                    migrations.apply(self.db)
        except sqlite3.Error as exc:
            raise StoreError(f"visit store {self.path}: {exc}") from exc

    @property
    def conn(self) -> sqlite3.Connection:
        return self.db.conn

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> VisitStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT``: takes the write lock first (waits up to the busy
        timeout for another writer), rolls back on any error."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def record(self, visits: Iterable[Visit]) -> RecordResult:
        """Write *visits* and update the aggregates, all in one transaction."""
        with self.transaction() as conn:
            return self._record(conn, visits)

    def _record(self, conn: sqlite3.Connection, visits: Iterable[Visit]) -> RecordResult:
        """The update algorithm; the caller holds the transaction."""
        result = RecordResult()
        for visit in visits:
            if conn.execute(INSERT_VISIT, visit.row()).rowcount == 0:
                result.duplicates += 1
                continue
            (frequency,) = conn.execute(UPSERT_PAGE, (visit.visit_id,)).fetchone()
            if frequency == 1:
                result.new_pages += 1
            else:
                result.updated_pages += 1
        return result

    def rank(self, by: str = "combined", limit: int | None = None) -> list[dict[str, Any]]:
        """The paper's rankings: ``frequency``, ``weightage`` or ``combined`` (filter + rank)."""
        if by not in RANKINGS:
            raise ValueError(f"unknown ranking {by!r}: choose one of {', '.join(RANKINGS)}")
        have = {row[1] for row in self.conn.execute("PRAGMA table_info(pages)")}
        columns = ", ".join(c if c in have else f"NULL AS {c}"
                            for c in PAGE_COLUMNS.replace(" ", "").split(","))
        sql = f"SELECT {columns} FROM pages {RANKINGS[by]}"
        params: tuple[int, ...] = ()
        if limit is not None:
            sql += " LIMIT ?"
            params = (limit,)
        cursor = self.conn.execute(sql, params)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor]

    def recrawl_targets(
        self,
        by: str = "combined",
        *,
        now: float | None = None,
        limit: int | None = None,
        skip_fresh: bool = True,
    ) -> list[RecrawlTarget]:
        """Stored pages in rank order for a recrawl (``-a recrawl=1``).

        Skips the pages the paper calls expired (available on half of their visits or fewer:
        ``ttl <= frequency / 2``, whatever the ranking) and, with *skip_fresh*, the pages whose HTTP
        freshness (``fresh_until``) has not run out yet at *now*: fetching them again brings nothing
        new. Pages with no freshness information are always due.
        """
        now = time.time() if now is None else now
        targets = []
        for page in self.rank(by):
            if page["ttl"] <= page["frequency"] // 2:
                continue
            if skip_fresh and page["fresh_until"] is not None and page["fresh_until"] > now:
                continue
            form = json.loads(page["form"]) if page["form"] else None
            targets.append(
                RecrawlTarget(
                    page["url"],
                    page["method"] or "GET",
                    form,
                    page["frequency"],
                    page["weightage"],
                    page["ttl"],
                    page["fresh_until"],
                    bool(page["hidden"]),
                    page["form_class"],
                )
            )
            if limit is not None and len(targets) >= limit:
                break
        return targets

    def counts(self) -> dict[str, int]:
        visits = self.conn.execute("SELECT count(*) FROM visits").fetchone()[0]
        pages, frequency = self.conn.execute(
            "SELECT count(*), coalesce(sum(frequency), 0) FROM pages"
        ).fetchone()
        return {"visits": visits, "pages": pages, "frequency": frequency}

    def check(self) -> list[str]:
        """Differences between the aggregates and a recomputation from ``visits`` (empty: OK)."""
        problems = []
        rows = self.conn.execute(
            "SELECT p.key, p.frequency, p.weightage, p.ttl, p.first_seen, p.last_seen, "
            "v.n, v.seconds, v.available, v.first, v.last FROM pages p LEFT JOIN "
            "(SELECT key, count(*) n, sum(seconds) seconds, sum(available) available, "
            "min(at) first, max(at) last FROM visits GROUP BY key) v ON v.key = p.key"
        )
        for key, freq, weight, ttl, first, last, n, seconds, avail, vfirst, vlast in rows:
            if (freq, ttl, first, last) != (n, avail, vfirst, vlast) or not math.isclose(
                weight, seconds or 0.0, rel_tol=1e-9, abs_tol=1e-6
            ):
                problems.append(
                    f"{key}: stored frequency={freq} weightage={weight} ttl={ttl}, visits give "
                    f"frequency={n} weightage={seconds} ttl={avail}"
                )
        orphans = self.conn.execute(
            "SELECT count(DISTINCT key) FROM visits WHERE key NOT IN (SELECT key FROM pages)"
        ).fetchone()[0]
        if orphans:
            problems.append(f"{orphans} visited keys have no page row")
        return problems


def resolve_store_path(path: str | Path) -> Path:
    """Where ``HIDDENWEB_STORE_PATH`` (or ``--db``) points: absolute paths as given, relative ones
    in the project's ``.scrapy/`` data directory like ``HTTPCACHE_DIR`` (``.scrapy/`` of the working
    directory outside a project, or when the project has no ``scrapy.cfg``, e.g. under Scrapyd)."""
    try:
        return Path(data_path(path))
    except NotConfigured:
        return Path(".scrapy", path)


def command_store_path(db: str | Path | None, *, must_exist: bool = True) -> Path:
    """The store a ``hiddenweb`` command uses: ``--db`` as given (relative to the working
    directory), else the project's ``HIDDENWEB_STORE_PATH`` resolved as a crawl resolves it
    (:func:`resolve_store_path`), so ``hiddenweb rank`` reads what ``scrapy crawl`` wrote."""
    if db is not None:
        path = Path(db)
    else:
        from hiddenweb import defaults

        settings = get_project_settings()
        path = resolve_store_path(
            settings.get("HIDDENWEB_STORE_PATH", defaults.HIDDENWEB_STORE_PATH)
        )
    if must_exist and not path.exists():
        raise FileNotFoundError(f"no visit store at {path} (crawl first, or give --db PATH)")
    return path


def fresh_until(
    cache_control: str | bytes | Sequence[Any] | None,
    expires: str | bytes | Sequence[Any] | None,
    fetched_at: float,
) -> float | None:
    """When the response stops being fresh (UNIX time), or None when the headers do not say."""
    cache_control, expires = _header_text(cache_control), _header_text(expires)
    if cache_control:
        directives = {}
        for part in cache_control.split(","):
            name, _, value = part.strip().partition("=")
            directives[name.strip().lower()] = value.strip().strip('"')
        if "no-store" in directives or "no-cache" in directives:
            return fetched_at
        if "max-age" in directives:
            try:
                return fetched_at + max(0, int(directives["max-age"]))
            except ValueError:
                return fetched_at  # RFC 9111 §4.2.1: an invalid max-age means stale
    if expires is not None:
        try:
            return parsedate_to_datetime(expires).timestamp()
        except (TypeError, ValueError, IndexError):
            return fetched_at  # RFC 9111 §5.3: an invalid date (e.g. "0") is in the past
    return None


def _header_text(value: str | bytes | Sequence[Any] | None) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode("latin-1")
    if isinstance(value, str):
        return value
    return ", ".join(v.decode("latin-1") if isinstance(v, bytes) else str(v) for v in value)


def visit_from_item(item: Mapping[str, Any], visit_id: str, now: float | None = None) -> Visit:
    """The visit a spider item (:class:`hiddenweb.items.PageItem`, as a mapping) records."""
    status = item.get("status")
    at = item.get("fetched_at")
    at = float(at) if at is not None else (time.time() if now is None else now)
    reached_by = item.get("reached_by") or {}
    form = reached_by.get("form") if isinstance(reached_by, Mapping) else None
    fields = form.get("fields") if isinstance(form, Mapping) else None
    form_only = item.get("form_only")
    return Visit(
        visit_id=visit_id,
        url=item["url"],
        seconds=float(item.get("fetch_seconds") or 0.0),
        available=status is not None and int(status) < 400,
        at=at,
        source="crawl",
        method=(item.get("method") or "GET").upper(),
        form=fields if (item.get("method") or "GET").upper() != "GET" else None,
        status=int(status) if status is not None else None,
        final_url=item.get("final_url"),
        fresh_until=fresh_until(item.get("cache_control"), item.get("expires"), at),
        fingerprint=item.get("fingerprint"),
        hidden=None if form_only is None else bool(form_only),
        reached_by=reached_by.get("kind") if isinstance(reached_by, Mapping) else None,
        depth=item.get("depth"),
        title=item.get("title"),
        form_class=form.get("form_class") if isinstance(form, Mapping) else None,
    )
