-- Is the audit id still holding its lease? KEYS: 1 lease zset.
-- ARGV: 1 now override, 2 id. Returns 1 or 0.
local now = clock(ARGV[1])
local exp = redis.call('ZSCORE', KEYS[1], ARGV[2])
if exp and tonumber(exp) > now then return 1 end
return 0
