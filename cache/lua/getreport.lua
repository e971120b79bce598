-- Read a report by id. KEYS: 1 report hash. ARGV: 1 now override.
-- Returns {at, failed, now, body} or nil.
local now = clock(ARGV[1])
local res = redis.call('HMGET', KEYS[1], 'at', 'exp', 'failed', 'body')
if not res[1] or now >= tonumber(res[2]) then return false end
return {tonumber(res[1]), res[3], now, res[4]}
