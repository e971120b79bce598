-- One admission decision for one URL of one host: settle, ask the limits,
-- and record the admission (lease, its start, the start, run marker),
-- consuming the URL's reservation. KEYS and ARGV: as decide.lua.
-- Returns settled's reply, {4, wait ms, reason, moved reservation at or 0}
-- refused (reason 0 = concurrency, i = the i-th window), or {1} admitted.
local now = clock(ARGV[1])
local id = ARGV[2]
local r = settled(now, id)
if r then
  if r[1] ~= 1 then dropresv() end
  return r
end
local wait, reason = -1, -1
local cw = concwait(now)
if cw > 0 then wait, reason = cw, 0 end
local member, own = urlresv(now)
-- A reserved audit keeps the planned slack beyond the windows too.
local ws = windows(0)
if own then ws = windows(tonumber(ARGV[10])) end
local tk = taken(now, 'admit', own)
if not fits(ws, tk, now) then
  local at, wr = earliest(ws, tk, now)
  if at - now > wait then wait, reason = at - now, wr end
end
if own and own > now and own - now > wait then
  wait, reason = own - now, #ws + 1 -- no sooner than its own reserved start
end
if reason >= 0 then
  local moved = 0
  if member then
    moved = now + wait
    redis.call('ZADD', KEYS[5], moved, member)
    keepresv(now)
  end
  return {4, wait, reason, moved}
end
dropresv()
local life = math.max(tonumber(ARGV[4]), tonumber(ARGV[6]))
local longest = tonumber(ARGV[5])
redis.call('ZADD', KEYS[1], now + life, id)
extend(KEYS[1], life)
redis.call('ZADD', KEYS[6], now, id)
redis.call('ZREMRANGEBYSCORE', KEYS[6], '-inf', now - 86400000) -- a day: longer than any lease
extend(KEYS[6], life)
redis.call('ZADD', KEYS[2], now, id)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - longest)
extend(KEYS[2], longest)
redis.call('SET', KEYS[3], id, 'PX', life)
return {1}
