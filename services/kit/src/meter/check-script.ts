/**
 * The Redis side of `Meter.check`: reads the rate window and the credit balance, decides,
 * and spends both or neither, in one atomic script call.
 *
 * KEYS[1] rate window (hash: count, reset_at in server milliseconds); KEYS[2] credit balance, optional.
 * ARGV limit, window ms, then with credits: cost, allowance, ttl seconds.
 * Returns { allowed 0|1, refused 0 none|1 rate|2 credits, remaining, reset ms, balance }.
 */
export const CHECK_SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local limit = tonumber(ARGV[1])

local window = redis.call('HMGET', KEYS[1], 'count', 'reset_at')
local count = tonumber(window[1]) or 0
local resetAt = tonumber(window[2])
if resetAt == nil or resetAt <= now then
  count = 0
  resetAt = now + tonumber(ARGV[2])
end
local resetMs = resetAt - now

local withCredit = #KEYS == 2
local balance = 0
local fresh = false
if withCredit then
  balance = tonumber(redis.call('GET', KEYS[2]))
  if balance == nil then
    balance = tonumber(ARGV[4])
    fresh = true
  end
end

if count >= limit then
  return {0, 1, limit - count, resetMs, balance}
end

if withCredit then
  local cost = tonumber(ARGV[3])
  if cost > 0 and balance < cost then
    return {0, 2, limit - count, resetMs, balance}
  end
  if fresh then
    redis.call('SET', KEYS[2], ARGV[4], 'EX', ARGV[5])
  end
  if cost > 0 then
    balance = redis.call('DECRBY', KEYS[2], ARGV[3])
  end
end

if count == 0 then
  -- Formatted by hand: some Redis versions print large Lua numbers in exponent form.
  local resetAtText = string.format('%d', resetAt)
  redis.call('HSET', KEYS[1], 'count', 1, 'reset_at', resetAtText)
  redis.call('PEXPIREAT', KEYS[1], resetAtText)
else
  redis.call('HINCRBY', KEYS[1], 'count', 1)
end
return {1, 0, limit - count - 1, resetMs, balance}
`;

/**
 * The Redis side of `Meter.refund`: gives one slot back to a window that still exists and
 * `cost` credits to a balance that still exists, atomically. KEYS[1] window, KEYS[2] balance
 * (optional); ARGV[1] cost. Returns the balance after the refund, or false when there is none.
 */
export const REFUND_SCRIPT = `
local count = tonumber(redis.call('HGET', KEYS[1], 'count'))
if count ~= nil and count > 0 then
  redis.call('HINCRBY', KEYS[1], 'count', -1)
end
if #KEYS == 2 and redis.call('EXISTS', KEYS[2]) == 1 then
  return redis.call('INCRBY', KEYS[2], ARGV[1])
end
return false
`;
