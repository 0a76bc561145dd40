-- list.lua: wrk script, tools/list on the session in $MCP_SESSION_ID.
-- Every answer must be 200 and list exactly $BENCH_EXPECT_TOOLS tools
-- (any number if unset) on one page.
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local check = dofile(dir .. "check.lua")

local expect = tonumber(os.getenv("BENCH_EXPECT_TOOLS") or "")

check.setup_request('{"jsonrpc":"2.0","id":1,"method":"tools/list",' ..
    '"params":{}}')

check.install(function(body)
	if string.find(body, '"tools"', 1, true) == nil or
	    string.find(body, '"nextCursor"', 1, true) ~= nil then
		return false
	end
	if expect == nil then
		return true
	end
	local _, n = string.gsub(body, '"name"%s*:', "")
	return n == expect
end)
