-- mcall.lua: wrk script, tools/call "echo" as an MCP 2026-07-28 client
-- (stateless: no session).  Every answer must be 200, carry the echoed
-- message back and say resultType.
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local check = dofile(dir .. "check.lua")

local tool = os.getenv("BENCH_TOOL") or "echo"
local marker = "vmcpd-bench-7f3a"

check.setup_modern('{"jsonrpc":"2.0","id":1,"method":"tools/call",' ..
    '"params":{' .. check.modern_meta .. ',"name":"' .. tool ..
    '","arguments":{"message":"' .. marker .. '"}}}', "tools/call", tool)

check.install(function(body)
	return string.find(body, marker, 1, true) ~= nil and
	    string.find(body, '"resultType":"complete"', 1, true) ~= nil
end)
