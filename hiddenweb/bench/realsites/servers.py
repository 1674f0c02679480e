"""Server lifecycle: free loopback ports, processes started in their own session, all stopped.

:class:`Servers` is a context manager. :meth:`Servers.start` runs a command in a new process
session (so the whole tree can be signalled), keeps its PID and writes its output to a log file;
:meth:`Servers.wait_http` polls a URL until it answers. Leaving the ``with`` block, on an
exception, Ctrl-C (SIGINT) or SIGTERM, stops every process group it started (SIGTERM, then
SIGKILL after a grace period) and checks that none is left (:meth:`Servers.alive`).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import FrameType


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServerError(RuntimeError):
    """A server did not start or did not answer in time (the message ends with its log)."""


class Servers:
    """``with Servers() as servers: servers.start(...)``: every process is stopped at the end."""

    def __init__(self) -> None:
        self.procs: dict[str, subprocess.Popen] = {}
        self.logs: dict[str, Path] = {}
        self.offsets: dict[str, int] = {}  # each log's size before its process started
        self.started: list[int] = []  # every PID ever started, for the final check
        self._old: dict[int, object] = {}

    def __enter__(self) -> Servers:
        for sig in (signal.SIGTERM,):
            self._old[sig] = signal.signal(sig, self._on_signal)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop_all()
        for sig, handler in self._old.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    def start(self, name: str, cmd: list[str], log: Path, cwd: Path | None = None,
              env: dict[str, str] | None = None) -> subprocess.Popen:
        """Start ``cmd`` as ``name`` (stdout and stderr to ``log``)."""
        log.parent.mkdir(parents=True, exist_ok=True)
        self.offsets[name] = log.stat().st_size if log.exists() else 0
        with open(log, "ab") as out:
            proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        self.procs[name], self.logs[name] = proc, log
        self.started.append(proc.pid)
        return proc

    def wait_http(self, name: str, url: str, timeout: float = 60.0) -> None:
        """Poll ``url`` until it answers (any HTTP status) or ``name``'s process exits."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            proc = self.procs[name]
            if proc.poll() is not None:
                raise ServerError(f"{name} exited with {proc.returncode}:\n{self.tail(name)}")
            try:
                with urllib.request.urlopen(url, timeout=5):
                    return
            except urllib.error.HTTPError:
                return
            except (urllib.error.URLError, OSError):
                time.sleep(0.2)
        raise ServerError(f"{name} did not answer {url} within {timeout:.0f} s:\n"
                          f"{self.tail(name)}")

    def wait_line(self, name: str, text: str, timeout: float = 20.0) -> bool:
        """Wait until ``name``'s process writes ``text`` to its log (since it started):
        ``True``; ``False`` if the process exits first; :class:`ServerError` after
        ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            exited = self.procs[name].poll() is not None  # before the read: no line is missed
            with open(self.logs[name], "rb") as log:
                log.seek(self.offsets[name])
                if text.encode() in log.read():
                    return True
            if exited:
                return False
            time.sleep(0.05)
        raise ServerError(f"{name} did not write {text!r} within {timeout:.0f} s:\n"
                          f"{self.tail(name)}")

    def tail(self, name: str, lines: int = 15) -> str:
        try:
            text = self.logs[name].read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, name: str, grace: float = 5.0) -> None:
        proc = self.procs.pop(name, None)
        if proc is None:
            return
        _signal_group(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
        _signal_group(proc.pid, signal.SIGKILL)  # whatever is left of its group
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
        deadline = time.monotonic() + grace  # its workers (php -S) take a moment to go
        while _group_members({proc.pid}) and time.monotonic() < deadline:
            time.sleep(0.05)

    def stop_all(self) -> None:
        for name in list(self.procs):
            self.stop(name)

    def alive(self) -> list[int]:
        """The processes this object started, and any left in their process groups, that
        still run (empty after :meth:`stop_all`)."""
        left = {pid for pid in self.started if _running(pid)}
        return sorted(left | _group_members(set(self.started)))


def _group_members(groups: set[int]) -> set[int]:
    """Live (not zombie) processes whose process group is one of ``groups``."""
    members = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) in groups and fields[0] != "Z":
                members.add(int(entry.name))
    return members


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
