-- Store the result of an audit and release its lease, atomically.
-- KEYS: 1 lease zset, 2 run marker of the URL, 3 result hash of the URL,
--       4 fin marker of the id, 5 lease starts zset, 6 starts zset.
-- ARGV: 1 now override (0 = TIME), 2 id, 3 failed (0/1), 4 cache ms,
--       5 fin ms, 6 channel, 7 stored report, 8 contact ms (the start
--       moves that much later: Outcome.Contacted).
-- Returns 1 when released (or released before: a retry), 0 when the lease
-- had expired; joiners are woken either way.
local now = clock(ARGV[1])
local id = ARGV[2]
local status = 0
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREM', KEYS[5], id)
if redis.call('ZREM', KEYS[1], id) == 1 then
  if redis.call('GET', KEYS[2]) == id then redis.call('DEL', KEYS[2]) end
  local contact = tonumber(ARGV[8])
  if contact > 0 and redis.call('ZSCORE', KEYS[6], id) then
    redis.call('ZINCRBY', KEYS[6], contact, id)
  end
  if ARGV[3] == '0' then
    local ttl = tonumber(ARGV[4])
    redis.call('DEL', KEYS[3])
    redis.call('HSET', KEYS[3], 'id', id, 'at', string.format('%d', now),
      'exp', string.format('%d', now + ttl), 'body', ARGV[7])
    redis.call('PEXPIRE', KEYS[3], ttl)
  end
  redis.call('SET', KEYS[4], '1', 'PX', ARGV[5])
  status = 1
elseif redis.call('EXISTS', KEYS[4]) == 1 then
  status = 1
end
redis.call('PUBLISH', ARGV[6], '1')
return status
