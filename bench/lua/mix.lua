-- wrk: nine GET /getmaps (with the iOS app's Accept-Encoding) for every unique POST /postmaps, per thread.
package.path = "bench/lua/?.lua;" .. package.path
local chatt = require("chatt")
require("report")

setup = chatt.setup
init = chatt.init

local get_headers = { ["Accept-Encoding"] = "gzip, deflate, br" }
local post_headers = { ["Content-Type"] = "application/json; charset=utf-8" }
local n = 0

function request()
    n = n + 1
    if n % 10 == 0 then
        return wrk.format("POST", "/postmaps", post_headers, chatt.body(run_name, thread_number, n))
    end
    return wrk.format("GET", "/getmaps", get_headers, nil)
end
