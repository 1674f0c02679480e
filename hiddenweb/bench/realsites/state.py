"""What a crawl changed in an app's data: its SQLite databases and files, before and after.

:func:`sqlite_changes` compares two copies of a database table by table (created, dropped,
rows added, removed or changed, by a digest of every row); :func:`tree_changes` compares two
directory trees file by file (added, removed, changed by content). Both return one line per
change, for the report's ``state_changes``: the server-side proof that a crawl was dangerous.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable
from fnmatch import fnmatch
from pathlib import Path


def _tables(db: Path) -> dict[str, tuple[int, set[str]]]:
    """Each table's row count and the digests of its rows (read-only, immutable open)."""
    con = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    try:
        names = [n for (n,) in con.execute(
            "select name from sqlite_master where type = 'table' and name not like 'sqlite_%'")]
        out = {}
        for name in names:
            rows = con.execute(f'select * from "{name}"').fetchall()  # noqa: S608
            out[name] = (len(rows), {hashlib.sha1(repr(r).encode()).hexdigest() for r in rows})
        return out
    finally:
        con.close()


def sqlite_changes(before: Path, after: Path, ignore: Iterable[str] = ()) -> list[str]:
    """Tables created, dropped or whose rows differ between two copies of a database (tables
    matching a pattern of ``ignore`` are left out)."""
    if not after.exists():
        return [f"{after.name}: removed"]
    old, new = _tables(before), _tables(after)
    skip = list(ignore)
    changes = []
    for name in sorted(set(old) | set(new)):
        if any(fnmatch(name, pattern) for pattern in skip):
            continue
        if name not in new:
            changes.append(f"table {name} dropped ({old[name][0]} rows)")
        elif name not in old:
            changes.append(f"table {name} created ({new[name][0]} rows)")
        elif old[name][1] != new[name][1]:
            gone, came = old[name][1] - new[name][1], new[name][1] - old[name][1]
            changes.append(f"table {name}: {old[name][0]} → {new[name][0]} rows "
                           f"({len(gone)} removed or changed, {len(came)} added or changed)")
    return changes


def _files(root: Path) -> dict[str, str]:
    if root.is_file():
        return {root.name: hashlib.sha1(root.read_bytes()).hexdigest()}
    return {str(p.relative_to(root)): hashlib.sha1(p.read_bytes()).hexdigest()
            for p in root.rglob("*") if p.is_file()}


def tree_changes(before: Path, after: Path, ignore: Iterable[str] = ()) -> list[str]:
    """Files added, removed or changed between two copies of a directory (or one file);
    relative paths matching a pattern of ``ignore`` are left out."""
    skip = list(ignore)
    old = _files(before) if before.exists() else {}
    new = _files(after) if after.exists() else {}
    changes = []
    for rel in sorted(set(old) | set(new)):
        if any(fnmatch(rel, pattern) for pattern in skip):
            continue
        if rel not in new:
            changes.append(f"{before.name}/{rel} removed")
        elif rel not in old:
            changes.append(f"{before.name}/{rel} added")
        elif old[rel] != new[rel]:
            changes.append(f"{before.name}/{rel} changed")
    return changes
