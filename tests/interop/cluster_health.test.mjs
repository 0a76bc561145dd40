// Circuit breakers shared through Redis (sessionStorage.provider redis;
// docs/ARCHITECTURE.md, Beyond one host): two nodes on one Redis, one
// backend that can be made to fail every request (HTTP 503) while it
// counts the tools/call requests that reach it.  Its probes never mark
// it unhealthy here (a high unhealthyThreshold), so only the shared
// breaker can take it out of node B:
// - calls through node A trip the breaker; the fleet's record is in
//   Redis (health:<backend>); node B's builder takes it into its copy:
//   the backend's tool leaves node B's list, and a call through node B
//   fails at once without reaching the backend;
// - the backend back: a probe's answer closes the breaker everywhere,
//   the tool is listed again and calls through node B reach it;
// - a success resets the fleet's count of failures, as a node's;
// - Redis killed: each node keeps its own breaker, the errors are
//   counted in /metrics, and calls go on.
// Node A reaches Redis through a proxy that holds each answer 300 ms,
// so its builder's fleet reads come back older than what A did since:
// a read older than the probe's close must not open A's breaker again,
// and one older than A's own opening must not close it.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { Readable } from 'node:stream';

import {
  useHarness, guarded, openSession, rpc, waitFor, HOST,
} from './lib/harness.mjs';
import { rawBackend, modern } from './lib/multi.mjs';
import { startRedis, startNode, nodeMetrics } from './lib/cluster.mjs';

useHarness();

const THRESHOLD = 3;
const KEY = 'thv:vmcp:session:health:flaky';

/*
 * A 2025-11-25 backend with one tool, f_tool (its ping is answered by
 * a JSON-RPC error: alive); down: every request an HTTP 503.  hits
 * counts the tools/call requests that reach it, down or not.
 */
function flakyBackend() {
  const st = { down: false, hits: 0 };
  const srv = rawBackend('flaky', ['f_tool'], (m, res, json) =>
    json({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'flaky:ok' }] } }));
  const [serveIt] = srv.listeners('request');
  srv.removeAllListeners('request');
  srv.on('request', (req, res) => {
    if (req.method !== 'POST')
      return serveIt(req, res);
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (/"method"\s*:\s*"tools\/call"/.test(body.toString('utf8')))
        st.hits++;
      if (st.down)
        return res.writeHead(503).end('down');
      // the body again, for the backend's own reader
      const again = Readable.from([body]);
      Object.assign(again, { method: req.method, headers: req.headers, url: req.url });
      return serveIt(again, res);
    });
  });
  return { srv, st };
}

/* a TCP proxy to port that holds what the server sends for ms */
function slowAnswers(port, ms) {
  const srv = net.createServer((c) => {
    const u = net.connect(port, HOST);
    u.on('data', (d) => setTimeout(() => c.destroyed || c.write(d), ms));
    c.pipe(u);
    const end = () => { c.destroy(); u.destroy(); };
    u.on('close', () => setTimeout(end, ms));
    c.on('close', end);
    u.on('error', end);
    c.on('error', end);
  });
  return new Promise((resolve) => srv.listen(0, HOST, () => resolve(srv)));
}

