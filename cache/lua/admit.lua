-- One admission decision for one URL of one host.
-- KEYS: 1 lease zset (id -> expiry ms), 2 starts zset (id -> start ms),
--       3 run marker of the URL (id), 4 result hash of the URL.
-- ARGV: 1 now override (0 = TIME), 2 id, 3 concurrency, 4 lease ms,
--       5 longest window ms, then per window: N, window ms.
-- Returns {1} admitted, {2, id, at, now, body} cached,
--         {3, running id} in flight, {4, wait ms, reason} refused
--         (reason 0 = concurrency, i = the i-th window).
local now = clock(ARGV[1])
local id = ARGV[2]

local res = redis.call('HMGET', KEYS[4], 'id', 'at', 'exp', 'body')
if res[1] then
  if now < tonumber(res[3]) then
    return {2, res[1], tonumber(res[2]), now, res[4]}
  end
  redis.call('DEL', KEYS[4])
end

-- Leases of crashed holders end at their expiry.
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)

local running = redis.call('GET', KEYS[3])
if running then
  if redis.call('ZSCORE', KEYS[1], running) then
    if running == id then return {1} end -- a retry of the same admission
    return {3, running}
  end
  redis.call('DEL', KEYS[3])
end

local wait, reason = 0, -1
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  wait, reason = tonumber(first[2]) - now, 0
end
local w = 1
for i = 6, #ARGV, 2 do
  local n, per = tonumber(ARGV[i]), tonumber(ARGV[i + 1])
  local lo = '(' .. string.format('%d', now - per)
  local count = redis.call('ZCOUNT', KEYS[2], lo, '+inf')
  if count >= n then
    local s = redis.call('ZRANGEBYSCORE', KEYS[2], lo, '+inf', 'WITHSCORES', 'LIMIT', count - n, 1)
    local d = tonumber(s[2]) + per - now
    if d > wait then wait, reason = d, w end
  end
  w = w + 1
end
if reason >= 0 then return {4, wait, reason} end

local lease, longest = tonumber(ARGV[4]), tonumber(ARGV[5])
redis.call('ZADD', KEYS[1], now + lease, id)
redis.call('PEXPIRE', KEYS[1], lease)
redis.call('ZADD', KEYS[2], now, id)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - longest)
redis.call('PEXPIRE', KEYS[2], longest)
redis.call('SET', KEYS[3], id, 'PX', lease)
return {1}
