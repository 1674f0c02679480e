"""Which code a benchmark measured: the checkout its crawls ran from, and that checkout's commit.

A figure is worth only as much as the commit it was measured at. ``hiddenweb bench`` runs
``scrapy crawl`` in the project directory of the ``hiddenweb`` package it imported
(:data:`hiddenweb.bench.coverage.PROJECT_DIR`). With an editable install (``make install``)
that is the checkout the virtual environment was installed from, whatever the current
directory: a second checkout of the project (a ``git worktree``) sharing the environment is
measured only when run with ``PYTHONPATH=<that checkout>``. So every result carries
``code = {"dir", "commit", "dirty"}`` (:func:`code_revision`), and a figure can be traced to
the code that produced it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any


def _git(project_dir: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(project_dir), *args], capture_output=True,
                              text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def code_revision(project_dir: Path) -> dict[str, Any]:
    """``{"dir": str, "commit": 40-hex str | None, "dirty": bool | None}`` for the project
    checkout ``project_dir``: ``dirty`` when tracked files differ from the commit (untracked
    files are not counted); ``commit`` and ``dirty`` are None outside a git checkout or
    without git."""
    commit = _git(project_dir, "rev-parse", "--verify", "HEAD")
    status = _git(project_dir, "status", "--porcelain", "--untracked-files=no") if commit else None
    return {"dir": str(project_dir), "commit": commit,
            "dirty": None if status is None else bool(status)}


def describe(code: dict[str, Any]) -> str:
    """One line for people: ``/work/main at 1a2b3c4d5e6f (with uncommitted changes)``."""
    if not code.get("commit"):
        return f"{code['dir']} (not a git checkout)"
    dirty = " (with uncommitted changes)" if code.get("dirty") else ""
    return f"{code['dir']} at {code['commit'][:12]}{dirty}"
