"""Import user visit records into the visit store (paper 002, §5: "database updation as user visit
URL").

Formats (``--format``, or guessed from the file name):

``csv``
    header ``url,seconds,available`` (extra columns ignored; an optional ``at``, UNIX time or ISO
    8601, dates the visit, otherwise the import time does).
``jsonl``
    one JSON object per line with the same keys; blank lines are skipped.
``log``
    a Common or Combined Log Format web server access log (Apache/nginx), optionally with the
    serving time ``%D`` (microseconds) as the last field. A client is the host plus, in the combined
    format, the user agent. *Time spent* (the paper's weightage) is by default the **dwell time**:
    the time until the same client's next request, up to a 30-minute session gap; the last request
    of a session counts 0 s. This is what the paper means by time users spend on a page. ``%D`` is
    how long the *server* took, a different quantity: it is used only with ``log_seconds="served"``
    (``--log-seconds served``). A request is *available* when its status is below 400. Paths are
    joined to ``base_url`` when given so that they match crawled URLs.

Each record becomes a :class:`hiddenweb.store.Visit` with id ``import:<file digest>:<line>``, so
importing the same file twice counts it once. The whole file is parsed and validated first and
written in one transaction: an error (:class:`VisitImportError`, naming file and line) writes
nothing.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import re
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from hiddenweb.store import RecordResult, Visit, VisitStore

FORMATS = ("csv", "jsonl", "log")
SESSION_GAP = 30 * 60.0  # seconds: a longer pause ends the client's session
_LOG_LINE = re.compile(
    r'^(?P<host>\S+) \S+ \S+ \[(?P<time>[^\]]+)\] "(?P<request>[^"]*)" (?P<status>\d{3}) \S+'
    r'(?: "(?P<referer>[^"]*)" "(?P<agent>[^"]*)")?(?: (?P<served>\d+))?\s*$'
)
_TRUE = {"1", "true", "yes", "y", "t"}
_FALSE = {"0", "false", "no", "n", "f", ""}


class VisitImportError(ValueError):
    """A record that cannot be imported; the message names the file and the line."""

    def __init__(self, path: str | Path, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}")
        self.path, self.line = str(path), line


def guess_format(path: str | Path) -> str:
    suffix = Path(path).suffix.lower()
    if suffix in (".csv", ".tsv"):
        return "csv"
    if suffix in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    if suffix in (".log", ".txt") or "access" in Path(path).name:
        return "log"
    raise ValueError(f"{path}: cannot tell the format from the name: give --format csv|jsonl|log")


def read_visits(
    path: str | Path,
    fmt: str | None = None,
    *,
    base_url: str | None = None,
    log_seconds: str = "dwell",
    now: float | None = None,
) -> list[Visit]:
    """Parse and validate the whole file; raise :class:`VisitImportError` on the first bad line."""
    fmt = fmt or guess_format(path)
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}: choose one of {', '.join(FORMATS)}")
    if log_seconds not in ("dwell", "served"):
        raise ValueError(f"log_seconds must be 'dwell' or 'served', not {log_seconds!r}")
    data = Path(path).read_bytes()
    prefix = f"import:{hashlib.sha256(data).hexdigest()[:16]}"
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise VisitImportError(path, line, f"not UTF-8 text ({exc.reason})") from None
    now = time.time() if now is None else now
    if fmt == "log":
        return _read_log(path, text, prefix, base_url, log_seconds)
    records = _csv_records(path, text) if fmt == "csv" else _jsonl_records(path, text)
    return [_visit(path, line, record, prefix, now, base_url) for line, record in records]


def import_visits(
    store: VisitStore,
    path: str | Path,
    fmt: str | None = None,
    *,
    base_url: str | None = None,
    log_seconds: str = "dwell",
) -> tuple[int, RecordResult]:
    """Read *path* and write its visits in one transaction; return (records read, result)."""
    visits = read_visits(path, fmt, base_url=base_url, log_seconds=log_seconds)
    return len(visits), store.record(visits)


def _csv_records(path: str | Path, text: str) -> list[tuple[int, dict[str, Any]]]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    missing = {"url", "seconds", "available"} - set(reader.fieldnames or ())
    if missing:
        raise VisitImportError(
            path, 1, f"CSV header needs url,seconds,available; missing {','.join(sorted(missing))}"
        )
    records = []
    try:
        for row in reader:
            if None in row:
                raise VisitImportError(path, reader.line_num, "more fields than the header")
            if not any((v or "").strip() for v in row.values()):
                continue
            records.append((reader.line_num, row))
    except csv.Error as exc:
        raise VisitImportError(path, reader.line_num, f"CSV error: {exc}") from None
    return records


def _jsonl_records(path: str | Path, text: str) -> list[tuple[int, dict[str, Any]]]:
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise VisitImportError(path, number, f"invalid JSON: {exc.msg}") from None
        if not isinstance(record, dict):
            raise VisitImportError(path, number, "expected a JSON object {url, seconds, available}")
        records.append((number, record))
    return records


def _visit(
    path: str | Path,
    line: int,
    record: dict[str, Any],
    prefix: str,
    now: float,
    base_url: str | None,
) -> Visit:
    def fail(message: str) -> VisitImportError:
        return VisitImportError(path, line, message)

    url = record.get("url")
    if not isinstance(url, str) or not url.strip():
        raise fail("url is missing or empty")
    seconds = record.get("seconds")
    try:
        seconds = float(seconds)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise fail(f"seconds must be a number, not {seconds!r}") from None
    if not math.isfinite(seconds) or seconds < 0:
        raise fail(f"seconds must be a finite number >= 0, not {seconds!r}")
    available = record.get("available")
    if isinstance(available, bool):
        pass
    elif isinstance(available, int) and available in (0, 1):
        available = bool(available)
    elif isinstance(available, str) and available.strip().lower() in _TRUE | _FALSE:
        available = available.strip().lower() in _TRUE
    else:
        raise fail(f"available must be 1/0 or true/false, not {available!r}")
    at = record.get("at")
    if at in (None, ""):
        at = now
    else:
        try:
            at = float(at)
        except (TypeError, ValueError):
            try:
                at = datetime.fromisoformat(str(at)).timestamp()
            except ValueError:
                raise fail(f"at must be UNIX time or ISO 8601, not {at!r}") from None
    url = url.strip()
    if base_url:
        url = urljoin(base_url, url)
    return Visit(f"{prefix}:{line}", url, seconds, available, at, source="import")


def _read_log(
    path: str | Path, text: str, prefix: str, base_url: str | None, log_seconds: str
) -> list[Visit]:
    parsed = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        match = _LOG_LINE.match(line)
        if not match:
            raise VisitImportError(path, number, "not a Common/Combined Log Format line")
        try:
            at = datetime.strptime(match["time"], "%d/%b/%Y:%H:%M:%S %z").timestamp()
        except ValueError:
            raise VisitImportError(path, number, f"bad date [{match['time']}]") from None
        parts = match["request"].split()
        if len(parts) < 2:
            raise VisitImportError(path, number, f'bad request "{match["request"]}"')
        if log_seconds == "served" and match["served"] is None:
            raise VisitImportError(path, number, "no %D field (serving time) to use as seconds")
        url = urljoin(base_url, parts[1]) if base_url else parts[1]
        client = (match["host"], match["agent"] or "")
        parsed.append((number, client, at, url, int(match["status"]), match["served"]))
    seconds: dict[int, float] = {}
    if log_seconds == "served":
        seconds = {number: int(served) / 1e6 for number, _, _, _, _, served in parsed}
    else:
        by_client: dict[tuple[str, str], list[tuple[float, int]]] = defaultdict(list)
        for number, client, at, *_ in parsed:
            by_client[client].append((at, number))
        for requests in by_client.values():
            requests.sort()
            for (at, number), following in zip(requests, requests[1:] + [None], strict=True):
                gap = following[0] - at if following is not None else math.inf
                seconds[number] = gap if gap <= SESSION_GAP else 0.0
    return [
        Visit(f"{prefix}:{number}", url, seconds[number], status < 400, at, source="import",
              status=status)  # fmt: skip
        for number, _, at, url, status, _ in parsed
    ]
