"""The DLA scheduler's state in ``JOBDIR``: ``hiddenweb_dla.json``, written at close and read
at open, beside the buckets' disk queues (:mod:`hiddenweb.dla.queues`)::

    {"format": "hiddenweb-dla", "version": 1, "transfer": bool, "a": float|null, "b": float,
     "steps": int, "next_seq": int,
     "pages": {page_url: {"keys": [...], "p": [...], "steps": int, "converged": bool}},
     "kinds": {kind: p_pursue}, "roots": {kind: root kind}, "paid": [kind, ...],
     "rewarded": bool, "best_served": float,
     "buckets": [{"key": str, "group": str, "page": str, "action": str, "seq": int,
                  "dir": str}]}

A state with another format/version or another ``dla_transfer`` is refused with a
``ValueError`` naming the cause (the bucket layout differs); changed ``a``/``b`` are accepted.
"""

from __future__ import annotations

import heapq
import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from hiddenweb.dla.automaton import Automaton
from hiddenweb.dla.kinds import PURSUE, SKIP
from hiddenweb.dla.queues import Bucket, Group

if TYPE_CHECKING:
    from hiddenweb.dla.scheduler import DLAScheduler

logger = logging.getLogger(__name__)

STATE_FILE = "hiddenweb_dla.json"
STATE_FORMAT = "hiddenweb-dla"
STATE_VERSION = 1


def save_state(scheduler: DLAScheduler, jobdir: Path) -> None:
    """Write the scheduler's state (see the module docstring) and close its disk queues."""
    buckets = []
    for group in scheduler.groups.values():
        for b in group.buckets.values():
            if b.dq is not None:
                b.dq.close()
                if len(b.dq):
                    buckets.append({"key": b.key, "group": b.group, "page": b.page,
                                    "action": b.action, "seq": b.seq, "dir": b.dir})
    state = {
        "format": STATE_FORMAT, "version": STATE_VERSION,
        "transfer": scheduler.config.transfer, "a": scheduler.config.a, "b": scheduler.config.b,
        "steps": scheduler.steps, "next_seq": scheduler.next_seq,
        "pages": {page: la.to_state() for page, la in scheduler.pages.items()},
        "kinds": {k: la.prob(PURSUE) for k, la in scheduler.kind_la.items()},
        "roots": scheduler.roots,
        "paid": sorted(scheduler.paid),
        "rewarded": scheduler.rewarded, "best_served": scheduler.best_served,
        "buckets": buckets,
    }
    jobdir.mkdir(parents=True, exist_ok=True)
    tmp = jobdir / (STATE_FILE + ".tmp")
    tmp.write_text(json.dumps(state), encoding="utf-8")
    tmp.replace(jobdir / STATE_FILE)

def load_state(scheduler: DLAScheduler, jobdir: Path) -> None:
    """Read a saved state back into a fresh scheduler; refuse an incompatible one."""
    path = jobdir / STATE_FILE
    if not path.exists():
        return
    state = json.loads(path.read_text(encoding="utf-8"))
    if state.get("format") != STATE_FORMAT or state.get("version") != STATE_VERSION:
        raise ValueError(
            f"{path}: saved DLA state has format {state.get('format')!r} version "
            f"{state.get('version')!r}; this scheduler reads {STATE_FORMAT!r} version "
            f"{STATE_VERSION}. Use a new JOBDIR.")
    if bool(state.get("transfer")) != scheduler.config.transfer:
        raise ValueError(
            f"{path}: the job was saved with dla_transfer="
            f"{bool(state.get('transfer'))} and is resumed with "
            f"dla_transfer={scheduler.config.transfer}: the queues are laid out "
            "differently. Resume with the same setting or use a new JOBDIR.")
    if (state.get("a"), state.get("b")) != (scheduler.config.a, scheduler.config.b):
        logger.info("Resuming with new DLA steps a=%s b=%s (saved: a=%s b=%s)",
                    scheduler.config.a, scheduler.config.b, state.get("a"), state.get("b"))
    scheduler.steps = int(state["steps"])
    scheduler.next_seq = int(state["next_seq"])
    scheduler.rewarded = bool(state.get("rewarded", False))
    scheduler.best_served = float(state.get("best_served", 0.0))
    for page, la_state in state["pages"].items():
        config = scheduler.config
        la = Automaton(a=config.a, b=config.b, converge_p=config.converge_p)
        la.load_state(la_state)
        scheduler.pages[page] = la
    for kind, p in state["kinds"].items():
        kla = scheduler._kind(kind)
        kla.load_state({"keys": [PURSUE, SKIP], "p": [p, 1.0 - p]})
    for b in sorted(state["buckets"], key=lambda b: b["seq"]):
        group = scheduler.groups.get(b["group"])
        if group is None:
            group = scheduler.groups[b["group"]] = Group(b["group"], b["seq"])
        bucket = Bucket(b["key"], b["group"], b["page"], b["action"], b["seq"])
        bucket.dq = scheduler.disk.open(bucket)
        if not len(bucket):
            bucket.dq.close()
            continue
        group.buckets[bucket.key] = bucket
        la = scheduler.pages.get(bucket.page)
        order = la.order_key(bucket.action) if la and bucket.action in la else 0.0
        heapq.heappush(group.heap, (-order, bucket.seq, 0, bucket.key))
        scheduler.pending += len(bucket)
    scheduler.roots.update(state.get("roots") or {})
    scheduler.paid.update(state.get("paid") or ())
    for group in list(scheduler.groups.values()):
        if not group.buckets:
            del scheduler.groups[group.key]
            continue
        if scheduler.config.transfer:
            scheduler._add_heir(group.key)  # it follows them again, as before the stop
        scheduler._rekey(group)
