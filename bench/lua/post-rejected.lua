-- wrk: POST /postmaps with a body the size of post.lua's that chatterd refuses with 400 before any database
-- work (an empty name): the same reading, parsing and validation as a post, answered on the I/O queue
-- without the commit.
package.path = "bench/lua/?.lua;" .. package.path
local chatt = require("chatt")
require("report")

setup = chatt.setup
init = chatt.init
request = chatt.poster(chatt.rejectedBody)
