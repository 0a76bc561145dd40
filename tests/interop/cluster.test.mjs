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
//   traffic to the others, and its Legacy sessions, in Redis, go on
//   there with the same id (SDK v1 and v2 clients, no new initialize);
// - a session's record is in Redis (sess:<id>, stamp, TTL); a DELETE on
//   one node ends it on all; Redis down or hung: 503 "the session store
//   (Redis) is unavailable" (hung: once silent for a second), never a
//   node's copy; back: it goes on;
// - a session used with another principal's token is 404 on every node;
// - a perUser limit holds in total across the nodes, per principal,
//   with 36 calls at once on three nodes too (calls batched into one
//   script take no more tokens than the bucket holds);
// - a composite's step takes its tool's token from the bucket in Redis
//   that direct calls on another node take from;
// - a Legacy session's GET stream events are in Redis (sess:<id>:ev):
//   kill -9 of the stream's node, a resume with Last-Event-ID through
//   HAProxy on another node gets every event after that id exactly once,
//   in order, then what comes; Redis killed: the stream ends saying
//   why, a resume is 503; Redis back (empty): the session is gone (404),
//   a new one's stream works, no operator action;
// - a Redis with a password: THV_SESSION_REDIS_PASSWORD right, the limit
//   holds; wrong, calls fail open, the refusal is logged and the
//   password never is.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  useHarness, guarded, startTestBackend, openSession, rpc, workerOf, waitFor, httpRequest, mcpPost,
  connectClient, withTimeout, sleep, run, HOST, LEGACY_VERSION, VMCPD_BIN,
} from './lib/harness.mjs';
import { modern, startSpec, openGet, openSessionCaps } from './lib/multi.mjs';
import {
  startCluster, startRedis, startNode, nodeMetrics, killNode,
} from './lib/cluster.mjs';
import { startIdp, oidcConfig } from './lib/oidc.mjs';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';

useHarness();

const LIMIT = 9;
const NAME = 'cluster';
const BUCKET = `thv:rl:{local:${NAME}}:shared`;
const echo = (message) => ({ name: 'echo', arguments: { message } });

/* which node (its index) a worker pid belongs to */
async function nodeOwners(cluster) {
  const owner = new Map();
  for (const [i, d] of cluster.nodes.entries())
    for (const pid of await d.workerPids())
      owner.set(pid, i);
  return owner;
}

async function stopNodes(cluster) {
  for (const d of cluster?.nodes ?? [])
    if (!d.stopped)
      await d.stop();
}

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
    owner = await nodeOwners(cluster);
  });

  after(() => stopNodes(cluster));

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

      // a new, empty Redis on the same port: every worker and builder
      // (its list changes go to the sessions' events) reconnects by
      // itself (backoff at most 5 s)
      await cluster.redis.start();
      await waitFor('the 3 workers and 3 builders connected to Redis again', async () =>
        (await cluster.redis.cli('CLIENT', 'LIST', 'TYPE', 'normal')).split('\n')
          // the command connections of 3 workers and 3 builders, and
          // redis-cli's own (a worker's last command may be a CLIENT one
          // too); not the subscriptions, nor one about to subscribe
          .filter((l) => /^id=/.test(l) && !/cmd=client\|(id|setname) /.test(l)).length === 7,
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

  test('kill -9 of a node: HAProxy fails over; its Legacy session goes on elsewhere',
    guarded(async () => {
      const { sid, init } = await openSession(cluster.haproxy.port);
      const home = owner.get(workerOf(init)?.pid);
      await killNode(cluster.nodes[home]);
      // Modern traffic: answered by the other two, none lost
      const after = await calls(8, 'k');
      assert.equal(after.ok, 0, 'the limit is still spent');
      assert.ok(!after.nodes.has(home), 'not the dead node');
      // the session is in Redis: another node serves it, same id
      const r = await rpc(cluster.haproxy.port, sid, 'tools/list', {});
      assert.equal(r.status, 200, r.text);
      assert.notEqual(owner.get(workerOf(r)?.pid), home);
    }));
});

