-- Store a report by id. KEYS: 1 report hash.
-- ARGV: 1 now override, 2 retention ms, 3 failed (0/1), 4 stored report.
local now = clock(ARGV[1])
local ttl = tonumber(ARGV[2])
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'at', string.format('%d', now),
  'exp', string.format('%d', now + ttl), 'failed', ARGV[3], 'body', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ttl)
return 1
