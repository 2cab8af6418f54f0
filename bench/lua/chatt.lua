-- Builds POST /postmaps bodies shaped like the iOS app's: a name, a short message, and geodata as a
-- string holding [lat, lon, facing, speed] with full Double precision, as Swift prints it.
local chatt = {}

local facings = { "North", "NE", "East", "SE", "South", "SW", "West", "NW" }
local speeds = { "stopped", "walking", "running", "cycling", "driving" }

-- A body no other request of any run sends: RUN names the run, THREAD the wrk thread, N its counter.
function chatt.body(run, thread, n)
    local lat = 42.2 + math.random() * 0.1
    local lon = -83.8 + math.random() * 0.1
    local geodata = string.format('[%.16g,%.16g,\\"%s\\",\\"%s\\"]', lat, lon,
        facings[1 + n % #facings], speeds[1 + n % #speeds])
    return string.format('{"name":"wrk%d","message":"run %s thread %d chatt %d","geodata":"%s"}',
        thread, run, thread, n, geodata)
end

-- A body as long as body(RUN, THREAD, N) that chatterd answers 400: its name is empty, and the name's
-- bytes pad the message instead.
function chatt.rejectedBody(run, thread, n)
    local body = chatt.body(run, thread, n)
    local name = string.format('"name":"wrk%d"', thread)
    local padding = string.rep("x", #name - #'"name":""')
    return (body:gsub(name, '"name":""', 1):gsub('","geodata"', padding .. '","geodata"', 1))
end

-- Gives each wrk thread its number and the run's name; call it from the script's setup(thread).
local threads = 0
local run = string.format("%d-%d", os.time(), math.floor(os.clock() * 1e6))
function chatt.setup(thread)
    threads = threads + 1
    thread:set("thread_number", threads)
    thread:set("run_name", run)
end

-- Seeds each thread's random numbers differently, so threads do not post the same places; call it
-- from the script's init() (which runs in the thread, after setup gave it its number).
function chatt.init()
    math.randomseed(thread_number * 7919 + os.time())
end

-- A wrk request() that posts makeBody(RUN, THREAD, N) to /postmaps, N counting the thread's requests.
function chatt.poster(makeBody)
    local headers = { ["Content-Type"] = "application/json; charset=utf-8" }
    local n = 0
    return function()
        n = n + 1
        return wrk.format("POST", "/postmaps", headers, makeBody(run_name, thread_number, n))
    end
end

return chatt
