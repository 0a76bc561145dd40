import { test } from 'node:test';
import http from 'node:http';
import net from 'node:net';
import { startMulti, startSpec, useMulti, openGet, openSessionCaps, postStream, multiConfig, NODE, MEMORY, procChildren, cmdline } from './lib/multi.mjs';
import { sleep, rpc, httpRequest, mcpHeaders } from './lib/harness.mjs';
useMulti();
function listen(srv) { return new Promise(r => srv.listen(0, '127.0.0.1', () => r(srv.address().port))); }
test('x', async () => {
  const victim = await startSpec({ label: 'victim', slow: true, tools: ['v'] });
  const steady = await startSpec({ label: 'steady', tools: ['ok'], hang: true });
  const rubbish = http.createServer((req, res) => { req.resume(); req.on('end', () => res.writeHead(200, {'Content-Type': 'application/json'}).end('<html>not json')); });
  const rport = await listen(rubbish);
  const socks = new Set();
  const hole = net.createServer((s) => { socks.add(s); s.on('error', () => {}); });
  const hport = await listen(hole);
  const d = await startMulti({ backends: [{ name: 'victim', url: victim.url }, { name: 'steady', url: steady.url },
      { name: 'mem', command: NODE, args: [MEMORY], env: { MEMORY_FILE_PATH: '/tmp/fsroot/m2.jsonl' } }],
    aggregation: 'conflictResolutionConfig:\n  prefixMode: onConflict', operational: 'timeouts:\n  default: 10s\n  perWorkload:\n    steady: 2s\nfailureHandling:\n  partialFailureMode: best_effort' });
  const A = (await openSessionCaps(d.port)).sid;
  let r = await rpc(d.port, A, 'tools/list', {}); console.log(r.json.result.tools.map(t => t.name));
  let t = Date.now();
  const p = rpc(d.port, A, 'tools/call', { name: 'slow', arguments: { ms: 20000 } }, { timeout: 30000 });
  await sleep(500); victim.kill();
  r = await p; console.log('killed', Date.now() - t, r.status, r.text);
  t = Date.now();
  r = await rpc(d.port, A, 'tools/call', { name: 'hang', arguments: {} }, { timeout: 30000 }); console.log('hang', Date.now() - t, r.status, r.text);
  t = Date.now();
  r = await rpc(d.port, A, 'tools/call', { name: 'ok', arguments: {} }, { timeout: 30000 }); console.log('ok', Date.now() - t, r.status, r.text);
  r = await rpc(d.port, A, 'tools/list', {}); console.log('list after kill', r.text.slice(0, 300));
  await sleep(6000);
  r = await rpc(d.port, A, 'tools/list', {}); console.log('list after kill+6s', r.text.slice(0, 300));
  // stdio kill
  const bridges = procChildren(d.pid).filter(c => c.comm === 'vmcpd-bridge');
  const kid = procChildren(bridges[0].pid)[0];
  console.log('bridge', bridges, kid, cmdline(kid.pid));
  r = await rpc(d.port, A, 'tools/call', { name: 'read_graph', arguments: {} }); console.log('graph', r.text.slice(0, 200));
  process.kill(kid.pid, 'SIGKILL');
  t = Date.now();
  r = await rpc(d.port, A, 'tools/call', { name: 'read_graph', arguments: {} }, {timeout: 30000}); console.log('graph after kill', Date.now() - t, r.text.slice(0, 200));
  await sleep(1000);
  console.log('kid now', procChildren(bridges[0].pid));
  r = await rpc(d.port, A, 'tools/call', { name: 'read_graph', arguments: {} }, {timeout: 30000}); console.log('graph after kill', Date.now() - t, r.text.slice(0, 200));
  await d.stop();
  for (const mode of []) {
    const d2 = await startMulti({ workers: 1, backends: [{ name: 'steady', url: steady.url }, { name: 'rubbish', url: `http://127.0.0.1:${rport}/mcp` }, { name: 'hole', url: `http://127.0.0.1:${hport}/mcp` }],
      operational: `timeouts:\n  default: 10s\n  perWorkload:\n    hole: 1500ms\nfailureHandling:\n  partialFailureMode: ${mode}` });
    t = Date.now();
    const init = await httpRequest(d2.port, { headers: mcpHeaders({version: null}), body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }, timeout: 30000 });
    console.log(mode, 'init', Date.now() - t, init.status, init.text.slice(0, 400));
    const B = init.headers['mcp-session-id'];
    if (B) { t = Date.now(); r = await rpc(d2.port, B, 'tools/list', {}, {timeout: 30000}); console.log(mode, 'list', Date.now() - t, r.text.slice(0, 400)); }
    await d2.stop();
    console.log(d2.proc.output.slice(-1500));
  }
  console.log(d.proc.output.slice(-3000));
});
