#!lua name=receipts
-- The receipt logic of receiptd's benchmark workload as a Redis 7 function library, for the
-- Redis baseline of `receipts-loadgen bench` (BENCHMARKS.md). One FCALL per event:
--
--   FCALL receipt_event 0 <kind> <source> <sequence> <conversation> <a> <b> [members...]
--
--   kind "upsert":    a = "direct" | "group", members follow (joins only; leaves are not modelled)
--   kind "sent":      a = message id, b = sender
--   kind "delivered": a = message id, b = user      ("up to": every earlier message too)
--   kind "read":      a = message id, b = user      (read implies delivered)
--
-- Returns 1 accepted, 2 duplicate, 3 rejected. Every status change is PUBLISHed on
-- "u:<conversation>" as "conversation|message|sequence|update-sequence|status|delivered|read".
-- The same rules as receiptd for this workload: recipients are the members at send time minus
-- the sender, status never goes down, timestamps keep the first time, duplicates by event id.
-- Not modelled (the workload has none): leaves, deleted users, privacy, held receipts,
-- edits, marked-unread, retention.

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function status_of(kind, rc, dc, rd)
  if rc == 0 then return 'none' end
  if kind == 'direct' then
    if rd > 0 then return 'read' elseif dc >= rc then return 'delivered' else return 'notDelivered' end
  end
  if rd >= rc then return 'readByAll'
  elseif rd > 0 then return 'readBySome'
  elseif dc >= rc then return 'delivered'
  else return 'notDelivered' end
end

local function publish(c, s, id, st, dc, rd)
  local sequence = redis.call('HINCRBY', 'conv:' .. c, 'pub', 1)
  redis.call('PUBLISH', 'u:' .. c, c .. '|' .. id .. '|' .. s .. '|' .. sequence .. '|' .. st .. '|' .. dc .. '|' .. rd)
end

-- Moves one user's delivered (and, for a read, read) watermark up to message s.
local function receipt(c, kind, user, s, join, is_read, t)
  local changed = {}
  local wkey = is_read and 'rw:' .. c or 'dw:' .. c
  local old = tonumber(redis.call('HGET', wkey, user) or '0')
  if s <= old then return end
  redis.call('HSET', wkey, user, s)
  local delivered_to = tonumber(redis.call('HGET', 'dw:' .. c, user) or '0')
  for k = old + 1, s do
    local key = 'msg:' .. c .. ':' .. k
    local m = redis.call('HMGET', key, 'id', 'snd', 'rc', 'dc', 'rd', 'dat', 'rat')
    if m[1] and m[2] ~= user and join < k then
      local rc, dc, rd = tonumber(m[3]), tonumber(m[4]), tonumber(m[5])
      if is_read then
        rd = rd + 1
        if k > delivered_to then dc = dc + 1 end
      else
        dc = dc + 1
      end
      local st = status_of(kind, rc, dc, rd)
      local dat, rat = m[6], m[7]
      if dat == '0' and dc >= rc then dat = t end
      if rat == '0' and rd > 0 then rat = t end
      redis.call('HSET', key, 'dc', dc, 'rd', rd, 'st', st, 'dat', dat, 'rat', rat)
      publish(c, k, m[1], st, dc, rd)
    end
  end
  if is_read and s > delivered_to then redis.call('HSET', 'dw:' .. c, user, s) end
end

local function receipt_event(keys, args)
  local kind, source, sequence, c = args[1], args[2], tonumber(args[3]), args[4]
  if redis.call('GETBIT', 'seen:' .. source, sequence) == 1 then return 2 end
  local t = now_ms()
  if kind == 'upsert' then
    local last = tonumber(redis.call('HGET', 'conv:' .. c, 'last') or '0')
    redis.call('HSET', 'conv:' .. c, 'kind', args[5], 'last', last)
    for i = 7, #args do redis.call('HSETNX', 'mem:' .. c, args[i], last) end
  else
    local ckind = redis.call('HGET', 'conv:' .. c, 'kind')
    if not ckind then return 3 end
    if kind == 'sent' then
      local id, sender = args[5], args[6]
      if not redis.call('HGET', 'mem:' .. c, sender) then return 3 end
      if redis.call('HEXISTS', 'mid:' .. c, id) == 1 then return 3 end
      local s = redis.call('HINCRBY', 'conv:' .. c, 'last', 1)
      redis.call('HSET', 'mid:' .. c, id, s)
      local rc = redis.call('HLEN', 'mem:' .. c) - 1
      local st = status_of(ckind, rc, 0, 0)
      redis.call('HSET', 'msg:' .. c .. ':' .. s, 'id', id, 'snd', sender, 't', t, 'rc', rc, 'dc', 0, 'rd', 0,
        'st', st, 'dat', 0, 'rat', 0)
      publish(c, s, id, st, 0, 0)
    elseif kind == 'delivered' or kind == 'read' then
      local id, user = args[5], args[6]
      local s = redis.call('HGET', 'mid:' .. c, id)
      local join = redis.call('HGET', 'mem:' .. c, user)
      if not s or not join then return 3 end
      s = tonumber(s)
      if redis.call('HGET', 'msg:' .. c .. ':' .. s, 'snd') == user then return 3 end
      receipt(c, ckind, user, s, tonumber(join), kind == 'read', t)
    else
      return 3
    end
  end
  redis.call('SETBIT', 'seen:' .. source, sequence, 1)
  return 1
end

redis.register_function('receipt_event', receipt_event)
