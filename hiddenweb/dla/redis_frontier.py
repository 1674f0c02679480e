r"""The DLA frontier in Redis: per-kind queues, kind automata and leases, shared by N workers.

Used by :class:`hiddenweb.dla.redis_scheduler.RedisDLAScheduler`. Every change is one Lua script
(atomic in Redis), so no worker ever reads, changes and writes back a value another changed
meanwhile. Keys (``P`` = ``hw:{KEY}:``, :class:`hiddenweb.redis_shared.RedisConfig`):

* ``P q:<lane>:<group>`` list — a bucket: pickled requests of one group (kind), FIFO;
* ``P frontier:<lane>`` sorted set — the lane's groups, member ``<keys>|<seq>|<group>``
  (``keys``: how many query keys the group's URL template has, 0 with the lab knob
  ``dla_fewer_keys_first`` off, :func:`~hiddenweb.dla.kinds.query_keys`; ``seq``: the group's
  age; both zero-padded, so ties go to fewer query keys, then to the oldest group, as in one
  process, :meth:`~hiddenweb.dla.heap.GroupHeap._breadth`), score its heap key
  (:meth:`~hiddenweb.dla.heap.GroupHeap._heap_key`: ``LAST`` for nofollow, ``-LAST`` for
  rerenders, minus the kind's ``p(pursue)`` rounded to 12 decimals);
* ``P kla`` hash kind -> ``p(pursue)`` — the kind automata (two actions: pursue / skip, so one
  number is the automaton); ``P paid`` set, ``P roots`` and ``P parent`` hashes,
  ``P heirs:<kind>`` sets — what :meth:`DLAScheduler.kind_score` reads, shared;
* ``P lanes:<group>`` set — lanes with a bucket of the group (to re-key it everywhere);
  ``P seq`` hash ``<lane>\n<group>`` -> its member's head ``<keys>|<seq>|``, set when the
  group is filed (a crawl's workers share it whatever their knob); ``P pending`` hash
  lane -> requests queued;
* ``P leases`` sorted set lease id -> deadline (ms), ``P lease:data`` and ``P lease:info`` hashes
  (the request, and ``owner \t lane \t group``) — requests taken and not yet handled;
* ``P workers`` set and ``P alive:<worker>`` keys (expire after the lease) — who is alive;
  ``P idle`` set — the workers that found nothing to do and took nothing since (the crawl is
  over when every live one is, and nothing is queued or leased: :meth:`RedisFrontier.over`);
  ``P claims:<worker>`` sets and the ``P forms`` and ``P formpage`` hashes — the forms each
  worker explores and the pages they were met on (:class:`hiddenweb.redis_shared.FormClaims`);
* ``P dupefilter`` set — request fingerprints (:class:`hiddenweb.redis_dupefilter.RedisDupeFilter`),
  added by the enqueue script itself, so a request is never seen and not yet queued.

Lanes: ``*`` is shared; a worker's own lane (its id) holds the responses other workers downloaded
for it (:mod:`hiddenweb.dla.relay`: a form's answers, read where the form's explorer is; their
group is their kind plus :data:`RELAY`, served first). A dead worker's lane and leases go to
``*`` (:meth:`RedisFrontier.reap`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from hiddenweb.dla.heap import LAST, SCORE_DECIMALS
from hiddenweb.dla.kinds import NOFOLLOW, RENDER, ROOT_KINDS

if TYPE_CHECKING:
    import redis

SHARED = "*"
#: what the reaper puts before a request it hands back (a pickle starts with 0x80)
HANDED_MARK = b"H"
#: request meta of a request handed back from a dead worker: the page may have been read (its
#: fingerprint is in ``P seen``) without its item reaching the feed, so it is emitted and
#: expanded even if its content is not new (the spider reads it)
HANDED_META = "hiddenweb_handed_back"
#: what the group of a response handed to its form's worker adds to its kind
#: (:mod:`hiddenweb.dla.relay`): served before any other group, never waits (its download is done)
RELAY = " relay"

_PRELUDE = r"""
local P = KEYS[1]
local ROOT = {}
for _, k in ipairs(cjson.decode(%(roots)s)) do ROOT[k] = true end
local NOFOLLOW, RENDER, RELAY, LAST, DEC = %(nofollow)s, %(render)s, %(relay)s, %(last)s,
  %(decimals)d
