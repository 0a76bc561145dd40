// outgoingAuth token_exchange (RFC 8693; docs/ARCHITECTURE.md,
// "Outgoing authentication") against a real OpenID provider
// (oidc-provider, lib/oidc.mjs, with token exchange registered as a
// grant type): each client's access token is exchanged for the backend,
// per principal, once for many calls; the backend (lib/backend.mjs GET
// /seen) sees the exchanged token, never the client's; a failed
// exchange is an error, never a call without credentials; no token
// value in vmcpctl's dump or in the state file.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

import {
  useHarness, guarded, startTestBackend, startDaemon, httpRequest, withTimeout, vmcpctl,
  freePort, mcpPost, waitFor, HOST, LEGACY_VERSION,
} from './lib/harness.mjs';
import { startIdp, oidcConfig, exchangeConfig } from './lib/oidc.mjs';
import {
  useMulti, startModern, startSpec, openStream, modernMeta, modern, MODERN,
} from './lib/multi.mjs';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';

useHarness();
useMulti();
process.env.VMCPD_TEST_TX_SECRET = 'tx-secret-9c41e07b2d';
const bearer = (t) => ({ Authorization: `Bearer ${t}` });

async function seen(backend) {
  const r = await httpRequest(backend.port, { method: 'GET', path: '/seen', timeout: 5000 });
  assert.equal(r.status, 200, r.text);
  return r.json;
}

async function v1Call(daemon, token, message) {
  const client = new Client({ name: 'v1', version: '1.0.0' });
  await withTimeout(client.connect(new StreamableHTTPClientTransport(new URL(daemon.url),
    { requestInit: { headers: bearer(token) } })), 15000, 'v1 connect');
  try {
    return await client.callTool({ name: 'echo', arguments: { message } });
  } finally {
    await client.close();
  }
}