describe('Legacy sessions shared through Redis', () => {
  let backend, cluster, owner;

  before(async () => {
    backend = await startTestBackend();
    cluster = await startCluster({ n: 3, backendUrl: backend.url, workers: 1, name: NAME });
    owner = await nodeOwners(cluster);
  });

  after(() => stopNodes(cluster));

  const live = () => cluster.nodes.filter((d) => !d.stopped);
  const homeOf = async (sid) => {
    const r = await rpc(cluster.haproxy.port, sid, 'tools/list', {});
    assert.equal(r.status, 200, r.text);
    return owner.get(workerOf(r)?.pid);
  };

  test('the record is in Redis under keyPrefix, with its stamp and TTL; every node serves it',
    guarded(async () => {
      const { sid } = await openSession(cluster.haproxy.port);
      const key = `thv:vmcp:session:sess:${sid}`;
      await waitFor('the record in Redis', async () =>
        (await cluster.redis.cli('EXISTS', key)) === '1', { timeout: 5000 });
      assert.ok(Number(await cluster.redis.cli('HGET', key, 'v')) >= 1);
      const pttl = Number(await cluster.redis.cli('PTTL', key));
      assert.ok(pttl > 0, `PTTL ${pttl}`);
      for (const d of live()) {
        const r = await rpc(d.port, sid, 'tools/call', echo(`n${d.port}`));
        assert.equal(r.status, 200, r.text);
        assert.deepEqual(r.json.result.content, [{ type: 'text', text: `Echo: n${d.port}` }]);
      }
    }));

  test('DELETE on one node ends the session on every node', guarded(async () => {
    const { sid } = await openSession(cluster.haproxy.port);
    for (const d of live())
      assert.equal((await rpc(d.port, sid, 'tools/list', {})).status, 200);
    const del = await httpRequest(live()[1].port, {
      method: 'DELETE', path: '/mcp', headers: { 'Mcp-Session-Id': sid },
    });
    assert.equal(del.status, 200, del.text);
    // the 200 waited for Redis
    assert.equal(await cluster.redis.cli('EXISTS', `thv:vmcp:session:sess:${sid}`), '0');
    for (const d of live()) {
      const r = await rpc(d.port, sid, 'tools/list', {});
      assert.equal(r.status, 404, `node ${d.port}: ${r.text}`);
    }
  }));

  test('Redis down: 503 saying the session store is unavailable; back: the same session goes on',
    guarded(async () => {
      const { sid } = await openSession(cluster.haproxy.port);
      await homeOf(sid);
      process.kill(cluster.redis.proc.pid, 'SIGSTOP');
      try {
        // a node whose check Redis answered lately may take the session
        // as checked until Redis has been silent for a second (a hang
        // shows only as silence); then 503, as every other node at once
        for (const d of live()) {
          await waitFor(`node ${d.port}: 503`, async () => {
            const r = await rpc(d.port, sid, 'tools/list', {});
            if (r.status === 200)
              return false;
            assert.equal(r.status, 503, r.text);
            assert.match(r.json.error.message, /session store \(Redis\) is unavailable/);
            return true;
          }, { timeout: 10000, interval: 100 });
        }
        // nor is it ended: it goes on below
        const del = await httpRequest(cluster.haproxy.port, {
          method: 'DELETE', path: '/mcp', headers: { 'Mcp-Session-Id': sid },
        });
        assert.equal(del.status, 503, del.text);
      } finally {
        process.kill(cluster.redis.proc.pid, 'SIGCONT');
      }
      await waitFor('the session served again', async () =>
        (await rpc(cluster.haproxy.port, sid, 'tools/list', {})).status === 200,
      { timeout: 30000, interval: 200 });
      // killed (no persistence): 503, never the node's copy
      await cluster.redis.kill();
      const r = await rpc(cluster.haproxy.port, sid, 'tools/list', {});
      assert.equal(r.status, 503, r.text);
      assert.match(r.json.error.message, /session store/);
      // nor is a new session made that no other node would know
      const init = await mcpPost(cluster.haproxy.port, {
        jsonrpc: '2.0', id: 1, method: 'initialize',
        params: { protocolVersion: LEGACY_VERSION, capabilities: {},
          clientInfo: { name: 'cluster-down', version: '1.0.0' } },
      }, { version: null });
      assert.equal(init.status, 503, init.text);
      assert.match(init.json.error.message, /session store \(Redis\) is unavailable/);
      assert.equal(init.headers['mcp-session-id'], undefined);
      await cluster.redis.start();
      // an empty Redis: that session is gone, a new one works
      await waitFor('a new session served', async () => {
        const r2 = await rpc(cluster.haproxy.port, sid, 'tools/list', {});
        return r2.status === 404;
      }, { timeout: 30000, interval: 200 });
      const again = await openSession(cluster.haproxy.port);
      await waitFor('the new session served', async () =>
        (await rpc(cluster.haproxy.port, again.sid, 'tools/list', {})).status === 200,
      { timeout: 30000, interval: 200 });
    }));

  for (const sdk of ['v1', 'v2']) {
    test(`SDK ${sdk}: kill -9 of the session's node; the client goes on, same session, no initialize`,
      guarded(async () => {
        const url = `http://${HOST}:${cluster.haproxy.port}/mcp`;
        let client, transport;
        if (sdk === 'v1') {
          ({ client, transport } = await connectClient(url, { name: 'cluster-v1' }));
        } else {
          client = new V2Client({ name: 'cluster-v2', version: '1.0.0' },
            { versionNegotiation: { mode: 'legacy' } });
          transport = new V2Transport(new URL(url));
          await withTimeout(client.connect(transport), 20000, 'v2 connect');
        }
        try {
          const sid = transport.sessionId;
          assert.ok(sid, 'a Legacy session');
          const r1 = await client.callTool({ name: 'echo', arguments: { message: 'before' } });
          assert.deepEqual(r1.content, [{ type: 'text', text: 'Echo: before' }]);
          const home = await homeOf(sid);
          // the client session's own backend session, in the record
          const bsid = async () => Object.values(JSON.parse(
            await cluster.redis.cli('HGET', `thv:vmcp:session:sess:${sid}`, 'r')).backends)[0]?.sid;
          const before = await waitFor('the backend session recorded', bsid, { timeout: 5000 });
          await killNode(cluster.nodes[home]);
          const r2 = await client.callTool({ name: 'echo', arguments: { message: 'after' } });
          assert.deepEqual(r2.content, [{ type: 'text', text: 'Echo: after' }]);
          assert.equal(transport.sessionId, sid, 'the same session');
          assert.notEqual(await homeOf(sid), home, 'served by another node');
          // the backend (reachable from every node) keeps its session
          assert.equal(await bsid(), before, 'the same backend session');
        } finally {
          await client.close().catch(() => {});
        }
      }));
  }
});

