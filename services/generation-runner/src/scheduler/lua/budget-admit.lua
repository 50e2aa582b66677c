-- Admits one of a runner's claims on a provider budget (provider-capacity.ts). Returns {1, index}:
-- that call goes; {2, index}: wake that parked article; {0, wait ms}.
--
-- ARGV[1]: JSON { rpm, tpm, maxConcurrent, leaseId, leaseMs, burstMs, headroom, ttlMs,
-- presenceMs, wokenMs, wakeAheadMs, claims = [{ account, weight, tokens, kind }] }, indexes from
-- 0; a claim's kind is 'c' (a call waiting in its job), 'w:<article>' (a parked article) or
-- 't:<article>' (the call of an article woken for its turn).
--
-- Fair shares over the whole fleet (lua/fair-queuing.lua): each account with a call waiting
-- anywhere is in the heads with its tag, and a call goes only for the account with the lowest tag;
-- each turn taken moves its account's tag on by 1/weight. Alone, an account is always the lowest:
-- it gets the whole budget.
--
-- A parked article's turn wakes it without spending the budget: it is owed a request until its job
-- comes back for it (or wokenMs passes), and articles are woken only while what is owed fits in
-- the budget's room over the next wakeAheadMs, so wakes keep the budget's pace and each call is
-- spent when it is made: a job slow to come back delays its call, it never bunches calls past the
-- limit. When the budget has room but the turn belongs to an account with calls waiting in another
-- runner's jobs, the request is granted to it (its runner takes it at its next ask), so the budget
-- never idles while a runner naps.
local b, leases = KEYS[1], KEYS[2]
local heads, tags, present, weights, grants, live, woken = KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local args = cjson.decode(ARGV[1])
local claims = args.claims
local f = redis.call('HMGET', b, 'pause_until', 'rtat', 'ttat', 'learned_rpm', 'learned_tpm', 'learned_from', 'last_refusal', 'vtime')
local pause = tonumber(f[1] or '0')
if pause > now then return {0, pause - now} end
local gone = redis.call('ZRANGEBYSCORE', present, '-inf', now)
for _, account in ipairs(gone) do
  redis.call('ZREM', heads, account)
  redis.call('HDEL', grants, account)
end
if #gone > 0 then redis.call('ZREMRANGEBYSCORE', present, '-inf', now) end
redis.call('ZREMRANGEBYSCORE', woken, '-inf', now)
local vtime = tonumber(f[8] or '0')
local kinds = {}
local chosen, chosenTag, turnTaken
for i = 0, #claims - 1 do
  local claim = claims[i + 1]
  local account = claim.account
  local kind = string.sub(claim.kind, 1, 1)
  kinds[i] = kind
  redis.call('ZADD', present, 'GT', now + args.presenceMs, account)
  if kind == 'c' then redis.call('ZADD', live, 'GT', now + args.presenceMs, account) end
  local tag = tonumber(redis.call('ZSCORE', heads, account))
  if not tag then
    tag = joining_tag(tonumber(redis.call('ZSCORE', tags, account)), vtime)
    redis.call('ZADD', heads, tag, account)
  end
  -- With every claim, not only on joining: a plan changed while the account kept waiting weighs
  -- its next turn, even one granted by a runner that does not hold its calls.
  redis.call('HSET', weights, account, claim.weight)
  if kind == 't' then
    -- Its turn was taken when it was woken: it goes first, and is owed nothing more.
    redis.call('ZREM', woken, string.sub(claim.kind, 3))
    if not turnTaken then chosen, chosenTag, turnTaken = i, tag, true end
  elseif not turnTaken and (not chosenTag or tag < chosenTag) then
    chosen, chosenTag = i, tag
  end
end
local learnedRpm = tonumber(f[4] or '0')
if f[6] == '429' and now - tonumber(f[7] or '0') > 60000 then
  learnedRpm = math.ceil(learnedRpm * 1.1)
  redis.call('HSET', b, 'learned_rpm', learnedRpm, 'last_refusal', now)
