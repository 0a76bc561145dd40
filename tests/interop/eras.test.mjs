// Backend eras through vmcpd: each backend reached in the MCP revision it
// speaks, whatever the client's.  The four cells (SDK v1 Legacy client and
// SDK v2 Modern client, each against a 2025-11-25-only backend and a
// 2026-07-28 backend), MRTR passed through Modern to Modern and fulfilled
// by vmcpd over a Legacy client's session, both on any worker, the
// synthesized backend session of Modern clients shared by the workers,
// -32021 for a mid-call request a Modern client cannot take, the era
// cache healing itself when a backend changes era behind its URL, and
// era: legacy|modern pinning, and a backend that speaks both revisions
// meeting each client in its own.  What each backend saw comes from its
// /stats; what vmcpd recorded from `vmcpctl dump eras`.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';

import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';

import {
  guarded, httpRequest, MCP_ACCEPT, vmcpctl, freshFetch, workerOf, withTimeout, waitFor, rpc,
  Daemon, HOST, tmpDir, freePort, mcpHeaders, sleep,
} from './lib/harness.mjs';
import {
  useMulti, startMulti, startSpec, startModern, startFixture, multiConfig, openSessionCaps, openUnwatched,
  textOf, rpcError,
} from './lib/multi.mjs';

useMulti();

const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';
const PREFIX_ALWAYS = 'conflictResolution: prefix\nconflictResolutionConfig:\n  prefixMode: always';

const meta = (caps = {}) => ({
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': caps,
  'io.modelcontextprotocol/clientInfo': { name: 'eras-raw', version: '1.0.0' },
});

let rawId = 1000;

/*
 * One 2026-07-28 request on a new connection: {status, json, text,
 * worker}.  The Mcp-Name header mirrors params.name or params.uri.
 */
async function modern(port, method, params = {}, { caps = {}, id = rawId++ } = {}) {
  const headers = {
    'Content-Type': 'application/json', Accept: MCP_ACCEPT,
    'MCP-Protocol-Version': MODERN, 'Mcp-Method': method,
  };
  if (method === 'tools/call' || method === 'prompts/get')
    headers['Mcp-Name'] = params.name;
  else if (method === 'resources/read')
    headers['Mcp-Name'] = params.uri;
  const r = await httpRequest(port, {
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta(caps) } }),
    timeout: 20000,
  });
  return { ...r, worker: workerOf(r) };
}

/* the era vmcpd recorded for each backend, from vmcpctl dump eras */
async function erasOf(daemon) {
  const r = await vmcpctl(['dump', 'eras'], { stateDir: daemon.stateDir });
  assert.equal(r.code, 0, `vmcpctl dump eras: ${r.stderr}`);
  const out = {};
  for (const line of r.stdout.split('\n').filter(Boolean)) {
    const o = JSON.parse(line);
    assert.equal(o.db, 'eras');
    out[o.key] = o.value;
  }
  return out;
}

/* an SDK v1 (2025-11-25) client; fetch records the worker of each POST */
async function v1(url, { capabilities = {}, handlers = {}, name = 'eras-v1', record } = {}) {
  const client = new V1Client({ name, version: '1.0.0' }, { capabilities });
  if (handlers.elicit)
    client.setRequestHandler(ElicitRequestSchema, handlers.elicit);
  if (handlers.sample)
    client.setRequestHandler(CreateMessageRequestSchema, handlers.sample);
  if (handlers.roots)
    client.setRequestHandler(ListRootsRequestSchema, handlers.roots);
  const fetch = async (u, init = {}) => {
    const res = await freshFetch(u, init);
    if (record && (init.method ?? 'GET') === 'POST') {
      let body;
      try {
        body = JSON.parse(init.body);
      } catch {
        body = undefined;
      }
      record.push({
        method: body?.method, id: body?.id, response: body !== undefined && body.method === undefined,
        status: res.status, worker: workerOf({ headers: { 'vmcpd-worker': res.headers.get('vmcpd-worker') } }),
      });
    }
    return res;
  };
  await withTimeout(client.connect(new V1Transport(new URL(url), { fetch })), 20000, 'v1 connect');
  return client;
}

/* an SDK v2 client pinned to 2026-07-28 */
async function v2(url, { capabilities = {}, handlers = {}, name = 'eras-v2' } = {}) {
  const client = new V2Client({ name, version: '1.0.0' },
    { versionNegotiation: { mode: { pin: MODERN } }, capabilities });
  if (handlers.elicit)
    client.setRequestHandler('elicitation/create', handlers.elicit);
  if (handlers.sample)
    client.setRequestHandler('sampling/createMessage', handlers.sample);
  if (handlers.roots)
    client.setRequestHandler('roots/list', handlers.roots);
  await withTimeout(client.connect(new V2Transport(new URL(url))), 20000, 'v2 connect');
  return client;
}

const legacyPosts = (st) => Object.entries(st.methods).filter(([k]) => k.startsWith('legacy '))
  .reduce((n, [, v]) => n + v, 0);
