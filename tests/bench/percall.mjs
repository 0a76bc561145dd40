// percall.mjs URL SESSION N CONC: N Legacy tools/call "echo" over CONC
// keep-alive connections (a fixed count, unlike wrk's fixed time, so a
// profiler's totals divide into per-call figures).  Exits 1 if any
// answer is not a 200 carrying the message back.
import http from 'node:http';

const [url, sid, n, conc] = [process.argv[2], process.argv[3],
	Number(process.argv[4]), Number(process.argv[5])];
const u = new URL(url);
const marker = 'vmcpd-bench-7f3a';
const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call',
	params: { name: 'echo', arguments: { message: marker } } });
const agent = new http.Agent({ keepAlive: true, maxSockets: conc });
let sent = 0, done = 0, bad = 0;

function one() {
	if (sent >= n)
		return;
	sent++;
	const req = http.request({ host: u.hostname, port: u.port,
		path: u.pathname, method: 'POST', agent, headers: {
			'Content-Type': 'application/json',
			'Accept': 'application/json, text/event-stream',
			'MCP-Protocol-Version': '2025-11-25',
			'Mcp-Session-Id': sid,
			'Content-Length': Buffer.byteLength(body) } }, (res) => {
		let s = '';
		res.on('data', (d) => { s += d; });
		res.on('end', () => {
			if (res.statusCode !== 200 || !s.includes(marker))
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
