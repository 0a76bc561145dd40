// Cancellation through vmcpd (MCP 2025-11-25, Cancellation): a 2025-11-25
// client's notifications/cancelled, POSTed on another connection (so on
// either worker), reaches the backend call it names under the backend's
// own request id, whichever worker holds the call and whichever backend
// transport (Streamable HTTP; stdio and HTTP+SSE through the bridge); the
// client gets no response for it and the session goes on working.  A
// 2026-07-28 client cancels by closing its connection, which a
// 2025-11-25 backend is told as notifications/cancelled.
//
// The backends are lib/backend.mjs: its slow tool records the request
// id it was called with, and the cancellation the SDK's McpServer
// delivers to it (extra.signal), and its cancels tool reports both.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import {
  guarded, startTestBackend, TEST_BACKEND, openSession, rpc, mcpPost, workerOf, waitFor,
  withTimeout, connectClient, HOST, MCP_ACCEPT,
} from './lib/harness.mjs';
import { useMulti, startMulti, postStream, NODE, MODERN, modernMeta } from './lib/multi.mjs';

useMulti();

const REC = { CANCELS_TOOL: '1' };
const BACKENDS = [
  // vmcpd's own ids on a Streamable HTTP backend; the bridge's integers
  { label: 'a Streamable HTTP backend', prefix: 'h_', idRe: /^vmcpd-\d+-\d+$/ },
  { label: 'a stdio backend (bridge)', prefix: 's_', idRe: /^\d+$/ },
  { label: 'an HTTP+SSE backend (bridge)', prefix: 'e_', idRe: /^\d+$/ },
];
const MAX_ROUNDS = 30;
const SLOW_MS = 40000;		// never ends within a test's waits

async function cancels(port, sid, prefix) {
  const r = await rpc(port, sid, 'tools/call', { name: `${prefix}cancels`, arguments: {} });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.error, undefined, r.text);
  return JSON.parse(r.json.result.content[0].text);
}

/* wait for a new slow call to reach the backend: its request id there */
async function started(port, sid, prefix, before) {
  const c = await waitFor(`a slow call to reach ${prefix}`, async () => {
    const x = await cancels(port, sid, prefix);
    return x.started.length > before ? x : null;
  }, { timeout: 20000, interval: 100 });
  assert.equal(c.started.length, before + 1);
  return c.started[before];
}

/* wait for the backend to see a cancellation with this reason */
function observed(port, sid, prefix, reason) {
  return waitFor(`${prefix} to observe the cancellation "${reason}"`, async () => {
    const x = await cancels(port, sid, prefix);
    return x.cancelled.find((c) => c.reason === reason) ?? null;
  }, { timeout: 20000, interval: 100 });
}