end
local rpm = tighter(args.rpm, learnedRpm)
local tpm = tighter(args.tpm, tonumber(f[5] or '0'))
local cap = args.maxConcurrent
local burst = args.burstMs
local headroom = args.headroom
local perToken = 0
if tpm > 0 then perToken = 60000 / (tpm * headroom) end
local ttat = math.max(tonumber(f[3] or '0'), now)
-- A request granted to one of these accounts by another runner goes now (its tokens are reserved
-- as it goes), for a call that waited in its job: a woken article's call had its turn already.
for i = 0, #claims - 1 do
  local account = claims[i + 1].account
  if kinds[i] == 'c' and tonumber(redis.call('HGET', grants, account) or '0') > 0 then
    redis.call('HINCRBY', grants, account, -1)
    if tpm > 0 then redis.call('HSET', b, 'ttat', ttat + claims[i + 1].tokens * perToken) end
    return {1, i}
  end
end
local lowest = redis.call('ZRANGE', heads, 0, 0, 'WITHSCORES')
local ours = turnTaken or chosenTag <= tonumber(lowest[2]) + 1e-9
local tokens = claims[chosen + 1].tokens
local rtat = math.max(tonumber(f[2] or '0'), now)
local wait = 0
local interval = 0
if rpm > 0 then
  interval = 60000 / (rpm * headroom)
  local w = rtat - now - math.max(burst - interval, 0)
  -- An article is woken ahead of its call, so its job is back by the time the budget has room:
  -- as long as the requests owed to those already woken fit in the budget's next wakeAheadMs.
  if kinds[chosen] == 'w' then w = rtat + redis.call('ZCARD', woken) * interval - now - args.wakeAheadMs end
  if w > wait then wait = w end
end
if tpm > 0 and ttat > now then
  local w = math.min(ttat + tokens * perToken - now - burst, ttat - now)
  if w > wait then wait = w end
end
if cap > 0 then
  redis.call('ZREMRANGEBYSCORE', leases, '-inf', now)
  if redis.call('ZCARD', leases) >= cap then wait = math.max(wait, 50) end
  -- Calls at once are held by whoever makes them: the turn is waited for, not granted.
  if not ours then wait = math.max(wait, 20) end
end
-- Another account's turn, and its calls are all parked: nothing to grant it, it is woken by its own runner.
if not ours and tonumber(redis.call('ZSCORE', live, lowest[1]) or '0') <= now then wait = math.max(wait, 20) end
if wait > 0 then
  if not ours then wait = math.max(wait, 20) end
  return {0, math.ceil(wait)}
end
local account, tag = claims[chosen + 1].account, chosenTag
local weight = claims[chosen + 1].weight
local reply = {1, chosen}
if ours and kinds[chosen] == 'w' then
  -- Its turn: the parked article is woken, owed the request until its job comes back.
  redis.call('ZADD', woken, now + args.wokenMs, string.sub(claims[chosen + 1].kind, 3))
  reply = {2, chosen}
elseif ours then
  if rpm > 0 then redis.call('HSET', b, 'rtat', rtat + interval) end
  if tpm > 0 then redis.call('HSET', b, 'ttat', ttat + tokens * perToken) end
  if cap > 0 then
    redis.call('ZADD', leases, now + args.leaseMs, args.leaseId)
    redis.call('PEXPIRE', leases, args.leaseMs)
  end
else
  if rpm > 0 then redis.call('HSET', b, 'rtat', rtat + interval) end
  account, tag = lowest[1], tonumber(lowest[2])
  weight = tonumber(redis.call('HGET', weights, account) or '1')
  redis.call('HINCRBY', grants, account, 1)
  reply = {0, 0}
end
-- A woken article's call took its turn when it was woken.
if not turnTaken then
  local following = next_tag(tag, weight)
  redis.call('ZADD', heads, following, account)
  redis.call('ZADD', tags, following, account)
  if tag > vtime then redis.call('HSET', b, 'vtime', tag) end
end
-- Renewed with each turn taken: a budget nobody uses is forgotten with its shares.
for _, key in ipairs({b, heads, tags, present, weights, grants, live, woken}) do redis.call('PEXPIRE', key, args.ttlMs) end
return reply