describe('outgoingAuth token_exchange with a real OpenID provider', () => {
  let idp, backend, daemon;
  const tokens = {};

  before(async () => {
    idp = await startIdp();
    backend = await startTestBackend();
    daemon = await startDaemon({ backendUrl: backend.url, backendName: 'b',
      extra: exchangeConfig(idp, 'b') });
    tokens.alice = await idp.token('alice');
    tokens.bob = await idp.token('bob');
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
    await idp?.stop();
  });

  test('each principal\'s calls carry its own exchanged token, never the client\'s', guarded(async () => {
    // SDK v1 as alice, several sessions and calls
    for (let i = 0; i < 3; i++) {
      const r = await v1Call(daemon, tokens.alice, `a${i}`);
      assert.deepEqual(r.content, [{ type: 'text', text: `Echo: a${i}` }]);
    }
    // SDK v2 as bob
    const client = new V2Client({ name: 'v2', version: '1.0.0' });
    await withTimeout(client.connect(new V2Transport(new URL(daemon.url),
      { requestInit: { headers: bearer(tokens.bob) } })), 15000, 'v2 connect');
    const r = await client.callTool({ name: 'echo', arguments: { message: 'b0' } });
    assert.deepEqual(r.content, [{ type: 'text', text: 'Echo: b0' }]);
    await client.close();

    const s = await seen(backend);
    const auth = s.map((e) => e.authorization);
    assert.ok(s.length > 0);
    for (const a of auth) {
      assert.match(a ?? 'none', /^Bearer xt\.(alice|bob)\./, JSON.stringify(s));
      assert.ok(!a.includes(tokens.alice) && !a.includes(tokens.bob), 'a client token was forwarded');
    }
    const byUser = (u) => idp.exchanges.filter((x) => x.sub === u);
    assert.equal(byUser('alice').length, 1, JSON.stringify(idp.exchanges.map((x) => x.sub)));
    assert.equal(byUser('bob').length, 1, JSON.stringify(idp.exchanges.map((x) => x.sub)));
    assert.equal(byUser('alice')[0].audience, 'backend-b');
    assert.equal(byUser('alice')[0].scope, 'mcp');
    // the principals' views are their own
    const d = await vmcpctl(['dump', 'views'], { stateDir: daemon.stateDir });
    const vkeys = d.stdout.trim().split('\n').map((l) => JSON.parse(l).key).filter((k) => k.startsWith('view|'));
    assert.ok(vkeys.filter((k) => !k.endsWith('|anon|')).length >= 2, vkeys.join(' '));
    const calls = s.filter((e) => e.rpc === 'tools/call');
    assert.ok(calls.some((e) => e.authorization === `Bearer ${byUser('alice')[0].token}`));
    assert.ok(calls.some((e) => e.authorization === `Bearer ${byUser('bob')[0].token}`));
  }));

  test('a 2026-07-28 (stateless) client: lists and calls as its principal', guarded(async () => {
    const token = idp.forge(idp.claims({ sub: 'dave', client_id: 'dave' }));
    const l = await modern(daemon.port, 'tools/list', {}, bearer(token));
    assert.equal(l.status, 200, l.text);
    assert.ok(l.json.result.tools.some((t) => t.name === 'echo'), l.text);
    const c = await modern(daemon.port, 'tools/call', { name: 'echo', arguments: { message: 'm' } },
      { ...bearer(token), 'Mcp-Name': 'echo' });
    assert.equal(c.status, 200, c.text);
    assert.match(c.text, /Echo: m/);
    const x = idp.exchanges.filter((e) => e.sub === 'dave');
    assert.equal(x.length, 1);
    assert.ok((await seen(backend)).some((e) => e.rpc === 'tools/call' && e.authorization === `Bearer ${x[0].token}`));
  }));

  test('many concurrent calls of a new principal, across the workers, cost one exchange', guarded(async () => {
    const token = idp.forge(idp.claims({ sub: 'carol', client_id: 'carol' }));
    const rs = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => v1Call(daemon, token, `c${i}`)));
    rs.forEach((r, i) => assert.deepEqual(r.content, [{ type: 'text', text: `Echo: c${i}` }]));
    assert.equal(idp.exchanges.filter((x) => x.sub === 'carol').length, 1,
      JSON.stringify(idp.exchanges.map((x) => x.sub)));
  }));

  test('a cancellation reaches the backend with the principal\'s exchanged token', guarded(async () => {
    const client = new Client({ name: 'v1', version: '1.0.0' });
    await withTimeout(client.connect(new StreamableHTTPClientTransport(new URL(daemon.url),
      { requestInit: { headers: bearer(tokens.alice) } })), 15000, 'v1 connect');
    try {
      const ac = new AbortController();
      const call = client.callTool({ name: 'slow', arguments: { ms: 20000 } }, undefined,
        { signal: ac.signal, timeout: 30000 });
      await waitFor('the slow call at the backend', async () =>
        (await seen(backend)).some((e) => e.rpc === 'tools/call' && e.authorization?.startsWith('Bearer xt.alice.')),
      { timeout: 10000 });
      await new Promise((r) => setTimeout(r, 300));
      ac.abort('enough');
      await assert.rejects(call);
      const x = idp.exchanges.find((e) => e.sub === 'alice');
      await waitFor('notifications/cancelled at the backend', async () =>
        (await seen(backend)).some((e) => e.rpc === 'notifications/cancelled'), { timeout: 10000 });
      for (const e of (await seen(backend)).filter((f) => f.rpc === 'notifications/cancelled'))
        assert.equal(e.authorization, `Bearer ${x.token}`);
    } finally {
      await client.close();
    }
  }));

  test('a client session\'s end closes its backend session with the exchanged token', guarded(async () => {
    const client = new Client({ name: 'v1', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(daemon.url),
      { requestInit: { headers: bearer(tokens.bob) } });
    await withTimeout(client.connect(transport), 15000, 'v1 connect');
    await client.callTool({ name: 'echo', arguments: { message: 'bye' } });
    await transport.terminateSession();
    await client.close();
    const x = idp.exchanges.find((e) => e.sub === 'bob');
    await waitFor('the backend session DELETEd', async () =>
      (await seen(backend)).some((e) => e.method === 'DELETE'), { timeout: 15000 });
    for (const e of (await seen(backend)).filter((f) => f.method === 'DELETE'))
      assert.ok(e.authorization?.startsWith('Bearer xt.'), JSON.stringify(e));
    assert.ok((await seen(backend)).some((e) => e.method === 'DELETE' &&
      e.authorization === `Bearer ${x.token}`));
  }));

  test('vmcpctl dump tokens shows keys and expiry, no token; the state file holds none', guarded(async () => {
    assert.ok(idp.exchanges.length >= 2);
    const d = await vmcpctl(['dump', 'tokens'], { stateDir: daemon.stateDir });
    assert.equal(d.code, 0, d.stderr);
    const rows = d.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
    assert.ok(rows.some((r) => r.key.includes('|b|backend-b|')), d.stdout);
    assert.ok(rows.every((r) => r.expires), d.stdout);
    for (const x of idp.exchanges) {
      assert.ok(!d.stdout.includes(x.token), 'a token in the dump');
      assert.ok(!d.stdout.includes(x.token.split('.')[2]), 'a token in the dump');
    }
    // a copied state file leaks no usable token: none in the clear
    for (const f of fs.readdirSync(daemon.stateDir)) {
      const p = path.join(daemon.stateDir, f);
      if (!fs.statSync(p).isFile())
        continue;
      const buf = fs.readFileSync(p);
      for (const x of idp.exchanges)
        assert.equal(buf.indexOf(x.token.split('.')[2]), -1, `a token in ${f}`);
    }
  }));

  test('a GET stream ends when the access token it was opened with expires', guarded(async () => {
    const exp = Math.floor(Date.now() / 1000) + 3;
    const token = idp.forge(idp.claims({ sub: 'streamer', client_id: 'streamer', exp }));
    const init = await mcpPost(daemon.port, { jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: LEGACY_VERSION, capabilities: {}, clientInfo: { name: 's', version: '1' } } },
    { headers: bearer(token), timeout: 15000 });
    assert.equal(init.status, 200, init.text);
    const sid = init.headers['mcp-session-id'];
    assert.ok(sid);
    const ended = await new Promise((resolve, reject) => {
      const req = http.request({ host: HOST, port: daemon.port, path: '/mcp', method: 'GET',
        headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': sid,
          'MCP-Protocol-Version': LEGACY_VERSION, ...bearer(token) } }, (res) => {
        if (res.statusCode !== 200)
          reject(new Error(`GET: ${res.statusCode}`));
        res.on('data', () => {});
        res.on('end', () => resolve(Date.now()));
        res.on('error', reject);
      });
      const t = setTimeout(() => { req.destroy(); reject(new Error('the stream outlived its token by 20 s')); },
        (exp * 1000 - Date.now()) + 20000);
      req.on('close', () => clearTimeout(t));
      req.on('error', reject);
      req.end();
    });
    assert.ok(ended >= exp * 1000 - 1000, `ended ${exp * 1000 - ended} ms before the token's exp`);
  }));

  test('a subscriptions/listen stream ends, with its result, when its access token expires', guarded(async () => {
    const exp = Math.floor(Date.now() / 1000) + 3;
    const token = idp.forge(idp.claims({ sub: 'listener', client_id: 'listener', exp }));
    const g = await openStream(daemon.port, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'subscriptions/listen', ...bearer(token) },
      body: { jsonrpc: '2.0', id: 'L1', method: 'subscriptions/listen',
        params: { _meta: modernMeta(), notifications: { toolsListChanged: true } } },
      timeout: 30000,
    });
    try {
      assert.equal(g.status, 200, g.text);
      await g.until('ended at exp', (st) => st.ended, exp * 1000 - Date.now() + 20000);
      assert.ok(Date.now() >= exp * 1000 - 1000, 'ended before the token expired');
      assert.ok(g.events.some((e) => e.msg?.id === 'L1' && e.msg?.result?.resultType === 'complete'),
        g.text);
    } finally {
      g.close();
    }
  }));

  test('a failed exchange is an error naming the backend, never a call without credentials', guarded(async () => {
    const before = (await seen(backend)).length;
    idp.exchangeFail = 'subject token refused';
    try {
      const token = await idp.token('vmcpd');	// a principal with no token yet
      let text;
      try {
        const r = await v1Call(daemon, token, 'x');
        text = JSON.stringify(r);
        assert.ok(r.isError, text);
      } catch (e) {
        text = e.message;
      }
      assert.match(text, /backend b\b/, text);
      const after = await seen(backend);
      assert.ok(after.slice(before).every((e) => e.authorization?.startsWith('Bearer xt.')),
        JSON.stringify(after.slice(before)));
    } finally {
      idp.exchangeFail = null;
    }
  }));

  test('after a restart the sealed tokens do not open: exchanged anew, calls go on', guarded(async () => {
    const before = idp.exchanges.filter((x) => x.sub === 'alice').length;
    await daemon.stop();
    await daemon.start();
    const r = await v1Call(daemon, tokens.alice, 'again');
    assert.deepEqual(r.content, [{ type: 'text', text: 'Echo: again' }]);
    assert.equal(idp.exchanges.filter((x) => x.sub === 'alice').length, before + 1);
  }));
});

