"""Installers for the real-site benchmark's apps, cached outside the repository.

* :func:`cache_root`: ``$XDG_CACHE_HOME/hiddenweb/realsites`` (``~/.cache/hiddenweb/realsites``
  when ``XDG_CACHE_HOME`` is unset).
* :func:`pip_venv`: a venv per app with exactly the pinned requirements (never the crawler's
  venv); a stamp file holding the pins makes a second call free.
* :func:`npm_prefix`: ``npm install`` of pinned packages into a prefix of the app's own.
* :func:`apt_packages`: Debian packages through ``apt-get`` (as root, or with sudo), installed only
  when ``dpkg`` does not already list them.
* :func:`git_source`: a clone of a git URL or a local path given with ``--source``.

Every installer raises :class:`InstallError` with the tool's last lines when it fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path


class InstallError(RuntimeError):
    """An app could not be installed (the message ends with the installer's last lines)."""


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    path = Path(base) / "hiddenweb" / "realsites"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _run(cmd: list[str], what: str, cwd: Path | None = None, env: dict | None = None,
         timeout: int = 900) -> None:
    try:
        done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InstallError(f"{what}: {exc}") from exc
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-8:])
        raise InstallError(f"{what} failed ({done.returncode}):\n{tail}")


def _python() -> str:
    """A Python 3.11 for the apps' venvs: the one running us (the venv's base interpreter)."""
    return getattr(sys, "_base_executable", None) or sys.executable


def pip_venv(name: str, requirements: list[str]) -> Path:
    """The venv ``cache_root()/name/venv`` holding ``requirements`` (pinned ``pkg==ver``)."""
    venv = cache_root() / name / "venv"
    stamp = venv / ".hiddenweb-pins"
    want = "\n".join(sorted(requirements))
    if stamp.exists() and stamp.read_text() == want:
        return venv
    if venv.exists():
        shutil.rmtree(venv)
    _run([_python(), "-m", "venv", str(venv)], f"{name}: python -m venv")
    _run([str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check",
          *requirements], f"{name}: pip install {' '.join(requirements)}")
    stamp.write_text(want)
    return venv


def npm_prefix(name: str, packages: list[str], scripts: bool = True) -> Path:
    """``cache_root()/name/npm`` with ``packages`` (``pkg@ver``) in its ``node_modules``;
    ``scripts=False`` skips their install scripts (``--ignore-scripts``: a package whose files
    are only served needs none, and some run developer tools that are not installed)."""
    prefix = cache_root() / name / "npm"
    stamp = prefix / ".hiddenweb-pins"
    want = "\n".join(sorted(packages))
    if stamp.exists() and stamp.read_text() == want:
        return prefix
    prefix.mkdir(parents=True, exist_ok=True)
    if not shutil.which("npm"):
        apt_packages(["nodejs", "npm"])
    _run(["npm", "install", "--no-audit", "--no-fund", *([] if scripts else ["--ignore-scripts"]),
          "--prefix", str(prefix), *packages],
         f"{name}: npm install {' '.join(packages)}", cwd=prefix)
    stamp.write_text(want)
    return prefix


def _dpkg_installed(package: str) -> bool:
    """``package`` (``name`` or ``name=version``) is installed (at that version)."""
    name, _, version = package.partition("=")
    done = subprocess.run(["dpkg-query", "-W", "-f", "${Status}|${Version}", name],
                          capture_output=True, text=True, check=False)
    status, _, have = done.stdout.partition("|")
    return (done.returncode == 0 and "install ok installed" in status
            and (not version or have == version))


def apt_packages(packages: list[str]) -> None:
    """Install the Debian ``packages`` (``name`` or ``name=version``) that are missing
    (``--no-install-recommends``)."""
    missing = [p for p in packages if not _dpkg_installed(p)]
    if not missing:
        return
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    lists = Path("/var/lib/apt/lists")
    if not any(lists.glob("*Packages*")):
        _run([*sudo, "apt-get", "update", "-qq"], "apt-get update", env=env)
    _run([*sudo, "apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing],
         f"apt-get install {' '.join(missing)}", env=env)


def git_source(name: str, source: str) -> Path:
    """A checkout of ``source`` (a git URL, or a local path: a work tree or a bare repository)
    in ``cache_root()/name/src``; an existing checkout of the same source is reused."""
    dest = cache_root() / name / "src"
    stamp = cache_root() / name / ".hiddenweb-source"
    if dest.exists() and stamp.exists() and stamp.read_text() == source:
        return dest
    if dest.exists():
        shutil.rmtree(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    _run(["git", "clone", "--quiet", "--depth", "1", source, str(dest)]
         if "://" in source else ["git", "clone", "--quiet", source, str(dest)],
         f"{name}: git clone {source}")
    stamp.write_text(source)
    return dest
