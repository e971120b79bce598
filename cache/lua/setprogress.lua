-- Store a progress entry. KEYS: 1 progress hash. ARGV: 1 now override,
-- 2 ttl ms, 3 url, 4 status, 5 step, 6 position, 7 starts at (ms, 0 none):
-- it lives ttl past now or past its start, whichever is later. Returns now.
local now = clock(ARGV[1])
local starts = tonumber(ARGV[7])
local exp = math.max(now, starts) + tonumber(ARGV[2])
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'url', ARGV[3], 'status', ARGV[4], 'step', ARGV[5],
  'pos', ARGV[6], 'at', string.format('%d', now), 'exp', string.format('%d', exp),
  'starts', string.format('%d', starts))
redis.call('PEXPIRE', KEYS[1], exp - now)
return now
