-- How many ticks of a schedule were claimed in a window, and whether it was claimed before it. Claims are
-- scored by the time they were made, which is at or after their tick, so the window's claims are among those
-- made since its start; whether an older claim exists is answered from the last tick, or from the most recent
-- claims made before the window (at most ARGV[4] of them).
-- KEYS[1] last HASH, KEYS[2] claims ZSET
-- ARGV[1] schedule name, ARGV[2] from (epoch ms), ARGV[3] to (epoch ms), ARGV[4] how many earlier claims to look at
-- returns { claimed, first tick in the window or -1, 1 if claimed before the window else 0 }
local name, from, to = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local suffix = ':' .. name
local function tick_of(member)
  if string.sub(member, -#suffix) ~= suffix then
    return nil
  end
  return tonumber(string.sub(member, 1, #member - #suffix))
end
local claimed, first = 0, -1
for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], from, '+inf')) do
  local tick = tick_of(member)
  if tick and tick >= from and tick <= to then
    claimed = claimed + 1
    if first < 0 or tick < first then
      first = tick
    end
  end
end
local before = 0
local last = tonumber(redis.call('HGET', KEYS[1], name))
if last and last < from then
  before = 1
else
  for _, member in ipairs(redis.call('ZREVRANGEBYSCORE', KEYS[2], '(' .. from, '-inf', 'LIMIT', 0, tonumber(ARGV[4]))) do
    local tick = tick_of(member)
    if tick and tick < from then
      before = 1
      break
    end
  end
end
return { claimed, first, before }
