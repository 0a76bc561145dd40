// Legacy session checks and Redis's client-side caching
// (sessionStorage.provider redis; docs/ARCHITECTURE.md, Beyond one host):
// two nodes (one worker each) on one Redis.
// - a warm session: the calls after the first send no check script
//   (Redis's commandstats and the node's /metrics agree), only the
//   touch's write once a second and the check that follows it;
// - a session DELETEd through node B: node A, which trusted it, hears
//   Redis's invalidation and answers 404 on the next request;
// - the subscription Redis redirects invalidations to killed
//   (CLIENT KILL TYPE pubsub) together with a write of the session in
//   one transaction, so that write's invalidation is lost: A trusts
//   nothing any more and answers 404; once subscribed again it skips
//   checks again.
// The session A trusts is caught quiet first: a call answered without
// any script running in Redis (no check, no touch), so only Redis's
// word can make A ask again; a cache that ignored it would answer 200.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import {
  useHarness, guarded, startTestBackend, openSession, rpc, waitFor, httpRequest, withTimeout,
  HOST,
} from './lib/harness.mjs';
import { startRedis, startNode, nodeMetrics } from './lib/cluster.mjs';

useHarness();

const key = (sid) => `thv:vmcp:session:sess:${sid}`;
const echo = (message) => ({ name: 'echo', arguments: { message } });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

describe('session checks skipped while Redis says nothing changed', () => {
  let backend, redis, a, b;

  before(async () => {
    backend = await startTestBackend();
    redis = await startRedis();
    a = await startNode({ redis, backendUrl: backend.url, name: 'rcache' });
    b = await startNode({ redis, backendUrl: backend.url, name: 'rcache' });
  });

  after(async () => {
    for (const d of [a, b])
      if (d && !d.stopped)
        await d.stop();
  });

  /* the scripts Redis ran so far (checks and writes) */
  async function evalshas() {
    const m = /cmdstat_evalsha:calls=(\d+)/.exec(await redis.cli('INFO', 'commandstats'));
    return m ? Number(m[1]) : 0;
  }

  async function call(d, sid, tag) {
    const r = await rpc(d.port, sid, 'tools/call', echo(tag));
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json.result.content, [{ type: 'text', text: `Echo: ${tag}` }], r.text);
  }

  /*
   * A new session that node A trusts: a call answered with no script
   * run in Redis and no check sent.  A loaded machine may put a touch
   * (once a second) in any call: then another session is tried.
   */
  async function quietSession() {
    for (let attempt = 0; attempt < 10; attempt++) {
      const { sid } = await openSession(a.port);
      for (let i = 0; i < 3; i++)
        await call(a, sid, `w${i}`);
      const m0 = await nodeMetrics(a);
      const c0 = await evalshas();
      await call(a, sid, 'q');
      await sleep(100);	// a touch's write, if any, reaches Redis
      const m1 = await nodeMetrics(a);
      if (await evalshas() === c0 &&
          m1.vmcpd_session_checks_skipped_total === m0.vmcpd_session_checks_skipped_total + 1 &&
          m1.vmcpd_session_checks_total === m0.vmcpd_session_checks_total)
        return { sid, m: m1 };
    }
    assert.fail('no call answered without Redis in 10 sessions');
  }

  test('a warm session: the calls after the first send no check', guarded(async () => {
    const N = 30;
    const { sid } = await openSession(a.port);
    await call(a, sid, 'first');
    const m0 = await nodeMetrics(a);
    const c0 = await evalshas();
    const t0 = Date.now();
    for (let i = 0; i < N; i++)
      await call(a, sid, `c${i}`);
    const secs = Math.ceil((Date.now() - t0) / 1000);
    await sleep(100);
    const m1 = await nodeMetrics(a);
    const scripts = await evalshas() - c0;
    const checks = m1.vmcpd_session_checks_total - m0.vmcpd_session_checks_total;
    const skipped = m1.vmcpd_session_checks_skipped_total -
      m0.vmcpd_session_checks_skipped_total;
    // each second may bring a touch (one write), the check after it,
    // and one more if the write's own invalidation overtakes that
    // check's answer; every call used to run one check script
    const most = 3 * (secs + 1);
    assert.ok(scripts <= most, `${scripts} scripts in Redis for ${N} calls in ${secs} s`);
    assert.ok(checks <= 2 * (secs + 1), `${checks} checks sent for ${N} calls`);
    assert.equal(checks + skipped, N, 'every call counted once');
    assert.equal(m1.vmcpd_redis_errors_total ?? 0, 0);
  }));

  test('a session DELETEd through node B: A answers 404 once Redis says so',
    guarded(async () => {
      const { sid, m } = await quietSession();
      const del = await httpRequest(b.port, {
        method: 'DELETE', path: '/mcp', headers: { 'Mcp-Session-Id': sid },
      });
      assert.equal(del.status, 200, del.text);
      await waitFor('node A told of the write', async () =>
        (await nodeMetrics(a)).vmcpd_redis_invalidations_total >
          m.vmcpd_redis_invalidations_total, { timeout: 10000, interval: 20 });
      const r = await rpc(a.port, sid, 'tools/list', {});
      assert.equal(r.status, 404, r.text);
    }));

  test('the subscription killed with a write meanwhile: A trusts nothing, then caches again',
    guarded(async () => {
      const pubsub = async () =>
        (await redis.cli('CLIENT', 'LIST', 'TYPE', 'pubsub')).split('\n')
          .filter((l) => /^id=/.test(l)).map((l) => /^id=(\d+)/.exec(l)[1]);
      const subs0 = await pubsub();
      assert.ok(subs0.length >= 2, `subscriptions: ${subs0}`);
      const { sid } = await quietSession();
      // one transaction: the write's invalidation goes to a connection
      // that is no more, so A is never told of it
      const [killed, deleted] = await redisTx(redis, ['CLIENT', 'KILL', 'TYPE', 'pubsub'],
        ['DEL', key(sid)]);
      assert.ok(killed >= 2, `${killed} subscriptions killed`);
      assert.equal(deleted, 1);
      // every subscription made again (A's too: it saw its connection go)
      await waitFor('the subscriptions made again', async () => {
        const now = await pubsub();
        return now.length === subs0.length && now.every((id) => !subs0.includes(id));
      }, { timeout: 15000, interval: 50 });
      const r = await rpc(a.port, sid, 'tools/list', {});
      assert.equal(r.status, 404, r.text);
      // tracking set again on the new subscription: checks skipped again
      await waitFor('a session trusted again', async () => {
        await quietSession();
        return true;
      }, { timeout: 20000, interval: 200 });
    }));
});

/*
 * MULTI, the commands, EXEC on one connection to redis (RESP by hand:
 * redis-cli reads no script of commands here): EXEC's integer answers
 */
function redisTx(redis, ...cmds) {
  const resp = (a) => `*${a.length}\r\n` +
    a.map((x) => `$${Buffer.byteLength(x)}\r\n${x}\r\n`).join('');
  return withTimeout(new Promise((resolve, reject) => {
    const sock = net.connect(redis.port, HOST);
    let text = '';
    sock.on('error', reject);
    sock.on('data', (d) => {
      text += d.toString();
      const m = new RegExp(`\\*${cmds.length}\r\n((?::-?\\d+\r\n){${cmds.length}})$`)
        .exec(text);
      if (m) {
        sock.destroy();
        resolve(m[1].split('\r\n').filter(Boolean).map((x) => Number(x.slice(1))));
      }
    });
    sock.write([['MULTI'], ...cmds, ['EXEC']].map(resp).join(''));
  }), 5000, 'MULTI ... EXEC');
}
