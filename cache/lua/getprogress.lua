-- Read a live progress entry. KEYS: 1 progress hash. ARGV: 1 now override.
-- Returns {url, status, step, position, at, starts} or nil.
local now = clock(ARGV[1])
local p = redis.call('HMGET', KEYS[1], 'url', 'status', 'step', 'pos', 'at', 'exp', 'starts')
if not p[1] or now >= tonumber(p[6]) then return false end
return {p[1], p[2], p[3], tonumber(p[4]), tonumber(p[5]), tonumber(p[7] or '0')}