/* the same, without the initialize each worker's era probe sends after a
 * Modern server/discover, to learn whether it speaks 2025-11-25 too */
const legacyPostsBeyondProbe = (st) => legacyPosts(st) - (st.methods['legacy initialize'] ?? 0);

// ---------------------------------------------------------------------------

describe('the four cells: Legacy and Modern clients, Legacy and Modern backends', () => {
  let leg, mod, daemon;
  const clients = [];

  before(async () => {
    leg = await startSpec({ label: 'L', tools: ['echo'], prompts: ['greet'],
      resources: [{ uri: 'test://leg/doc', text: 'legacy doc' }] });
    mod = await startModern({ label: 'M', modernOnly: true, tools: ['echo'], prompts: ['greet'],
      resources: [{ uri: 'test://mod/doc', text: 'modern doc' }], mrtr: true, metaTools: ['meta'],
      rogue: true });
    daemon = await startMulti({
      backends: [{ name: 'leg', url: leg.url }, { name: 'mod', url: mod.url }],
      aggregation: PREFIX_ALWAYS,
    });
  });

  after(async () => {
    for (const c of clients)
      await c.close().catch(() => {});
    if (daemon)
      await daemon.stop();
  });

  /* the same scenario through any client: lists, a call, a prompt and a
   * resource of each backend */
  async function scenario(client, tag) {
    const tools = (await client.listTools()).tools.map((t) => t.name);
    for (const n of ['leg_echo', 'mod_echo', 'mod_mrtr_ask'])
      assert.ok(tools.includes(n), `${tag}: ${n} in ${tools}`);
    assert.equal(textOf(await client.callTool({ name: 'leg_echo', arguments: { x: tag } })),
      `L:echo:{"x":"${tag}"}`);
    const mr = await client.callTool({ name: 'mod_echo', arguments: { x: tag } });
    assert.equal(textOf(mr), `M:echo:{"x":"${tag}"}`);
    const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
    assert.ok(prompts.includes('leg_greet') && prompts.includes('mod_greet'), `${prompts}`);
    for (const [n, who, want] of [['leg_greet', 'alice', 'L:greet:alice'], ['mod_greet', 'bob', 'M:greet:bob']]) {
      const p = await client.getPrompt({ name: n, arguments: { who } });
      assert.equal(p.messages[0].content.text, want, n);
    }
    const uris = (await client.listResources()).resources.map((r) => r.uri);
    assert.ok(uris.includes('test://leg/doc') && uris.includes('test://mod/doc'), `${uris}`);
    for (const [uri, want] of [['test://leg/doc', 'legacy doc'], ['test://mod/doc', 'modern doc']]) {
      const r = await client.readResource({ uri });
      assert.equal(r.contents[0].text, want, uri);
    }
    return mr;
  }

  test('v1 and v2 clients, each against both backends; each backend sees its own era', guarded(async () => {
    // each cell: one call, one prompt, one read at each backend, in the
    // backend's era whatever the client's
    const cell = async (client, tag) => {
      const [m0, l0] = [(await mod.stats()).methods, (await leg.stats()).methods];
      const r = await scenario(client, tag);
      const [m1, l1] = [(await mod.stats()).methods, (await leg.stats()).methods];
      for (const method of ['tools/call', 'prompts/get', 'resources/read']) {
        assert.equal((m1[`modern ${method}`] ?? 0) - (m0[`modern ${method}`] ?? 0), 1,
          `${tag}: 2026-07-28 ${method} at the Modern backend`);
        assert.equal((l1[`${LEGACY} ${method}`] ?? 0) - (l0[`${LEGACY} ${method}`] ?? 0), 1,
          `${tag}: 2025-11-25 ${method} at the Legacy backend`);
      }
      return r;
    };
    const c1 = await v1(daemon.url);
    clients.push(c1);
    const legacyResult = await cell(c1, 'v1');
    const c2 = await v2(daemon.url);
    clients.push(c2);
    await cell(c2, 'v2');

    // the Modern backend: only 2026-07-28, never a Legacy session (but
    // for the era probe's initialize, one per worker, refused)
    const ms = await mod.stats();
    assert.equal(legacyPostsBeyondProbe(ms), 0, `Legacy POSTs at the Modern backend: ${JSON.stringify(ms.methods)}`);
    assert.ok((ms.methods['legacy initialize'] ?? 0) <= 2, JSON.stringify(ms.methods));
    assert.equal(ms.sessionsInitialized, 0);
    assert.ok(ms.discover >= 1, 'probed with server/discover');
    // the Legacy backend: at most the era probes in 2026-07-28
    const ls = await leg.stats();
    for (const [k, v] of Object.entries(ls.methods))
      if (k.startsWith(`${MODERN} `))
        assert.equal(k, `${MODERN} server/discover`, `a 2026-07-28 ${k} (${v}) at the Legacy backend`);

    // 2026-07-28's envelope stays on the Modern hop
    for (const k of ['resultType', 'ttlMs', 'cacheScope'])
      assert.equal(legacyResult[k], undefined, `${k} in a Legacy client's result`);

    const eras = await erasOf(daemon);
    assert.equal(eras.leg?.era, LEGACY, JSON.stringify(eras));
    assert.equal(eras.mod?.era, MODERN, JSON.stringify(eras));
    assert.equal(eras.leg.url, leg.url);
    assert.equal(eras.mod.url, mod.url);
  }));

  test('a Legacy session\'s raw answer from a Modern backend carries no 2026-07-28 envelope',
    guarded(async () => {
      const { sid } = await openSessionCaps(daemon.port, {});
      const r = await rpc(daemon.port, sid, 'tools/call', { name: 'mod_echo', arguments: { x: 'raw' } });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.result.content[0].text, 'M:echo:{"x":"raw"}');
      for (const k of ['resultType', 'ttlMs', 'cacheScope'])
        assert.ok(!(k in r.json.result), `${k} in ${r.text}`);
      const m = await modern(daemon.port, 'tools/call', { name: 'mod_echo', arguments: { x: 'raw' } });
      assert.equal(m.status, 200, m.text);
      assert.equal(m.json.result.resultType, 'complete', m.text);
    }));

  test('a Modern backend\'s result _meta: its serverInfo gives way to vmcpd\'s, its own keys travel',
    guarded(async () => {
      const sinfo = (r) => r.json.result._meta?.['io.modelcontextprotocol/serverInfo'];
      // the SDK stamps its serverInfo on every result: that _meta alone
      const e = await modern(daemon.port, 'tools/call', { name: 'mod_echo', arguments: { x: 'm' } });
      assert.equal(e.status, 200, e.text);
      assert.deepEqual(Object.keys(e.json.result._meta), ['io.modelcontextprotocol/serverInfo'], e.text);
      assert.equal(sinfo(e).name, 'vmcpd', e.text);
      // beside a key of the backend's own, which travels
      const m = await modern(daemon.port, 'tools/call', { name: 'mod_meta', arguments: { x: 'm' } });
      assert.equal(m.status, 200, m.text);
      assert.equal(m.json.result.content[0].text, 'M:meta:{"x":"m"}');
      assert.equal(m.json.result._meta['com.example/label'], 'M', m.text);
      assert.equal(sinfo(m).name, 'vmcpd', m.text);
      // and for a 2025-11-25 client: no serverInfo of either hop
      const { sid } = await openSessionCaps(daemon.port, {});
      const l = await rpc(daemon.port, sid, 'tools/call', { name: 'mod_meta', arguments: { x: 'l' } });
      assert.equal(l.json.result._meta?.['com.example/label'], 'M', l.text);
      assert.equal(l.json.result._meta?.['io.modelcontextprotocol/serverInfo'], undefined, l.text);
    }));

  test('MRTR Modern to Modern over raw HTTP: input_required relayed verbatim, the retry completes',
    guarded(async () => {
      const caps = { elicitation: {}, experimental: { 'eras.test': { n: 1 } } };
      const first = await modern(daemon.port, 'tools/call', { name: 'mod_mrtr_ask', arguments: {} }, { caps });
      assert.equal(first.status, 200, first.text);
      const res = first.json.result;
      assert.equal(res.resultType, 'input_required', first.text);
      const ms = await mod.stats();
      // the client's capabilities went to the backend as they were
      assert.deepEqual(ms.lastModernCaps, caps);
      // requestState byte for byte: the one the backend minted last
      assert.equal(typeof res.requestState, 'string');
      assert.equal(res.requestState, ms.issuedStates.at(-1));
      assert.ok(first.text.includes(JSON.stringify(res.requestState)), 'the state as JSON text, unchanged');
      // inputRequests as the backend sends them to a direct client
      const direct = await modern(mod.port, 'tools/call', { name: 'mrtr_ask', arguments: {} }, { caps });
      assert.deepEqual(Object.keys(res.inputRequests), ['user_name']);
      assert.deepEqual(res.inputRequests, direct.json.result.inputRequests);
      assert.equal(res.inputRequests.user_name.method, 'elicitation/create');

      // the retry: a new id, the same params, the answers, the state
      const retry = await modern(daemon.port, 'tools/call', {
        name: 'mod_mrtr_ask', arguments: {},
        inputResponses: { user_name: { action: 'accept', content: { name: 'Ada' } } },
        requestState: res.requestState,
      }, { caps, id: first.json.id + 1 });
      assert.equal(retry.status, 200, retry.text);
      assert.equal(retry.json.result.resultType, 'complete', retry.text);
      assert.equal(retry.json.result.content[0].text, 'M:hello Ada');
      const last = (await mod.stats()).retries.at(-1);
      assert.deepEqual(last, { tool: 'mrtr_ask', inputResponses: ['user_name'], requestState: res.requestState });

      // a state the backend did not issue is the backend's error, relayed
      const bad = await modern(daemon.port, 'tools/call', {
        name: 'mod_mrtr_ask', arguments: {},
        inputResponses: { user_name: { action: 'accept', content: { name: 'Eve' } } },
        requestState: `${res.requestState}-TAMPERED`,
      }, { caps });
      assert.equal(bad.json.error?.code, -32602, bad.text);

      // without the capability the backend may not ask: -32021 at 400
      const nocap = await modern(daemon.port, 'tools/call', { name: 'mod_mrtr_ask', arguments: {} });
      assert.equal(nocap.status, 400, nocap.text);
      assert.equal(nocap.json.error.code, -32021, nocap.text);
      assert.ok(nocap.json.error.data.requiredCapabilities.elicitation, nocap.text);
    }));

  test('input_required to a method that may not carry MRTR, and an unknown resultType: errors naming the backend',
    guarded(async () => {
      const { sid } = await openSessionCaps(daemon.port, { elicitation: {} });
      const complete = { ref: { type: 'ref/prompt', name: 'mod_greet' }, argument: { name: 'who', value: 'a' } };
      const asked = async () => (await mod.stats()).methods['modern completion/complete'] ?? 0;
      // completion/complete may not answer input_required (MCP
      // 2026-07-28, MRTR): neither relayed to a 2026-07-28 client nor
      // fulfilled and retried for a 2025-11-25 one
      for (const send of [(p) => modern(daemon.port, 'completion/complete', p),
        (p) => rpc(daemon.port, sid, 'completion/complete', p)]) {
        const before = await asked();
        const r = await send(complete);
        assert.equal(r.json.result, undefined, r.text);
        assert.equal(r.json.error?.code, -32603, r.text);
        assert.match(r.json.error.message, /backend mod sent an invalid result to completion\/complete: input_required/);
        assert.equal(await asked(), before + 1, 'asked once, never retried');
      }
      // a resultType that is neither complete nor input_required: no
      // complete result, whatever else it carries
      for (const send of [(p) => modern(daemon.port, 'tools/call', p),
        (p) => rpc(daemon.port, sid, 'tools/call', p)]) {
        const r = await send({ name: 'mod_rogue_type', arguments: {} });
        assert.equal(r.json.result, undefined, r.text);
        assert.equal(r.json.error?.code, -32603, r.text);
        assert.match(r.json.error.message, /backend mod sent an invalid result to tools\/call: a resultType/);
      }
      // the backend's other tools are well
      const ok = await modern(daemon.port, 'tools/call', { name: 'mod_echo', arguments: { x: 'after' } });
      assert.equal(ok.json.result?.content[0].text, 'M:echo:{"x":"after"}', ok.text);
    }));

  test('MRTR Modern to Modern with the v2 client fulfilling input_required itself', guarded(async () => {
    const asked = [];
    const c = await v2(daemon.url, {
      capabilities: { elicitation: {} },
      handlers: {
        elicit: async (req) => {
          asked.push(req.params.message);
          return { action: 'accept', content: { name: 'Lin', answer: `a${asked.length}` } };
        },
      },
    });
    clients.push(c);
    assert.equal(textOf(await c.callTool({ name: 'mod_mrtr_ask', arguments: {} })), 'M:hello Lin');
    assert.deepEqual(asked, ['What is your name?']);
    asked.length = 0;
    assert.equal(textOf(await c.callTool({ name: 'mod_mrtr_two', arguments: {} })), 'M:first=a1 second=a2');
    assert.deepEqual(asked, ['First question?', 'Second question?']);
  }));

  test('MRTR for a Legacy client: vmcpd asks it over its session and retries the backend',
    guarded(async () => {
      const asked = [];
      const c = await v1(daemon.url, {
        capabilities: { elicitation: {} },
        handlers: {
          elicit: async (req) => {
            asked.push(req.params);
            return { action: 'accept', content: { name: 'Grace', answer: `g${asked.length}` } };
          },
        },
      });
      clients.push(c);
      const r = await c.callTool({ name: 'mod_mrtr_ask', arguments: {} });
      assert.equal(textOf(r), 'M:hello Grace');
      assert.equal(asked.length, 1);
      assert.equal(asked[0].message, 'What is your name?');
      assert.deepEqual(asked[0].requestedSchema.required, ['name']);
      for (const k of ['resultType', 'ttlMs', 'cacheScope', 'inputRequests', 'requestState'])
        assert.equal(r[k], undefined, `${k} in the final result`);
      // the backend got the answer with its own state echoed
      const ms = await mod.stats();
      assert.deepEqual(ms.retries.at(-1), { tool: 'mrtr_ask', inputResponses: ['user_name'],
        requestState: ms.issuedStates.at(-1) });

      // two rounds: two questions, the answers of both in the result
      asked.length = 0;
      assert.equal(textOf(await c.callTool({ name: 'mod_mrtr_two', arguments: {} })), 'M:first=g1 second=g2');
      assert.deepEqual(asked.map((p) => p.message), ['First question?', 'Second question?']);
    }));

  test('MRTR for a Legacy client: load shedding retried 3 times, not a 4th', guarded(async (t) => {
    const c = await v1(daemon.url);
    clients.push(c);
    const calls0 = (await mod.stats()).methods['modern tools/call'];
    assert.equal(textOf(await c.callTool({ name: 'mod_mrtr_shed', arguments: { n: 3 } })), 'M:shed 3');
    assert.equal((await mod.stats()).methods['modern tools/call'] - calls0, 4, 'the call and 3 retries');
    const e = await withTimeout(rpcError(c.callTool({ name: 'mod_mrtr_shed', arguments: { n: 4 } })), 15000,
      'the call shed 4 times');
    assert.match(e.message, /deferring|rounds/, e.message);
    t.diagnostic(`shed 4 times: ${e.code} ${e.message}`);
    // a Modern client gets each requestState-only result as it is
    const r = await modern(daemon.port, 'tools/call', { name: 'mod_mrtr_shed', arguments: { n: 1 } });
    assert.equal(r.json.result.resultType, 'input_required', r.text);
    assert.equal(r.json.result.inputRequests, undefined, r.text);
    const r2 = await modern(daemon.port, 'tools/call', { name: 'mod_mrtr_shed', arguments: { n: 1 },
      requestState: r.json.result.requestState });
    assert.equal(r2.json.result.content[0].text, 'M:shed 1', r2.text);
  }));

  test('MRTR for Legacy clients: sampling and roots', guarded(async () => {
    const seen = [];
    const c = await v1(daemon.url, {
      capabilities: { sampling: {}, roots: {} },
      handlers: {
        sample: async (req) => {
          seen.push(req.params.messages[0].content.text);
          return { role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'm', stopReason: 'endTurn' };
        },
        roots: async () => {
          seen.push('roots');
          return { roots: [{ uri: 'file:///tmp/eras-a', name: 'a' }, { uri: 'file:///tmp/eras-b' }] };
        },
      },
    });
    clients.push(c);
    assert.equal(textOf(await c.callTool({ name: 'mod_mrtr_sample', arguments: {} })), 'M:sampled Paris');
    assert.equal(textOf(await c.callTool({ name: 'mod_mrtr_roots', arguments: {} })),
      'M:roots file:///tmp/eras-a,file:///tmp/eras-b');
    assert.deepEqual(seen, ['What is the capital of France?', 'roots']);
  }));

  test('MRTR for a Legacy client without the capability: a clear error, no hang', guarded(async (t) => {
    let asked = 0;
    const c = await v1(daemon.url, { capabilities: {}, handlers: {} });
    clients.push(c);
    const t0 = Date.now();
    const e = await withTimeout(rpcError(c.callTool({ name: 'mod_mrtr_ask', arguments: {} })), 10000,
      'the call without elicitation');
    assert.ok(Date.now() - t0 < 5000, `answered after ${Date.now() - t0} ms`);
    t.diagnostic(`no elicitation: ${e.code} ${e.message}`);
    assert.match(e.message, /elicitation/, e.message);
    assert.match(e.message, /capabilit/i, e.message);
    // the client can still be asked nothing: sampling-only client, roots tool
    const c2 = await v1(daemon.url, { capabilities: { sampling: {} }, handlers: {
      sample: async () => { asked++; return { role: 'assistant', content: { type: 'text', text: 'x' }, model: 'm' }; },
    } });
    clients.push(c2);
    const e2 = await withTimeout(rpcError(c2.callTool({ name: 'mod_mrtr_roots', arguments: {} })), 10000,
      'the roots call of a client without roots');
    assert.match(e2.message, /roots|capabilit/i, e2.message);
    assert.equal(asked, 0);
  }));

  test('MRTR for a Legacy client that left unnoticed: the worker lives on', guarded(async () => {
    // The worker stops reading the call's connection (a byte pipelined
    // behind it), so asking the client finds the close: the stream's
    // head is taken, the input request's write finds the connection
    // reset, and the close callback freed the call under mrtr_ask().
    const { sid } = await openSessionCaps(daemon.port, { elicitation: {} });
    const calls = async () => (await mod.stats()).methods['modern tools/call'] ?? 0;
    for (let i = 0; i < 3; i++) {
      const n = await calls();
      const s = await openUnwatched(daemon.port, { method: 'POST', headers: mcpHeaders({ session: sid }),
        body: JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: 'tools/call',
          params: { name: 'mod_mrtr_ask', arguments: {} } }) });
      s.close();
      // vmcpd asks the client as soon as the backend's answer is in
      await waitFor('the call at the backend', async () => (await calls()) > n,
        { timeout: 15000, interval: 100 });
      await sleep(1000);
    }
    const r = await rpc(daemon.port, sid, 'tools/call', { name: 'mod_echo', arguments: { x: 'after' } });
    assert.equal(r.status, 200, r.text);
  }));

  test('any worker: a Modern MRTR retry on the other worker completes', guarded(async () => {
    const caps = { elicitation: {} };
    let crossed = 0;
    let n = 0;
    for (; n < 40 && crossed < 2; n++) {
      const first = await modern(daemon.port, 'tools/call', { name: 'mod_mrtr_ask', arguments: {} }, { caps });
      assert.equal(first.json?.result?.resultType, 'input_required', first.text);
      const retry = await modern(daemon.port, 'tools/call', {
        name: 'mod_mrtr_ask', arguments: {},
        inputResponses: { user_name: { action: 'accept', content: { name: `w${n}` } } },
        requestState: first.json.result.requestState,
      }, { caps });
      assert.equal(retry.json?.result?.content?.[0]?.text, `M:hello w${n}`, retry.text);
      assert.ok(first.worker && retry.worker, 'Vmcpd-Worker on both answers');
      if (first.worker.pid !== retry.worker.pid)
        crossed++;
    }
    assert.ok(crossed >= 1, `no retry landed on the other worker in ${n} round trips`);
  }));

  test('any worker: a Legacy client\'s answer taken by the worker not holding the call', guarded(async () => {
    const record = [];
    const c = await v1(daemon.url, {
      capabilities: { elicitation: {} }, record,
      handlers: { elicit: async () => ({ action: 'accept', content: { name: 'X' } }) },
    });
    clients.push(c);
    let crossed = 0;
    let n = 0;
    for (; n < 40 && crossed < 2; n++) {
      record.length = 0;
      const r = await withTimeout(c.callTool({ name: 'mod_mrtr_ask', arguments: { x: String(n) } }), 15000,
        `call ${n}`);
      assert.equal(textOf(r), 'M:hello X');
      const call = record.find((p) => p.method === 'tools/call');
      const answer = record.find((p) => p.response && String(p.id).startsWith('vmcpd-m-'));
      assert.ok(call && answer, `the call and the answer POSTs: ${JSON.stringify(record)}`);
      assert.equal(answer.status, 202, JSON.stringify(answer));
      if (call.worker.pid !== answer.worker.pid)
        crossed++;
    }
    assert.ok(crossed >= 1, `no answer landed on the other worker in ${n} calls`);
  }));
});

