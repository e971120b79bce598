-- Extend a live lease: the holder's heartbeat, never shortening it.
-- KEYS: 1 lease zset, 2 run marker of the URL. ARGV: 1 now override,
--       2 id, 3 lease ms. Returns 1 renewed, 0 lost (expired or released).
local now = clock(ARGV[1])
local id, ttl = ARGV[2], tonumber(ARGV[3])
local exp = redis.call('ZSCORE', KEYS[1], id)
if not exp or tonumber(exp) <= now then return 0 end
if redis.call('GET', KEYS[2]) ~= id then return 0 end -- a lease of another URL
local new = math.max(tonumber(exp), now + ttl)
redis.call('ZADD', KEYS[1], new, id)
local left = new - now
if redis.call('PTTL', KEYS[1]) < left then redis.call('PEXPIRE', KEYS[1], left) end
if redis.call('PTTL', KEYS[2]) < left then redis.call('PEXPIRE', KEYS[2], left) end
return 1