describe('outgoingAuth token_exchange with the token endpoint down', () => {
  let idp, backend, daemon;

  before(async () => {
    idp = await startIdp();
    backend = await startTestBackend();
    const dead = await freePort();
    daemon = await startDaemon({ backendUrl: backend.url, backendName: 'b',
      extra: exchangeConfig(idp, 'b', `http://${HOST}:${dead}/token`) });
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
    await idp?.stop();
  });

  test('a call is an error naming the backend; nothing reaches the backend', guarded(async () => {
    let text;
    try {
      const r = await v1Call(daemon, await idp.token('alice'), 'x');
      text = JSON.stringify(r);
      assert.ok(r.isError, text);
    } catch (e) {
      text = e.message;
    }
    assert.match(text, /backend b\b.*token exchange failed: the token endpoint cannot be reached/, text);
    // not even the era probe or a list: every request needs the token
    assert.deepEqual(await seen(backend), []);
  }));
});

describe('outgoingAuth token_exchange to a backend that speaks both revisions', () => {
  let idp, backend, daemon;

  before(async () => {
    idp = await startIdp();
    backend = await startModern({ tools: ['t1'] });
    daemon = await startDaemon({ backendUrl: backend.url, backendName: 'm',
      extra: exchangeConfig(idp, 'm') });
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
    await idp?.stop();
  });

  test('the era probe, lists and calls all carry the principal\'s exchanged token', guarded(async () => {
    const token = await idp.token('alice');
    const client = new V2Client({ name: 'v2', version: '1.0.0' });
    await withTimeout(client.connect(new V2Transport(new URL(daemon.url),
      { requestInit: { headers: bearer(token) } })), 15000, 'v2 connect');
    const r = await client.callTool({ name: 't1', arguments: {} });
    assert.match(r.content[0].text, /t1/);
    await client.close();
    const s = await seen(backend);
    assert.ok(s.some((e) => e.method === 'server/discover'), JSON.stringify(s));
    assert.ok(s.some((e) => e.method === 'initialize'), JSON.stringify(s));
    assert.ok(s.some((e) => e.method === 'tools/call'), JSON.stringify(s));
    const x = idp.exchanges.filter((e) => e.sub === 'alice');
    assert.equal(x.length, 1);
    for (const e of s)
      assert.equal(e.authorization, `Bearer ${x[0].token}`, `${e.method} without the exchanged token`);
  }));
});

