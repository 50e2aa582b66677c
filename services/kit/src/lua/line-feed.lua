-- Gives up to (free slots - jobs already waiting) turns, earliest due first, and returns the ids
-- chosen (noted as being promoted). An account whose line empties leaves its finish tag.
-- ARGV[1]: JSON { base, freeSlots, now (ms), maxFeed }.
local ready, virtual_time_key, weights, promoting, queue_waiting, waiting, finish_tags = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local args = cjson.decode(ARGV[1])
local wanted = math.min(args.freeSlots - redis.call('LLEN', queue_waiting), args.maxFeed)
local chosen = {}
while #chosen < wanted do
  local head = redis.call('ZRANGE', ready, 0, 0, 'WITHSCORES')
  if #head == 0 then break end
  local account, due = head[1], tonumber(head[2])
  local line = args.base .. 'line:' .. account
  local next = redis.call('ZPOPMIN', line)
  redis.call('SET', virtual_time_key, tostring(due))
  if #next > 0 then
    redis.call('LPOP', waiting)
    chosen[#chosen + 1] = next[1]
    redis.call('ZADD', promoting, args.now, next[1])
  end
  local following = next_tag(due, tonumber(redis.call('HGET', weights, account) or '1'))
  if redis.call('ZCARD', line) > 0 then
    redis.call('ZADD', ready, following, account)
  else
    redis.call('ZREM', ready, account)
    redis.call('HSET', finish_tags, account, tostring(following))
  end
end
return chosen