// ---------------------------------------------------------------------------

describe('Modern clients in front of a Legacy backend (2 workers)', () => {
  let lg, daemon;

  before(async () => {
    lg = await startSpec({ label: 'G', tools: ['echo'], elicit: true });
    daemon = await startMulti({ backends: [{ name: 'lg', url: lg.url }], aggregation: PREFIX_ALWAYS });
    // worker 0 probes and opens the scope session for its GET stream
    // within 200 ms of starting; let it, so no client races it
    await waitFor('vmcpd listening to lg', async () => (await lg.stats()).getStreams >= 1,
      { timeout: 15000, interval: 50 });
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
  });

  // Anonymous clients are one principal: their calls share the shared
  // scope's synthesized session with the lists and the notification
  // stream, which belong to no user.  With incomingAuth each principal
  // calls over a session of its own (bsessions.test.mjs).
  test('anonymous clients\' calls on both workers share the shared scope\'s backend session with lists and notifications',
    guarded(async () => {
      // the shared scope's session: the one worker 0's GET stream is on
      const st0 = await lg.stats();
      assert.equal(st0.sessions, 1);
      assert.equal(st0.getStreams, 1);
      const l = await modern(daemon.port, 'tools/list');
      assert.equal(l.status, 200, l.text);
      assert.deepEqual(l.json.result.tools.map((t) => t.name).sort(), ['lg_ask', 'lg_echo']);
      const seen = new Map();
      const pids = await daemon.workerPids();
      for (let i = 0; i < 60 && (seen.size < 2 || [...seen.values()].some((v) => v < 3)); i++) {
        const r = await modern(daemon.port, 'tools/call', { name: 'lg_echo', arguments: { x: `c${i}` } });
        assert.equal(r.status, 200, r.text);
        assert.equal(r.json.result.content[0].text, `G:echo:{"x":"c${i}"}`);
        assert.equal(r.json.result.resultType, 'complete');
        seen.set(r.worker.pid, (seen.get(r.worker.pid) ?? 0) + 1);
      }
      assert.deepEqual([...seen.keys()].sort((a, b) => a - b), pids, 'calls served by both workers');
      const st = await lg.stats();
      assert.equal(st.sessions, 1, `backend sessions: ${JSON.stringify(st)}`);
      assert.equal(st.getStreams, 1, 'the listener\'s stream is on it still');
      // initialize goes without MCP-Protocol-Version: one for everyone
      assert.equal(st.methods['none initialize'], 1, JSON.stringify(st.methods));
      assert.ok(st.methods[`${LEGACY} tools/call`] >= 6, JSON.stringify(st.methods));
      assert.equal(st.methods[`${MODERN} tools/call`], undefined, JSON.stringify(st.methods));
      const eras = await erasOf(daemon);
      assert.equal(eras.lg?.era, LEGACY, JSON.stringify(eras));
    }));

  test('a mid-call elicitation the Modern client did not declare: 400 -32021, no hang', guarded(async () => {
    const t0 = Date.now();
    const r = await modern(daemon.port, 'tools/call', { name: 'lg_ask', arguments: { question: 'Name?' } });
    assert.ok(Date.now() - t0 < 10000, `answered after ${Date.now() - t0} ms`);
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.error.code, -32021, r.text);
    assert.deepEqual(r.json.error.data.requiredCapabilities, { elicitation: {} }, r.text);
    // and the shared session is still the only one
    assert.equal((await lg.stats()).sessions, 1);
  }));
});

