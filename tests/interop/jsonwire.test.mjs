// JSON on the wire as MCP allows it: "\u0000" inside a string is valid
// JSON (RFC 8259 section 7) and passes through vmcpd intact, in both
// revisions; a progressToken that is neither a string nor an integer is
// refused with -32602 and never reaches the backend.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import {
  guarded, startTestBackend, startDaemon, openSession, rpc, mcpPost,
  httpRequest, nextId, MCP_ACCEPT,
} from './lib/harness.mjs';
import { useMulti, startSpec } from './lib/multi.mjs';

useMulti();

const MODERN = '2026-07-28';
const NUL = 'a\u0000b\u0000';

/* the JSON-RPC answer, whether it came as JSON or on an SSE stream */
const answer = (r) => r.json;

function modern(port, method, params, headers = {}) {
  return httpRequest(port, {
    headers: {
      'Content-Type': 'application/json', Accept: MCP_ACCEPT,
      'MCP-Protocol-Version': MODERN, 'Mcp-Method': method, ...headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0', id: nextId(), method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientCapabilities': {},
          ...params._meta,
        },
      },
    }),
  });
}

describe('JSON strings and progress tokens through vmcpd', () => {
  let backend, daemon, sid;

  before(async () => {
    backend = await startTestBackend();
    daemon = await startDaemon({ backendUrl: backend.url, backendName: 'b' });
    ({ sid } = await openSession(daemon.port));
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
    backend?.killGroup();
  });

  test('"\\u0000" in a tool argument comes back intact (Legacy)', guarded(async () => {
    // no _meta: the scanned fast path; with _meta: the parsed path
    for (const params of [
      { name: 'echo', arguments: { message: NUL } },
      { name: 'echo', arguments: { message: NUL }, _meta: { progressToken: 'p1' } },
    ]) {
      const r = await rpc(daemon.port, sid, 'tools/call', params);
      assert.equal(r.status, 200, r.text);
      const m = answer(r);
      assert.equal(m.result?.content?.[0]?.text, `Echo: ${NUL}`, r.text);
      assert.ok(r.text.includes('a\\u0000b\\u0000'), r.text);
    }
  }));

  test('a session whose clientInfo holds "\\u0000" is stored and found', guarded(async () => {
    const { sid: s2 } = await openSession(daemon.port, { clientName: NUL });
    // on new connections, so a worker that did not store it loads it
    for (let i = 0; i < 6; i++) {
      const r = await rpc(daemon.port, s2, 'tools/list', {});
      assert.equal(r.status, 200, r.text);
      assert.ok(r.json.result?.tools?.length > 0, r.text);
    }
  }));

  test('"\\u0000" in a tool argument comes back intact (2026-07-28)', guarded(async () => {
    const r = await modern(daemon.port, 'tools/call',
      { name: 'echo', arguments: { message: NUL } }, { 'Mcp-Name': 'echo' });
    assert.equal(r.status, 200, r.text);
    assert.equal(answer(r).result?.content?.[0]?.text, `Echo: ${NUL}`, r.text);
  }));

  test('"\\u0000" where vmcpd reads a name is refused, not cut short', guarded(async () => {
    // "echo\u0000x" must not be taken for "echo"
    let r = await rpc(daemon.port, sid, 'tools/call',
      { name: 'echo\u0000x', arguments: { message: 'm' } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.error?.code, -32602, r.text);
    assert.match(r.json.error.message, /"name" must not contain/);
    r = await mcpPost(daemon.port, { jsonrpc: '2.0', id: nextId(), method: 'ping\u0000' },
      { session: sid });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.error?.code, -32600, r.text);
  }));

  test('a progressToken that is not a string or an integer: -32602', guarded(async () => {
    for (const tok of [1.5, null, true, { a: 1 }, [1]]) {
      const params = { name: 'echo', arguments: { message: 'tok' }, _meta: { progressToken: tok } };
      let r = await rpc(daemon.port, sid, 'tools/call', params);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json?.error?.code, -32602, `Legacy ${JSON.stringify(tok)}: ${r.text}`);
      assert.match(r.json.error.message, /progressToken must be a string or an integer/);
      assert.equal(r.json.result, undefined);
      r = await modern(daemon.port, 'tools/call', params, { 'Mcp-Name': 'echo' });
      assert.equal(r.json?.error?.code, -32602, `Modern ${JSON.stringify(tok)}: ${r.text}`);
      assert.match(r.json.error.message, /progressToken must be a string or an integer/);
    }
    // string and integer tokens are fine
    for (const tok of ['t', 7]) {
      const r = await rpc(daemon.port, sid, 'tools/call',
        { name: 'echo', arguments: { message: 'ok' }, _meta: { progressToken: tok } });
      assert.equal(answer(r).result?.content?.[0]?.text, 'Echo: ok', r.text);
    }
  }));
});

describe('a refused progressToken never reaches the backend', () => {
  let spec, daemon, sid;

  before(async () => {
    spec = await startSpec({ label: 's', tools: ['t'] });
    daemon = await startDaemon({ backendUrl: spec.url, backendName: 's' });
    ({ sid } = await openSession(daemon.port));
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
  });

  const calls = async () => Object.entries((await spec.stats()).methods)
    .filter(([k]) => k.endsWith(' tools/call')).reduce((a, [, n]) => a + n, 0);

  test('in either revision', guarded(async () => {
    const params = { name: 't', arguments: {}, _meta: { progressToken: { a: 1 } } };
    let r = await rpc(daemon.port, sid, 'tools/call', params);
    assert.equal(r.json?.error?.code, -32602, r.text);
    r = await modern(daemon.port, 'tools/call', params, { 'Mcp-Name': 't' });
    assert.equal(r.json?.error?.code, -32602, r.text);
    assert.equal(await calls(), 0);
    // the same call with a good token does reach it
    r = await rpc(daemon.port, sid, 'tools/call', { ...params, _meta: { progressToken: 'ok' } });
    assert.equal(r.json?.result?.content?.[0]?.text, 's:t:{}', r.text);
    assert.equal(await calls(), 1);
  }));
});
