-- The decisions of admit and reserve, shared. A start occupies [s, s+per)
-- of each window; a window N/per is broken when N+1 starts lie within a
-- span shorter than per. Times are unix ms.
-- KEYS: 1 lease zset (id -> expiry), 2 starts zset (id -> start),
--       3 run marker of the URL (id), 4 result hash of the URL,
--       5 reservations zset ("<url hash>:<id>" -> reserved start), 6 lease
--       starts zset.
-- ARGV: 1 now override (0 = TIME), 2 id, 3 concurrency, 4 lease ms,
--       5 longest window ms, 6 least lease ms, 7 typical audit ms,
--       8 reservation grace ms, 9 within ms (reserve), 10 start slack ms,
--       11 the URL's hash, 12 the reader's cache TTL ms, then per window:
--       N, window ms (from ARGV[13]).

-- windows are the limits, each `pad` ms longer (reserve pads by the slack).
local function windows(pad)
  local ws = {}
  for i = 13, #ARGV, 2 do ws[#ws + 1] = {tonumber(ARGV[i]), tonumber(ARGV[i + 1]) + pad} end
  return ws
end

-- urlresv is the URL's live reservation: its member and start, or nil.
local function urlresv(now)
  local rs = redis.call('ZRANGEBYSCORE', KEYS[5], '(' .. string.format('%d', now - tonumber(ARGV[8])), '+inf', 'WITHSCORES')
  local prefix = ARGV[11] .. ':'
  for i = 1, #rs, 2 do
    if string.sub(rs[i], 1, #prefix) == prefix then return rs[i], tonumber(rs[i + 1]) end
  end
  return nil
end

-- dropresv removes every reservation of the URL.
local function dropresv()
  local all = redis.call('ZRANGE', KEYS[5], 0, -1)
  local prefix = ARGV[11] .. ':'
  for _, m in ipairs(all) do
    if string.sub(m, 1, #prefix) == prefix then redis.call('ZREM', KEYS[5], m) end
  end
end

-- fits: does a start at `at` keep every window given the sorted starts
-- `taken`? Returns true, or false and the 1-based index of a broken window.
local function fits(ws, taken, at)
  local k = 1
  while k <= #taken and taken[k] < at do k = k + 1 end
  for wi, w in ipairs(ws) do
    local n, per = w[1], w[2]
    for i = math.max(1, k - n), k do
      local j = i + n
      if j > #taken + 1 then break end
      local lo, hi = at, at
      if i < k then lo = taken[i] end
      if j > k then hi = taken[j - 1] end
      if hi - lo < per then return false, wi end
    end
  end
  return true, 0
end

-- first candidate time at or after `from` at which `ws` fit.
local function firstfit(ws, taken, from, cands)
  if fits(ws, taken, from) then return from end
  for _, c in ipairs(cands) do
    if fits(ws, taken, c) then return c end
  end
  return from
end

-- earliest: the first time at or after `from` that fits every window, and
-- the window that would have delayed it longest alone (0 when none did).
local function earliest(ws, taken, from)
  if fits(ws, taken, from) then return from, 0 end
  local cands, seen = {}, {}
  for _, w in ipairs(ws) do
    for _, s in ipairs(taken) do
      local c = s + w[2]
      if c > from and not seen[c] then cands[#cands + 1] = c; seen[c] = true end
    end
  end
  table.sort(cands)
  local at = firstfit(ws, taken, from, cands)
  local longest, reason = -1, 0
  for i, w in ipairs(ws) do
    local one = {w}
    if not fits(one, taken, from) then
      local t = firstfit(one, taken, from, cands)
      if t - from > longest then longest, reason = t - from, i end
    end
  end
  return at, reason
end

-- concwait: how long the concurrency limit makes a new audit wait, 0 when
-- there is room: until the earliest running audit is expected to end (its
-- start plus typical), or a poll once it ran longer, never past its lease.
local function concwait(now)
  local live = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. string.format('%d', now), '+inf', 'WITHSCORES')
  if #live / 2 < tonumber(ARGV[3]) then return 0 end
  local fstart, fexp = nil, nil
  for i = 1, #live, 2 do
    local st = tonumber(redis.call('ZSCORE', KEYS[6], live[i]) or '0')
    if not fstart or st < fstart then fstart, fexp = st, tonumber(live[i + 1]) end
  end
  local wait = fstart + tonumber(ARGV[7]) - now
  if wait <= 0 then wait = 5000 end
  return math.max(math.min(wait, fexp - now), 1)
end

-- starts inside the longest window, sorted, plus the other URLs' live
-- reservations: for 'reserve' every one (those past their time as starting
-- now); for 'admit' every one at its time, or, when the URL holds a
-- reservation at `own`, those reserved no later (ahead of it in line).
local function taken(now, mode, own)
  local out = {}
  local st = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. string.format('%d', now - tonumber(ARGV[5])), '+inf', 'WITHSCORES')
  for i = 2, #st, 2 do out[#out + 1] = tonumber(st[i]) end
  local rs = redis.call('ZRANGEBYSCORE', KEYS[5], '(' .. string.format('%d', now - tonumber(ARGV[8])), '+inf', 'WITHSCORES')
  local prefix = ARGV[11] .. ':'
  for i = 1, #rs, 2 do
    if string.sub(rs[i], 1, #prefix) ~= prefix then
      local at = tonumber(rs[i + 1])
      if mode == 'reserve' then out[#out + 1] = math.max(at, now)
      elseif not own or at <= own then out[#out + 1] = at end
    end
  end
  table.sort(out)
  return out
end

-- settled: what comes before the limits. Returns {2, id, at, now, body}
-- cached, {1} a retry of id's own held admission, {3, running id} in
-- flight, or nil. Expired results and leases are dropped first; a result
-- older than the reader's cache TTL (ARGV[12]) is not answered, whatever
-- expiry its writer gave it.
local function settled(now, id)
  local exp = redis.call('HGET', KEYS[4], 'exp')
  if exp and now >= tonumber(exp) then redis.call('DEL', KEYS[4]) end
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  local res = redis.call('HMGET', KEYS[4], 'id', 'at', 'exp', 'body')
  if res[1] and now < tonumber(res[3]) and tonumber(res[2]) > now - tonumber(ARGV[12]) then
    return {2, res[1], tonumber(res[2]), now, res[4]}
  end
  local running = redis.call('GET', KEYS[3])
  if running then
    local lexp = redis.call('ZSCORE', KEYS[1], running)
    if lexp and tonumber(lexp) > now then
      if running == id then return {1} end
      return {3, running}
    end
    redis.call('DEL', KEYS[3])
  end
  return nil
end

-- extend makes key live at least ms from now.
local function extend(key, ms)
  local left = redis.call('PTTL', key)
  if left < ms then redis.call('PEXPIRE', key, math.max(ms, 1)) end
end

-- keepresv sets the reservations zset's TTL to its latest entry plus grace.
local function keepresv(now)
  local last = redis.call('ZRANGE', KEYS[5], -1, -1, 'WITHSCORES')
  if #last == 2 then
    redis.call('PEXPIRE', KEYS[5], math.max(tonumber(last[2]) + tonumber(ARGV[8]) - now, 1))
  end
end