// ---------------------------------------------------------------------------

describe('self-healing: a backend that changes era behind its URL', () => {
  const backends = {};
  let daemon;

  before(async () => {
    for (const name of ['heal1', 'heal2'])
      backends[name] = await startModern({ label: `${name}-m`, modernOnly: true, tools: ['echo'] });
    daemon = await startMulti({
      backends: Object.entries(backends).map(([name, b]) => ({ name, url: b.url })),
      aggregation: PREFIX_ALWAYS,
    });
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
  });

  for (const [name, kind] of [['heal1', 'Modern'], ['heal2', 'Legacy']])
    test(`${kind} client: Modern backend replaced by a Legacy one on the same port`, guarded(async () => {
      const client = kind === 'Legacy' ? await v1(daemon.url) : null;
      const call = async (x) => {
        if (client)
          return textOf(await client.callTool({ name: `${name}_echo`, arguments: { x } }));
        const r = await modern(daemon.port, 'tools/call', { name: `${name}_echo`, arguments: { x } });
        assert.equal(r.status, 200, r.text);
        return r.json.result?.content?.[0]?.text ?? r.text;
      };
      try {
        assert.equal(await call('one'), `${name}-m:echo:{"x":"one"}`);
        assert.equal((await erasOf(daemon))[name]?.era, MODERN);
        const old = backends[name];
        old.kill();
        await old.waitExit();
        const repl = await startSpec({ label: `${name}-l`, tools: ['echo'], port: old.port });
        assert.equal(repl.port, old.port);
        assert.equal(await call('two'), `${name}-l:echo:{"x":"two"}`);
        const e = (await erasOf(daemon))[name];
        assert.equal(e?.era, LEGACY, JSON.stringify(e));
        // and it stays healed
        assert.equal(await call('three'), `${name}-l:echo:{"x":"three"}`);
        const st = await repl.stats();
        assert.ok(st.methods[`${LEGACY} tools/call`] >= 2, JSON.stringify(st.methods));
      } finally {
        await client?.close().catch(() => {});
      }
    }));
});

