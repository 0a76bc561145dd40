-- mlist.lua: wrk script, tools/list as an MCP 2026-07-28 client.  Every
-- answer must be 200, say resultType and list exactly
-- $BENCH_EXPECT_TOOLS tools (any number if unset) on one page; tools are
-- counted by their inputSchema, since serverInfo has a "name" too.
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local check = dofile(dir .. "check.lua")

local expect = tonumber(os.getenv("BENCH_EXPECT_TOOLS") or "")

check.setup_modern('{"jsonrpc":"2.0","id":1,"method":"tools/list",' ..
    '"params":{' .. check.modern_meta .. '}}', "tools/list", nil)

check.install(function(body)
	if string.find(body, '"resultType":"complete"', 1, true) == nil or
	    string.find(body, '"nextCursor"', 1, true) ~= nil then
		return false
	end
	if expect == nil then
		return true
	end
	local _, n = string.gsub(body, '"inputSchema"%s*:', "")
	return n == expect
end)
