// The probes' health verdicts shared through Redis (sessionStorage.provider
// redis; docs/ARCHITECTURE.md, Beyond one host): two nodes on one Redis
// and one backend.  Node A probes it every 500 ms; node B's
// healthCheckInterval is an hour, so after its first round at start
// node B never probes it again, and no circuit breaker is on: only
// node A's verdict, through Redis, can take the backend out of node B.
// - the backend killed: node A's probes find it unhealthy and its tool
//   leaves node A's list; node B follows node A's verdict (its /status
//   names node A), its tool leaves node B's list too, and a Legacy
//   session and a subscriptions/listen stream on node B get
//   tools/list_changed;
// - the backend back on its port: node A's probe answers, and the tool
//   comes back on both nodes (list_changed again on node B);
// - only node A's path cut (node A reaches the backend through a TCP
//   relay, node B directly): node B, told by node A, probes at once,
//   finds it answering and keeps it (not an hour out);
// - Redis killed: each node goes by its own probes (node A drops the
//   backend, node B, whose last probe answered, keeps it), the errors
//   counted in /metrics.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';

import {
  guarded, rpc, waitFor, httpRequest, sleep, vmcpctl, HOST,
} from './lib/harness.mjs';
import {
  useMulti, rawBackend, modern, modernMeta, openSessionCaps, openGet, openStream, MODERN,
} from './lib/multi.mjs';
import { startRedis, startNode, nodeMetrics } from './lib/cluster.mjs';

useMulti();

const KEY = 'thv:vmcp:session:verdict:v';

/* a node's /status entry for backend v */
async function statusOf(d) {
  const st = await httpRequest(d.diagPort, { method: 'GET', path: '/status', timeout: 5000 });
  assert.equal(st.status, 200, st.text);
  return JSON.parse(st.text).backends.find((x) => x.name === 'v');
}

/* a TCP relay on port (or a free one) to target: node A's own path */
function tcpRelay(target, port = 0) {
  const socks = new Set();
  const s = net.createServer((c) => {
    const u = net.connect(target, HOST);
    const done = () => {
      c.destroy();
      u.destroy();
      socks.delete(c);
      socks.delete(u);
    };
    socks.add(c);
    socks.add(u);
    c.pipe(u);
    u.pipe(c);
    for (const x of [c, u]) {
      x.on('error', done);
      x.on('close', done);
    }
  });
  s.cut = () => new Promise((r) => {
    for (const x of socks)
      x.destroy();
    s.close(r);
  });
  return new Promise((resolve, reject) => {
    s.once('error', reject);
    s.listen(port, HOST, () => resolve(s));
  });
}