// ---------------------------------------------------------------------------

describe('era pinning', () => {
  let pinl, pinm, daemon;

  before(async () => {
    pinl = await startModern({ label: 'PL', tools: ['echo'], mrtr: true });
    pinm = await startModern({ label: 'PM', tools: ['echo'], mrtr: true });
    daemon = await startMulti({
      backends: [{ name: 'pinl', url: pinl.url, era: 'legacy' }, { name: 'pinm', url: pinm.url, era: 'modern' }],
      aggregation: PREFIX_ALWAYS,
    });
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
  });

  test('era: legacy reaches a dual-era backend only in 2025-11-25, era: modern only in 2026-07-28',
    guarded(async () => {
      const c1 = await v1(daemon.url, {
        capabilities: { elicitation: {} },
        handlers: { elicit: async () => ({ action: 'accept', content: { name: 'Pin' } }) },
      });
      try {
        for (const b of ['pinl', 'pinm']) {
          assert.equal(textOf(await c1.callTool({ name: `${b}_echo`, arguments: { x: 'v1' } })),
            `${b === 'pinl' ? 'PL' : 'PM'}:echo:{"x":"v1"}`);
          const r = await modern(daemon.port, 'tools/call', { name: `${b}_echo`, arguments: { x: 'v2' } });
          assert.equal(r.json?.result?.content?.[0]?.text, `${b === 'pinl' ? 'PL' : 'PM'}:echo:{"x":"v2"}`, r.text);
        }
        // MRTR to the pinned-Legacy backend: the SDK asks over its session
        // (its 2025 shim), vmcpd relays it as a Legacy mid-call request
        assert.equal(textOf(await c1.callTool({ name: 'pinl_mrtr_ask', arguments: {} })), 'PL:hello Pin');
        // to the pinned-Modern one: input_required, fulfilled by vmcpd
        assert.equal(textOf(await c1.callTool({ name: 'pinm_mrtr_ask', arguments: {} })), 'PM:hello Pin');
      } finally {
        await c1.close().catch(() => {});
      }
      const l = await pinl.stats();
      assert.equal(l.modern, 0, `2026-07-28 requests at the legacy-pinned backend: ${JSON.stringify(l.methods)}`);
      assert.equal(l.discover, 0, 'a pinned backend is not probed');
      assert.ok(l.sessionsInitialized >= 1);
      assert.ok(l.methods['legacy tools/call'] >= 3, JSON.stringify(l.methods));
      const m = await pinm.stats();
      assert.equal(m.legacy, 0, `2025-11-25 requests at the modern-pinned backend: ${JSON.stringify(m.methods)}`);
      assert.equal(m.sessionsInitialized, 0);
      assert.ok(m.methods['modern tools/call'] >= 4, JSON.stringify(m.methods));
    }));
});

