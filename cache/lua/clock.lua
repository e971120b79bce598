-- clock returns the decision time in unix milliseconds: the override a test
-- passed in, or the Redis server's TIME. The application's clock is never used
-- in production.
local function clock(arg)
  local n = tonumber(arg)
  if n and n > 0 then return n end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
