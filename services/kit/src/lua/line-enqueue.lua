-- Puts each article in its account's line (once), counted in the waiting list (one byte an
-- article: its length is the number of articles in lines, which a list-length autoscaler such as
-- KEDA's redis trigger reads); an account that had no line joins the turns (joining_tag).
-- ARGV[1]: JSON { base, entries = [{ account, order, id }] }.
local ready, virtual_time_key, finish_tags, waiting = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local args = cjson.decode(ARGV[1])
local virtual_time = tonumber(redis.call('GET', virtual_time_key) or '0')
for _, entry in ipairs(args.entries) do
  if redis.call('ZADD', args.base .. 'line:' .. entry.account, 'NX', entry.order, entry.id) == 1 then
    redis.call('RPUSH', waiting, '1')
    if not redis.call('ZSCORE', ready, entry.account) then
      local own = tonumber(redis.call('HGET', finish_tags, entry.account))
      redis.call('ZADD', ready, joining_tag(own, virtual_time), entry.account)
    end
  end
end
return 0
