// Per-user upstream accounts (outgoingAuth authorization_code;
// docs/ARCHITECTURE.md, "Linking users' accounts"): what each kind of
// client sees when its principal has not linked the backend yet, with
// real clients: the official SDK v1 (2025-11-25, UrlElicitationRequiredError
// when it declared elicitation.url, a tool error naming the URL when
// not), the SDK v2 (2026-07-28: an input_required whose inputRequests
// ask a URL-mode elicitation/create, answered by its handler) and raw
// 2026-07-28 requests (the sealed requestState: tampered -32602,
// accepted but still not linked: the same URL again, declined: a tool
// error).  No call reaches the backend without the person's link.
// The daemon's clients authenticate at a real OpenID provider
// (lib/oidc.mjs); no consent is completed in this part (no browser).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import {
  useHarness, guarded, startTestBackend, startDaemon, httpRequest, withTimeout,
} from './lib/harness.mjs';
import { startIdp, oidcConfig } from './lib/oidc.mjs';
import { useMulti, modernMeta, modern, MODERN } from './lib/multi.mjs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';

useHarness();
useMulti();
process.env.VMCPD_TEST_LOGIN_SECRET = 'login-secret-5a1e0c9d';
process.env.VMCPD_TEST_AC_SECRET = 'ac-secret-77d0b1e2f3';
const bearer = (t) => ({ Authorization: `Bearer ${t}` });
const CALLBACK = 'https://vmcpd.example.com/oauth/callback';
const START = /^https:\/\/vmcpd\.example\.com\/oauth\/start\?consent=(vmcpd-e-[0-9a-f]{32})$/;

function linkConfig(idp) {
  return oidcConfig(idp, { extra: ['    clientId: vmcpd', '    clientSecretEnv: VMCPD_TEST_LOGIN_SECRET'] }) + [
    'outgoingAuth:',
    '  source: inline',
    '  backends:',
    '    b:',
    '      type: authorization_code',
    '      authorizationCode:',
    '        authorizationUrl: https://upstream.example.com/authorize',
    '        tokenUrl: https://upstream.example.com/token',
    '        clientId: vmcpd-upstream',
    '        clientSecretEnv: VMCPD_TEST_AC_SECRET',
    '        scopes: [repo]',
    `        callbackUrl: ${CALLBACK}`,
  ].join('\n') + '\n';
}

async function seenCalls(backend) {
  const r = await httpRequest(backend.port, { method: 'GET', path: '/seen', timeout: 5000 });
  assert.equal(r.status, 200, r.text);
  return r.json.filter((e) => e.rpc === 'tools/call');
}

async function v1Client(daemon, token, capabilities) {
  const client = new Client({ name: 'links-v1', version: '1.0.0' }, { capabilities });
  await withTimeout(client.connect(new StreamableHTTPClientTransport(new URL(daemon.url),
    { requestInit: { headers: bearer(token) } })), 15000, 'v1 connect');
  return client;
}

/* a raw 2026-07-28 tools/call of echo */
const call = (port, token, caps, extra = {}) => modern(port, 'tools/call',
  { _meta: modernMeta(caps), name: 'echo', arguments: { message: 'hi' }, ...extra },
  { ...bearer(token), 'Mcp-Name': 'echo' });

