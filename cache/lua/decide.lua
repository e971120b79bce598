-- decide is the one admission decision, read-only, shared by admit and peek.
-- KEYS: 1 lease zset (id -> expiry ms), 2 starts zset (id -> start ms),
--       3 run marker of the URL (id), 4 result hash of the URL.
-- ARGV: 3 concurrency, 5.. per window: N, window ms (from ARGV[6]).
-- Returns {2, id, at, now, body} cached, {1} a retry of id's own held
-- admission, {3, running id} in flight, {4, wait ms, reason} refused
-- (reason 0 = concurrency, i = the i-th window), or nil: the URL may be
-- admitted. Leases whose expiry is at or before now are dead.
local function decide(now, id)
  local res = redis.call('HMGET', KEYS[4], 'id', 'at', 'exp', 'body')
  if res[1] and now < tonumber(res[3]) then
    return {2, res[1], tonumber(res[2]), now, res[4]}
  end
  local live = '(' .. string.format('%d', now)
  local running = redis.call('GET', KEYS[3])
  if running then
    local exp = redis.call('ZSCORE', KEYS[1], running)
    if exp and tonumber(exp) > now then
      if running == id then return {1} end
      return {3, running}
    end
  end
  local wait, reason = 0, -1
  if redis.call('ZCOUNT', KEYS[1], live, '+inf') >= tonumber(ARGV[3]) then
    local first = redis.call('ZRANGEBYSCORE', KEYS[1], live, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
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
  return nil
end