describe('the event replay buffer in Redis', () => {
  const TOOLS_CHANGED = 'notifications/tools/list_changed';
  let dyn, cluster, owner, nth = 0;

  before(async () => {
    dyn = await startSpec({ label: 'dyn', dynamic: true, tools: ['keep'] });
    // four: three tests below each kill one
    cluster = await startCluster({ n: 4, backendUrl: dyn.url, workers: 1, name: NAME,
      extra: 'http:\n  keepAlive: 1s\n' });
    owner = await nodeOwners(cluster);
    // every node lists dyn, so each listens to its notifications
    for (const d of cluster.nodes) {
      const { sid } = await openSessionCaps(d.port);
      assert.equal((await rpc(d.port, sid, 'tools/list', {})).status, 200);
    }
    await waitFor('every node listening to dyn', async () =>
      (await dyn.stats()).getStreams >= 4, { timeout: 30000, interval: 100 });
  });

  after(async () => {
    await stopNodes(cluster);
    dyn?.kill();
    await dyn?.waitExit().catch(() => {});
  });

  const addTool = async (sid) => {
    const name = `t${++nth}`;
    let r;
    // right after a kill HAProxy may still pick a connection to the dead
    // node: its 502 says no node answered, so the call was not made
    for (let i = 0; i < 5; i++) {
      r = await rpc(cluster.haproxy.port, sid, 'tools/call',
        { name: 'add_tool', arguments: { name } }, { timeout: 20000 });
      if (r.status !== 502 || !/<html>/.test(r.text))
        break;
      await new Promise((res) => setTimeout(res, 500));
    }
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.error, undefined, r.text);
  };
  const changes = (g) => g.events.filter((e) => e.msg?.method === TOOLS_CHANGED);
  const evKey = (sid) => `thv:vmcp:session:sess:${sid}:ev`;
  const seqOf = async (sid) => Number(await cluster.redis.cli('GET', `${evKey(sid)}:seq`));
  /* one tool added, its list_changed in Redis (the builder merges
   * changes that come together into one) */
  const change = async (sid) => {
    const before = await seqOf(sid);
    await addTool(sid);
    await waitFor('the list_changed in Redis', async () => await seqOf(sid) > before,
      { timeout: 20000, interval: 100 });
  };

  test('kill -9 of the stream\'s node: a Last-Event-ID resume on another gets every later event once, in order',
    guarded(async () => {
      const { sid } = await openSessionCaps(cluster.haproxy.port);
      const g = await openGet(cluster.haproxy.port, sid);
      assert.equal(g.status, 200, g.text);
      await g.until('the priming event', () => g.events.length >= 1);
      assert.equal(g.events[0].id, '0', 'a fresh session\'s stream starts at 0');
      const r = await rpc(cluster.haproxy.port, sid, 'tools/list', {});
      const home = owner.get(workerOf(r)?.pid);
      for (let i = 0; i < 3; i++)
        await change(sid);
      await g.until('three list_changed', () => changes(g).length >= 3, 20000);
      // each is in Redis, id and message, before it was sent
      const list = (await cluster.redis.cli('LRANGE', evKey(sid), '0', '-1')).split('\n');
      assert.deepEqual(list.map((l) => l.split(' ')[0]), changes(g).map((e) => e.id));
      assert.equal(await cluster.redis.cli('GET', `${evKey(sid)}:seq`), changes(g).at(-1).id);
      assert.ok(Number(await cluster.redis.cli('PTTL', evKey(sid))) > 0);
      const lastSeen = changes(g)[0].id;
      await killNode(cluster.nodes[home]);
      await g.until('the stream ended with its node', () => g.ended, 10000).catch(() => g.close());
      // produced on the node now serving the session, stream closed
      await change(sid);
      await change(sid);
      let g2;
      await waitFor('the resumed GET stream', async () => {
        g2 = await openGet(cluster.haproxy.port, sid, { lastEventId: lastSeen });
        if (g2.status === 502)	/* HAProxy, as in addTool() */
          g2.close();
        return g2.status !== 502;
      }, { timeout: 10000, interval: 500 });
      assert.equal(g2.status, 200, g2.text);
      await g2.until('two replayed and two new', () => changes(g2).length >= 4, 20000);
      // and one more, live
      await change(sid);
      await g2.until('one live', () => changes(g2).length >= 5, 20000);
      // what was made, once all of it has arrived: a change can make
      // two events (seen under ASan in make check: 6 for 5 changes)
      const first = Number(lastSeen);
      let made, ids;
      await waitFor('every event made, arrived', async () => {
        made = await seqOf(sid);
        ids = changes(g2).map((e) => Number(e.id));
        return ids.at(-1) === made;
      }, { timeout: 20000, interval: 100 }).catch(() => {});
      assert.ok(made - first >= 5, `${made - first} events made for 5 changes`);
      assert.deepEqual(ids, Array.from({ length: made - first }, (_, k) => first + 1 + k),
        `every event after ${lastSeen} once, in order (${made} made): ${ids}`);
      assert.equal(g2.events[0].id, lastSeen, 'primed at the resumed id');
      const served = owner.get(workerOf(await rpc(cluster.haproxy.port, sid, 'tools/list', {}))?.pid);
      assert.notEqual(served, home);
      g2.close();
    }));

  for (const sdk of ['v1', 'v2']) {
  test(`SDK ${sdk}: kill -9 of its node; its GET stream resumes elsewhere with Last-Event-ID, every change once`,
    guarded(async () => {
      const url = `http://${HOST}:${cluster.haproxy.port}/mcp`;
      const seen = [];
      let client, transport;
      if (sdk === 'v1') {
        ({ client, transport } = await connectClient(url, { name: 'events-v1' }));
        client.setNotificationHandler(ToolListChangedNotificationSchema, (n) => { seen.push(n); });
      } else {
        client = new V2Client({ name: 'events-v2', version: '1.0.0' },
          { versionNegotiation: { mode: 'legacy' } });
        client.setNotificationHandler(TOOLS_CHANGED, (n) => { seen.push(n); });
        transport = new V2Transport(new URL(url));
        await withTimeout(client.connect(transport), 20000, 'v2 connect');
      }
      try {
        const sid = transport.sessionId;
        const home = owner.get(workerOf(await rpc(cluster.haproxy.port, sid, 'tools/list', {}))?.pid);
        // the SDK opens its GET stream right after initialized; a
        // change made before it is open is not for it (a fresh stream
        // starts after the newest event), so give it time
        await new Promise((r) => setTimeout(r, 3000));
        await change(sid);
        await change(sid);
        await waitFor('two changes', () => seen.length >= 2, { timeout: 20000 });
        await killNode(cluster.nodes[home]);
        // made while the SDK reconnects: replayed from Redis
        await change(sid);
        await change(sid);
        const total = await seqOf(sid);
        await waitFor('every change delivered', () => seen.length >= total,
          { timeout: 30000, interval: 100 });
        await change(sid);
        await waitFor('and the next, live', () => seen.length >= total + 1,
          { timeout: 20000, interval: 100 });
        // a change may make more than one event (seen under load: 7
        // seen, 8 made) and the last may still be on its way: what was
        // made (counted in Redis before it is sent) must all arrive, and
        // nothing twice, which no wait could undo
        let made;
        await waitFor('each event exactly once', async () =>
          seen.length === (made = await seqOf(sid)), { timeout: 20000, interval: 100 })
          .catch((e) => assert.fail(`${e.message}: ${seen.length} seen, ${made} made`));
        assert.equal(transport.sessionId, sid, 'the same session');
      } finally {
        await client.close().catch(() => {});
      }
    }));
  }

  test('Redis killed: the stream ends saying why, a resume is 503; back (empty): no operator action',
    guarded(async () => {
      const live = cluster.nodes.filter((d) => !d.stopped);
      const { sid } = await openSessionCaps(cluster.haproxy.port);
      const g = await openGet(cluster.haproxy.port, sid);
      assert.equal(g.status, 200, g.text);
      await addTool(sid);
      await g.until('a list_changed', () => changes(g).length >= 1, 20000);
      const last = changes(g).at(-1).id;
      const errs = async () => {
        let n = 0;
        for (const d of live)
          n += (await nodeMetrics(d)).vmcpd_redis_errors_total ?? 0;
        return n;
      };
      const errsBefore = await errs();
      await cluster.redis.kill();
      // the keep-alive tick's read fails: the stream ends, saying why
      await g.until('the stream ended', () => g.ended, 15000);
      assert.ok(g.comments.some((c) => /session store \(Redis\) is unavailable/.test(c.text)),
        g.text.slice(-500));
      assert.ok(await errs() > errsBefore, 'counted in vmcpd_redis_errors_total');
      const r = await openGet(cluster.haproxy.port, sid, { lastEventId: last });
      assert.equal(r.status, 503, r.text);
      r.close();
      await cluster.redis.start();
      // empty: the session and its events are gone (404), never half
      await waitFor('the session gone', async () =>
        (await rpc(cluster.haproxy.port, sid, 'tools/list', {})).status === 404,
      { timeout: 30000, interval: 200 });
      let again;
      await waitFor('a new session served', async () => {
        again = await openSessionCaps(cluster.haproxy.port).catch(() => null);
        return again !== null;
      }, { timeout: 30000, interval: 200 });
      const g2 = await openGet(cluster.haproxy.port, again.sid);
      assert.equal(g2.status, 200, g2.text);
      await addTool(again.sid);
      await g2.until('a list_changed on the new session', () => changes(g2).length >= 1, 20000);
      assert.equal(changes(g2)[0].id, '1', 'its counter starts again');
      g2.close();
    }));
});

