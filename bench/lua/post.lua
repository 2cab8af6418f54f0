-- wrk: POST /postmaps with a unique body every request (a counter and the thread number in the message).
package.path = "bench/lua/?.lua;" .. package.path
local chatt = require("chatt")
require("report")

setup = chatt.setup
init = chatt.init
request = chatt.poster(chatt.body)
