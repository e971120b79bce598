-- Reserve a start for a queued audit of one URL: settle, then find the
-- earliest start the limits allow counting every live reservation, and
-- hold it for id unless it is more than `within` away. KEYS and ARGV: as
-- decide.lua. Returns settled's reply, {4, wait ms, reason} refused (the
-- wait until a reservation would be accepted), or {5, at} reserved, with
-- the reason as a third element when the start is later than now.
local now = clock(ARGV[1])
local id = ARGV[2]
local r = settled(now, id)
if r then return r end
local member, at0 = urlresv(now)
if member and member ~= ARGV[11] .. ':' .. id then
  return {5, at0} -- the URL's start is reserved already: shared, the queue joins the two
end
local ws = windows(tonumber(ARGV[10]))
local from, reason = now, 0
local cw = concwait(now)
if cw > 0 then from = now + cw end
local at, wr = earliest(ws, taken(now, 'reserve', nil), from)
if wr > 0 then reason = wr end
local within = tonumber(ARGV[9])
if at - now > within then
  dropresv()
  return {4, math.max(at - now - within, 1000), reason}
end
dropresv()
redis.call('ZADD', KEYS[5], at, ARGV[11] .. ':' .. id)
keepresv(now)
if at > now then return {5, at, reason} end
return {5, at}