describe('a backend acting as each user, not linked yet', () => {
  let idp, backend, daemon;
  const tokens = {};

  before(async () => {
    idp = await startIdp();
    backend = await startTestBackend();
    daemon = await startDaemon({ backendUrl: backend.url, backendName: 'b', extra: linkConfig(idp) });
    tokens.alice = await idp.token('alice');
    tokens.bob = await idp.token('bob');
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
    await idp?.stop();
  });

  test('SDK v1 with elicitation.url: -32042 URLElicitationRequired, one consent per call and per person', guarded(async () => {
    const ids = [];
    for (const who of ['alice', 'alice', 'bob']) {
      const client = await v1Client(daemon, tokens[who], { elicitation: { url: {} } });
      try {
        // the tool is listed before linking (lists need no account)
        const l = await client.listTools();
        assert.ok(l.tools.some((t) => t.name === 'echo'), JSON.stringify(l));
        const e = await client.callTool({ name: 'echo', arguments: { message: 'x' } }).then(
          (r) => assert.fail(`a result: ${JSON.stringify(r)}`), (err) => err);
        assert.ok(e instanceof UrlElicitationRequiredError, String(e));
        assert.equal(e.code, -32042);
        assert.equal(e.elicitations.length, 1);
        const el = e.elicitations[0];
        assert.equal(el.mode, 'url');
        assert.match(el.url, START);
        assert.equal(START.exec(el.url)[1], el.elicitationId);
        assert.equal(el.message, 'b needs your consent: open the link to connect your account');
        ids.push(el.elicitationId);
      } finally {
        await client.close();
      }
    }
    assert.equal(new Set(ids).size, 3, ids.join(' '));
    assert.deepEqual(await seenCalls(backend), [], 'a call reached the backend without a link');
  }));

  test('SDK v1 without URL elicitation: a tool error naming the backend and the URL', guarded(async () => {
    const client = await v1Client(daemon, tokens.alice, { elicitation: {} });
    try {
      const r = await client.callTool({ name: 'echo', arguments: { message: 'x' } });
      assert.equal(r.isError, true, JSON.stringify(r));
      const text = r.content[0].text;
      assert.match(text, /^Backend b acts as your own account there, which is not linked yet: open https:\/\/vmcpd\.example\.com\/oauth\/start\?consent=vmcpd-e-[0-9a-f]{32} to connect it, then try again$/);
    } finally {
      await client.close();
    }
    assert.deepEqual(await seenCalls(backend), []);
  }));

  test('2026-07-28: input_required with a URL elicitation; its requestState sealed and checked', guarded(async () => {
    const caps = { elicitation: { url: {} } };
    const r = await call(daemon.port, tokens.alice, caps);
    assert.equal(r.status, 200, r.text);
    const res = r.json.result;
    assert.equal(res.resultType, 'input_required', r.text);
    assert.deepEqual(Object.keys(res.inputRequests), ['vmcpd-consent']);
    const ir = res.inputRequests['vmcpd-consent'];
    assert.equal(ir.method, 'elicitation/create');
    assert.equal(ir.params.mode, 'url');
    assert.match(ir.params.url, START);
    assert.equal(ir.params.elicitationId, undefined, 'no elicitationId in an inputRequest');
    assert.equal(typeof res.requestState, 'string');
    assert.ok(!res.requestState.includes('alice') && !res.requestState.includes('vmcpd-e-'),
      'the state is sealed, not readable');

    // tampered (as the conformance check does): a JSON-RPC error
    const accept = { 'vmcpd-consent': { action: 'accept' } };
    const t = await call(daemon.port, tokens.alice, caps,
      { requestState: `${res.requestState}-TAMPERED`, inputResponses: accept });
    assert.equal(t.json?.error?.code, -32602, t.text);
    const flip = res.requestState.slice(0, -1) + (res.requestState.endsWith('0') ? '1' : '0');
    const f = await call(daemon.port, tokens.alice, caps, { requestState: flip, inputResponses: accept });
    assert.equal(f.json?.error?.code, -32602, f.text);
    // another principal's retry with alice's state: refused alike
    const b = await call(daemon.port, tokens.bob, caps, { requestState: res.requestState, inputResponses: accept });
    assert.equal(b.json?.error?.code, -32602, b.text);

    // accepted, but nothing linked yet: asked again, the same URL
    const a = await call(daemon.port, tokens.alice, caps, { requestState: res.requestState, inputResponses: accept });
    assert.equal(a.json?.result?.resultType, 'input_required', a.text);
    assert.equal(a.json.result.inputRequests['vmcpd-consent'].params.url, ir.params.url);
    assert.notEqual(a.json.result.requestState, res.requestState);

    // declined: a tool error, and still no call made
    const d = await call(daemon.port, tokens.alice, caps, { requestState: a.json.result.requestState,
      inputResponses: { 'vmcpd-consent': { action: 'decline' } } });
    assert.equal(d.json?.result?.isError, true, d.text);
    assert.match(d.json.result.content[0].text, /^Backend b: the consent to link your account was declined/);

    // no URL mode declared in this request: the tool error with the URL
    const n = await call(daemon.port, tokens.alice, { elicitation: {} });
    assert.equal(n.json?.result?.isError, true, n.text);
    assert.equal(n.json.result.resultType, 'complete');
    assert.match(n.json.result.content[0].text, /open https:\/\/vmcpd\.example\.com\/oauth\/start\?consent=vmcpd-e-/);
    assert.deepEqual(await seenCalls(backend), []);
  }));

  test('SDK v2 (2026-07-28) answers the URL elicitation with its handler; declined, the call is not made', guarded(async () => {
    const asked = [];
    const c = new V2Client({ name: 'links-v2', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: MODERN } }, capabilities: { elicitation: { url: {} } } });
    c.setRequestHandler('elicitation/create', async (req) => {
      asked.push(req.params);
      return { action: 'decline' };
    });
    await withTimeout(c.connect(new V2Transport(new URL(daemon.url),
      { requestInit: { headers: bearer(tokens.bob) } })), 20000, 'v2 connect');
    try {
      const r = await c.callTool({ name: 'echo', arguments: { message: 'v2' } });
      assert.equal(r.isError, true, JSON.stringify(r));
      assert.match(r.content[0].text, /declined/);
      assert.equal(asked.length, 1, JSON.stringify(asked));
      assert.equal(asked[0].mode, 'url');
      assert.match(asked[0].url, START);
      assert.equal(asked[0].message, 'b needs your consent: open the link to connect your account');
    } finally {
      await c.close().catch(() => {});
    }
    assert.deepEqual(await seenCalls(backend), []);
  }));
});
