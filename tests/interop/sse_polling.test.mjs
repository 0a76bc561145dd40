// SSE polling through vmcpd (SEP-1699, MCP 2025-11-25 Transports,
// Resumability): the conformance fixture's test_reconnection ends its
// POST stream after the priming event and answers on the resumed
// stream; vmcpd does likewise to its client (priming event "<tag>-0",
// retry, the stream ended), resumes the backend itself, and keeps the
// response for the client's GET with Last-Event-ID, on any worker.
// Another session's stream id gets nothing; a garbage id is refused.
// A stream the client closes itself while the call is under way is kept
// the same way.
// With sessionStorage.provider redis the stream ended on one node is
// resumed on another.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { guarded, rpc, sleep, waitFor, workerOf, mcpHeaders, freshFetch, connectClient, LEGACY_VERSION } from './lib/harness.mjs';
import { useMulti, startMulti, startFixture, startSpec, openStream, openGet, openSessionCaps } from './lib/multi.mjs';
import { startRedis, startNode } from './lib/cluster.mjs';

useMulti();

const DONE = 'Reconnection test completed successfully';
const TAG_ID = /^[0-9a-f]{16}-0$/;

/* a POST whose client would rather stream (Accept lists SSE first) */
const reconnect = (port, sid, id = 1) => openStream(port, {
  method: 'POST',
  headers: { ...mcpHeaders({ session: sid }), Accept: 'text/event-stream, application/json' },
  body: { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'test_reconnection', arguments: {} } },
});

/* until the view lists test_reconnection */
async function viewReady(port) {
  const { sid } = await openSessionCaps(port);
  await waitFor('the view lists test_reconnection', async () => {
    const r = await rpc(port, sid, 'tools/list', {});
    return r.json?.result?.tools?.some((t) => t.name === 'test_reconnection');
  }, { timeout: 20000, interval: 200 });
}

/* the POST's stream: primed, a retry, ended without the response */
async function cutStream(p) {
  assert.equal(p.status, 200, p.text);
  assert.match(p.headers['content-type'], /^text\/event-stream/);
  await p.until('the POST stream ended', (s) => s.ended, 15000);
  assert.ok(p.events.length >= 1, p.text);
  const prime = p.events[0];
  assert.match(String(prime.id), TAG_ID, `the priming event's id: ${p.text}`);
  assert.equal(prime.data, '', 'the priming event has no data');
  assert.match(p.text, /^retry: \d+$/m, `a retry field: ${p.text}`);
  assert.equal(p.messages().length, 0, `no response on the POST stream: ${p.text}`);
  return prime.id;
}