describe('perUser across three nodes', () => {
  let idp, backend, cluster;

  before(async () => {
    idp = await startIdp();
    backend = await startTestBackend();
    cluster = await startCluster({
      n: 3, backendUrl: backend.url, workers: 1, name: NAME,
      extra: oidcConfig(idp) + 'rateLimiting:\n  perUser: {maxTokens: 4, refillPeriod: 1h}\n' + [
        'compositeTools:',
        '  - name: four',
        '    description: Four echo steps in a row',
        '    steps:',
        '      - {id: s1, tool: echo, arguments: {message: a}}',
        '      - {id: s2, tool: echo, arguments: {message: b}, dependsOn: [s1]}',
        '      - {id: s3, tool: echo, arguments: {message: c}, dependsOn: [s2]}',
        '      - {id: s4, tool: echo, arguments: {message: d}, dependsOn: [s3]}',
        '',
      ].join('\n'),
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

  // the calls of one loop turn on the same buckets take their tokens in
  // one script (worker/auth/ratelimit.c): a batch larger than what is left
  // gets only what is left, whatever the interleaving
  test('under concurrency on every node, a principal still gets exactly its tokens', guarded(async () => {
    // alice's bucket, emptied by the test before, starts full again
    for (const k of (await cluster.redis.cli('--scan', '--pattern', `thv:rl:{local:${NAME}}:user:*`))
      .split('\n').filter(Boolean))
      await cluster.redis.cli('DEL', k);
    const auth = { Authorization: `Bearer ${await idp.token('alice')}` };
    const before = await cluster.redis.cli('INFO', 'commandstats');
    const rs = await Promise.all(cluster.nodes.flatMap((d, n) =>
      Array.from({ length: 12 }, (_, i) => modern(d.port, 'tools/call', echo(`alice${n}-${i}`),
        { 'Mcp-Name': 'echo', ...auth }))));
    let ok = 0;
    for (const r of rs) {
      assert.equal(r.status, 200, r.text);
      if (!r.json.error)
        ok++;
      else
        assert.equal(r.json.error.code, 429, r.text);
    }
    assert.equal(ok, 4, 'alice\'s calls let through in total, of 36 at once');
    const evals = (t) => Number(/cmdstat_evalsha:calls=(\d+)/.exec(t)?.[1] ?? 0);
    const after = await cluster.redis.cli('INFO', 'commandstats');
    // what a figure, not a test: how many scripts the 36 calls took
    console.log(`# 36 calls at once: ${evals(after) - evals(before)} EVALSHA`);
  }));

  // the composite's call and its first three steps take the caller's
  // four tokens in Redis; the fourth step and a direct call get none
  test('a composite\'s steps take the caller\'s per-user tokens in Redis', guarded(async () => {
    const dave = { Authorization: `Bearer ${idp.forge(idp.claims({ sub: 'dave' }))}` };
    const [a, b] = cluster.nodes;
    let r = await modern(a.port, 'tools/call', { name: 'four', arguments: {} },
      { 'Mcp-Name': 'four', ...dave });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.result?.isError, true, r.text);
    assert.match(r.json.result.content[0].text, /step s4: tool echo: Rate limit exceeded/);
    r = await modern(b.port, 'tools/call', echo('direct'), { 'Mcp-Name': 'echo', ...dave });
    assert.equal(r.json.error?.code, 429, r.text);
    for (const d of cluster.nodes)
      assert.equal((await nodeMetrics(d)).vmcpd_ratelimit_fail_open_total ?? 0, 0);
  }));

  test('a session used with another principal\'s token is 404 on every node', guarded(async () => {
    const alice = { Authorization: `Bearer ${await idp.token('alice')}` };
    const bob = { Authorization: `Bearer ${await idp.token('bob')}` };
    const init = await mcpPost(cluster.haproxy.port, {
      jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: LEGACY_VERSION, capabilities: {},
        clientInfo: { name: 'cluster-owner', version: '1.0.0' } },
    }, { version: null, headers: alice });
    assert.equal(init.status, 200, init.text);
    const sid = init.headers['mcp-session-id'];
    for (const d of cluster.nodes) {
      const theirs = await rpc(d.port, sid, 'tools/list', {}, { headers: bob });
      assert.equal(theirs.status, 404, `node ${d.port}: ${theirs.text}`);
      const own = await rpc(d.port, sid, 'tools/list', {}, { headers: alice });
      assert.equal(own.status, 200, `node ${d.port}: ${own.text}`);
    }
  }));
});

describe('a composite\'s step on Redis\'s tool bucket', () => {
  let backend, cluster;

  before(async () => {
    backend = await startTestBackend();
    cluster = await startCluster({
      n: 2, backendUrl: backend.url, workers: 1, name: NAME,
      extra: [
        'compositeTools:',
        '  - name: once',
        '    description: One echo step',
        '    steps:',
        '      - {id: s, tool: echo, arguments: {message: step}}',
        'rateLimiting:',
        '  tools:',
        '    - name: echo',
        '      shared: {maxTokens: 3, refillPeriod: 1h}',
        '',
      ].join('\n'),
    });
  });

  after(() => stopNodes(cluster));

  test('a step takes the token direct calls on another node take', guarded(async () => {
    const [a, b] = cluster.nodes;
    const direct = () => modern(a.port, 'tools/call', echo('direct'), { 'Mcp-Name': 'echo' });
    const step = () => modern(b.port, 'tools/call', { name: 'once', arguments: {} },
      { 'Mcp-Name': 'once' });
    for (let i = 0; i < 2; i++) {
      const r = await direct();					// tokens 1, 2
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.error, undefined, r.text);
    }
    let r = await step();					// token 3
    assert.equal(r.status, 200, r.text);
    assert.ok(!r.json.result.isError, r.text);
    r = await step();						// none left
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.result.isError, true, r.text);
    assert.match(r.json.result.content[0].text, /step s: tool echo: Rate limit exceeded/);
    r = await direct();
    assert.equal(r.json.error?.code, 429, r.text);
    const key = `thv:rl:{local:${NAME}}:shared:tool:echo`;
    assert.ok(Number(await cluster.redis.cli('HGET', key, 'tokens')) < 1);
    for (const d of cluster.nodes)
      assert.equal((await nodeMetrics(d)).vmcpd_ratelimit_fail_open_total ?? 0, 0);
  }));

  // this Redis persists nothing (--save '' --appendonly no): each node
  // says so, once (its builder asks at connect), naming what is lost
  test('a Redis without persistence is warned of, once a node', guarded(async () => {
    const said = new RegExp(`redis 127\\.0\\.0\\.1:${cluster.redis.port}: no persistence ` +
      '\\(appendonly no, save ""\\): a Redis restart loses every session', 'g');
    for (const d of cluster.nodes) {
      await waitFor('the warning', () => said.test(d.proc.output));
      assert.equal(d.proc.output.match(said).length, 1, d.proc.output);
    }
  }));
});

