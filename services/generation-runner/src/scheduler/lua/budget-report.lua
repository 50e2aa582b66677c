-- What a provider's answer said about a budget (provider-capacity.ts): the limits it reports, a
-- pause (a 429's retry delay, or a budget reported empty until its reset), and for a 429 without
-- headers, the pace the fleet reached, less a tenth (a fifth less at each further refusal).
-- Returns the limits now in force as learned: {learned_rpm, learned_tpm, pause_until}.
--
-- ARGV[1]: JSON { pauseMs, rpm, tpm (reported, 0: not said), refused (a 429), callsLastMinute
-- (the fleet's), ttlMs }.
local b = KEYS[1]
local args = cjson.decode(ARGV[1])
if args.pauseMs > 0 then
  local pauseUntil = now + args.pauseMs
  if pauseUntil > tonumber(redis.call('HGET', b, 'pause_until') or '0') then redis.call('HSET', b, 'pause_until', pauseUntil) end
end
if args.rpm > 0 then redis.call('HSET', b, 'learned_rpm', args.rpm, 'learned_from', 'headers') end
if args.tpm > 0 then redis.call('HSET', b, 'learned_tpm', args.tpm) end
if args.rpm == 0 and args.refused then
  local f = redis.call('HMGET', b, 'learned_rpm', 'learned_from')
  local learned = tonumber(f[1] or '0')
  if learned > 0 and f[2] == '429' then learned = math.max(1, math.floor(learned * 0.8))
  elseif learned == 0 then learned = math.max(1, math.floor(args.callsLastMinute * 0.9)) end
  if f[2] ~= 'headers' then redis.call('HSET', b, 'learned_rpm', learned, 'learned_from', '429', 'last_refusal', now) end
end
redis.call('PEXPIRE', b, args.ttlMs)
return redis.call('HMGET', b, 'learned_rpm', 'learned_tpm', 'pause_until')