describe('health verdicts shared through Redis', () => {
  let redis, a, b, srv, port, relay, sa, sb, g, ls;

  /* the backend on its port: a 2025-11-25 server with one tool */
  const startBackend = () => {
    srv = rawBackend('v', ['v_tool'], (m, res, json) =>
      json({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'v:ok' }] } }));
    return new Promise((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(port ?? 0, HOST, () => resolve(srv.address().port));
    });
  };
  const stopBackend = async () => {
    srv.closeAllConnections();
    await new Promise((r) => srv.close(r));
  };

  before(async () => {
    port = await startBackend();
    redis = await startRedis();
    const health = (interval, timeout) => [
      'operational:',
      '  failureHandling:',
      '    partialFailureMode: best_effort',
      `    healthCheckInterval: ${interval}`,
      `    healthCheckTimeout: ${timeout}`,
      '    unhealthyThreshold: 2',
      '',
    ].join('\n');
    relay = await tcpRelay(port);
    a = await startNode({ redis, backendUrl: `http://${HOST}:${relay.address().port}/mcp`,
      backendName: 'v', extra: health('500ms', '400ms') });
    b = await startNode({ redis, backendUrl: `http://${HOST}:${port}/mcp`, backendName: 'v',
      extra: health('1h', '2s') });
    sa = (await openSessionCaps(a.port)).sid;
    sb = (await openSessionCaps(b.port)).sid;
  });

  after(async () => {
    g?.close();
    ls?.close();
    for (const d of [a, b])
      if (d)
        await d.stop();
    if (redis?.proc && !redis.proc.exited)
      await redis.kill();
    if (srv?.listening)
      await stopBackend();
    if (relay?.listening)
      await relay.cut();
  });

  const listed = async (d, sid) => {
    const r = await rpc(d.port, sid, 'tools/list', {}, { timeout: 30000 });
    assert.equal(r.json.error, undefined, r.text);
    return r.json.result.tools.map((t) => t.name);
  };
  const changes = () => g.messages('notifications/tools/list_changed').length;
  const lchanges = () => ls.messages('notifications/tools/list_changed').length;

  test('the backend killed: node A finds it unhealthy, node B follows and drops its tool',
    guarded(async () => {
      assert.deepEqual(await listed(a, sa), ['v_tool']);
      assert.deepEqual(await listed(b, sb), ['v_tool']);
      // node B's own verdict from its one round at start: healthy
      await waitFor('node B\'s own verdict', async () => (await statusOf(b)).health === 'healthy',
        { timeout: 20000, interval: 200 });
      g = await openGet(b.port, sb);
      assert.equal(g.status, 200, g.text);
      ls = await openStream(b.port, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'subscriptions/listen' },
        body: { jsonrpc: '2.0', id: 'L1', method: 'subscriptions/listen',
          params: { _meta: modernMeta(), notifications: { toolsListChanged: true } } },
        timeout: 120000,
      });
      assert.equal(ls.status, 200, ls.text);
      await stopBackend();
      await waitFor('v_tool out of node A\'s list', async () =>
        !(await listed(a, sa)).includes('v_tool'), { timeout: 20000, interval: 300 });
      await waitFor('v_tool out of node B\'s list', async () =>
        !(await listed(b, sb)).includes('v_tool'), { timeout: 20000, interval: 300 });
      await g.until('tools/list_changed on node B', () => changes() >= 1, 20000);
      await ls.until('tools/list_changed on node B\'s listen stream', () => lchanges() >= 1, 20000);
      const sta = await statusOf(a);
      const stb = await statusOf(b);
      assert.equal(sta.health, 'unhealthy');
      assert.equal(sta.healthFrom, null, 'node A goes by its own probes');
      assert.equal(stb.health, 'unhealthy');
      // both nodes' entries are in Redis, and node B follows node A's
      const fields = (await redis.cli('HKEYS', KEY)).split('\n').filter(Boolean);
      assert.equal(fields.length, 2, fields.join());
      assert.ok(fields.includes(stb.healthFrom), `${stb.healthFrom} not in ${fields}`);
      assert.match(await redis.cli('HGET', KEY, stb.healthFrom), /^3 \d+ \d+ \d+ 1 /);
      assert.match(b.proc.output, /backend v: unhealthy on node /);
      const ctl = await vmcpctl(['-f', b.cfg, 'status']);
      assert.ok(ctl.stdout.includes(`health as node ${stb.healthFrom} found it`), ctl.stdout);
    }));

  test('the backend back: its tool returns on both nodes', guarded(async () => {
    const n = changes();
    const ln = lchanges();
    await startBackend();
    for (const [d, sid] of [[a, sa], [b, sb]])
      await waitFor('v_tool listed again', async () => (await listed(d, sid)).includes('v_tool'),
        { timeout: 20000, interval: 300 });
    await g.until('tools/list_changed again on node B', () => changes() > n, 20000);
    await ls.until('tools/list_changed again on node B\'s listen stream', () => lchanges() > ln,
      20000);
    assert.match((await statusOf(b)).health, /^(healthy|degraded)$/);
    const r = await rpc(b.port, sb, 'tools/call', { name: 'v_tool', arguments: {} }, { timeout: 30000 });
    assert.equal(r.json.result?.content?.[0]?.text, 'v:ok', r.text);
    g.close();
    g = undefined;
    ls.close();
    ls = undefined;
  }));

  test('only node A\'s path cut: node B probes at once and keeps the backend', guarded(async () => {
    const rport = relay.address().port;
    const from = b.proc.output.length;
    await relay.cut();
    await waitFor('v_tool out of node A\'s list', async () =>
      !(await listed(a, sa)).includes('v_tool'), { timeout: 20000, interval: 300 });
    await waitFor('node A unhealthy by its own probes', async () => {
      const st = await statusOf(a);
      return st.health === 'unhealthy' && st.healthFrom === null;
    }, { timeout: 20000, interval: 300 });
    const vals = (await redis.cli('HVALS', KEY)).split('\n');
    assert.ok(vals.some((v) => /^3 /.test(v)), vals.join('|'));
    // node B followed node A, probed at once, and its own answer rules
    await waitFor('node B by its own probe', async () => {
      const st = await statusOf(b);
      return st.healthFrom === null && /^(healthy|degraded)$/.test(st.health);
    }, { timeout: 20000, interval: 300 });
    const said = b.proc.output.slice(from);
    const followed = said.indexOf('backend v: unhealthy on node ');
    assert.ok(followed >= 0, said);
    assert.ok(said.indexOf('backend v: its own health checks decide again', followed) > 0, said);
    // and keeps it while node A goes on finding it unhealthy
    for (let i = 0; i < 6; i++) {
      assert.ok((await listed(b, sb)).includes('v_tool'));
      assert.equal((await statusOf(b)).healthFrom, null);
      await sleep(500);
    }
    assert.equal((await statusOf(a)).health, 'unhealthy');
    // node A's path back
    relay = await tcpRelay(port, rport);
    await waitFor('v_tool back on node A', async () => (await listed(a, sa)).includes('v_tool'),
      { timeout: 20000, interval: 300 });
  }));

  test('Redis killed: each node by its own probes, the errors counted', guarded(async () => {
    // 2026-07-28 lists: a Legacy session needs Redis (503 without it)
    const mlisted = async (d) => {
      const r = await modern(d.port, 'tools/list', {});
      assert.equal(r.status, 200, r.text);
      return r.json.result.tools.map((t) => t.name);
    };
    const before0 = (await nodeMetrics(a)).vmcpd_redis_errors_total ?? 0;
    await redis.kill();
    await stopBackend();
    await waitFor('v_tool out of node A\'s list (its own probes)', async () =>
      !(await mlisted(a)).includes('v_tool'), { timeout: 20000, interval: 300 });
    await waitFor('node A counts the Redis errors', async () =>
      ((await nodeMetrics(a)).vmcpd_redis_errors_total ?? 0) > before0,
    { timeout: 20000, interval: 300 });
    // node B has nothing new to go by: its last probe answered
    await sleep(3000);
    assert.ok((await mlisted(b)).includes('v_tool'));
  }));
});
