// Raw HTTP against vmcpd's Legacy endpoint: the status codes and JSON-RPC
// errors of MCP 2025-11-25, Transports, Streamable HTTP (the SDK's where
// it names none) for every kind of bad request, and a
// daemon that keeps serving (no worker died) after all of them.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  useHarness, guarded, startEverything, startDaemon, httpRequest, mcpPost, rpc, openSession,
  MCP_ACCEPT, LEGACY_VERSION, nextId,
} from './lib/harness.mjs';

useHarness();

/* An HTTP error whose body is a JSON-RPC error with code (when given). */
function expectError(res, status, code) {
  assert.equal(res.status, status, `status; body: ${res.text}`);
  if (code === undefined)
    return;
  assert.match(res.headers['content-type'] || '', /^application\/json/, 'content-type');
  assert.equal(res.json.jsonrpc, '2.0');
  assert.equal(res.json.error.code, code, `code; body: ${res.text}`);
  assert.equal(typeof res.json.error.message, 'string');
  assert.ok(res.json.error.message.length > 0);
  assert.equal(res.json.result, undefined);
}

const ping = () => ({ jsonrpc: '2.0', id: nextId(), method: 'ping' });

describe('HTTP edge of the Legacy endpoint', () => {
  let everything, daemon, port, sid, pids;

  before(async () => {
    everything = await startEverything();
    daemon = await startDaemon({ backendUrl: everything.url, maxBodySize: '8KiB' });
    port = daemon.port;
    pids = await daemon.workerPids();
    assert.equal(pids.length, 2);
    ({ sid } = await openSession(port));
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
  });

  test('a valid request works (control)', guarded(async () => {
    const r = await rpc(port, sid, 'ping');
    assert.equal(r.status, 200);
    assert.deepEqual(r.json.result, {});
    const c = await mcpPost(port, ping(), {
      session: sid, headers: { 'Content-Type': 'application/json; charset=utf-8' },
    });
    assert.equal(c.status, 200, 'Content-Type with charset is fine');
  }));

  test('missing or partial Accept: 406 -32000', guarded(async () => {
    // (*/* is accepted on purpose: RFC 9110 media ranges; q=0 excludes)
    for (const accept of [undefined, 'application/json', 'text/event-stream', 'text/html',
      'application/json, text/event-stream;q=0', 'application/*;q=0.5']) {
      const headers = { 'Content-Type': 'application/json', 'Mcp-Session-Id': sid };
      if (accept !== undefined)
        headers.Accept = accept;
      const r = await httpRequest(port, { headers, body: ping() });
      expectError(r, 406, -32000);
    }
  }));

  test('wrong Content-Type: 415', guarded(async () => {
    for (const ct of [undefined, 'text/plain', 'application/x-www-form-urlencoded', 'application/jsonx']) {
      const headers = { Accept: MCP_ACCEPT, 'Mcp-Session-Id': sid };
      if (ct !== undefined)
        headers['Content-Type'] = ct;
      const r = await httpRequest(port, { headers, body: ping() });
      expectError(r, 415, -32000);
    }
  }));

  test('invalid JSON: 400 -32700', guarded(async () => {
    for (const body of ['{"jsonrpc":"2.0","id":1,', '', 'nonsense', '{"a":1}}',
      Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d])]) {
      const r = await mcpPost(port, body, { session: sid });
      expectError(r, 400, -32700);
      assert.equal(r.json.id, null);
    }
  }));

  test('JSON that is not JSON-RPC: 400 -32600', guarded(async () => {
    const bad = [
      { foo: 1 },
      { jsonrpc: '1.0', id: 1, method: 'ping' },
      { id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: null, method: 'ping' },
      { jsonrpc: '2.0', id: 1.5, method: 'ping' },
      { jsonrpc: '2.0', id: { x: 1 }, method: 'ping' },
      { jsonrpc: '2.0', id: 1, method: 42 },
      { jsonrpc: '2.0', id: 1, method: 'ping', params: 'str' },
      42, 'ping', null,
    ];
    for (const b of bad) {
      const r = await mcpPost(port, JSON.stringify(b), { session: sid });
      expectError(r, 400, -32600);
    }
  }));

  test('a batch array: 400', guarded(async () => {
    const r = await mcpPost(port, [ping(), ping()], { session: sid });
    expectError(r, 400);
    assert.ok(r.json.error, `a JSON-RPC error: ${r.text}`);
    assert.ok([-32600, -32700].includes(r.json.error.code));
    const empty = await mcpPost(port, [], { session: sid });
    expectError(empty, 400);
  }));

  test('no Mcp-Session-Id on tools/list: 400 -32000', guarded(async () => {
    const r = await rpc(port, undefined, 'tools/list', {});
    expectError(r, 400, -32000);
  }));

  test('unknown session id: 404 -32001', guarded(async () => {
    const unknown = 'A'.repeat(22) + 'b0-_Zq9xY8wV7uT6sR5qP4o';
    const r = await rpc(port, unknown, 'tools/list', {});
    expectError(r, 404, -32001);
    // the id of the request is echoed
    const id = nextId();
    const r2 = await mcpPost(port, { jsonrpc: '2.0', id, method: 'ping' }, { session: unknown });
    expectError(r2, 404, -32001);
    assert.equal(r2.json.id, id);
    const del = await httpRequest(port, {
      method: 'DELETE', headers: { 'Mcp-Session-Id': unknown, 'MCP-Protocol-Version': LEGACY_VERSION },
    });
    expectError(del, 404, -32001);
  }));

  test('bad session id syntax: 404', guarded(async () => {
    for (const bad of ['x', 'a b c d e f g h i j k l m n', '../../../../etc/passwd',
      'é'.repeat(30), 'A'.repeat(4000), sid + '\u0001']) {
      const r = await httpRequest(port, {
        headers: { Accept: MCP_ACCEPT, 'Content-Type': 'application/json',
          'Mcp-Session-Id': Buffer.from(bad, 'utf8').toString('latin1') },
        body: ping(),
      }).catch((e) => ({ status: 'client-refused', error: e }));
      if (r.status === 'client-refused')
        continue;	// node itself will not send a control character
      expectError(r, 404, -32001);
    }
  }));

  test('PUT /mcp: 405 with Allow', guarded(async () => {
    for (const method of ['PUT', 'PATCH']) {
      const r = await httpRequest(port, { method, headers: { Accept: MCP_ACCEPT,
        'Content-Type': 'application/json', 'Mcp-Session-Id': sid }, body: ping() });
      assert.equal(r.status, 405, `${method}: ${r.text}`);
      const allow = (r.headers.allow || '').split(/\s*,\s*/);
      assert.ok(allow.includes('POST'), `Allow: ${r.headers.allow}`);
      assert.ok(!allow.includes(method));
    }
  }));

  test('unknown path: 404', guarded(async () => {
    for (const p of ['/', '/nope', '/mcp/extra', '/MCP']) {
      const r = await httpRequest(port, { method: 'POST', path: p,
        headers: { Accept: MCP_ACCEPT, 'Content-Type': 'application/json' }, body: ping() });
      assert.equal(r.status, 404, `${p}: ${r.status}`);
    }
    const g = await httpRequest(port, { method: 'GET', path: '/nope' });
    assert.equal(g.status, 404);
  }));

  test('body over http.maxBodySize (8KiB): 413', guarded(async () => {
    const big = { jsonrpc: '2.0', id: nextId(), method: 'tools/call',
      params: { name: 'echo', arguments: { message: 'x'.repeat(9000) } } };
    const r = await mcpPost(port, big, { session: sid }).catch((e) => ({ status: 'reset', e }));
    assert.equal(r.status, 413, r.e ? `connection error ${r.e.message}` : r.text);
    // just under the limit is fine
    const ok = await rpc(port, sid, 'tools/call',
      { name: 'echo', arguments: { message: 'y'.repeat(7000) } });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json.result.content[0].text, `Echo: ${'y'.repeat(7000)}`);
  }));

  test('initialize with an Mcp-Session-Id: 400 -32600', guarded(async () => {
    const r = await mcpPost(port, {
      jsonrpc: '2.0', id: nextId(), method: 'initialize',
      params: { protocolVersion: LEGACY_VERSION, capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    }, { session: sid, version: null });
    expectError(r, 400, -32600);
    assert.equal(r.headers['mcp-session-id'], undefined);
  }));

  test('MCP-Protocol-Version: 1999-01-01: 400', guarded(async () => {
    const r = await rpc(port, sid, 'ping', undefined, { version: '1999-01-01' });
    expectError(r, 400);
    assert.ok(r.json.error);
    const g = await rpc(port, sid, 'ping', undefined, { version: 'garbage' });
    expectError(g, 400);
    // supported older Legacy versions are accepted
    const old = await rpc(port, sid, 'ping', undefined, { version: '2025-06-18' });
    assert.equal(old.status, 200);
  }));

  test('unknown method on a valid session: 200 with -32601', guarded(async () => {
    const id = nextId();
    const r = await mcpPost(port, { jsonrpc: '2.0', id, method: 'no/such/method', params: {} },
      { session: sid });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.id, id);
    assert.equal(r.json.error.code, -32601);
  }));

  test('notifications/initialized: 202 with an empty body', guarded(async () => {
    const r = await mcpPost(port, { jsonrpc: '2.0', method: 'notifications/initialized' },
      { session: sid });
    assert.equal(r.status, 202);
    assert.equal(r.text, '');
    const other = await mcpPost(port, { jsonrpc: '2.0', method: 'notifications/whatever', params: {} },
      { session: sid });
    assert.equal(other.status, 202);
    assert.equal(other.text, '');
  }));

  test('session ids: visible ASCII, at least 128 bits, all different', guarded(async () => {
    const ids = new Set([sid]);
    for (let i = 0; i < 5; i++)
      ids.add((await openSession(port)).sid);
    assert.equal(ids.size, 6);
    for (const id of ids) {
      assert.match(id, /^[\x21-\x7e]+$/);
      assert.ok(id.length >= 22, `${id} is ${id.length} chars`);
    }
  }));

  test('GET /healthz: 200', guarded(async () => {
    const r = await httpRequest(port, { method: 'GET', path: '/healthz' });
    assert.equal(r.status, 200);
    assert.equal(r.json.status, 'ok');
    assert.ok(pids.includes(r.json.pid), `pid ${r.json.pid} is a worker`);
    assert.ok(r.json.worker === 0 || r.json.worker === 1);
  }));

  test('bad Origin: 403; a loopback Origin is allowed', guarded(async () => {
    const r = await mcpPost(port, ping(), { session: sid, headers: { Origin: 'http://evil.example' } });
    assert.equal(r.status, 403);
    const i = await mcpPost(port, {
      jsonrpc: '2.0', id: nextId(), method: 'initialize',
      params: { protocolVersion: LEGACY_VERSION, capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    }, { version: null, headers: { Origin: 'http://evil.example:' + port } });
    assert.equal(i.status, 403);
    assert.equal(i.headers['mcp-session-id'], undefined);
    const ok = await mcpPost(port, ping(), { session: sid,
      headers: { Origin: `http://127.0.0.1:${port}` } });
    assert.equal(ok.status, 200);
  }));

  test('a huge header is refused without harm', guarded(async () => {
    const r = await httpRequest(port, { headers: { Accept: MCP_ACCEPT,
      'Content-Type': 'application/json', 'Mcp-Session-Id': sid, 'X-Big': 'z'.repeat(20000) },
    body: ping() }).catch((e) => ({ status: 'reset', e }));
    assert.ok(r.status === 'reset' || (r.status >= 400 && r.status < 500), `status ${r.status}`);
  }));

  test('after all that, no worker died and a normal session works', guarded(async () => {
    assert.deepEqual(await daemon.workerPids(), pids);
    const { sid: s2 } = await openSession(port);
    for (let i = 0; i < 4; i++) {
      const r = await rpc(port, s2, 'tools/call', { name: 'echo', arguments: { message: `ok ${i}` } });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.result.content[0].text, `Echo: ok ${i}`);
    }
    const l = await rpc(port, sid, 'tools/list', {});
    assert.equal(l.status, 200);
    assert.ok(l.json.result.tools.some((t) => t.name === 'echo'));
    assert.deepEqual(await daemon.workerPids(), pids);
    assert.doesNotMatch(daemon.stderr, /killed by signal|exited with status/);
  }));
});
