-- An account has no call waiting in this runner any more (provider-capacity.ts): it leaves the
-- fair shares' heads and presence, with any request granted to it (a replica still holding its
-- calls puts it back at its next ask).
--
-- ARGV[1]: JSON { account }.
local heads, present, grants = KEYS[1], KEYS[2], KEYS[3]
local args = cjson.decode(ARGV[1])
redis.call('ZREM', heads, args.account)
redis.call('ZREM', present, args.account)
redis.call('HDEL', grants, args.account)
return 1
