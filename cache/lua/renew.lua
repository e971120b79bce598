-- Extend a live lease: the holder's heartbeat.
-- KEYS: 1 lease zset, 2 run marker of the URL. ARGV: 1 now override,
--       2 id, 3 lease ms. Returns 1 renewed, 0 lost (expired or released).
local now = clock(ARGV[1])
local id, ttl = ARGV[2], tonumber(ARGV[3])
local exp = redis.call('ZSCORE', KEYS[1], id)
if not exp or tonumber(exp) <= now then return 0 end
if redis.call('GET', KEYS[2]) ~= id then return 0 end -- a lease of another URL
redis.call('ZADD', KEYS[1], now + ttl, id)
-- Every lease of the host expires by now + ttl, so the set may too.
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
return 1
