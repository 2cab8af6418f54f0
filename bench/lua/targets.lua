-- Requests the targets listed in the file named by the TARGETS environment variable, one a line, in turn (each
-- wrk thread from its own place in the list), with the iOS app's Accept-Encoding when GZIP=1.
package.path = "bench/lua/?.lua;" .. package.path
require("report")

local targets = {}
local next_target = 1

function init(args)
    for line in io.lines(os.getenv("TARGETS")) do targets[#targets + 1] = line end
    next_target = 1 + math.random(#targets) - 1
    if os.getenv("GZIP") == "1" then wrk.headers["Accept-Encoding"] = "gzip, deflate, br" end
end

function request()
    local target = targets[next_target]
    next_target = next_target % #targets + 1
    return wrk.format("GET", target)
end
