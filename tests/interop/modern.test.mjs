// MCP 2026-07-28 ("Modern") clients through vmcpd: the official v2 SDK
// client, pinned to 2026-07-28 and in auto mode, in front of real
// 2025-11-25 backends (server-everything and server-memory over stdio),
// plus the status codes of the Modern edge on raw HTTP.  Both eras on
// the same endpoint at once: a v1 (Legacy) client works beside them.
// subscriptions/listen in front of a Legacy and of a Modern backend
// whose lists change (each worker's streams told within a bound, under
// load); a missing resource's error naming its URI.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  guarded, connectClient, httpRequest, tmpDir, waitFor, openSession, rpc, MCP_ACCEPT,
} from './lib/harness.mjs';
import {
  useMulti, startMulti, startSpec, startModern, openStream, openUnwatched, modern, modernMeta, MODERN, EVERYTHING,
  MEMORY, textOf,
} from './lib/multi.mjs';

useMulti();

const meta = modernMeta;

describe('Modern clients through vmcpd', () => {
  let daemon;
  const clients = [];

  before(async () => {
    const dir = await tmpDir('vmcpd-modern-');
    daemon = await startMulti({
      backends: [
        { name: 'everything', args: [EVERYTHING, 'stdio'] },
        { name: 'memory', args: [MEMORY], env: { MEMORY_FILE_PATH: `${dir}/memory.jsonl` } },
      ],
      aggregation: 'conflictResolution: prefix\nconflictResolutionConfig:\n  prefixMode: onConflict',
    });
  });

  after(async () => {
    for (const c of clients)
      await c.close().catch(() => {});
    if (daemon)
      await daemon.stop();
  });

  async function v2(mode) {
    const client = new Client({ name: 'modern-interop', version: '1.0.0' },
      { versionNegotiation: { mode } });
    await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
    clients.push(client);
    return client;
  }

  test('the v2 client pinned to 2026-07-28 lists and calls through vmcpd', guarded(async () => {
    const client = await v2({ pin: MODERN });
    const tools = (await client.listTools()).tools.map((t) => t.name);
    for (const n of ['echo', 'get-sum', 'create_entities', 'read_graph'])
      assert.ok(tools.includes(n), `${n} in ${tools}`);
    assert.equal(textOf(await client.callTool({ name: 'echo', arguments: { message: 'modern ✓' } })),
      'Echo: modern ✓');
    const sum = await client.callTool({ name: 'get-sum', arguments: { a: 20, b: 22 } });
    assert.match(textOf(sum), /42/);
    const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
    assert.ok(prompts.includes('simple-prompt'), `${prompts}`);
    const p = await client.getPrompt({ name: 'simple-prompt' });
    assert.ok(p.messages.length >= 1);
    const res = (await client.listResources()).resources;
    assert.ok(res.length > 0);
    const read = await client.readResource({ uri: res[0].uri });
    assert.equal(read.contents[0].uri, res[0].uri);
  }));

  test('the v2 client in auto mode finds the Modern era; a v1 client beside it stays Legacy',
    guarded(async () => {
      const client = await v2('auto');
      assert.equal(textOf(await client.callTool({ name: 'echo', arguments: { message: 'auto' } })),
        'Echo: auto');
      const legacy = await connectClient(daemon.url, { name: 'legacy-beside' });
      clients.push(legacy.client);
      assert.equal(textOf(await legacy.client.callTool({ name: 'echo', arguments: { message: 'v1' } })),
        'Echo: v1');
    }));

  test('results carry resultType and serverInfo; lists carry ttlMs and cacheScope', guarded(async () => {
    const d = await modern(daemon.port, 'server/discover');
    assert.equal(d.status, 200, d.text);
    assert.deepEqual(d.json.result.supportedVersions, [MODERN]);
    assert.equal(d.json.result.resultType, 'complete');
    assert.equal(d.json.result._meta['io.modelcontextprotocol/serverInfo'].name, 'vmcpd');
    assert.ok(Number.isInteger(d.json.result.ttlMs) && d.json.result.ttlMs >= 0);
    assert.ok(['public', 'private'].includes(d.json.result.cacheScope));
    const l = await modern(daemon.port, 'tools/list');
    assert.equal(l.json.result.resultType, 'complete');
    assert.ok(Number.isInteger(l.json.result.ttlMs));
    assert.equal(l.json.result.cacheScope, 'public');
    // no session is minted or needed
    assert.equal(l.headers['mcp-session-id'], undefined);
  }));

  test('the Modern status codes', guarded(async () => {
    // a method 2026-07-28 does not have: 404 -32601
    for (const m of ['ping', 'logging/setLevel', 'resources/subscribe', 'no/such']) {
      const r = await modern(daemon.port, m);
      assert.equal(r.status, 404, `${m}: ${r.text}`);
      assert.equal(r.json.error.code, -32601, m);
    }
    // header and body disagree: 400 -32020, before the version check
    const mism = await modern(daemon.port, 'tools/list', {}, { 'Mcp-Method': 'prompts/list' });
    assert.equal(mism.status, 400);
    assert.equal(mism.json.error.code, -32020);
    // a version vmcpd does not serve: 400 -32022 with data
    const r = await httpRequest(daemon.port, {
      headers: { 'Content-Type': 'application/json', Accept: MCP_ACCEPT,
        'MCP-Protocol-Version': '2099-01-01', 'Mcp-Method': 'tools/list' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list',
        params: { _meta: { ...meta(), 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } } }),
    });
    const e = JSON.parse(r.text);
    assert.equal(r.status, 400, r.text);
    assert.equal(e.error.code, -32022);
    assert.deepEqual(e.error.data, { supported: [MODERN], requested: '2099-01-01' });
    // a Modern header but no _meta: 400 -32602
    const nometa = await httpRequest(daemon.port, {
      headers: { 'Content-Type': 'application/json', Accept: MCP_ACCEPT,
        'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tools/list' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'tools/list', params: {} }),
    });
    assert.equal(nometa.status, 400);
    assert.equal(JSON.parse(nometa.text).error.code, -32602);
    // a tools/call without Mcp-Name: -32020
    const noname = await modern(daemon.port, 'tools/call', { name: 'echo', arguments: { message: 'x' } });
    assert.equal(noname.status, 400);
    assert.equal(noname.json.error.code, -32020);
    // an unknown tool: in-band -32602
    const unknown = await modern(daemon.port, 'tools/call', { name: 'nope', arguments: {} },
      { 'Mcp-Name': 'nope' });
    assert.equal(unknown.status, 200);
    assert.equal(unknown.json.error.code, -32602);
    // a bad cursor: -32602
    const cur = await modern(daemon.port, 'tools/list', { cursor: 'not-a-cursor' });
    assert.equal(cur.json.error.code, -32602);
  }));

  test('progress streams on the request when it asks for it', guarded(async () => {
    const r = await modern(daemon.port, 'tools/call', {
      name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 2 },
      _meta: { ...meta(), progressToken: 'p1' },
    }, { 'Mcp-Name': 'trigger-long-running-operation' });
    assert.equal(r.status, 200);
    assert.match(r.headers['content-type'], /text\/event-stream/);
    const events = r.text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
    const progress = events.filter((e) => e.method === 'notifications/progress');
    assert.ok(progress.length >= 1, r.text);
    assert.equal(progress[0].params.progressToken, 'p1');
    const final = events.at(-1);
    assert.equal(final.result.resultType, 'complete');
  }));
});

