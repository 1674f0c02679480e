"""Benchmark results say which code they measured (:mod:`hiddenweb.bench.revision`), on a real
git repository made for the test."""

import subprocess
from pathlib import Path

from hiddenweb.bench.revision import code_revision, describe


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_commit_and_uncommitted_changes_of_a_checkout(tmp_path: Path) -> None:
    repo = tmp_path / "checkout"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "module.py").write_text("A = 1\n")
    _git(repo, "add", "module.py")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@127.0.0.1", "commit", "-q", "-m", "one")
    head = _git(repo, "rev-parse", "HEAD")

    clean = code_revision(repo)
    assert clean == {"dir": str(repo), "commit": head, "dirty": False}
    assert describe(clean) == f"{repo} at {head[:12]}"

    (repo / "notes.txt").write_text("untracked files do not count\n")
    assert code_revision(repo)["dirty"] is False

    (repo / "module.py").write_text("A = 2\n")  # a tracked file changed: not what HEAD says
    dirty = code_revision(repo)
    assert dirty["commit"] == head and dirty["dirty"] is True
    assert describe(dirty).endswith("(with uncommitted changes)")


def test_outside_a_checkout_the_commit_is_unknown(tmp_path: Path) -> None:
    plain = tmp_path / "unpacked"
    plain.mkdir()
    code = code_revision(plain)
    assert code == {"dir": str(plain), "commit": None, "dirty": None}
    assert describe(code) == f"{plain} (not a git checkout)"