describe('SSE polling through vmcpd (2 workers)', () => {
  let fixture, spec, daemon;

  before(async () => {
    [fixture, spec] = await Promise.all([startFixture(), startSpec({ label: 'sp', slow: true })]);
    daemon = await startMulti({
      backends: [{ name: 'fx', url: fixture.url, era: 'legacy' }, { name: 'sp', url: spec.url }],
      aggregation: 'conflictResolution: priority\nconflictResolutionConfig:\n  priorityOrder: [fx, sp]',
    });
    await viewReady(daemon.port);
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
  });

  /* a resumption landing on another worker than avoid (the kernel
   * picks the worker: try again until it is another) */
  async function resumeElsewhere(sid, lastEventId, avoid) {
    for (let i = 0; i < 40; i++) {
      const g = await openGet(daemon.port, sid, { lastEventId });
      const w = workerOf(g);
      if (g.status === 200 && w && w.pid !== avoid.pid)
        return g;
      g.close();
      await sleep(50);
    }
    throw new Error('no resumption reached the other worker');
  }

  test('the stream is ended after priming and resumed on the other worker, once', guarded(async () => {
    const { sid } = await openSessionCaps(daemon.port);
    const p = await reconnect(daemon.port, sid, 7);
    const prime = { id: await cutStream(p) };

    const g = await resumeElsewhere(sid, prime.id, workerOf(p));
    await g.until('the response on the resumed stream', (s) => s.ended, 15000);
    const answers = g.messages().filter((m) => m.id === 7);
    assert.equal(answers.length, 1, `the response once: ${g.text}`);
    assert.equal(answers[0].result.content[0].text, DONE);
    assert.match(String(g.events.at(-1).id), new RegExp(`^${prime.id.slice(0, 16)}-\\d+$`));

    // another session's id: nothing of it (the stream stays empty)
    const other = await openSessionCaps(daemon.port);
    const g2 = await openGet(daemon.port, other.sid, { lastEventId: prime.id });
    assert.equal(g2.status, 200, g2.text);
    await sleep(1500);
    assert.equal(g2.messages().length, 0, `another session's stream: ${g2.text}`);
    g2.close();

    // the same session again: replayed from the store, still once
    const g3 = await openGet(daemon.port, sid, { lastEventId: prime.id });
    await g3.until('replayed', (s) => s.ended, 10000);
    assert.equal(g3.messages().filter((m) => m.id === 7).length, 1, g3.text);
  }));

  test('a stream the client closes mid-call is resumed with its answer', guarded(async () => {
    const { sid } = await openSessionCaps(daemon.port);
    const p = await openStream(daemon.port, {
      method: 'POST',
      headers: { ...mcpHeaders({ session: sid }), Accept: 'text/event-stream, application/json' },
      body: { jsonrpc: '2.0', id: 11, method: 'tools/call', params: { name: 'slow', arguments: { ms: 1500 } } },
    });
    assert.equal(p.status, 200, p.text);
    await p.until('the priming event', (s) => s.events.length >= 1, 5000);
    const id = p.events[0].id;
    assert.match(String(id), TAG_ID, p.text);
    p.close();
    const g = await openGet(daemon.port, sid, { lastEventId: id });
    assert.equal(g.status, 200, g.text);
    await g.until('the answer on the resumed stream', (s) => s.ended, 15000);
    const answers = g.messages().filter((m) => m.id === 11);
    assert.equal(answers.length, 1, `the answer once: ${g.text}`);
    assert.equal(answers[0].result.content[0].text, 'slept 1500');
  }));

  test('a Last-Event-ID that is no id vmcpd issues is refused', guarded(async () => {
    const { sid } = await openSessionCaps(daemon.port);
    for (const bad of ['0123456789abcdeF-0', '0123456789abcdef-', 'zz-1', '-1', '01']) {
      const g = await openGet(daemon.port, sid, { lastEventId: bad });
      await g.until('answered', (s) => s.ended, 5000);
      assert.equal(g.status, 400, `${bad}: ${g.text}`);
    }
  }));

  test('the SDK v1 client resumes with Last-Event-ID and gets the result', guarded(async () => {
    const gets = [];
    const fetch = (url, init = {}) => {
      if ((init.method ?? 'GET') === 'GET')
        gets.push(new Headers(init.headers).get('last-event-id'));
      return freshFetch(url, init);
    };
    const { client } = await connectClient(`http://127.0.0.1:${daemon.port}/mcp`, { fresh: true });
    client.transport._fetch = fetch;
    const r = await client.callTool({ name: 'test_reconnection', arguments: {} });
    assert.equal(r.content[0].text, DONE);
    assert.ok(gets.some((id) => TAG_ID.test(id ?? '')), `a GET resumed the POST stream: ${gets}`);
    await client.close();
  }));
});

describe('SSE polling across nodes (sessionStorage.provider redis)', () => {
  let fixture, redis, a, b;

  before(async () => {
    fixture = await startFixture();
    redis = await startRedis();
    [a, b] = await Promise.all([1, 2].map(() => startNode({
      redis, backendUrl: fixture.url, backendName: 'fx', workers: 1,
    })));
    await Promise.all([viewReady(a.port), viewReady(b.port)]);
  });

  after(async () => {
    await Promise.all([a, b].filter(Boolean).map((d) => d.stop()));
  });

  test('cut on one node, resumed on the other, once', guarded(async () => {
    const { sid } = await openSessionCaps(a.port);
    const id = await cutStream(await reconnect(a.port, sid, 9));
    const g = await openGet(b.port, sid, { lastEventId: id });
    assert.equal(g.status, 200, g.text);
    await g.until('the response on the other node', (s) => s.ended, 15000);
    const answers = g.messages().filter((m) => m.id === 9);
    assert.equal(answers.length, 1, `the response once: ${g.text}`);
    assert.equal(answers[0].result.content[0].text, DONE);
  }));
});
