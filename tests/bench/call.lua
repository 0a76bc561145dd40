-- call.lua: wrk script, tools/call "echo" on the session in
-- $MCP_SESSION_ID ($BENCH_TOOL overrides the tool name).  Every answer
-- must be 200 and carry the echoed message back.
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local check = dofile(dir .. "check.lua")

local tool = os.getenv("BENCH_TOOL") or "echo"
local marker = "vmcpd-bench-7f3a"

check.setup_request('{"jsonrpc":"2.0","id":1,"method":"tools/call",' ..
    '"params":{"name":"' .. tool .. '","arguments":{"message":"' ..
    marker .. '"}}}')

check.install(function(body)
	return string.find(body, marker, 1, true) ~= nil and
	    string.find(body, '"result"', 1, true) ~= nil
end)