describe('a Redis with a password (THV_SESSION_REDIS_PASSWORD)', () => {
  const PASSWORD = 'pw-0123456789-secret';
  let backend, redis, good, bad;

  before(async () => {
    backend = await startTestBackend();
    redis = await startRedis({ password: PASSWORD, appendonly: true });
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

  test('a Redis with appendonly yes is not warned of', guarded(async () => {
    assert.equal(await redis.cli('CONFIG', 'GET', 'appendonly'), 'appendonly\nyes');
    await waitFor('the verdict', () => /redis 127\.0\.0\.1:\d+: persists \(appendonly yes\)/
      .test(good.proc.output));
    assert.doesNotMatch(good.proc.output, /no persistence|restart loses/);
    // what vmcpd -n cannot know, it says to check
    const n = await run(VMCPD_BIN, ['-n', '-f', good.cfg]);
    assert.equal(n.code, 0, n.stderr);
    assert.match(n.stderr, /note: sessionStorage redis: sessions, .* last only as long as Redis keeps them; run Redis with appendonly yes/);
  }));
});

describe('a large shared bucket in Redis is leased: a 64th of it per worker', () => {
  let backend, redis, node;
  const MAX = 6400;
  const LBUCKET = 'thv:rl:{local:lease}:shared';

  before(async () => {
    backend = await startTestBackend();
    redis = await startRedis();
    node = await startNode({ redis, backendUrl: backend.url, name: 'lease', workers: 1,
      extra: `rateLimiting:\n  shared: {maxTokens: ${MAX}, refillPeriod: 1h}\n` });
  });

  after(async () => {
    if (node && !node.stopped)
      await node.stop();
  });

  const scripts = async () => {
    const m = /cmdstat_evalsha:calls=(\d+)/.exec(await redis.cli('INFO', 'commandstats'));
    return m ? Number(m[1]) : 0;
  };
  const tokens = async () => Number(await redis.cli('HGET', LBUCKET, 'tokens'));

  test('the first call takes its token and the lease; the lease serves the next calls without Redis',
    guarded(async () => {
      const call = async (i) => {
        const r = await modern(node.port, 'tools/call', echo(`l${i}`), { 'Mcp-Name': 'echo' });
        assert.equal(r.status, 200, r.text);
        assert.deepEqual(r.json.result?.content, [{ type: 'text', text: `Echo: l${i}` }], r.text);
      };
      await call(0);
      // 1 for the call, floor(6399 / 64) = 99 leased (the refill since
      // adds a few thousandths)
      const t1 = await tokens();
      assert.ok(t1 >= MAX - 100 && t1 < MAX - 99, `tokens after the first call: ${t1}`);
      const s1 = await scripts();
      for (let i = 1; i <= 50; i++)
        await call(i);
      // a lease in use is kept: calls 0.6 s apart, past a second after
      // it was taken, are still served from it
      for (let i = 51; i <= 53; i++) {
        await sleep(600);
        await call(i);
      }
      assert.equal(await scripts(), s1, 'calls on the lease ask Redis nothing');
      assert.ok(await tokens() < t1 + 1, 'nor take tokens from the bucket');
      // past the lease (99): the worker asks Redis again, for another
      for (let i = 54; i <= 120; i++)
        await call(i);
      assert.ok(await scripts() > s1, 'a spent lease is taken again from Redis');
      // never more through than the bucket gave: 121 calls, 2 leases
      assert.ok(await tokens() <= MAX - 121, `tokens: ${await tokens()}`);
    }));
});
