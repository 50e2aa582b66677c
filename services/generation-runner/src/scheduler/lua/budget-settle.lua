-- Settles a call's token reservation to the tokens it really used, and frees its concurrency slot
-- (provider-capacity.ts).
--
-- ARGV[1]: JSON { tokenDifference (real - estimated), tpm (configured, 0: none), headroom, leaseId ('' for none) }.
local b, leases = KEYS[1], KEYS[2]
local args = cjson.decode(ARGV[1])
local tpm = tighter(args.tpm, tonumber(redis.call('HGET', b, 'learned_tpm') or '0'))
local ttat = tonumber(redis.call('HGET', b, 'ttat') or '0')
if tpm > 0 and ttat > 0 then
  redis.call('HSET', b, 'ttat', math.max(ttat + args.tokenDifference * 60000 / (tpm * args.headroom), now))
end
if args.leaseId ~= '' then redis.call('ZREM', leases, args.leaseId) end
return 1