describe('without token_exchange, principals share one view', () => {
  let idp, backend, daemon;

  before(async () => {
    idp = await startIdp();
    backend = await startTestBackend();
    daemon = await startDaemon({ backendUrl: backend.url, backendName: 'b', extra: oidcConfig(idp) });
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
    await idp?.stop();
  });

  test('two principals, one view (scope anon), no exchange', guarded(async () => {
    for (const who of ['alice', 'bob'])
      assert.deepEqual((await v1Call(daemon, await idp.token(who), who)).content,
        [{ type: 'text', text: `Echo: ${who}` }]);
    const d = await vmcpctl(['dump', 'views'], { stateDir: daemon.stateDir });
    assert.equal(d.code, 0, d.stderr);
    const keys = d.stdout.trim().split('\n').map((l) => JSON.parse(l).key).filter((k) => k.startsWith('view|'));
    assert.ok(keys.length >= 1, d.stdout.slice(0, 2000));
    assert.ok(keys.every((k) => k.endsWith('|anon|')), keys.join(' '));
    assert.equal(idp.exchanges.length, 0);
  }));
});

describe('outgoingAuth token_exchange: a backend\'s request answered by the client', () => {
  let idp, asker, daemon;

  before(async () => {
    idp = await startIdp();
    asker = await startSpec({ label: 'asker', elicit: true });
    daemon = await startDaemon({ backendUrl: asker.url, backendName: 'asker',
      extra: exchangeConfig(idp, 'asker') });
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
    await idp?.stop();
  });

  test('the elicitation\'s answer reaches the backend (with the exchanged token)', guarded(async () => {
    const client = new Client({ name: 'v1', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { answer: '42' } }));
    await withTimeout(client.connect(new StreamableHTTPClientTransport(new URL(daemon.url),
      { requestInit: { headers: bearer(await idp.token('alice')) } })), 15000, 'v1 connect');
    try {
      const r = await client.callTool({ name: 'ask', arguments: { question: 'q?' } }, undefined,
        { timeout: 40000 });
      assert.ok(!r.isError, JSON.stringify(r));
      assert.match(r.content[0].text, /answer .*42/);
    } finally {
      await client.close();
    }
    assert.equal(idp.exchanges.length, 1);
  }));
});