local FEWER_KEYS_FIRST = %(fewer)s
local MEMBER_HEAD = 17  -- '<keys>|<seq>|': 3 + 1 + 12 + 1 characters

local function ends(s, suffix) return #s >= #suffix and s:sub(-#suffix) == suffix end
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function round(x) return tonumber(string.format('%%.' .. DEC .. 'f', x)) end

local function kla(kind)
  local v = redis.call('HGET', P .. 'kla', kind)
  if v then return tonumber(v) end
  return nil
end
local function start(kind)
  local best = nil
  for _, h in ipairs({'parent', 'roots'}) do
    local k = redis.call('HGET', P .. h, kind)
    if k then
      local v = kla(k)
      if v and (best == nil or v < best) then best = v end
    end
  end
  return best or 0.5
end
local function score(kind)
  local p = kla(kind)
  if p == nil then return start(kind) end
  local root = redis.call('HGET', P .. 'roots', kind)
  if root and redis.call('SISMEMBER', P .. 'paid', kind) == 0 then
    local rp = kla(root)
    if rp and rp < p then p = rp end
  end
  return p
end
local function lastof(g)
  if ends(g, NOFOLLOW) then return LAST end
  if ends(g, RENDER) or ends(g, RELAY) then return -LAST end
  return 0
end
local function heapkey(g) return lastof(g) - round(score(g)) end

local function entropy_step(p)
  if p <= 0 or p >= 1 then return 0 end
  local e = -(p * math.log(p) + (1 - p) * math.log(1 - p))
  return e / (1 + e)
end
local function rewarded(p, a)
  local step = a
  if step < 0 then step = entropy_step(p) end
  if step <= 0 then return p end
  return p + step * (1 - p)
end
-- a kind's automaton, made when first needed: its start score, then its prior rewards
local function ensure(kind, prior, a)
  local p = kla(kind)
  if p ~= nil then return p end
  p = start(kind)
  for _ = 1, (prior or 0) do p = rewarded(p, a) end
  redis.call('HSET', P .. 'kla', kind, string.format('%%.17g', p))
  redis.call('HINCRBY', P .. 'counts', 'kinds', 1)
  return p
end

