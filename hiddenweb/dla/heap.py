"""The DLA scheduler's heaps: which pending bucket is served next.

Mixed into :class:`~hiddenweb.dla.scheduler.DLAScheduler` (its "Order" and "Cost"). Pending
requests wait in the FIFO buckets of :mod:`hiddenweb.dla.queues`; a group's own heap orders its
buckets (by the page automaton's ``q`` without transfer), the scheduler's heap orders the groups
by score (:meth:`GroupHeap._group_score`: the kind's ``p(pursue)``, or ``r * p`` of the page's
best pending action), rounded to :data:`SCORE_DECIMALS`, ties to the group whose URL template
has fewer query keys (:meth:`GroupHeap._breadth`), then to the oldest group; a group of
links marked nofollow has :data:`LAST` added to its key (served when no other is pending), a
group of pages rendered again in Chromium has it taken off (served before any other).

Contract: heap entries are versioned; a re-key pushes a new entry and older ones are skipped when
popped; the scheduler's heap is rebuilt when stale entries outnumber live ones. An emptied bucket
is dropped (its disk queue removed), an emptied group deleted. The scheduler provides ``groups``,
``heap``, ``pages``, ``config``, ``disk``, ``spider``, ``pending``, ``next_seq``, ``first_seq``,
``aged`` (group keys whose groups keep their first seq when made again: their age in ties),
``ended_versions``, ``kind_score``, ``lifted`` (groups served first until emptied:
``DLAScheduler.serve_first``) and ``_add_heir``.
"""

from __future__ import annotations

import heapq
from collections import deque
from typing import TYPE_CHECKING

from hiddenweb.dla.kinds import is_nofollow, is_render, query_keys
from hiddenweb.dla.queues import Bucket, Group

if TYPE_CHECKING:
    from scrapy import Request

#: scores are compared rounded to this many decimals (heap keys and the requests in flight
#: alike): float jitter does not reorder ties, and a kind penalized into the 1e-13s scores 0
SCORE_DECIMALS = 12
#: what the heap adds to the negated score of a group served last (links marked nofollow):
#: scores are in [0, 1], so every other group comes first
LAST = 2.0
#: group keys whose first seq and last version are kept, at most (about 100 bytes each)
MAX_AGES = 200_000


