-- Store a progress entry. KEYS: 1 progress hash. ARGV: 1 now override,
-- 2 ttl ms, 3 url, 4 status, 5 step, 6 position. Returns now.
local now = clock(ARGV[1])
local ttl = tonumber(ARGV[2])
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'url', ARGV[3], 'status', ARGV[4], 'step', ARGV[5],
  'pos', ARGV[6], 'at', string.format('%d', now), 'exp', string.format('%d', now + ttl))
redis.call('PEXPIRE', KEYS[1], ttl)
return now
