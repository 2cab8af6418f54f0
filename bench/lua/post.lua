-- wrk: POST /postmaps with a unique body every request (a counter and the thread number in the message).
package.path = "bench/lua/?.lua;" .. package.path
local chatt = require("chatt")
require("report")

setup = chatt.setup
init = chatt.init

local headers = { ["Content-Type"] = "application/json; charset=utf-8" }
local n = 0

function request()
    n = n + 1
    return wrk.format("POST", "/postmaps", headers, chatt.body(run_name, thread_number, n))
end
