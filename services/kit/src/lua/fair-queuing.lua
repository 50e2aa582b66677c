-- Start-time fair queuing, the one rule of turns between accounts: for the worker slots' lines
-- (kit/src/fair-dispatch.ts) and for the provider budgets (generation-runner's
-- provider-capacity.ts). Each account with work waiting has a tag, the virtual time its next turn
-- is due; the lowest goes first, and the virtual time is the tag of the last turn given.

-- Where an account that starts waiting joins: the later of the virtual time and its own finish
-- tag (when its next turn was due as it stopped waiting). Idle time earns no credit to spend in a
-- burst later, and leaving and coming back at once gains no turn.
local function joining_tag(own_finish_tag, virtual_time)
  return math.max(own_finish_tag or 0, virtual_time)
end

-- The tag of an account's next turn after one at `tag`: a turn costs 1/weight.
local function next_tag(tag, weight)
  return tag + 1 / weight
end
