-- check.lua: loaded by call.lua and list.lua.  Sets up an MCP POST with
-- the session from $MCP_SESSION_ID, checks every response with the
-- caller's ok(body) and prints one "BENCH key=value ..." line that
-- run.sh reads.  A benchmark that measures errors is worthless, so
-- non-200 answers and 200 answers that fail ok() are counted apart
-- from wrk's socket errors, and the first bad answer is shown.

local check = {}
local threads = {}

function check.setup_request(body)
	local sid = os.getenv("MCP_SESSION_ID")
	if sid == nil or sid == "" then
		io.stderr:write("bench: MCP_SESSION_ID is not set\n")
		os.exit(2)
	end
	wrk.method = "POST"
	wrk.body = body
	wrk.headers["Content-Type"] = "application/json"
	wrk.headers["Accept"] = "application/json, text/event-stream"
	wrk.headers["Mcp-Session-Id"] = sid
	wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
	check.authorization()
end

-- a bearer token on every request (incomingAuth oidc), if given
function check.authorization()
	local authz = os.getenv("BENCH_AUTHORIZATION")
	if authz ~= nil and authz ~= "" then
		wrk.headers["Authorization"] = authz
	end
end

-- MCP 2026-07-28: stateless, so no session; the method and name travel
-- in headers as well as in the body, which carries its own _meta.
function check.setup_modern(body, method, name)
	wrk.method = "POST"
	wrk.body = body
	wrk.headers["Content-Type"] = "application/json"
	wrk.headers["Accept"] = "application/json, text/event-stream"
	wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
	wrk.headers["Mcp-Method"] = method
	if name ~= nil then
		wrk.headers["Mcp-Name"] = name
	end
	check.authorization()
end

-- The request _meta the official TypeScript SDK v2 client sends, keys in
-- its order: every 2026-07-28 request carries the client's identity
-- (clientInfo, a SHOULD), so a proxy that forwards the body as it is
-- (nginx) and one that puts its own identity in its place (vmcpd, a
-- client on its hop) hand the backend the same keys to parse.
check.modern_meta = '"_meta":{"io.modelcontextprotocol/protocolVersion":' ..
    '"2026-07-28","io.modelcontextprotocol/clientInfo":' ..
    '{"name":"vmcpd-bench","version":"1"},' ..
    '"io.modelcontextprotocol/clientCapabilities":{}}'

function setup(thread)
	table.insert(threads, thread)
end

function init(args)
	bad_status = 0
	bad_body = 0
	first_bad = ""
end

function check.install(ok)
	response = function(status, headers, body)
		if status ~= 200 then
			bad_status = bad_status + 1
		elseif ok(body) then
			return
		else
			bad_body = bad_body + 1
		end
		if first_bad == "" then
			first_bad = status .. " " ..
			    string.sub(body or "", 1, 300)
		end
	end
end

function done(summary, latency, requests)
	local st, bb, first = 0, 0, ""
	for _, t in ipairs(threads) do
		st = st + t:get("bad_status")
		bb = bb + t:get("bad_body")
		if first == "" then
			first = t:get("first_bad")
		end
	end
	local e = summary.errors
	local sock = e.connect + e.read + e.write + e.timeout
	local secs = summary.duration / 1e6
	io.write(string.format("BENCH requests=%d duration_us=%d rps=%.1f " ..
	    "p50_us=%.1f p90_us=%.1f p99_us=%.1f mean_us=%.1f " ..
	    "bad_status=%d bad_body=%d socket_errors=%d\n",
	    summary.requests, summary.duration, summary.requests / secs,
	    latency:percentile(50), latency:percentile(90),
	    latency:percentile(99), latency.mean, st, bb, sock))
	if first ~= "" then
		io.write("BENCH first bad answer: " .. first .. "\n")
	end
end

return check
