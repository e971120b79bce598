-- Read a fresh cached result. KEYS: 1 result hash. ARGV: 1 now override.
-- Returns {id, at, now, body} or nil.
local now = clock(ARGV[1])
local res = redis.call('HMGET', KEYS[1], 'id', 'at', 'exp', 'body')
if not res[1] or now >= tonumber(res[3]) then return false end
return {res[1], tonumber(res[2]), now, res[4]}
