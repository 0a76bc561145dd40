// Three vmcpd nodes behind HAProxy (the shipped etc/haproxy/vmcpd.cfg)
// sharing rate-limit buckets through one Redis (sessionStorage.provider
// redis; docs/ARCHITECTURE.md, Beyond one host):
// - a shared limit holds in total across the nodes: exactly maxTokens
//   of the calls HAProxy spreads over all three go through, and the
//   bucket is the reference's key in Redis;
// - a 2025-11-25 session stays on the node that created it;
// - Redis killed: calls fail open and each node counts it in /metrics;
//   Redis back: the nodes reconnect by themselves and the limit holds
//   again; Redis hung: calls fail open after the 1 s timeout;
// - a node killed (kill -9, its whole process group): HAProxy sends its
//   traffic to the others; its Legacy session, not shared yet, is
//   answered 404 elsewhere and the client starts a new one;
// - a perUser limit holds in total across the nodes, per principal;
// - a Redis with a password: THV_SESSION_REDIS_PASSWORD right, the limit
//   holds; wrong, calls fail open, the refusal is logged and the
//   password never is.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  useHarness, guarded, startTestBackend, openSession, rpc, workerOf, waitFor,
} from './lib/harness.mjs';
import { modern } from './lib/multi.mjs';
import {
  startCluster, startRedis, startNode, nodeMetrics, killNode,
} from './lib/cluster.mjs';
import { startIdp, oidcConfig } from './lib/oidc.mjs';

useHarness();

const LIMIT = 9;
const NAME = 'cluster';
const BUCKET = `thv:rl:{local:${NAME}}:shared`;
const echo = (message) => ({ name: 'echo', arguments: { message } });