-- kinds.query_keys: the query keys of a link kind's URL template (its nofollow or render
-- group's too), 0 for any other kind
local function query_keys(g)
  if not FEWER_KEYS_FIRST or g:sub(1, 4) ~= 'url:' then return 0 end
  for _, suffix in ipairs({RENDER, NOFOLLOW}) do
    if ends(g, suffix) then g = g:sub(1, #g - #suffix) end
  end
  local at = g:find('?', 1, true)
  if not at or at == #g then return 0 end
  local _, ands = g:sub(at + 1):gsub('&', '')
  return ands + 1
end
local function member(lane, g)
  local head = redis.call('HGET', P .. 'seq', lane .. '\n' .. g)
  if not head then return nil end
  return head .. g
end
local function rekey(g)
  for _, lane in ipairs(redis.call('SMEMBERS', P .. 'lanes:' .. g)) do
    local m = member(lane, g)
    if m then redis.call('ZADD', P .. 'frontier:' .. lane, heapkey(g), m) end
  end
end
local function follows(kind, ancestor)
  if redis.call('SCARD', P .. 'lanes:' .. kind) == 0 then return false end
  if kla(kind) == nil then return true end
  return ROOT[ancestor] == true and redis.call('SISMEMBER', P .. 'paid', kind) == 0
end
-- queue a request in its lane's bucket of group g (front: a request handed back)
local function file(lane, g, payload, front)
  local q = P .. 'q:' .. lane .. ':' .. g
  if front then redis.call('LPUSH', q, payload) else redis.call('RPUSH', q, payload) end
  redis.call('HINCRBY', P .. 'pending', lane, 1)
  local field = lane .. '\n' .. g
  if redis.call('HEXISTS', P .. 'seq', field) == 0 then
    -- the member's head, set once (as Group.breadth): '<keys>|<seq>|'
    redis.call('HSET', P .. 'seq', field, string.format('%%03d|%%012d|',
      math.min(query_keys(g), 999), redis.call('INCR', P .. 'nextseq')))
    redis.call('SADD', P .. 'lanes:' .. g, lane)
    for _, h in ipairs({'parent', 'roots'}) do
      local anc = redis.call('HGET', P .. h, g)
      if anc and follows(g, anc) then redis.call('SADD', P .. 'heirs:' .. anc, g) end
    end
    redis.call('ZADD', P .. 'frontier:' .. lane, heapkey(g), member(lane, g))
  end
end
local function unfile(lane, g)
  redis.call('ZREM', P .. 'frontier:' .. lane, member(lane, g))
  redis.call('HDEL', P .. 'seq', lane .. '\n' .. g)
  redis.call('SREM', P .. 'lanes:' .. g, lane)
end
"""

# ARGV: lane, payload, json {ks, parents, prior, rerender, relay, a}, fingerprint ('' for none).
# Returns the group, or false when the fingerprint is in the dupefilter already (seen and queued
# in one step: no worker finds a request seen that is not queued yet).
_ENQUEUE = r"""
local lane, payload, arg = ARGV[1], ARGV[2], cjson.decode(ARGV[3])
if ARGV[4] ~= '' and redis.call('SADD', P .. 'dupefilter', ARGV[4]) == 0 then return false end
local ks = arg.ks
for k, parent in pairs(arg.parents) do
  if k ~= '' then redis.call('HSETNX', P .. 'parent', k, parent) end
end
if ROOT[ks[#ks]] then
  for i = 1, #ks - 1 do
    local k = ks[i]
    if k:sub(1, 5) ~= 'word:' and k:sub(1, 6) ~= 'hword:' then
      redis.call('HSETNX', P .. 'roots', k, ks[#ks])
    end
  end
end
for k, n in pairs(arg.prior) do
  if k ~= '' then ensure(k, n, arg.a) end
end
local g = ks[1]
if arg.relay then
  g = ks[1] .. RELAY
elseif arg.rerender then
  g = ks[1] .. RENDER
elseif not ends(g, NOFOLLOW) then
  local best = math.max(score(g), 0.5)
  for i = 2, #ks do
    if not ROOT[ks[i]] then
      local s = score(ks[i])
      if s > best then g, best = ks[i], s end
    end
  end
end
file(lane, g, payload, false)
return g
"""

# ARGV: owner, lease ms, json {lanes, inflight, others, wait, best, cap}. Returns
# {lease id, payload, group, score} or {'wait', score} or nil (nothing to serve).
_POP = r"""
local owner, lease_ms, arg = ARGV[1], tonumber(ARGV[2]), cjson.decode(ARGV[3])
for _ = 1, 1000 do
  local best, blane, bkey, bmember = nil, nil, nil, nil
  for _, lane in ipairs(arg.lanes) do
    local top = redis.call('ZRANGE', P .. 'frontier:' .. lane, 0, 0, 'WITHSCORES')
    if #top > 0 then
      local key = tonumber(top[2])
      if best == nil or key < bkey or (key == bkey and top[1] < bmember) then
        best, blane, bkey, bmember = top[1], lane, key, top[1]
      end
    end
  end
  if best == nil then return nil end
  local g = string.sub(best, MEMBER_HEAD + 1)
  local key = heapkey(g)
  if key > bkey then  -- its entry predates a penalty of its root: re-keyed lazily
    redis.call('ZADD', P .. 'frontier:' .. blane, key, best)
  else
    local sc = round(lastof(g) - key)
    -- waiting (DLAScheduler._after_others / _waits) on the answers in flight
    local w = arg.wait
    if w > 0 and not ends(g, RELAY) then
      if ends(g, NOFOLLOW) and arg.others then return {'wait', tostring(sc)} end
      local spec = w * arg.best
      local cap = 0
      if sc < spec then cap = arg.cap end
      if not (sc >= w and cap == 0) then
        local low = 0
        for _, f in ipairs(arg.inflight) do
          local cur = round(score(f))
          if sc < w * cur then return {'wait', tostring(sc)} end
          if cur < spec then low = low + 1 end
        end
        if cap > 0 and low >= cap then return {'wait', tostring(sc)} end
      end
    end
    local q = P .. 'q:' .. blane .. ':' .. g
    local payload = redis.call('LPOP', q)
    if payload then
      redis.call('HINCRBY', P .. 'pending', blane, -1)
    end
    if redis.call('LLEN', q) == 0 then unfile(blane, g) end
    if payload then
      local id = redis.call('INCR', P .. 'nextlease')
      redis.call('ZADD', P .. 'leases', now_ms() + lease_ms, id)
      redis.call('HSET', P .. 'lease:data', id, payload)
      redis.call('HSET', P .. 'lease:info', id, owner .. '\t' .. blane .. '\t' .. g)
      redis.call('HINCRBY', P .. 'counts', 'served', 1)
      return {tostring(id), payload, g, tostring(sc)}
    end
  end
end
return nil
"""

# ARGV: lease ids. Requests handled: their leases end.
_ACK = r"""
for _, id in ipairs(ARGV) do
  if redis.call('ZREM', P .. 'leases', id) == 1 then
    redis.call('HDEL', P .. 'lease:data', id)
    redis.call('HDEL', P .. 'lease:info', id)
    redis.call('HINCRBY', P .. 'counts', 'acked', 1)
  end
end
return 0
"""

# ARGV: lease ms[, a worker that closes]. Leases past their deadline: renewed when their owner
# is alive, else handed back (to the front of their bucket, in the shared lane); a dead worker's
# lane moves to '*', its form claims end and the pages of its forms are queued again. A request
# handed back is stored with a leading 'H' (HANDED_MARK: a pickle starts with 0x80). A worker
# that closes stops being alive in this same script: were its 'alive' key deleted first, another
# worker's reap in between would find it dead and queue its forms' pages again (read twice, or
# left queued when every worker closes at once).
_REAP = r"""
local lease_ms = tonumber(ARGV[1])
if ARGV[2] then
  redis.call('DEL', P .. 'alive:' .. ARGV[2])
  redis.call('SREM', P .. 'idle', ARGV[2])
end
local now = now_ms()
local back = 0
local function alive(w) return redis.call('EXISTS', P .. 'alive:' .. w) == 1 end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', P .. 'leases', '-inf', now)) do
  local info = redis.call('HGET', P .. 'lease:info', id)
  local owner, lane, g = string.match(info or '', '^([^\t]*)\t([^\t]*)\t(.*)$')
  if owner and alive(owner) then
    redis.call('ZADD', P .. 'leases', now + lease_ms, id)
  else
    local payload = redis.call('HGET', P .. 'lease:data', id)
    redis.call('ZREM', P .. 'leases', id)
    redis.call('HDEL', P .. 'lease:data', id)
    redis.call('HDEL', P .. 'lease:info', id)
    if payload and g then
      file('*', g, 'H' .. payload, true)
      back = back + 1
    end
  end
end
-- a worker gone: its lane to '*'; its forms' claims end and, when it died (not when it closed
-- with the crawl), the pages its forms were met on are read again
local function bury(w, died)
  for _, m in ipairs(redis.call('ZRANGE', P .. 'frontier:' .. w, 0, -1)) do
    local g = string.sub(m, MEMBER_HEAD + 1)
    local q = P .. 'q:' .. w .. ':' .. g
    for _, payload in ipairs(redis.call('LRANGE', q, 0, -1)) do
      file('*', g, 'H' .. payload, false)
      back = back + 1
    end
    redis.call('DEL', q)
    unfile(w, g)
  end
  local pages = {}
  for _, sig in ipairs(redis.call('SMEMBERS', P .. 'claims:' .. w)) do
    if redis.call('HGET', P .. 'forms', sig) == w then
      redis.call('HDEL', P .. 'forms', sig)
      local page = redis.call('HGET', P .. 'formpage', sig)
      local g, body, payload
      if page then
        g, body, payload = string.match(page, '^([^\t]*)\t([^\t]*)\t(.*)$')
      end
      if g and died then
        if not pages[payload] then
          pages[payload] = true
          file('*', g, 'H' .. payload, true)
          back = back + 1
        end
      elseif g and body ~= '' then
        redis.call('DEL', body)  -- a worker that retires: its stored pages go
      end
    end
    redis.call('HDEL', P .. 'formpage', sig)
  end
  redis.call('DEL', P .. 'claims:' .. w)
  redis.call('HDEL', P .. 'pending', w)
  redis.call('SREM', P .. 'workers', w)
end
if ARGV[2] then bury(ARGV[2], false) end
for _, w in ipairs(redis.call('SMEMBERS', P .. 'workers')) do
  if not alive(w) then bury(w, true) end
end
if back > 0 then redis.call('HINCRBY', P .. 'counts', 'handed_back', back) end
return back
"""

# ARGV: outcome, json {ks, prior, a, b}. One feedback on the kind automata (eqs. 2, 4-7).
_LEARN = r"""
local outcome, arg = ARGV[1], cjson.decode(ARGV[2])
for _, kind in ipairs(arg.ks) do
  local p = ensure(kind, arg.prior[kind], arg.a)
  if outcome == 'reward' then
    p = rewarded(p, arg.a)
    redis.call('SADD', P .. 'paid', kind)
  else
    p = p * (1 - arg.b)
  end
  redis.call('HSET', P .. 'kla', kind, string.format('%.17g', p))
  rekey(kind)
  if outcome == 'reward' or not ROOT[kind] then
    for _, child in ipairs(redis.call('SMEMBERS', P .. 'heirs:' .. kind)) do
      if follows(child, kind) then rekey(child)
      else redis.call('SREM', P .. 'heirs:' .. kind, child) end
    end
  end
end
return 0
"""

# ARGV: worker, '1' to mark it idle. 1 when the crawl is over: nothing queued in any lane,
# nothing leased, and every live worker idle (it found the same at its last spider_idle, and has
# taken nothing since: a worker between its last answer and its spider_idle may still queue
# what it holds in memory, e.g. paused forms). A worker is marked only when nothing is queued
# or leased.
_OVER = r"""
for _, n in ipairs(redis.call('HVALS', P .. 'pending')) do
  if tonumber(n) > 0 then return 0 end
end
if redis.call('ZCARD', P .. 'leases') > 0 then return 0 end
if ARGV[2] == '1' then redis.call('SADD', P .. 'idle', ARGV[1]) end
for _, w in ipairs(redis.call('SMEMBERS', P .. 'workers')) do
  if redis.call('EXISTS', P .. 'alive:' .. w) == 1
      and redis.call('SISMEMBER', P .. 'idle', w) == 0 then return 0 end
end
return 1
"""

# ARGV: kinds. Their current scores (what DLAScheduler.kind_score gives in one process).
_SCORES = r"""
local out = {}
for i, kind in ipairs(ARGV) do out[i] = tostring(score(kind)) end
return out
"""


def _lua(body: str, fewer_keys_first: bool) -> str:
    return (_PRELUDE % {"roots": json.dumps(json.dumps(sorted(ROOT_KINDS))),
                        "fewer": "true" if fewer_keys_first else "false",
                        "nofollow": json.dumps(NOFOLLOW), "render": json.dumps(RENDER),
                        "relay": json.dumps(RELAY),
                        "last": repr(LAST), "decimals": SCORE_DECIMALS}) + body


class RedisFrontier:
    """The shared frontier of one crawl (module docstring): each method is one script call."""

    def __init__(self, client: redis.Redis, prefix: str, worker: str, lease: float,
                 fewer_keys_first: bool = True) -> None:
        """``fewer_keys_first``: the lab knob ``dla_fewer_keys_first`` (ties go to the group
        with fewer query keys; a group filed keeps the order it was filed with)."""
        self.client, self.prefix, self.worker = client, prefix, worker
        self.lease_ms = int(lease * 1000)

        def script(body: str) -> Any:
            return client.register_script(_lua(body, fewer_keys_first))

        self._enqueue = script(_ENQUEUE)
        self._pop = script(_POP)
        self._ack = script(_ACK)
        self._reap = script(_REAP)
        self._learn = script(_LEARN)
        self._scores = script(_SCORES)
        self._over = script(_OVER)

    def _keys(self) -> list[str]:
        return [self.prefix]

    def heartbeat(self) -> None:
        """This worker is alive for one more lease (its leases and lane are kept)."""
        pipe = self.client.pipeline()
        pipe.set(self.prefix + "alive:" + self.worker, 1, px=self.lease_ms)
        pipe.sadd(self.prefix + "workers", self.worker)
        pipe.execute()

    def enqueue(self, lane: str, payload: bytes, ks: list[str], parents: dict[str, str],
                prior: dict[str, int], rerender: bool, a: float | None,
                relay: bool = False, fingerprint: str = "") -> str | None:
        """Queue a request in ``lane``; returns the group it went to, or None when its
        ``fingerprint`` was in the dupefilter (``P dupefilter``) already."""
        arg = {"ks": ks, "parents": parents or {"": ""}, "prior": prior or {"": 0},
               "rerender": rerender, "relay": relay, "a": -1 if a is None else a}
        group = self._enqueue(keys=self._keys(),
                              args=[lane, payload, json.dumps(arg), fingerprint])
        if group is None:
            return None
        return group.decode() if isinstance(group, bytes) else group

    def pop(self, lanes: list[str], inflight: list[str], others: bool, wait: float,
            best: float, cap: int) -> tuple[str, Any, str, float] | float | None:
        """The best request of ``lanes``, leased to this worker: ``(lease id, payload, group,
        score)``; the score of the best one when it waits for the answers in flight; None when
        the lanes are empty."""
        arg = {"lanes": lanes, "inflight": inflight or {}, "others": others, "wait": wait,
               "best": best, "cap": cap}  # {}: cjson's empty table
        out = self._pop(keys=self._keys(), args=[self.worker, self.lease_ms, json.dumps(arg)])
        if out is None:
            return None
        if out[0] == b"wait":
            return float(out[1])
        return out[0].decode(), out[1], out[2].decode(), float(out[3])

    def ack(self, ids: list[str], stored: list[str] = ()) -> None:
        """End the leases ``ids``; delete the ``stored`` responses their requests read
        (:mod:`hiddenweb.dla.relay`), in the same round trip."""
        if not ids:
            return
        pipe = self.client.pipeline(transaction=False)
        self._ack(keys=self._keys(), args=ids, client=pipe)
        if stored:
            pipe.delete(*stored)
        pipe.execute()

    def reap(self) -> int:
        """Hand back the requests of dead workers; how many."""
        return int(self._reap(keys=self._keys(), args=[self.lease_ms]))

    def over(self, idle: bool = False) -> bool:
        """Whether the crawl is over (:data:`_OVER`); ``idle``: this worker found nothing to
        do (marked idle when nothing is queued or leased)."""
        return bool(self._over(keys=self._keys(), args=[self.worker, "1" if idle else "0"]))

    def busy(self) -> None:
        """This worker took a request: not idle any more."""
        self.client.srem(self.prefix + "idle", self.worker)

    def retire(self) -> None:
        """This worker closes with the crawl: not alive any more, not dead either (its forms'
        pages are not read again); what is still in its lane goes to the shared lane. One
        script: no other worker's reap sees it not alive and not retired yet (:data:`_REAP`)."""
        self._reap(keys=self._keys(), args=[self.lease_ms, self.worker])

    def learn(self, outcome: str, ks: list[str], prior: dict[str, int], a: float | None,
              b: float) -> None:
        arg = {"ks": ks, "prior": prior or {"": 0}, "a": -1 if a is None else a, "b": b}
        self._learn(keys=self._keys(), args=[outcome, json.dumps(arg)])

    def scores(self, kinds: list[str]) -> list[float]:
        if not kinds:
            return []
        return [float(x) for x in self._scores(keys=self._keys(), args=kinds)]

    def pending(self, lanes: list[str] | None = None) -> int:
        """Requests queued in ``lanes`` (all lanes: None)."""
        if lanes is None:
            values = self.client.hvals(self.prefix + "pending")
        else:
            values = self.client.hmget(self.prefix + "pending", lanes)
        return sum(int(v) for v in values if v is not None)

    def leased(self) -> int:
        """Requests taken by some worker and not handled yet."""
        return int(self.client.zcard(self.prefix + "leases"))

    def counts(self) -> dict[str, int]:
        return {k.decode(): int(v) for k, v in self.client.hgetall(self.prefix + "counts").items()}
