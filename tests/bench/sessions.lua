-- sessions.lua: wrk script for scale.sh, creates $SCALE_SESSIONS Legacy
-- sessions ($SCALE_THREADS wrk threads share them): each is an
-- initialize, then notifications/initialized with the session id the
-- answer gave, sent by whichever connection of the thread is free next.
-- A thread stops once its share is done (a few more sessions than that
-- may have been opened: one a connection); the caller ends wrk.  done()
-- prints one "SCALE ..." line: sessions completed, the seconds from the
-- first request to the last completion (wall clock, from
-- clock_gettime through LuaJIT's ffi) and the bad answers.
local ffi = require("ffi")
ffi.cdef [[
	typedef struct { long tv_sec; long tv_nsec; } scale_timespec;
	int clock_gettime(int clk, scale_timespec *ts);
]]
local ts = ffi.new("scale_timespec")

local function now()
	ffi.C.clock_gettime(1, ts)	-- CLOCK_MONOTONIC: the same in all
	return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) / 1e9
end

local total = tonumber(os.getenv("SCALE_SESSIONS") or "")
local nthreads = tonumber(os.getenv("SCALE_THREADS") or "")
if total == nil or nthreads == nil or total < 1 or nthreads < 1 then
	io.stderr:write("sessions.lua: SCALE_SESSIONS, SCALE_THREADS unset\n")
	os.exit(2)
end

local threads = {}
local init_body = '{"jsonrpc":"2.0","id":1,"method":"initialize",' ..
    '"params":{"protocolVersion":"2025-11-25","capabilities":{},' ..
    '"clientInfo":{"name":"vmcpd-scale","version":"1"}}}'
local notif_body = '{"jsonrpc":"2.0","method":"notifications/initialized"}'
local base = {
	["Content-Type"] = "application/json",
	["Accept"] = "application/json, text/event-stream",
	["MCP-Protocol-Version"] = "2025-11-25",
}

function setup(thread)
	table.insert(threads, thread)
	thread:set("tid", #threads)
end

function init(args)
	quota = math.floor(total / nthreads)
	if tid == 1 then
		quota = quota + total % nthreads
	end
	done_n = 0		-- sessions completed (202 to the notification)
	bad = 0
	first_bad = ""
	t_first = 0
	t_last = 0
	queue = {}		-- session ids waiting for their notification
	qhead, qtail = 1, 0
end

function request()
	local h = {}
	for k, v in pairs(base) do
		h[k] = v
	end
	if t_first == 0 then
		t_first = now()
	end
	if qhead <= qtail then
		h["Mcp-Session-Id"] = queue[qhead]
		queue[qhead] = nil
		qhead = qhead + 1
		return wrk.format("POST", wrk.path, h, notif_body)
	end
	-- wrk drops the first request() of a thread, so initialize goes
	-- on until the share is done: a few more (one a connection) at most
	if done_n < quota then
		return wrk.format("POST", wrk.path, h, init_body)
	end
	-- nothing left for this connection: a cheap probe, not counted
	return wrk.format("GET", "/healthz", {}, nil)
end

local function bad_answer(status, body)
	bad = bad + 1
	if first_bad == "" then
		first_bad = status .. " " .. string.sub(body or "", 1, 300)
	end
end

-- What an answer was for is told from the answer: a session id (the
-- initialize), 202 (the notification) or /healthz's JSON.
function response(status, headers, body)
	local sid = nil
	for k, v in pairs(headers) do
		if string.lower(k) == "mcp-session-id" then
			sid = v
		end
	end
	if status == 200 and sid ~= nil then
		qtail = qtail + 1
		queue[qtail] = sid
	elseif status == 202 then
		done_n = done_n + 1
		-- (answers already read may still come in after stop())
		if done_n == quota then
			t_last = now()
			wrk.thread:stop()
		end
	elseif status == 200 and body ~= nil and
	    string.find(body, '"status"', 1, true) ~= nil then
		-- the /healthz probe
	else
		bad_answer(status, body)
	end
end

function done(summary, latency, requests)
	local n, b, t0, t1, first = 0, 0, 0, 0, ""
	for _, t in ipairs(threads) do
		n = n + t:get("done_n")
		b = b + t:get("bad")
		local a, z = t:get("t_first"), t:get("t_last")
		if a > 0 and (t0 == 0 or a < t0) then
			t0 = a
		end
		if z > t1 then
			t1 = z
		end
		if first == "" then
			first = t:get("first_bad")
		end
	end
	local secs = (t1 > t0 and t0 > 0) and (t1 - t0) or 0
	io.write(string.format("SCALE sessions=%d seconds=%.3f bad=%d " ..
	    "socket_errors=%d\n", n, secs, b, summary.errors.connect +
	    summary.errors.read + summary.errors.write +
	    summary.errors.timeout))
	if first ~= "" then
		io.write("SCALE first bad answer: " .. first .. "\n")
	end
end
