// Per-user upstream accounts (outgoingAuth authorization_code;
// docs/ARCHITECTURE.md, "Linking users' accounts"), the call side, with
// real clients: the official SDK v1 (2025-11-25: UrlElicitationRequiredError
// when it declared elicitation.url, then notifications/elicitation/complete;
// a tool error naming the URL when not), the SDK v2 (2026-07-28: an
// input_required whose inputRequests ask a URL-mode elicitation/create,
// answered by its handler) and raw 2026-07-28 requests (the sealed
// requestState: tampered -32602, accepted but not linked: the same URL
// again, declined: a tool error).  The parts are lib/links.mjs's: the
// clients' OpenID provider, a second oidc-provider as the upstream
// service's authorization server, and the person's side driven by a real
// headless chromium (alice: the browser is what a person uses) or an
// HTTP client with a cookie jar (bob, inside the SDK v2 client's
// elicitation handler, where a browser adds nothing).  The upstream MCP
// backend lists without a token (as many servers do) and answers whoami
// with the subject of the bearer token it introspects; a call without a
// valid one is 401.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { useHarness, guarded, withTimeout, mcpPost, nextId, workerOf, waitFor } from './lib/harness.mjs';
import { sessionAs } from './lib/oidc.mjs';
import { startLinks, consent, walk, closeBrowsers } from './lib/links.mjs';
import { useMulti, modernMeta, modern, MODERN } from './lib/multi.mjs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  UrlElicitationRequiredError, ElicitationCompleteNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';

useHarness();
useMulti();
const bearer = (t) => ({ Authorization: `Bearer ${t}` });
const MESSAGE = 'up needs your consent: open the link to connect your account';

async function v1Client(L, token, capabilities) {
  const client = new Client({ name: 'links-v1', version: '1.0.0' }, { capabilities });
  await withTimeout(client.connect(new StreamableHTTPClientTransport(new URL(L.daemon.url),
    { requestInit: { headers: bearer(token) } })), 15000, 'v1 connect');
  return client;
}

/* the -32042 of a v1 client's whoami: its one elicitation */
async function elicited(client) {
  const e = await client.callTool({ name: 'whoami', arguments: {} }).then(
    (r) => assert.fail(`a result: ${JSON.stringify(r)}`), (err) => err);
  assert.ok(e instanceof UrlElicitationRequiredError, String(e));
  assert.equal(e.code, -32042);
  assert.equal(e.elicitations.length, 1);
  return e.elicitations[0];
}

/* a raw 2026-07-28 tools/call of whoami */
const call = (L, token, caps, extra = {}) => modern(L.daemon.port, 'tools/call',
  { _meta: modernMeta(caps), name: 'whoami', arguments: {}, ...extra },
  { ...bearer(token), 'Mcp-Name': 'whoami' });
const URLMODE = { elicitation: { url: {} } };
const COMPOSITE = `
compositeTools:
  - name: who
    description: whoami through a workflow
    parameters: {type: object, properties: {}}
    steps:
      - id: w
        tool: up.whoami
        arguments: {}
`;