describe('three nodes behind HAProxy, one Redis', () => {
  let backend, cluster, owner;

  before(async () => {
    backend = await startTestBackend();
    cluster = await startCluster({
      n: 3, backendUrl: backend.url, workers: 1, name: NAME,
      extra: [
        'rateLimiting:',
        `  shared: {maxTokens: ${LIMIT}, refillPeriod: 1h}`,
        '',
      ].join('\n'),
    });
    // which node a worker pid belongs to
    owner = new Map();
    for (const [i, d] of cluster.nodes.entries())
      for (const pid of await d.workerPids())
        owner.set(pid, i);
  });

  after(async () => {
    for (const d of cluster?.nodes ?? [])
      if (!d.stopped)
        await d.stop();
  });

  /* n 2026-07-28 tools/call through HAProxy: {ok, limited, nodes} */
  async function calls(n, tag) {
    let ok = 0, limited = 0;
    const nodes = new Set();
    for (let i = 0; i < n; i++) {
      const r = await modern(cluster.haproxy.port, 'tools/call', echo(`${tag}${i}`),
        { 'Mcp-Name': 'echo' });
      assert.equal(r.status, 200, r.text);
      nodes.add(owner.get(workerOf(r)?.pid));
      if (r.json.error) {
        assert.equal(r.json.error.code, 429, r.text);
        assert.equal(r.json.error.message, 'Rate limit exceeded');
        assert.ok(r.json.error.data.retryAfterSeconds >= 1, r.text);
        limited++;
      } else {
        assert.deepEqual(r.json.result.content, [{ type: 'text', text: `Echo: ${tag}${i}` }],
          r.text);
        ok++;
      }
    }
    return { ok, limited, nodes };
  }

  const sum = async (metric) => {
    let s = 0;
    for (const d of cluster.nodes)
      if (!d.stopped)
        s += (await nodeMetrics(d))[metric] ?? 0;
    return s;
  };

  test('a shared limit holds in total across the three nodes', guarded(async () => {
    const { ok, limited, nodes } = await calls(3 * LIMIT, 'a');
    assert.equal(nodes.size, 3, 'HAProxy spread the calls over every node');
    assert.equal(ok, LIMIT, `calls let through in total (${limited} limited)`);
    // the reference's key, a hash with the refill stamp, expiring
    assert.equal(await cluster.redis.cli('EXISTS', BUCKET), '1');
    assert.equal(await cluster.redis.cli('HEXISTS', BUCKET, 'last'), '1');
    const ttl = Number(await cluster.redis.cli('TTL', BUCKET));
    assert.ok(ttl > 0 && ttl <= 7200, `TTL ${ttl}`);
    assert.equal(await sum('vmcpd_ratelimit_fail_open_total'), 0);
  }));

  test('a 2025-11-25 session stays on the node that created it', guarded(async () => {
    // three sessions: a balancer that merely hashed the id would send
    // each to its creator by chance only (1 in 27 for all three)
    let sid;
    for (let k = 0; k < 3; k++) {
      const s = await openSession(cluster.haproxy.port);
      const home = owner.get(workerOf(s.init)?.pid);
      assert.ok(home !== undefined, 'answered by a node');
      for (let i = 0; i < 5; i++) {
        const r = await rpc(cluster.haproxy.port, s.sid, 'tools/list', {});
        assert.equal(r.status, 200, r.text);
        assert.equal(owner.get(workerOf(r)?.pid), home, 'the same node');
      }
      sid = s.sid;
    }
    // the limit is spent: a Legacy client gets its isError result
    const r = await rpc(cluster.haproxy.port, sid, 'tools/call', echo('l'));
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.result.isError, true, r.text);
    assert.equal(r.json.result.structuredContent.code, 429, r.text);
  }));

  test('Redis down: calls fail open, counted; Redis back: the limit holds again',
    guarded(async () => {
      await cluster.redis.kill();
      const before = await sum('vmcpd_ratelimit_fail_open_total');
      const down = await calls(6, 'd');
      assert.equal(down.ok, 6, 'every call let through while Redis is down');
      assert.equal(await sum('vmcpd_ratelimit_fail_open_total'), before + 6);
      assert.ok(await sum('vmcpd_redis_errors_total') >= 6);

      // a new, empty Redis on the same port: every worker reconnects by
      // itself (backoff at most 5 s)
      await cluster.redis.start();
      await waitFor('the 3 workers connected to Redis again', async () =>
        (await cluster.redis.cli('CLIENT', 'LIST')).split('\n')
          .filter((l) => !/cmd=client/.test(l)).length === 3,
      { timeout: 30000, interval: 200 });
      const up = await calls(3 * LIMIT, 'u');
      assert.equal(up.ok, LIMIT, `calls let through with Redis back (${up.limited} limited)`);
    }));

  test('Redis hung (SIGSTOP): each call is let through within the timeout, counted',
    guarded(async () => {
      const before = await sum('vmcpd_ratelimit_fail_open_total');
      process.kill(cluster.redis.proc.pid, 'SIGSTOP');
      try {
        const t0 = Date.now();
        const hung = await calls(3, 'h');
        assert.equal(hung.ok, 3, 'let through');
        // 1 s per call at most on a node's connection, with room for a
        // loaded machine; a call waiting on Redis for ever would time out
        assert.ok(Date.now() - t0 < 3 * 5000, `${Date.now() - t0} ms`);
        assert.equal(await sum('vmcpd_ratelimit_fail_open_total'), before + 3);
      } finally {
        process.kill(cluster.redis.proc.pid, 'SIGCONT');
      }
      // Redis answers again: the limit (spent) holds again
      await waitFor('the limit enforced again', async () =>
        (await calls(1, 'r')).limited === 1, { timeout: 30000, interval: 200 });
    }));

  test('SCRIPT FLUSH: the calls that find no script fail open, then it is loaded again',
    guarded(async () => {
      // every node on a live connection first: a reconnection still
      // due (the hung Redis above) would load the script again itself
      await waitFor('every node answered by Redis', async () =>
        (await calls(3, 'e')).limited === 3, { timeout: 30000, interval: 100 });
      const before = await sum('vmcpd_ratelimit_fail_open_total');
      assert.equal(await cluster.redis.cli('SCRIPT', 'FLUSH'), 'OK');
      await waitFor('the limit enforced again', async () =>
        (await calls(1, 'f')).limited === 1, { timeout: 30000, interval: 100 });
      assert.ok(await sum('vmcpd_ratelimit_fail_open_total') > before, 'NOSCRIPT counted');
      await waitFor('every node has the script again', async () =>
        (await calls(3, 'g')).ok === 0, { timeout: 30000, interval: 100 });
    }));

  test('kill -9 of a node: HAProxy fails over; its Legacy session is gone (404)',
    guarded(async () => {
      const { sid, init } = await openSession(cluster.haproxy.port);
      const home = owner.get(workerOf(init)?.pid);
      await killNode(cluster.nodes[home]);
      // Modern traffic: answered by the other two, none lost
      const after = await calls(8, 'k');
      assert.equal(after.ok, 0, 'the limit is still spent');
      assert.ok(!after.nodes.has(home), 'not the dead node');
      // the session was that node's alone: another node does not know it
      // (MCP 2025-11-25: 404, the client starts a new session)
      const r = await rpc(cluster.haproxy.port, sid, 'tools/list', {});
      assert.equal(r.status, 404, r.text);
      const again = await openSession(cluster.haproxy.port);
      const l = await rpc(cluster.haproxy.port, again.sid, 'tools/list', {});
      assert.equal(l.status, 200, l.text);
      assert.notEqual(owner.get(workerOf(l)?.pid), home);
    }));
});

