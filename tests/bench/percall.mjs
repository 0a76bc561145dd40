// percall.mjs URL SESSION N CONC: N Legacy tools/call "echo" over CONC
// keep-alive connections (a fixed count, unlike wrk's fixed time, so a
// profiler's totals divide into per-call figures); SESSION "-" sends
// them as 2026-07-28 (stateless) calls, as mcall.lua does;
// PERCALL_AUTHORIZATION, if set, is every call's Authorization.  Exits 1
// if any answer is not a 200 carrying the message back.
import http from 'node:http';

const [url, sid, n, conc] = [process.argv[2], process.argv[3],
	Number(process.argv[4]), Number(process.argv[5])];
const u = new URL(url);
const marker = 'vmcpd-bench-7f3a';
const modern = sid === '-';
const params = { name: 'echo', arguments: { message: marker } };
if (modern)
	params._meta = {
		'io.modelcontextprotocol/protocolVersion': '2026-07-28',
		'io.modelcontextprotocol/clientInfo':
		    { name: 'vmcpd-bench', version: '1' },
		'io.modelcontextprotocol/clientCapabilities': {} };
const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call',
	params });
const headers = {
	'Content-Type': 'application/json',
	'Accept': 'application/json, text/event-stream',
	'Content-Length': Buffer.byteLength(body) };
if (process.env.PERCALL_AUTHORIZATION)
	headers.Authorization = process.env.PERCALL_AUTHORIZATION;
if (modern) {
	headers['MCP-Protocol-Version'] = '2026-07-28';
	headers['Mcp-Method'] = 'tools/call';
	headers['Mcp-Name'] = 'echo';
} else {
	headers['MCP-Protocol-Version'] = '2025-11-25';
	headers['Mcp-Session-Id'] = sid;
}
const agent = new http.Agent({ keepAlive: true, maxSockets: conc });
let sent = 0, done = 0, bad = 0;

function one() {
	if (sent >= n)
		return;
	sent++;
	const req = http.request({ host: u.hostname, port: u.port,
		path: u.pathname, method: 'POST', agent, headers }, (res) => {
		let s = '';
		res.on('data', (d) => { s += d; });
		res.on('end', () => {
			if (res.statusCode !== 200 || !s.includes(marker) ||
			    (modern && !s.includes('"resultType":"complete"')))
				bad++;
			if (++done === n) {
				agent.destroy();
				console.log(`percall: ${done} calls, ${bad} bad`);
				process.exitCode = bad > 0 ? 1 : 0;
			} else
				one();
		});
	});
	req.on('error', () => { bad++; done++; one(); });
	req.end(body);
}
for (let i = 0; i < conc; i++)
	one();
