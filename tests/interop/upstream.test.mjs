// The backend edge (worker/upstream/upstream.c): a call can be cancelled whatever
// state it is in.  Here the state is "waiting for a backend session to
// open": the backend holds the initialize of the client session's
// backend session, the client cancels its call (MCP 2025-11-25,
// Cancellation) on another connection, and the call's POST ends without
// a response at once, not when the initialize is answered; the session
// goes on working.  And a backend session, the scope's or a client
// session's, carries no request before its notifications/initialized is
// answered.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { guarded, openSession, rpc, mcpPost, withTimeout, waitFor, HOST } from './lib/harness.mjs';
import { useMulti, startMulti, postStream, serve } from './lib/multi.mjs';

useMulti();

/*
 * A raw 2025-11-25 backend with one tool, t (NAME_t through vmcpd), on a
 * free port: handle(m, sid, answer, error, res) sees each JSON body m
 * first and returns true if it answered it (answer() is initialize's
 * answer, session PREFIX-N); the rest gets a plain answer.  Its URL.
 */
function rawBackend(prefix, handle) {
  let sessions = 0;
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
      const sid = req.headers['mcp-session-id'];
      const reply = (result, headers = {}) => {
        res.writeHead(200, { 'Content-Type': 'application/json', ...headers });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
      };
      const error = (code, message) => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code, message } }));
      };
      const answer = () => reply({ protocolVersion: '2025-11-25',
        capabilities: { tools: {} }, serverInfo: { name: prefix, version: '1' } },
      { 'Mcp-Session-Id': `${prefix}-${++sessions}` });
      if (handle(m, sid, answer, error, res))
        return;
      if (m.id === undefined) {
        res.writeHead(202).end();
        return;
      }
      switch (m.method) {
      case 'initialize':
        answer();
        break;
      case 'tools/list':
        reply({ tools: [{ name: 't', description: 'T', inputSchema: { type: 'object' } }] });
        break;
      case 'tools/call':
        reply({ content: [{ type: 'text', text: `t on ${sid}` }] });
        break;
      default:
        error(-32601, 'no');
      }
    });
  });
  return serve(srv).then((port) => `http://${HOST}:${port}/mcp`);
}

/* vmcpd in front of the one backend of make() (its url in .url), in
 * the describe block that calls it */
function useDaemon(name, make) {
  const t = {};

  before(async () => {
    t.backend = await make();
    t.daemon = await startMulti({
      backends: [{ name, url: t.backend.url, era: 'legacy' }],
      operational: 'timeouts:\n  default: 30s',
    });
  });

  after(async () => {
    if (t.daemon)
      await t.daemon.stop();
  });
  return t;
}

const HOLD_MS = 4000;

/*
 * The first initialize (the scope's session, for lists and
 * notifications) is answered at once; the later ones (a client
 * session's) after HOLD_MS.
 */
async function holdingBackend() {
  let inits = 0;
  const url = await rawBackend('hold', (m, sid, answer) => {
    if (m.method !== 'initialize')
      return false;
    if (++inits === 1)
      answer();
    else
      setTimeout(answer, HOLD_MS);
    return true;
  });
  return { url, inits: () => inits };
}

describe('the backend edge: cancelled while the backend session opens', () => {
  const t = useDaemon('hold', holdingBackend);

  test('the call ends without a response at once, not when the open is through',
    guarded(async () => {
      const { daemon, backend } = t;
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

const NOTE_MS = 1000;

/*
 * A backend that keeps the lifecycle strictly (MCP 2025-11-25,
 * Lifecycle): a session is usable once its notifications/initialized is
 * processed, which takes NOTE_MS and is what its 202 says (as an SDK
 * server that sets up per-session state, tools among it, then).  A
 * request before that is refused and noted.
 */
async function strictBackend() {
  const ready = new Set(), early = [];
  const url = await rawBackend('strict', (m, sid, answer, error, res) => {
    if (m.method === 'notifications/initialized') {
      setTimeout(() => {
        ready.add(sid);
        res.writeHead(202).end();
      }, NOTE_MS);
      return true;
    }
    if (m.id === undefined || m.method === 'initialize' || m.method === 'ping' ||
        ready.has(sid))
      return false;
    early.push(`${m.method} on ${sid}`);
    error(-32600, 'request before notifications/initialized');
    return true;
  });
  return { url, early: () => early };
}

describe('the backend edge: a backend session is used once it is initialized', () => {
  const t = useDaemon('strict', strictBackend);

  test('no request goes before the answer to notifications/initialized',
    guarded(async () => {
      const { daemon, backend } = t;
      const { port } = daemon;
      const { sid } = await openSession(port);
      const l = await rpc(port, sid, 'tools/list', {}, { timeout: 20000 });
      assert.deepEqual((l.json?.result?.tools ?? []).map((x) => x.name), ['strict_t'],
        l.text);
      const r = await rpc(port, sid, 'tools/call', { name: 'strict_t', arguments: {} },
        { timeout: 20000 });
      assert.match(r.json?.result?.content?.[0]?.text ?? '', /^t on strict-\d+$/, r.text);
      assert.deepEqual(backend.early(), [], 'requests before initialized was answered');
    }));
});
