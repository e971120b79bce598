-- The admission decision without recording anything: Admit's answer at this
-- moment, charging no window and taking no lease.
-- KEYS and ARGV: as admit (ARGV[2] is an id no lease has, such as "").
-- Returns decide's reply, or {1}: would be admitted.
local r = decide(clock(ARGV[1]), ARGV[2])
if r then return r end
return {1}
