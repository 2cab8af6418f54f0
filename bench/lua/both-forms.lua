-- wrk: GET /getmaps in both forms by turns, per thread: identity, then with the iOS app's Accept-Encoding (gzip).
package.path = "bench/lua/?.lua;" .. package.path
require("report")

local n = 0

function request()
    n = n + 1
    if n % 2 == 0 then
        return wrk.format("GET", "/getmaps", { ["Accept-Encoding"] = "gzip, deflate, br" }, nil)
    end
    return wrk.format("GET", "/getmaps", {}, nil)
end
