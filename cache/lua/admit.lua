-- One admission decision for one URL of one host: decide, and record the
-- admission (lease, start, run marker).
-- KEYS: as decide. ARGV: 1 now override (0 = TIME), 2 id, 3 concurrency,
--       4 lease ms, 5 longest window ms, then per window: N, window ms.
-- Returns decide's reply, or {1} admitted.
local now = clock(ARGV[1])
local id = ARGV[2]

-- Drop what has expired, then decide on what is live.
local exp = redis.call('HGET', KEYS[4], 'exp')
if exp and now >= tonumber(exp) then redis.call('DEL', KEYS[4]) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local running = redis.call('GET', KEYS[3])
if running and not redis.call('ZSCORE', KEYS[1], running) then redis.call('DEL', KEYS[3]) end

local r = decide(now, id)
if r then return r end

local lease, longest = tonumber(ARGV[4]), tonumber(ARGV[5])
redis.call('ZADD', KEYS[1], now + lease, id)
redis.call('PEXPIRE', KEYS[1], lease)
redis.call('ZADD', KEYS[2], now, id)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - longest)
redis.call('PEXPIRE', KEYS[2], longest)
redis.call('SET', KEYS[3], id, 'PX', lease)
return {1}
