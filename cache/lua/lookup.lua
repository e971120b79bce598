-- Read a fresh cached result: unexpired, and younger than the reader's
-- cache TTL. KEYS: 1 result hash. ARGV: 1 now override, 2 cache TTL ms.
-- Returns {id, at, now, body} or nil.
local now = clock(ARGV[1])
local res = redis.call('HMGET', KEYS[1], 'id', 'at', 'exp', 'body')
if not res[1] or now >= tonumber(res[3]) or tonumber(res[2]) <= now - tonumber(ARGV[2]) then return false end
return {res[1], tonumber(res[2]), now, res[4]}
