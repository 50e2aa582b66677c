-- The effective limit: the tighter of the operator's and the provider's (0 is none).
local function tighter(a, b)
  if a > 0 and b > 0 then return math.min(a, b) end
  return math.max(a, b)
end
