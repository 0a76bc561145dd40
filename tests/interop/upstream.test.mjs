// The backend edge (worker/upstream.c): a call can be cancelled whatever
// state it is in.  Here the state is "waiting for a backend session to
// open": the backend holds the initialize of the client session's
// backend session, the client cancels its call (MCP 2025-11-25,
// Cancellation) on another connection, and the call's POST ends without
// a response at once, not when the initialize is answered; the session
// goes on working.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { guarded, openSession, rpc, mcpPost, withTimeout, waitFor, HOST } from './lib/harness.mjs';
import { useMulti, startMulti, postStream, serve } from './lib/multi.mjs';

useMulti();

const HOLD_MS = 4000;

/*
 * A 2025-11-25 backend with one tool, t (hold_t through vmcpd).  The
 * first initialize (the scope's session, for lists and notifications) is
 * answered at once; the later ones (a client session's) after HOLD_MS.
 */
function holdingBackend() {
  let inits = 0, sessions = 0;
  const srv = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      let m;
      try {
        m = JSON.parse(body);
      } catch {
        res.writeHead(req.method === 'POST' ? 400 : 405).end();
        return;
      }
      const reply = (result, headers = {}) => {
        res.writeHead(200, { 'Content-Type': 'application/json', ...headers });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
      };
      if (m.id === undefined) {
        res.writeHead(202).end();
        return;
      }
      switch (m.method) {
      case 'initialize': {
        const answer = () => reply({ protocolVersion: '2025-11-25',
          capabilities: { tools: {} }, serverInfo: { name: 'hold', version: '1' } },
        { 'Mcp-Session-Id': `hold-${++sessions}` });
        if (++inits === 1)
          answer();
        else
          setTimeout(answer, HOLD_MS);
        break;
      }
      case 'tools/list':
        reply({ tools: [{ name: 't', description: 'T', inputSchema: { type: 'object' } }] });
        break;
      case 'tools/call':
        reply({ content: [{ type: 'text', text: `t on ${req.headers['mcp-session-id']}` }] });
        break;
      default:
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id,
          error: { code: -32601, message: 'no' } }));
      }
    });
  });
  return serve(srv).then((port) => ({ url: `http://${HOST}:${port}/mcp`,
    inits: () => inits }));
}

describe('the backend edge: cancelled while the backend session opens', () => {
  let backend, daemon;

  before(async () => {
    backend = await holdingBackend();
    daemon = await startMulti({
      backends: [{ name: 'hold', url: backend.url, era: 'legacy' }],
      operational: 'timeouts:\n  default: 30s',
    });
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
  });

  test('the call ends without a response at once, not when the open is through',
    guarded(async () => {
      const { port } = daemon;
      const { sid } = await openSession(port);
      const before = backend.inits();
      const t0 = Date.now();
      const call = postStream(port, sid, 'tools/call', { name: 'hold_t', arguments: {} },
        { id: 'held-1', timeout: 20000 });
      call.catch(() => {});
      // the client session's initialize has reached the backend
      await waitFor('the client session\'s initialize', () => backend.inits() > before,
        { timeout: 15000, interval: 20 });
      const n = await mcpPost(port, { jsonrpc: '2.0', method: 'notifications/cancelled',
        params: { requestId: 'held-1', reason: 'test' } }, { session: sid });
      assert.equal(n.status, 202, n.text);
      const s = await withTimeout(call, 20000, 'the cancelled call');
      await s.until('the cancelled call\'s stream to end', (x) => x.ended, 20000);
      assert.ok(Date.now() - t0 < HOLD_MS, `ended after ${Date.now() - t0} ms, ` +
        'not when the initialize was answered');
      assert.deepEqual(s.messages().filter((m) => m.id !== undefined), [],
        `no response for a cancelled request: ${s.text}`);
      // the session goes on
      const r = await rpc(port, sid, 'tools/call', { name: 'hold_t', arguments: {} },
        { timeout: 20000 });
      assert.match(r.json?.result?.content?.[0]?.text ?? '', /^t on hold-\d+$/, r.text);
    }));
});