describe('per-user upstream accounts: the call side', () => {
  let L, up, start;
  /* the subject of the token a request to the upstream carried */
  const subOf = (e) => L.as.introspect(/^Bearer (\S+)$/.exec(e.authorization)[1]);

  before(async () => {
    L = await startLinks({ extra: COMPOSITE });
    up = L.upstream;
    up.toolCalls = () => up.seen.filter((e) => e.method === 'tools/call');
    const origin = new URL(L.callbackUrl).origin.replace(/\./g, '\\.');
    start = new RegExp(`^${origin}/oauth/start\\?consent=(vmcpd-e-[0-9a-f]{32})$`);
  });

  after(async () => {
    await closeBrowsers();
    if (L) {
      await L.daemon.stop();
      await L.stop();
    }
  });

  test('not linked: SDK v1 with elicitation.url gets -32042, one consent per call and per person', guarded(async () => {
    const ids = [];
    for (const who of ['alice', 'alice', 'bob']) {
      const client = await v1Client(L, L.tokens[who], URLMODE);
      try {
        const l = await client.listTools();	// listed before any link
        assert.ok(l.tools.some((t) => t.name === 'whoami'), JSON.stringify(l));
        const el = await elicited(client);
        assert.equal(el.mode, 'url');
        assert.match(el.url, start);
        assert.equal(start.exec(el.url)[1], el.elicitationId);
        assert.equal(el.message, MESSAGE);
        ids.push(el.elicitationId);
      } finally {
        await client.close();
      }
    }
    assert.equal(new Set(ids).size, 3, ids.join(' '));
    assert.deepEqual(up.toolCalls(), [], 'a call reached the backend without a link');
  }));

  test('not linked: a client without URL elicitation gets a tool error naming the backend and the URL', guarded(async () => {
    const client = await v1Client(L, L.tokens.alice, { elicitation: {} });
    try {
      const r = await client.callTool({ name: 'whoami', arguments: {} });
      assert.equal(r.isError, true, JSON.stringify(r));
      const m = /^Backend up acts as your own account there, which is not linked yet: open (\S+) to connect it, then try again$/
        .exec(r.content[0].text);
      assert.ok(m, r.content[0].text);
      assert.match(m[1], start);
    } finally {
      await client.close();
    }
    // 2026-07-28 alike, without elicitation.url in this request
    const n = await call(L, L.tokens.alice, { elicitation: {} });
    assert.equal(n.json?.result?.isError, true, n.text);
    assert.equal(n.json.result.resultType, 'complete');
    assert.match(n.json.result.content[0].text, /^Backend up acts as your own account there/);
    assert.deepEqual(up.toolCalls(), []);
  }));

  test('not linked, 2026-07-28: input_required with a URL elicitation; the requestState sealed and checked', guarded(async () => {
    const r = await call(L, L.tokens.alice, URLMODE);
    assert.equal(r.status, 200, r.text);
    const res = r.json.result;
    assert.equal(res.resultType, 'input_required', r.text);
    assert.deepEqual(Object.keys(res.inputRequests), ['vmcpd-consent']);
    const ir = res.inputRequests['vmcpd-consent'];
    assert.equal(ir.method, 'elicitation/create');
    assert.deepEqual(Object.keys(ir.params).sort(), ['message', 'mode', 'url']);
    assert.equal(ir.params.mode, 'url');
    assert.equal(ir.params.message, MESSAGE);
    assert.match(ir.params.url, start);
    assert.equal(typeof res.requestState, 'string');
    assert.ok(!res.requestState.includes('vmcpd-e-'), 'the state is sealed, not readable');

    const accept = { 'vmcpd-consent': { action: 'accept' } };
    // tampered (as the conformance check does), a bit flipped, or
    // another principal's: one JSON-RPC error
    const flip = res.requestState.slice(0, -1) + (res.requestState.endsWith('0') ? '1' : '0');
    for (const [token, state] of [[L.tokens.alice, `${res.requestState}-TAMPERED`],
      [L.tokens.alice, flip], [L.tokens.bob, res.requestState]]) {
      const t = await call(L, token, URLMODE, { requestState: state, inputResponses: accept });
      assert.equal(t.json?.error?.code, -32602, t.text);
      assert.equal(t.json.error.message, 'invalid or expired requestState');
    }
    // accepted, but nothing linked yet: asked again, the same URL
    const a = await call(L, L.tokens.alice, URLMODE, { requestState: res.requestState, inputResponses: accept });
    assert.equal(a.json?.result?.resultType, 'input_required', a.text);
    assert.equal(a.json.result.inputRequests['vmcpd-consent'].params.url, ir.params.url);
    // declined: a tool error
    const d = await call(L, L.tokens.alice, URLMODE, { requestState: a.json.result.requestState,
      inputResponses: { 'vmcpd-consent': { action: 'decline' } } });
    assert.equal(d.json?.result?.isError, true, d.text);
    assert.match(d.json.result.content[0].text, /^Backend up: the consent to link your account was declined/);
    assert.deepEqual(up.toolCalls(), []);
  }));

  test('not linked: a composite tool\'s step to the backend fails naming the backend and the URL', guarded(async () => {
    const dave = L.idp.forge(L.idp.claims({ sub: 'dave', client_id: 'dave' }));
    const client = await v1Client(L, dave, URLMODE);
    try {
      const r = await client.callTool({ name: 'who', arguments: {} });
      assert.equal(r.isError, true, JSON.stringify(r));
      const m = /^composite tool who failed: step w: backend up: Backend up acts as your own account there, which is not linked yet: open (\S+) to connect it, then try again$/
        .exec(r.content[0].text);
      assert.ok(m, r.content[0].text);
      assert.match(m[1], start);
    } finally {
      await client.close();
    }
    assert.deepEqual(up.toolCalls(), []);
  }));

  test('alice (SDK v1, a browser) consents: told so on her session, and her retry carries her own token', guarded(async () => {
    const client = await v1Client(L, L.tokens.alice, URLMODE);
    const completed = [];
    client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => {
      completed.push(n.params.elicitationId);
    });
    try {
      const el = await elicited(client);
      const page = await consent(el.url, { as: 'alice' });
      assert.equal(page.status, 200, page.text);
      await waitFor('notifications/elicitation/complete', () => completed.includes(el.elicitationId));
      const r = await client.callTool({ name: 'whoami', arguments: {} });
      assert.deepEqual(r.content, [{ type: 'text', text: 'user alice' }]);
    } finally {
      await client.close();
    }
    const calls = up.toolCalls();
    assert.equal(calls.length, 1);
    assert.equal(await subOf(calls[0]), 'alice');
    assert.ok(L.as.issued.some((t) => calls[0].authorization === `Bearer ${t}`));
    assert.ok(!calls[0].authorization.includes(L.tokens.alice), 'the client\'s own token was forwarded');
  }));

  test('bob (SDK v2, 2026-07-28) gets his own elicitation, never alice\'s token; his handler consents and the SDK retries', guarded(async () => {
    const asked = [];
    const c = new V2Client({ name: 'links-v2', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: MODERN } }, capabilities: URLMODE });
    c.setRequestHandler('elicitation/create', async (req) => {
      asked.push(req.params);
      const w = await walk(req.params.url, { as: 'bob' });
      assert.equal(w.status, 200, w.text);
      return { action: 'accept' };
    });
    await withTimeout(c.connect(new V2Transport(new URL(L.daemon.url),
      { requestInit: { headers: bearer(L.tokens.bob) } })), 20000, 'v2 connect');
    const before = up.toolCalls().length;
    try {
      const r = await c.callTool({ name: 'whoami', arguments: {} });
      assert.deepEqual(r.content, [{ type: 'text', text: 'user bob' }], JSON.stringify(r));
      assert.equal(asked.length, 1, JSON.stringify(asked));
      assert.equal(asked[0].mode, 'url');
      assert.equal(asked[0].message, MESSAGE);
      assert.match(asked[0].url, start);
    } finally {
      await c.close().catch(() => {});
    }
    const bobs = up.toolCalls().slice(before);
    assert.equal(bobs.length, 1);
    assert.equal(await subOf(bobs[0]), 'bob');
    assert.ok(up.toolCalls().slice(0, before).every((e) => e.authorization !== bobs[0].authorization),
      'bob was sent another\'s token');
  }));

  test('linked: every worker sends her link; a raw 2026-07-28 call too', guarded(async () => {
    const sid = await sessionAs(L.daemon.port, L.tokens.alice, 'links-raw');
    const pids = new Set();
    for (let i = 0; i < 64 && pids.size < 2; i++) {
      const r = await mcpPost(L.daemon.port, { jsonrpc: '2.0', id: nextId(), method: 'tools/call',
        params: { name: 'whoami', arguments: {} } }, { session: sid, headers: bearer(L.tokens.alice) });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json.result.content, [{ type: 'text', text: 'user alice' }], r.text);
      pids.add(workerOf(r).pid);
    }
    assert.equal(pids.size, 2, 'both workers served the linked calls');
    const m = await call(L, L.tokens.alice, URLMODE);
    assert.equal(m.json?.result?.content?.[0]?.text, 'user alice', m.text);
  }));

  test('a raw 2026-07-28 client links through its retry; a token about to expire is refreshed without asking; a refresh refused asks anew', guarded(async () => {
    const carol = L.idp.forge(L.idp.claims({ sub: 'carol', client_id: 'carol' }));
    // the upstream's access tokens now live less than the refresh
    // margin (60 s): each call refreshes first
    L.as.accessTtl = 30;
    const r = await call(L, carol, URLMODE);
    assert.equal(r.json?.result?.resultType, 'input_required', r.text);
    const url = r.json.result.inputRequests['vmcpd-consent'].params.url;
    const w = await walk(url, { as: 'carol' });
    assert.equal(w.status, 200, w.text);
    const ok = await call(L, carol, URLMODE, { requestState: r.json.result.requestState,
      inputResponses: { 'vmcpd-consent': { action: 'accept' } } });
    assert.equal(ok.json?.result?.content?.[0]?.text, 'user carol', ok.text);

    const refreshes = L.as.count('refresh_token');
    const again = await call(L, carol, URLMODE);
    assert.equal(again.json?.result?.content?.[0]?.text, 'user carol', again.text);
    assert.ok(L.as.count('refresh_token') > refreshes, 'refreshed before the call');
    assert.ok(L.as.grants.filter((g) => g.grant_type === 'refresh_token').every((g) => g.status === 200),
      JSON.stringify(L.as.grants));

    L.as.refuseRefresh = true;
    try {
      const n = await call(L, carol, URLMODE);
      assert.equal(n.json?.result?.resultType, 'input_required', n.text);
      const url2 = n.json.result.inputRequests['vmcpd-consent'].params.url;
      assert.match(url2, start);
      assert.notEqual(url2, url, 'a new consent');
      assert.equal(L.as.grants.at(-1).status, 400);
    } finally {
      L.as.refuseRefresh = false;
      L.as.accessTtl = 600;
    }
  }));
});
