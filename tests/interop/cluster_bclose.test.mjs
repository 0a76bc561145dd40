// A Legacy session that expires in Redis (sessionStorage.provider redis)
// has its backend sessions closed (docs/ARCHITECTURE.md, Beyond one
// host, Expiry): every node's copy that names backend sessions is
// flagged, and when one expires the node asks Redis (PTTL) before it
// closes anything.
// - a session that called a streamable-http backend and then went idle
//   expires: the backend sees its session DELETEd, once;
// - a session moved to node B and kept alive there while node A's copy
//   expires: A closes nothing (B's calls go on on the same backend
//   session), and once the session expires on B it is closed, once;
// - Redis down when a copy expires: nothing closed, the record stays
//   queued; Redis back (empty): closed, once;
// - Redis restarted empty (the session lost): the client's next request
//   is a 404, and the backend session is closed, once.
import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import {
  useHarness, guarded, startTestBackend, openSession, rpc, httpRequest, waitFor, sleep,
} from './lib/harness.mjs';
import { startRedis, startNode, nodeMetrics } from './lib/cluster.mjs';

useHarness();
const PREFIX = 'thv:vmcp:session:';
const TTL_S = 4;

async function seen(backend) {
  const r = await httpRequest(backend.port, { method: 'GET', path: '/seen', timeout: 5000 });
  assert.equal(r.status, 200, r.text);
  return r.json;
}

/* the DELETEs the backend got for its session bsid */
async function deletes(backend, bsid) {
  return (await seen(backend)).filter((h) => h.method === 'DELETE' && h.sid === bsid).length;
}

/* the backend session a client session's calls go on (whoami) */
async function whoami(port, sid) {
  const r = await rpc(port, sid, 'tools/call', { name: 'whoami', arguments: {} });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json?.error, undefined, r.text);
  const m = /^session (\S+)$/.exec(r.json.result.content[0].text);
  assert.ok(m, r.text);
  return m[1];
}

/* vmcpd_backend_sessions{backend="everything",holder="client"} */
async function gauge(node) {
  const r = await httpRequest(node.diagPort, { method: 'GET', path: '/metrics', timeout: 5000 });
  assert.equal(r.status, 200, r.text);
  const m = /^vmcpd_backend_sessions\{backend="everything",holder="client"\} (\d+)$/m
    .exec(r.text);
  return m ? Number(m[1]) : 0;
}

describe('backend sessions of sessions that expire in Redis', () => {
  let backend, redis, a, b;

  /* client session sid expires in Redis: its backend session bsid is
   * DELETEd, once */
  async function closedOnce(sid, bsid) {
    await waitFor('the session gone from Redis', async () =>
      (await redis.cli('EXISTS', `${PREFIX}sess:${sid}`)) === '0',
    { timeout: 30000, interval: 200 });
    // a worker that Redis failed waits up to 30 s (doubling pauses)
    await waitFor('the backend session DELETEd', async () =>
      (await deletes(backend, bsid)) >= 1, { timeout: 45000, interval: 200 });
    // long enough for a second close to show up, were there one
    await sleep(4000);
    assert.equal(await deletes(backend, bsid), 1, 'one DELETE');
  }

  before(async () => {
    backend = await startTestBackend();
    redis = await startRedis();
    const opts = { redis, backendUrl: backend.url, workers: 2,
      extra: `sessions:\n  ttl: ${TTL_S}s\n  maxLifetime: 10m\n` };
    a = await startNode(opts);
    b = await startNode(opts);
  });

  test('an idle session that expires has its backend session DELETEd once',
    { timeout: 90000 }, guarded(async () => {
      const { sid } = await openSession(a.port);
      const bsid = await whoami(a.port, sid);
      assert.equal(await deletes(backend, bsid), 0);
      await closedOnce(sid, bsid);
      assert.equal(await gauge(a), 0, 'node A counts it closed');
      // the client's next request: the session is gone
      const r = await rpc(a.port, sid, 'tools/list');
      assert.equal(r.status, 404, r.text);
    }));

  test('a session kept alive on node B is not closed by node A\'s expiry; ' +
    'closed once it expires on B', { timeout: 120000 }, guarded(async () => {
    const { sid } = await openSession(a.port);
    const bsid = await whoami(a.port, sid);
    // on B from now on: A's copy is no longer touched and expires, and
    // A's sweep and look at Redis happen while B's calls go on
    const until = Date.now() + (TTL_S + 12) * 1000;
    let calls = 0;
    while (Date.now() < until) {
      assert.equal(await whoami(b.port, sid), bsid, 'the same backend session on B');
      calls++;
      await sleep(500);
    }
    assert.ok(calls >= 10, `calls through B: ${calls}`);
    assert.equal(await deletes(backend, bsid), 0, 'not closed while it lives on B');
    // A's copy expired long ago and was swept
    const left = await httpRequest(a.diagPort, { method: 'GET', path: '/metrics', timeout: 5000 });
    assert.match(left.text, /^vmcpd_backend_sessions_closing 0$/m);
    // B stops: the session expires, B's copy with it
    await closedOnce(sid, bsid);
    // each node's gauge stays sane (never below zero: clamped)
    assert.ok(await gauge(a) <= 1);
    assert.equal(await gauge(b), 0);
  }));

  test('Redis down when a copy expires: nothing closed, queued; Redis back: closed once',
    { timeout: 150000 }, guarded(async () => {
      const { sid } = await openSession(a.port);
      const bsid = await whoami(a.port, sid);
      const errs0 = (await nodeMetrics(a)).vmcpd_redis_errors_total ?? 0;
      await redis.kill();
      // A's copy expires and is swept; its look at Redis fails, so the
      // record goes back in the queue, again and again
      await sleep((TTL_S + 3) * 1000);
      await waitFor('the ended session queued on A', async () =>
        (await nodeMetrics(a)).vmcpd_backend_sessions_closing === 1,
      { timeout: 20000, interval: 100 });
      assert.equal(await deletes(backend, bsid), 0, 'not closed while Redis is down');
      assert.ok((await nodeMetrics(a)).vmcpd_redis_errors_total > errs0, 'counted');
      // a new, empty Redis: the session is gone from it, so closed
      await redis.start();
      await closedOnce(sid, bsid);
      assert.equal((await nodeMetrics(a)).vmcpd_backend_sessions_closing, 0);
    }));

  test('Redis restarted empty: a client\'s next request finds its session gone, and ' +
    'its backend session is closed once', { timeout: 120000 }, guarded(async () => {
    // a node whose copy outlives the test: only the request ends it
    const c = await startNode({ redis, backendUrl: backend.url, workers: 2,
      extra: 'sessions:\n  ttl: 5m\n' });
    const { sid } = await openSession(c.port);
    const bsid = await whoami(c.port, sid);
    await redis.kill();
    await redis.start();
    // a 503 until the node is connected again, then the 404
    await waitFor('the session gone for the client', async () =>
      (await rpc(c.port, sid, 'tools/list')).status === 404,
    { timeout: 20000, interval: 200 });
    await closedOnce(sid, bsid);
    await c.stop();
  }));

  test('stops cleanly', guarded(async () => {
    await a.stop();
    await b.stop();
  }));
});