describe('perUser across three nodes', () => {
  let idp, backend, cluster;

  before(async () => {
    idp = await startIdp();
    backend = await startTestBackend();
    cluster = await startCluster({
      n: 3, backendUrl: backend.url, workers: 1, name: NAME,
      extra: oidcConfig(idp) + 'rateLimiting:\n  perUser: {maxTokens: 4, refillPeriod: 1h}\n',
    });
  });

  after(async () => {
    for (const d of cluster?.nodes ?? [])
      if (!d.stopped)
        await d.stop();
    await idp?.stop();
  });

  test('each principal gets exactly its tokens, whichever node serves it', guarded(async () => {
    const owner = new Map();
    for (const [i, d] of cluster.nodes.entries())
      for (const pid of await d.workerPids())
        owner.set(pid, i);
    for (const who of ['alice', 'bob']) {
      const auth = { Authorization: `Bearer ${await idp.token(who)}` };
      let ok = 0;
      const nodes = new Set();
      for (let i = 0; i < 12; i++) {
        const r = await modern(cluster.haproxy.port, 'tools/call', echo(`${who}${i}`),
          { 'Mcp-Name': 'echo', ...auth });
        assert.equal(r.status, 200, r.text);
        nodes.add(owner.get(workerOf(r)?.pid));
        if (!r.json.error)
          ok++;
        else
          assert.equal(r.json.error.code, 429, r.text);
      }
      assert.equal(nodes.size, 3, 'every node served');
      assert.equal(ok, 4, `${who}'s calls let through in total`);
    }
    const keys = (await cluster.redis.cli('--scan', '--pattern', `thv:rl:{local:${NAME}}:user:*`))
      .split('\n').filter(Boolean);
    assert.equal(keys.length, 2, keys.join(' '));
  }));
});

describe('a Redis with a password (THV_SESSION_REDIS_PASSWORD)', () => {
  const PASSWORD = 'pw-0123456789-secret';
  let backend, redis, good, bad;

  before(async () => {
    backend = await startTestBackend();
    redis = await startRedis({ password: PASSWORD });
    const extra = 'rateLimiting:\n  shared: {maxTokens: 3, refillPeriod: 1h}\n';
    good = await startNode({ redis, backendUrl: backend.url, name: 'good', extra,
      env: { THV_SESSION_REDIS_PASSWORD: PASSWORD } });
    bad = await startNode({ redis, backendUrl: backend.url, name: 'bad', extra,
      env: { THV_SESSION_REDIS_PASSWORD: 'wrong-password-42' } });
  });

  after(async () => {
    for (const d of [good, bad])
      if (d && !d.stopped)
        await d.stop();
  });

  const passed = async (d, n) => {
    let ok = 0;
    for (let i = 0; i < n; i++) {
      const r = await modern(d.port, 'tools/call', echo(`p${i}`), { 'Mcp-Name': 'echo' });
      assert.equal(r.status, 200, r.text);
      if (!r.json.error)
        ok++;
    }
    return ok;
  };

  test('the right password: the limit holds; a wrong one: fail open, logged, never the password',
    guarded(async () => {
      assert.equal(await passed(good, 6), 3);
      assert.equal(await redis.cli('EXISTS', 'thv:rl:{local:good}:shared'), '1');
      assert.equal(await passed(bad, 6), 6);
      assert.ok((await nodeMetrics(bad)).vmcpd_ratelimit_fail_open_total >= 6);
      assert.equal(await redis.cli('EXISTS', 'thv:rl:{local:bad}:shared'), '0');
      await waitFor('the refusal logged', () => /AUTH refused/.test(bad.proc.output));
      for (const d of [good, bad]) {
        assert.ok(!d.proc.output.includes(PASSWORD), 'the password is not logged');
        assert.ok(!d.proc.output.includes('wrong-password-42'), 'nor a wrong one');
      }
    }));
});