describe('notifications/cancelled reaches the backend call, from either worker', () => {
  let http1, sse, daemon, sid;

  before(async () => {
    [http1, sse] = await Promise.all([
      startTestBackend({ env: { ...REC, TOOL_PREFIX: 'h_' } }),
      startTestBackend({ args: ['sse'], env: { ...REC, TOOL_PREFIX: 'e_' } }),
    ]);
    daemon = await startMulti({
      backends: [
        { name: 'web', url: http1.url },
        { name: 'pipe', command: NODE, args: [TEST_BACKEND, 'stdio'],
          env: { ...REC, TOOL_PREFIX: 's_' } },
        { name: 'old', transport: 'sse', url: `http://${HOST}:${sse.port}/sse` },
      ],
      aggregation: 'conflictResolution: prefix\nconflictResolutionConfig:\n  prefixMode: onConflict',
      operational: 'timeouts:\n  default: 120s',
    });
    ({ sid } = await openSession(daemon.port));
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
  });

  /*
   * One slow call, cancelled on a connection of its own: the backend
   * sees the cancel under the id it was called with, and the call's
   * POST ends without a response.  The workers that held the call and
   * took the cancel.
   */
  async function round(b, i) {
    const { port } = daemon;
    const before = (await cancels(port, sid, b.prefix)).started.length;
    const id = i % 2 === 0 ? `c-${b.prefix}${i}` : 7000 + i;	// both kinds of id
    const call = postStream(port, sid, 'tools/call',
      { name: `${b.prefix}slow`, arguments: { ms: SLOW_MS } }, { id, timeout: 30000 });
    call.catch(() => {});
    const bid = await started(port, sid, b.prefix, before);
    assert.match(String(bid), b.idRe, `the id ${b.prefix} was called with`);
    const reason = `test ${b.prefix}${i}`;
    const n = await mcpPost(port, { jsonrpc: '2.0', method: 'notifications/cancelled',
      params: { requestId: id, reason } }, { session: sid });
    assert.equal(n.status, 202, n.text);
    const seen = await observed(port, sid, b.prefix, reason);
    assert.deepEqual(seen, { id: bid, reason }, 'cancelled under the backend\'s id');
    const s = await withTimeout(call, 20000, 'the cancelled call\'s answer');
    await s.until('the cancelled call\'s stream to end', (x) => x.ended, 20000);
    assert.equal(s.status, 200, s.text);
    assert.deepEqual(s.messages().filter((m) => m.id !== undefined), [],
      `no response for a cancelled request: ${s.text}`);
    return { holder: workerOf(s).pid, canceller: workerOf(n).pid };
  }

  for (const b of BACKENDS) {
    test(`${b.label}: cancelled on the worker holding the call and on the other`,
      guarded(async (t) => {
        let local = 0, remote = 0, i = 0;
        for (; i < MAX_ROUNDS && (local === 0 || remote === 0); i++) {
          const { holder, canceller } = await round(b, i);
          if (holder === canceller)
            local++;
          else
            remote++;
        }
        const tally = `${i} rounds: ${local} on the holder, ${remote} from the other worker`;
        assert.ok(local > 0 && remote > 0, `both paths in ${tally}`);
        t.diagnostic(tally);
        // nothing else was cancelled, and the session goes on
        const c = await cancels(daemon.port, sid, b.prefix);
        assert.equal(c.cancelled.length, i, JSON.stringify(c));
        const r = await rpc(daemon.port, sid, 'tools/call',
          { name: `${b.prefix}echo`, arguments: { message: 'still here' } });
        assert.equal(r.json?.result?.content?.[0]?.text, 'Echo: still here', r.text);
      }));
  }

  test('the SDK client: an aborted callTool is cancelled at the backend, the session goes on',
    guarded(async () => {
      const { port } = daemon;
      const { client, transport } = await connectClient(daemon.url, { fresh: true });
      try {
        const before = (await cancels(port, sid, 'h_')).started.length;
        const ac = new AbortController();
        const call = client.callTool({ name: 'h_slow', arguments: { ms: SLOW_MS } }, undefined,
          { signal: ac.signal, timeout: 60000 });
        call.catch(() => {});
        const bid = await started(port, sid, 'h_', before);
        ac.abort('the user gave up');
        await assert.rejects(call);
        const seen = await observed(port, sid, 'h_', 'the user gave up');
        assert.deepEqual(seen, { id: bid, reason: 'the user gave up' });
        const r = await client.callTool({ name: 'h_echo', arguments: { message: 'after' } });
        assert.equal(r.content[0].text, 'Echo: after');
      } finally {
        await transport.close().catch(() => {});
      }
    }));

  test('a cancel for no request in flight is accepted and changes nothing', guarded(async () => {
    for (const requestId of ['no-such-request', 424242]) {
      const n = await mcpPost(daemon.port, { jsonrpc: '2.0', method: 'notifications/cancelled',
        params: { requestId, reason: 'nothing' } }, { session: sid });
      assert.equal(n.status, 202, n.text);
    }
    const r = await rpc(daemon.port, sid, 'tools/call',
      { name: 'h_echo', arguments: { message: 'fine' } });
    assert.equal(r.json?.result?.content?.[0]?.text, 'Echo: fine', r.text);
  }));

  test('another session cannot cancel a call of this one', guarded(async () => {
    const { port } = daemon;
    const { sid: other } = await openSession(port);
    const before = (await cancels(port, sid, 'h_')).started.length;
    const call = postStream(port, sid, 'tools/call',
      { name: 'h_slow', arguments: { ms: 1500 } }, { id: 'mine', timeout: 30000 });
    await started(port, sid, 'h_', before);
    for (let k = 0; k < 4; k++) {
      const n = await mcpPost(port, { jsonrpc: '2.0', method: 'notifications/cancelled',
        params: { requestId: 'mine', reason: 'not yours' } }, { session: other });
      assert.equal(n.status, 202, n.text);
    }
    const s = await withTimeout(call, 20000, 'the call\'s answer');
    await s.until('the answer', (x) => x.ended, 20000);
    const res = s.messages().find((m) => m.id === 'mine') ?? JSON.parse(s.text);
    assert.equal(res.result?.content?.[0]?.text, 'slept 1500', s.text);
  }));

  /*
   * A 2026-07-28 client has no session: closing its connection cancels
   * its request (MCP 2026-07-28, Transports), and vmcpd tells a
   * 2025-11-25 backend so, under the backend's id.
   */
  function modernSlow(port, name) {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call',
      params: { name, arguments: { ms: SLOW_MS }, _meta: modernMeta() } });
    const req = http.request({ host: HOST, port, method: 'POST', path: '/mcp', agent: false,
      headers: { 'Content-Type': 'application/json', Accept: MCP_ACCEPT,
        'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tools/call', 'Mcp-Name': name,
        'Content-Length': Buffer.byteLength(body) } });
    req.on('error', () => {});
    req.on('response', (res) => res.resume());
    req.end(body);
    return req;
  }

  for (const b of BACKENDS) {
    test(`a 2026-07-28 client closing its connection cancels the call on ${b.label}`,
      guarded(async () => {
        const { port } = daemon;
        const before = await cancels(port, sid, b.prefix);
        const req = modernSlow(port, `${b.prefix}slow`);
        const bid = await started(port, sid, b.prefix, before.started.length);
        req.destroy();
        const seen = await observed(port, sid, b.prefix, 'the client closed the connection');
        assert.deepEqual(seen, { id: bid, reason: 'the client closed the connection' });
      }));
  }
});