describe('subscriptions/listen through vmcpd (2 workers)', () => {
  let dyn, daemon;
  const DOC = 'test://dyn/doc';

  before(async () => {
    dyn = await startSpec({ label: 'dyn', dynamic: true, tools: ['keep'],
      resources: [{ uri: DOC, text: 'doc' }] });
    daemon = await startMulti({ backends: [{ name: 'dyn', url: dyn.url }], http: 'keepAlive: 1s',
      aggregation: 'conflictResolutionConfig:\n  prefixMode: onConflict' });
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
  });

  function listen(id, notifications) {
    return openStream(daemon.port, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: MCP_ACCEPT,
        'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'subscriptions/listen' },
      body: { jsonrpc: '2.0', id, method: 'subscriptions/listen',
        params: { _meta: meta(), notifications } },
      timeout: 30000,
    });
  }

  const msgs = (g, method) => g.events.filter((e) => e.msg?.method === method);

  test('acknowledged first, only what was asked, tagged, from whichever worker',
    guarded(async () => {
      // worker 0 listens to the backend once a view exists
      const l = await modern(daemon.port, 'tools/list');
      assert.equal(l.status, 200, l.text);
      await waitFor('vmcpd listening to dyn', async () => (await dyn.stats()).getStreams >= 1,
        { timeout: 20000, interval: 100 });
      // one listen stream on each worker, if the accepts allow it
      const streams = [];
      const seen = new Set();
      for (let i = 0; i < 40 && seen.size < 2; i++) {
        const g = await listen(`L${i}`, { toolsListChanged: true, resourceSubscriptions: [DOC] });
        await g.until('acknowledged', (s) => s.events.length >= 1, 10000);
        const pid = Number(String(g.headers['vmcpd-worker']).split(' ')[1]);
        if (seen.has(pid)) {
          g.close();
          continue;
        }
        seen.add(pid);
        streams.push(g);
      }
      assert.ok(streams.length >= 1);
      for (const g of streams) {
        const ack = g.events[0].msg;
        assert.equal(ack.method, 'notifications/subscriptions/acknowledged');
        assert.deepEqual(ack.params.notifications, { toolsListChanged: true,
          resourceSubscriptions: [DOC] });
        assert.match(String(ack.params._meta['io.modelcontextprotocol/subscriptionId']), /^L\d+$/);
      }
      // a tool added at the backend reaches every listen stream, tagged
      const add = await modern(daemon.port, 'tools/call', { name: 'add_tool', arguments: { name: 'fresh' } },
        { 'Mcp-Name': 'add_tool' });
      assert.equal(add.json.result.content[0].text, 'added tool fresh', add.text);
      for (const g of streams) {
        await g.until('tools/list_changed', () => msgs(g, 'notifications/tools/list_changed').length >= 1,
          15000);
        const n = msgs(g, 'notifications/tools/list_changed')[0].msg;
        assert.equal(n.params._meta['io.modelcontextprotocol/subscriptionId'],
          g.events[0].msg.params._meta['io.modelcontextprotocol/subscriptionId']);
      }
      // a resource update reaches the streams subscribed to it
      const touch = await modern(daemon.port, 'tools/call', { name: 'touch', arguments: { uri: DOC } },
        { 'Mcp-Name': 'touch' });
      assert.equal(touch.status, 200, touch.text);
      for (const g of streams)
        await g.until('resources/updated', () =>
          msgs(g, 'notifications/resources/updated').some((e) => e.msg.params.uri === DOC), 15000);
      // nothing that was not asked for: no prompts or resources list changes
      for (const g of streams) {
        assert.equal(msgs(g, 'notifications/prompts/list_changed').length, 0);
        assert.equal(msgs(g, 'notifications/resources/list_changed').length, 0);
        g.close();
      }
    }));

  const listenHeaders = { 'Content-Type': 'application/json', Accept: MCP_ACCEPT,
    'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'subscriptions/listen' };
  const listenBody = (id) => JSON.stringify({ jsonrpc: '2.0', id, method: 'subscriptions/listen',
    params: { _meta: meta(), notifications: { toolsListChanged: true } } });

  /* a listen stream is still served: acknowledged, then told of a change */
  async function served(tag) {
    await waitFor('vmcpd listening to dyn', async () => (await dyn.stats()).getStreams >= 1,
      { timeout: 20000, interval: 100 });
    const g = await listen(tag, { toolsListChanged: true });
    await g.until('acknowledged', (s) => s.events.length >= 1, 10000);
    const add = await modern(daemon.port, 'tools/call', { name: 'add_tool',
      arguments: { name: tag } }, { 'Mcp-Name': 'add_tool' });
    assert.equal(add.status, 200, add.text);
    await g.until('tools/list_changed', () =>
      msgs(g, 'notifications/tools/list_changed').length >= 1, 15000);
    g.close();
  }

  test('a listen whose client is gone before its acknowledgement is written: the worker lives on',
    guarded(async () => {
      // The stream's head is taken, the acknowledgement's write finds
      // the connection reset (the view is cached: the same call); the
      // close callback must not free the stream under the writer.
      const l = await modern(daemon.port, 'tools/list');
      assert.equal(l.status, 200, l.text);
      for (let i = 0; i < 60; i++) {
        await new Promise((resolve) => {
          const body = listenBody(`G${i}`);
          const sock = net.connect(daemon.port, '127.0.0.1', () => {
            sock.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${daemon.port}\r\n` +
              Object.entries(listenHeaders).map(([k, v]) => `${k}: ${v}\r\n`).join('') +
              `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`, () => {
              sock.destroy();
              resolve();
            });
          });
          sock.on('error', resolve);
        });
      }
      await served('after_gone');
    }));

  test('a listen stream whose client left unnoticed while changes come: the worker lives on',
    guarded(async () => {
      // The worker stops reading the stream's connection (a byte
      // pipelined behind the request), so only a write finds it closed:
      // the first change's write is taken, the next one's finds the
      // connection reset while the changes are fanned out to the streams.
      const l = await modern(daemon.port, 'tools/list');
      assert.equal(l.status, 200, l.text);
      await served('before_unwatched');
      // a control stream sees each change delivered before the next
      const ctl = await listen('ctl', { toolsListChanged: true });
      await ctl.until('acknowledged', (s) => s.events.length >= 1, 10000);
      let n = 0;
      for (let i = 0; i < 3; i++) {
        const s = await openUnwatched(daemon.port, { method: 'POST', headers: listenHeaders,
          body: listenBody(`U${i}`), until: 'acknowledged' });
        s.close();
        for (let j = 0; j < 2; j++) {
          const add = await modern(daemon.port, 'tools/call', { name: 'add_tool',
            arguments: { name: `unwatched${i}_${j}` } }, { 'Mcp-Name': 'add_tool' });
          assert.equal(add.status, 200, add.text);
          n++;
          await ctl.until('tools/list_changed', () =>
            msgs(ctl, 'notifications/tools/list_changed').length >= n, 15000);
        }
      }
      ctl.close();
      await served('after_unwatched');
    }));

  test('a listen without params.notifications is refused', guarded(async () => {
    const r = await modern(daemon.port, 'subscriptions/listen');
    assert.equal(r.json.error.code, -32602, r.text);
  }));
});

// A 2026-07-28 backend (SDK v2) whose lists change: worker 0 listens to
// it with subscriptions/listen, the builder relists it, and every
// worker's listen streams are told promptly (SEP-2575, MCP 2026-07-28
// Subscriptions; the conformance suite waits 1.5 s).  And resources no
// one serves: the error names the URI (MCP Resources, Error Handling).
describe('a 2026-07-28 backend through vmcpd (2 workers): list changes on listen streams, missing resources',
  () => {
    let mb, daemon;
    const BOUND = 3000;	// ms from the change to the notification: generous

    before(async () => {
      mb = await startModern({ label: 'mb', modernOnly: true, dynamic: true, tools: ['keep'],
        prompts: ['greet'], templates: [{ name: 'items', uriTemplate: 'test://mb/items/{id}' }] });
      daemon = await startMulti({ backends: [{ name: 'mb', url: mb.url }],
        aggregation: 'conflictResolutionConfig:\n  prefixMode: onConflict' });
    });

    after(async () => {
      if (daemon)
        await daemon.stop();
    });

    const msgs = (g, method) => g.events.filter((e) => e.msg?.method === method);
    const slotOf = (g) => Number(String(g.headers['vmcpd-worker']).split(' ')[0]);

    /* one listen stream on each worker (slot 0 listens to the backend) */
    async function listenOnEach() {
      const bySlot = new Map();
      for (let i = 0; i < 40 && bySlot.size < 2; i++) {
        const g = await openStream(daemon.port, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Accept: MCP_ACCEPT,
            'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'subscriptions/listen' },
          body: { jsonrpc: '2.0', id: `W${i}`, method: 'subscriptions/listen',
            params: { _meta: meta(), notifications: { toolsListChanged: true, promptsListChanged: true } } },
          timeout: 30000,
        });
        await g.until('acknowledged', (s) => s.events.length >= 1, 10000);
        assert.equal(g.events[0].msg.method, 'notifications/subscriptions/acknowledged');
        if (bySlot.has(slotOf(g)))
          g.close();
        else
          bySlot.set(slotOf(g), g);
      }
      assert.deepEqual([...bySlot.keys()].sort(), [0, 1], 'a listen stream on each worker');
      return [...bySlot.values()];
    }

    /* the change made (the backend notifies before it answers), then
     * each stream told within BOUND, and the list has the new item */
    async function changeAndWait(streams, kind, name) {
      const method = `notifications/${kind}s/list_changed`;
      const before = streams.map((g) => msgs(g, method).length);
      const t0 = Date.now();
      const add = await modern(daemon.port, 'tools/call', { name: `add_${kind}`, arguments: { name } },
        { 'Mcp-Name': `add_${kind}` });
      assert.equal(add.json?.result?.content?.[0]?.text, `added ${kind} ${name}`, add.text);
      for (const [i, g] of streams.entries()) {
        await g.until(method, () => msgs(g, method).length > before[i], 15000);
        const at = msgs(g, method)[before[i]].at;
        assert.ok(at - t0 <= BOUND, `${method} on worker ${slotOf(g)} ${at - t0} ms after the change`);
      }
      const l = await modern(daemon.port, `${kind}s/list`);
      assert.ok(l.json.result[`${kind}s`].some((x) => x.name === name), l.text);
    }

    test('list_changed reaches the listen streams of both workers promptly, under load too',
      guarded(async () => {
        const l = await modern(daemon.port, 'tools/list');
        assert.equal(l.status, 200, l.text);
        await waitFor('vmcpd listening to mb', async () => (await mb.stats()).methods['modern subscriptions/listen'] >= 1,
          { timeout: 20000, interval: 100 });
        const streams = await listenOnEach();
        await changeAndWait(streams, 'tool', 'fresh');
        // a second change right after the first, while clients keep
        // both workers busy
        let stop = false;
        const load = Array.from({ length: 8 }, async () => {
          for (let i = 0; !stop; i++) {
            const r = await modern(daemon.port, 'tools/call', { name: 'keep', arguments: { x: `${i}` } },
              { 'Mcp-Name': 'keep' });
            assert.equal(r.status, 200, r.text);
          }
        });
        try {
          await changeAndWait(streams, 'prompt', 'fresh_prompt');
          await changeAndWait(streams, 'tool', 'fresher');
        } finally {
          stop = true;
          await Promise.all(load);
        }
        // a stream asked for tools and prompts: nothing else came
        for (const g of streams) {
          assert.equal(msgs(g, 'notifications/resources/list_changed').length, 0);
          g.close();
        }
      }));

    /* a read of uri answered with code (each revision's) and data {uri} */
    async function readMissing(uri, modernCode, legacyCode) {
      const m = await modern(daemon.port, 'resources/read', { uri }, { 'Mcp-Name': uri });
      assert.equal(m.json?.error?.code, modernCode, m.text);
      assert.deepEqual(m.json.error.data, { uri });
      const { sid } = await openSession(daemon.port);
      const l = await rpc(daemon.port, sid, 'resources/read', { uri });
      assert.equal(l.json?.error?.code, legacyCode, l.text);
      assert.deepEqual(l.json.error.data, { uri });
    }

    test('a resource no backend serves: -32602 (2026-07-28) or -32002 (2025-11-25) with data.uri',
      guarded(async () => {
        await readMissing('test://nowhere/doc', -32602, -32002);
      }));

    test("the backend's own not-found passes through with its data, in each revision's code",
      guarded(async () => {
        // the 2026-07-28 backend's -32602 is -32002 to a 2025-11-25 client
        await readMissing('test://mb/items/missing', -32602, -32002);
        // and a template's item that exists is read
        const ok = await modern(daemon.port, 'resources/read', { uri: 'test://mb/items/7' },
          { 'Mcp-Name': 'test://mb/items/7' });
        assert.equal(ok.json?.result?.contents?.[0]?.text, 'mb:test://mb/items/7', ok.text);
      }));
  });