class GroupHeap:
    """Buckets and groups in heaps (module docstring); a mixin of ``DLAScheduler``."""

    def _group_score(self, group: Group) -> float:
        if self.config.transfer:
            return self.kind_score(group.key)
        while group.heap:
            _, _, version, bkey = group.heap[0]
            bucket = group.buckets.get(bkey)
            if bucket is not None and bucket.version == version:
                return self.pages[bucket.page].relative(bucket.action)
            heapq.heappop(group.heap)
        return 0.0

    def _key_score(self, group: Group) -> float:
        """The group's score as the heap keys it (:data:`SCORE_DECIMALS`)."""
        return round(self._group_score(group), SCORE_DECIMALS)

    def _last(self, gkey: str) -> float:
        """:data:`LAST` for a group served last (links marked nofollow), minus it for one
        served first (pages rendered again in Chromium, a lifted group), else 0."""
        if is_nofollow(gkey):
            return LAST
        return -LAST if is_render(gkey) or gkey in self.lifted else 0.0

    def _heap_key(self, group: Group) -> float:
        """The group's heap key (lowest first): its negated score, plus :data:`LAST` for a
        group served only when no other is pending."""
        return self._last(group.key) - self._key_score(group)

    def _breadth(self, gkey: str) -> int:
        """The first tie-break of groups of one score: fewer query keys first (lab knob
        ``dla_fewer_keys_first``; :func:`~hiddenweb.dla.kinds.query_keys`), then the older
        group. A table's pages (``?_next``) before its facet values' (``?Horsepower&_facet``),
        a wiki page before its views (``?do&id``), a search before its refinements: the less
        refined view of a path is the more general one, and a refinement shows a part of
        what it shows. 0 for every group with the knob off. Read once, when the group is
        made (``Group.breadth``)."""
        return query_keys(gkey) if self.config.fewer_keys_first else 0

    def _rekey(self, group: Group) -> None:
        group.version += 1
        heapq.heappush(self.heap, (self._heap_key(group), group.breadth, group.seq,
                                   group.version, group.key))
        if len(self.heap) > 2 * len(self.groups) + 64:
            self.heap = [(self._heap_key(g), g.breadth, g.seq, g.version, g.key)
                         for g in self.groups.values()]
            heapq.heapify(self.heap)

    def _new_bucket(self, key: str, gkey: str, page: str, action: str) -> Bucket:
        group = self.groups.get(gkey)
        if group is None:
            seq = self.first_seq.get(gkey) if gkey in self.aged else None
            if seq is None:
                seq = self.next_seq
                self.next_seq += 1
                if len(self.first_seq) < MAX_AGES:
                    self.first_seq.setdefault(gkey, seq)
            group = self.groups[gkey] = Group(gkey, seq, self._breadth(gkey))
            # versions go on from the group's last one: an entry of it never matches this one
            group.version = self.ended_versions.pop(gkey, 0)
            if page in self.pages:
                group.epoch = self.pages[page].epoch
            if self.config.transfer:
                self._add_heir(gkey)
        bucket = Bucket(key, gkey, page, action, self.next_seq)
        self.next_seq += 1
        group.buckets[key] = bucket
        order = self.pages[page].order_key(action) if page in self.pages else 0.0
        heapq.heappush(group.heap, (-order, bucket.seq, bucket.version, key))
        return bucket

    def _group_of(self, key: str, gkey: str, page: str, action: str) -> Bucket:
        group = self.groups.get(gkey)
        bucket = group.buckets.get(key) if group is not None else None
        if bucket is None:
            bucket = self._new_bucket(key, gkey, page, action)
            self._rekey(self.groups[gkey])
        return bucket

    def _push(self, request: Request, key: str, gkey: str, page: str, action: str) -> None:
        bucket = self._group_of(key, gkey, page, action)
        if bucket.url is None:
            bucket.url = request.url
        if not (self.disk and self.disk.push(bucket, request, self.spider)):
            if bucket.mq is None:
                bucket.mq = deque()
            bucket.mq.append(request)
        self.pending += 1

    def _head(self, group: Group) -> Bucket | None:
        """The group's best live bucket (its heap's stale entries dropped on the way)."""
        while group.heap:
            _, _, version, bkey = group.heap[0]
            bucket = group.buckets.get(bkey)
            if bucket is not None and bucket.version == version:
                return bucket
            heapq.heappop(group.heap)
        return None

    def _pop_from(self, group: Group) -> Request | None:
        bucket = self._head(group)
        if bucket is None:
            self._end(group)
            return None
        request = bucket.mq.popleft() if bucket.mq else bucket.dq.pop()
        if not len(bucket):
            self._drop_bucket(group, bucket)
        if group.buckets:
            self._rekey(group)
        else:
            self._end(group)
        return request

    def _peek(self, group: Group) -> Request | None:
        """The request ``_pop_from`` would give next, left in its bucket (None: none)."""
        bucket = self._head(group)
        if bucket is None:
            return None
        if bucket.mq:
            return bucket.mq[0]
        return bucket.dq.peek() if bucket.dq is not None else None

    def _end(self, group: Group) -> None:
        """Delete an emptied group; its last version is kept for a group of the same key made
        again (its entries left in the heap must not match that one's)."""
        del self.groups[group.key]
        self.lifted.discard(group.key)
        self.lifted_once.discard(group.key)
        if len(self.ended_versions) < MAX_AGES or group.key in self.ended_versions:
            self.ended_versions[group.key] = group.version

    def _drop_bucket(self, group: Group, bucket: Bucket) -> None:
        del group.buckets[bucket.key]
        if bucket.dq is not None:
            self.disk.drop(bucket)