// ---------------------------------------------------------------------------

describe('a dual-revision backend: each client met in its own revision', () => {
  let fx, daemon, diag;

  before(async () => {
    // the conformance fixture: server/discover lists only 2026-07-28,
    // and 2025-11-25 is served beside it with sessions
    fx = await startFixture();
    diag = await freePort();
    const dir = await tmpDir('vmcpd-dual-');
    daemon = new Daemon(dir, path.join(dir, 'vmcpd.yaml'), { workers: 2 });
    await daemon.writeConfig(multiConfig({
      portFile: daemon.portFile, stateDir: daemon.stateDir,
      backends: [{ name: 'fx', url: fx.url }], aggregation: PREFIX_ALWAYS,
    }).replace('daemon:\n', `daemon:\n  diagnostics: ${HOST}:${diag}\n`));
    await daemon.start({ timeout: 30000 });
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
  });

  test('a 2025-11-25 client gets the push elicitation over its session, a 2026-07-28 client input_required',
    guarded(async () => {
      const asked = [];
      const c1 = await v1(daemon.url, {
        capabilities: { elicitation: {} },
        handlers: {
          elicit: async (req) => {
            asked.push(req.params.message);
            return { action: 'accept', content: { response: 'from v1' } };
          },
        },
      });
      try {
        const r = await withTimeout(c1.callTool({ name: 'fx_test_elicitation', arguments: { message: 'Dual?' } }),
          20000, 'the push elicitation');
        assert.equal(textOf(r), 'User response: action=accept, content={"response":"from v1"}');
        assert.deepEqual(asked, ['Dual?']);
      } finally {
        await c1.close().catch(() => {});
      }
      // 2026-07-28: the push-only tool cannot ask, and says so
      const p = await modern(daemon.port, 'tools/call', { name: 'fx_test_elicitation', arguments: { message: 'Dual?' } },
        { caps: { elicitation: {} } });
      assert.equal(p.status, 200, p.text);
      assert.equal(p.json.result.isError, true, p.text);
      assert.match(p.json.result.content[0].text, /^elicitation failed: /, p.text);
      // while another tool asks by input_required, relayed as it is
      const m = await modern(daemon.port, 'tools/call', { name: 'fx_test_input_required_result_elicitation', arguments: {} },
        { caps: { elicitation: {} } });
      assert.equal(m.status, 200, m.text);
      assert.equal(m.json.result.resultType, 'input_required', m.text);
      assert.equal(m.json.result.inputRequests.user_name.method, 'elicitation/create', m.text);

      // recorded as speaking both, in the store and on /status
      const eras = await erasOf(daemon);
      assert.equal(eras.fx?.era, 'both', JSON.stringify(eras));
      assert.equal(eras.fx.url, fx.url);
      const st = await httpRequest(diag, { method: 'GET', path: '/status', timeout: 5000 });
      assert.equal(st.status, 200, st.text);
      const be = st.json.backends.find((b) => b.name === 'fx');
      assert.equal(be?.mcpRevision, 'both', st.text);
      assert.equal(be.eraSetting, 'auto');
    }));
});

