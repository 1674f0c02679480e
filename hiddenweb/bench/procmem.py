"""Resident memory of a crawl's Chromium: the processes under a PID whose name says chrom*.

:class:`ChromiumRSS` samples, from a thread, the summed RSS (``/proc/<pid>/status`` ``VmRSS``)
and PSS (``smaps_rollup``) of every descendant of a process whose command is Chromium
(Playwright's node driver is not counted) and keeps the peaks. Linux only (else 0).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        kids.setdefault(ppid, []).append(int(entry.name))
    return kids


def chromium_rss_kb(root: int) -> tuple[int, int]:
    """Summed VmRSS and Pss (kB) of the Chromium processes descending from ``root`` (RSS counts
    pages shared between Chromium's processes once per process; PSS splits them)."""
    kids = _children()
    total = pss = 0
    stack = list(kids.get(root, []))
    while stack:
        pid = stack.pop()
        stack.extend(kids.get(pid, []))
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        name = status.split("\n", 1)[0].split(":", 1)[1].strip().lower()
        if "chrom" in name:
            for line in status.splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
            try:
                for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                    if line.startswith("Pss:"):
                        pss += int(line.split()[1])
            except OSError:
                pass
    return total, pss


class ChromiumRSS:
    """``with ChromiumRSS(pid) as mem: …``; then ``mem.peak_mb``."""

    def __init__(self, pid: int, interval: float = 0.5) -> None:
        self.pid, self.interval = pid, interval
        self.peak_kb = 0
        self.peak_pss_kb = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="chromium-rss")

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            if os.path.isdir("/proc"):
                rss, pss = chromium_rss_kb(self.pid)
                self.peak_kb = max(self.peak_kb, rss)
                self.peak_pss_kb = max(self.peak_pss_kb, pss)

    @property
    def peak_mb(self) -> float:
        return round(self.peak_kb / 1024, 1)

    @property
    def peak_pss_mb(self) -> float:
        return round(self.peak_pss_kb / 1024, 1)

    def __enter__(self) -> ChromiumRSS:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
