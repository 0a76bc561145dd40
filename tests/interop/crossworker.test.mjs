// One client session served by every worker: each request goes on a new
// connection (so the kernel may hand it to either worker) until both
// workers have been seen, and every request of the session must succeed
// on both.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  useHarness, guarded, startEverything, startTestBackend, startDaemon, openSession, rpc,
  httpRequest, workerOf, LEGACY_VERSION,
} from './lib/harness.mjs';

useHarness();

const MAX_TRIES = 400;

/*
 * Send send(i) on new connections until every worker pid has been seen
 * at least `each` times; check(res, i) asserts on every answer.
 */
async function spread(daemon, send, check, { each = 3 } = {}) {
  const want = await daemon.workerPids();
  assert.equal(want.length, 2);
  const seen = new Map(want.map((p) => [p, 0]));
  let i = 0;
  for (; i < MAX_TRIES && [...seen.values()].some((n) => n < each); i++) {
    const res = await send(i);
    const w = workerOf(res);
    assert.ok(w, `Vmcpd-Worker header on answer ${i} (status ${res.status})`);
    assert.ok(seen.has(w.pid), `answer ${i} from pid ${w.pid}, not one of ${want}`);
    seen.set(w.pid, seen.get(w.pid) + 1);
    try {
      check(res, i);
    } catch (e) {
      e.message = `request ${i} on worker ${w.slot} (pid ${w.pid}): ${e.message}`;
      throw e;
    }
  }
  for (const [pid, n] of seen)
    assert.ok(n >= each, `worker pid ${pid} served only ${n} of ${i} requests`);
  return { seen, tries: i };
}

describe('a session across workers (server-everything backend)', () => {
  let everything, daemon, sid;

  before(async () => {
    everything = await startEverything();
    daemon = await startDaemon({ backendUrl: everything.url, workers: 2, workerHeader: true });
    ({ sid } = await openSession(daemon.port));
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
  });

  test('every answer carries Vmcpd-Worker', guarded(async () => {
    const h = await httpRequest(daemon.port, { method: 'GET', path: '/healthz' });
    const w = workerOf(h);
    assert.equal(w.pid, h.json.pid);
    assert.equal(w.slot, h.json.worker);
  }));

  test('tools/call, tools/list and ping succeed on both workers', guarded(async () => {
    const kinds = ['echo', 'sum', 'list', 'ping'];
    await spread(daemon, (i) => {
      switch (kinds[i % 4]) {
      case 'echo':
        return rpc(daemon.port, sid, 'tools/call', { name: 'echo', arguments: { message: `n${i}` } });
      case 'sum':
        return rpc(daemon.port, sid, 'tools/call', { name: 'get-sum', arguments: { a: i, b: 1 } });
      case 'list':
        return rpc(daemon.port, sid, 'tools/list', {});
      default:
        return rpc(daemon.port, sid, 'ping');
      }
    }, (res, i) => {
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.error, undefined, res.text);
      switch (kinds[i % 4]) {
      case 'echo':
        assert.equal(res.json.result.content[0].text, `Echo: n${i}`);
        break;
      case 'sum':
        assert.equal(res.json.result.content[0].text, `The sum of ${i} and 1 is ${i + 1}.`);
        break;
      case 'list':
        assert.ok(res.json.result.tools.some((t) => t.name === 'echo'));
        break;
      default:
        assert.deepEqual(res.json.result, {});
      }
    }, { each: 4 });
  }));

  test('progress streams (SSE) on both workers', guarded(async () => {
    await spread(daemon, (i) => rpc(daemon.port, sid, 'tools/call', {
      name: 'trigger-long-running-operation', arguments: { duration: 0.05, steps: 2 },
      _meta: { progressToken: `tok-${i}` },
    }), (res, i) => {
      assert.equal(res.status, 200, res.text);
      assert.match(res.headers['content-type'], /^text\/event-stream/);
      const progress = res.messages.filter((m) => m.method === 'notifications/progress');
      assert.deepEqual(progress.map((m) => [m.params.progressToken, m.params.progress]),
        [[`tok-${i}`, 1], [`tok-${i}`, 2]]);
      assert.match(res.json.result.content[0].text, /^Long running operation completed/);
    }, { each: 2 });
  }));

  test('a session deleted on one worker is 404 on both', guarded(async () => {
    const { sid: doomed } = await openSession(daemon.port);
    const del = await httpRequest(daemon.port, { method: 'DELETE',
      headers: { 'Mcp-Session-Id': doomed, 'MCP-Protocol-Version': LEGACY_VERSION } });
    assert.equal(del.status, 200, del.text);
    await spread(daemon, () => rpc(daemon.port, doomed, 'ping'), (res) => {
      assert.equal(res.status, 404, res.text);
      assert.equal(res.json.error.code, -32001);
    }, { each: 2 });
    // the other session is untouched
    const ok = await rpc(daemon.port, sid, 'ping');
    assert.equal(ok.status, 200);
  }));
});

describe('a session across workers (SDK test backend)', () => {
  let backend, daemon, sid;

  before(async () => {
    backend = await startTestBackend();
    daemon = await startDaemon({ backendUrl: backend.url, backendName: 'fixture', workers: 2,
      workerHeader: true });
    ({ sid } = await openSession(daemon.port));
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
  });

  test('both workers use the one backend session of the client session', guarded(async () => {
    const ids = new Set();
    await spread(daemon, () => rpc(daemon.port, sid, 'tools/call', { name: 'whoami', arguments: {} }),
      (res) => {
        assert.equal(res.status, 200, res.text);
        const m = /^session ([0-9a-f-]{36})$/.exec(res.json.result.content[0].text);
        assert.ok(m, res.text);
        ids.add(m[1]);
      }, { each: 3 });
    assert.equal(ids.size, 1, `backend sessions used: ${[...ids]}`);
    // a second client session gets a backend session of its own
    const { sid: other } = await openSession(daemon.port);
    const r = await rpc(daemon.port, other, 'tools/call', { name: 'whoami', arguments: {} });
    const m = /^session ([0-9a-f-]{36})$/.exec(r.json.result.content[0].text);
    assert.ok(m);
    assert.ok(!ids.has(m[1]), 'client sessions do not share a backend session');
  }));
});