// ---------------------------------------------------------------------------

describe('a 2026-07-28 backend that does not serve subscriptions/listen', () => {
  let nla, nlm, daemon;

  before(async () => {
    nla = await startModern({ label: 'NA', tools: ['echo'], modernOnly: true, noListen: true });
    nlm = await startModern({ label: 'NM', tools: ['echo'], noListen: true });
    daemon = await startMulti({
      backends: [{ name: 'nla', url: nla.url }, { name: 'nlm', url: nlm.url, era: 'modern' }],
      aggregation: PREFIX_ALWAYS,
    });
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
  });

  test('its 404 means no notification stream, asked again a minute later: its era stays known',
    guarded(async () => {
      for (const [b, label] of [['nla', 'NA'], ['nlm', 'NM']]) {
        const r = await modern(daemon.port, 'tools/call', { name: `${b}_echo`, arguments: { x: 'one' } });
        assert.equal(r.json?.result?.content?.[0]?.text, `${label}:echo:{"x":"one"}`, r.text);
      }
      // a refused stream used to be retried after 0.5, 1 and 2 s, each
      // time forgetting the backend's era
      await waitFor('both listeners refused', async () =>
        [...daemon.stderr.matchAll(/backend nl[am] offers no notification stream/g)].length === 2,
      { timeout: 10000 });
      await sleep(4000);
      for (const be of [nla, nlm]) {
        const st = await be.stats();
        assert.equal(st.methods['modern subscriptions/listen'], 1, JSON.stringify(st.methods));
      }
      assert.doesNotMatch(daemon.stderr, /era to be probed again/);
      assert.equal((await erasOf(daemon)).nla?.era, MODERN);
      const r = await modern(daemon.port, 'tools/call', { name: 'nla_echo', arguments: { x: 'two' } });
      assert.equal(r.json?.result?.content?.[0]?.text, 'NA:echo:{"x":"two"}', r.text);
    }));
});
