-- wrk: POST /postmaps with a body the size of post.lua's that chatterd refuses with 400 before any database
-- work (an empty name): the same request handling and handler-thread hop as a post, without the commit.
package.path = "bench/lua/?.lua;" .. package.path
local chatt = require("chatt")
require("report")

setup = chatt.setup
init = chatt.init

local headers = { ["Content-Type"] = "application/json; charset=utf-8" }
local n = 0

function request()
    n = n + 1
    return wrk.format("POST", "/postmaps", headers, chatt.rejectedBody(run_name, thread_number, n))
end