describe('circuit breakers shared through Redis', () => {
  let redis, slow, a, b, be, url, sa, sb;

  before(async () => {
    be = flakyBackend();
    const port = await new Promise((resolve) => be.srv.listen(0, HOST,
      () => resolve(be.srv.address().port)));
    url = `http://${HOST}:${port}/mcp`;
    redis = await startRedis();
    const extra = [
      'operational:',
      '  failureHandling:',
      '    partialFailureMode: best_effort',
      '    healthCheckInterval: 500ms',
      '    healthCheckTimeout: 400ms',
      '    unhealthyThreshold: 1000',
      `    circuitBreaker: {enabled: true, failureThreshold: ${THRESHOLD}, timeout: 60s}`,
      '',
    ].join('\n');
    slow = await slowAnswers(redis.port, 300);
    a = await startNode({ redis: { port: slow.address().port }, backendUrl: url,
      backendName: 'flaky', extra });
    b = await startNode({ redis, backendUrl: url, backendName: 'flaky', extra });
    sa = (await openSession(a.port)).sid;
    sb = (await openSession(b.port)).sid;
  });

  after(async () => {
    for (const d of [a, b])
      if (d)
        await d.stop();
    if (redis?.proc && !redis.proc.exited)
      await redis.kill();
    be?.srv.closeAllConnections();
    be?.srv.close();
    slow?.close();
  });

  const call = (d, sid) => rpc(d.port, sid, 'tools/call', { name: 'f_tool', arguments: {} },
    { timeout: 30000 });
  const listed = async (d, sid) => {
    const r = await rpc(d.port, sid, 'tools/list', {}, { timeout: 30000 });
    assert.equal(r.json.error, undefined, r.text);
    return r.json.result.tools.map((t) => t.name);
  };
  const failed = (r) => r.json.error !== undefined || r.json.result?.isError === true;
  const message = (r) => r.json.error?.message ?? r.json.result?.content?.[0]?.text ?? r.text;

  test('calls through node A trip the breaker; node B fails fast and drops the tool',
    guarded(async () => {
      assert.deepEqual(await listed(a, sa), ['f_tool']);
      assert.deepEqual(await listed(b, sb), ['f_tool']);
      assert.equal(message(await call(b, sb)), 'flaky:ok');
      be.st.down = true;
      for (let i = 0; i < THRESHOLD; i++)
        assert.ok(failed(await call(a, sa)));
      await waitFor('the fleet breaker open in Redis', async () =>
        Number(await redis.cli('HGET', KEY, 'o')) > 0, { timeout: 15000, interval: 200 });
      assert.ok(Number(await redis.cli('HGET', KEY, 'f')) >= THRESHOLD);
      // node B never called it since: only its builder's reads tell it
      await waitFor('f_tool out of node B\'s list', async () =>
        !(await listed(b, sb)).includes('f_tool'), { timeout: 20000, interval: 300 });
      const hits = be.st.hits;
      const r = await call(b, sb);
      assert.ok(failed(r), r.text);
      assert.match(message(r), /flaky is unavailable \(circuit open|f_tool/, r.text);
      assert.equal(be.st.hits, hits, 'node B called the backend');
      assert.match(b.proc.output, /backend flaky: circuit open on another node/);
    }));

  test('the backend back: the breaker closes on every node', guarded(async () => {
    be.st.down = false;
    for (const [d, sid] of [[a, sa], [b, sb]])
      await waitFor('f_tool listed again', async () => (await listed(d, sid)).includes('f_tool'),
        { timeout: 20000, interval: 300 });
    await waitFor('the fleet breaker gone from Redis', async () =>
      (await redis.cli('EXISTS', KEY)) === '0', { timeout: 15000, interval: 200 });
    const hits = be.st.hits;
    assert.equal(message(await call(b, sb)), 'flaky:ok');
    assert.equal(be.st.hits, hits + 1);
    // A opened its breaker itself and its probe closed it: a fleet read
    // older than either (300 ms late) never closed or reopened it
    await new Promise((r) => setTimeout(r, 1500));
    assert.doesNotMatch(a.proc.output, /circuit (open|closed) on another node/);
    assert.equal(message(await call(a, sa)), 'flaky:ok');
  }));

  test('a success resets the fleet\'s count, as it does a node\'s', guarded(async () => {
    be.st.down = true;
    for (let i = 0; i < THRESHOLD - 1; i++)
      assert.ok(failed(await call(a, sa)));
    await waitFor('the failures counted in Redis', async () =>
      Number(await redis.cli('HGET', KEY, 'f')) === THRESHOLD - 1, { timeout: 15000, interval: 200 });
    be.st.down = false;
    assert.equal(message(await call(a, sa)), 'flaky:ok');
    await waitFor('the count gone from Redis', async () =>
      (await redis.cli('EXISTS', KEY)) === '0', { timeout: 15000, interval: 200 });
    // one more failure through node B does not open it anywhere
    be.st.down = true;
    assert.ok(failed(await call(b, sb)));
    be.st.down = false;
    assert.equal(message(await call(b, sb)), 'flaky:ok');
    assert.equal(await redis.cli('HGET', KEY, 'o'), '');
  }));

  test('Redis killed: each node keeps its own breaker, the errors counted', guarded(async () => {
    // 2026-07-28 calls: a Legacy session needs Redis (503 without it)
    const mcall = () => modern(b.port, 'tools/call', { name: 'f_tool', arguments: {} },
      { 'Mcp-Name': 'f_tool' });
    const before0 = (await nodeMetrics(b)).vmcpd_redis_errors_total ?? 0;
    await redis.kill();
    assert.equal(message(await mcall()), 'flaky:ok');
    be.st.down = true;
    for (let i = 0; i < THRESHOLD; i++)
      assert.ok(failed(await mcall()));
    await waitFor('node B counts the Redis errors', async () =>
      ((await nodeMetrics(b)).vmcpd_redis_errors_total ?? 0) > before0,
    { timeout: 20000, interval: 300 });
    const hits = be.st.hits;
    const r = await mcall();
    assert.ok(failed(r), r.text);
    assert.match(message(r), /flaky is unavailable \(circuit open|f_tool/, r.text);
    assert.equal(be.st.hits, hits, 'the open breaker let the call through');
    be.st.down = false;
  }));
});
