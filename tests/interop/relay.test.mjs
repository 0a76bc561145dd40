// Requests a backend sends mid-call (elicitation, sampling, roots) relayed
// through vmcpd to the client on the call's SSE stream, and the client's
// answers relayed back, with the official SDK v1 client and with raw
// HTTP across two workers: the answer may land on either worker.  A
// client that did not declare a capability gets the call failed cleanly.
// list_changed reaches GET streams held by either worker.
//
// Backends: server-everything over stdio (vmcpd's bridge) and an SDK
// backend over Streamable HTTP (lib/spec-backend.mjs: tool "ask"
// elicits; dynamic tools for list_changed).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import {
  ElicitRequestSchema, CreateMessageRequestSchema, ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import {
  guarded, connectClient, rpc, httpRequest, mcpHeaders, workerOf, waitFor, withTimeout, sleep,
} from './lib/harness.mjs';
import {
  useMulti, startMulti, startSpec, openGet, openSessionCaps, openUnwatched, postStream, textOf,
  NODE, EVERYTHING,
} from './lib/multi.mjs';

useMulti();

const ALL_CAPS = { elicitation: {}, sampling: {}, roots: { listChanged: true } };
const MAX_ROUNDS = 24;

describe('mid-call requests relayed through vmcpd (2 workers)', () => {
  let asker, daemon, full, bare;
  const seen = { elicit: [], sample: [], roots: 0 };
  let elicitAnswer = { action: 'accept', content: { answer: '42' } };

  before(async () => {
    asker = await startSpec({ label: 'asker', elicit: true, dynamic: true });
    daemon = await startMulti({
      backends: [
        { name: 'everything', command: NODE, args: [EVERYTHING, 'stdio'] },
        { name: 'asker', url: asker.url },
      ],
      aggregation: 'conflictResolution: prefix\nconflictResolutionConfig:\n  prefixMode: onConflict',
    });
    full = await connectClient(daemon.url, { name: 'relay-full', capabilities: ALL_CAPS, timeout: 30000 });
    full.client.setRequestHandler(ElicitRequestSchema, async (req, extra) => {
      seen.elicit.push({ params: req.params, id: extra.requestId });
      if (req.params.requestedSchema?.properties?.answer)
        return elicitAnswer;
      // server-everything's form
      return { action: 'accept', content: { name: 'Ada', check: true, email: 'ada@example.com',
        integer: 7, number: 2.5 } };
    });
    full.client.setRequestHandler(CreateMessageRequestSchema, async (req, extra) => {
      seen.sample.push({ params: req.params, id: extra.requestId });
      return { model: 'interop-model', role: 'assistant',
        content: { type: 'text', text: 'sampled by the test' } };
    });
    full.client.setRequestHandler(ListRootsRequestSchema, async () => {
      seen.roots++;
      return { roots: [{ uri: 'file:///srv/interop-root', name: 'interop root' }] };
    });
    bare = await connectClient(daemon.url, { name: 'relay-bare', capabilities: {}, timeout: 30000 });
  });

  after(async () => {
    await full?.client.close().catch(() => {});
    await bare?.client.close().catch(() => {});
    if (daemon)
      await daemon.stop();
  });

  test('elicitation: server-everything over stdio', guarded(async () => {
    const n = seen.elicit.length;
    const r = await full.client.callTool({ name: 'trigger-elicitation-request', arguments: {} });
    assert.equal(seen.elicit.length, n + 1, 'the client was asked once');
    const asked = seen.elicit.at(-1);
    assert.match(String(asked.id), /^vmcpd-r-[0-9a-f]{32}$/, 'vmcpd\'s own request id');
    assert.equal(asked.params.message, 'Please provide inputs for the following fields:');
    assert.notEqual(r.isError, true, JSON.stringify(r));
    assert.match(r.content.map((c) => c.text).join('\n'), /Name: Ada/);
  }));

  test('elicitation: SDK backend over HTTP, accept and decline', guarded(async () => {
    elicitAnswer = { action: 'accept', content: { answer: '42' } };
    let r = await full.client.callTool({ name: 'ask', arguments: { question: 'the answer?' } });
    assert.equal(seen.elicit.at(-1).params.message, 'the answer?');
    assert.equal(textOf(r), 'answer {"action":"accept","content":{"answer":"42"}}');
    elicitAnswer = { action: 'decline' };
    r = await full.client.callTool({ name: 'ask', arguments: { question: 'again?' } });
    assert.equal(textOf(r), 'answer {"action":"decline"}');
    elicitAnswer = { action: 'accept', content: { answer: '42' } };
  }));

  test('sampling: trigger-sampling-request', guarded(async () => {
    const r = await full.client.callTool({ name: 'trigger-sampling-request',
      arguments: { prompt: 'hello sampler', maxTokens: 7 } });
    const asked = seen.sample.at(-1);
    assert.ok(asked, 'the client was asked to sample');
    assert.match(String(asked.id), /^vmcpd-r-/);
    assert.equal(asked.params.maxTokens, 7);
    assert.equal(asked.params.messages[0].content.text,
      'Resource trigger-sampling-request context: hello sampler');
    assert.match(textOf(r), /sampled by the test/);
    assert.match(textOf(r), /interop-model/);
  }));

  test('roots/list: get-roots-list', guarded(async () => {
    // server-everything asks for roots once per connection and caches
    // them: 350 ms after initialize (relayed by the bridge to whichever
    // call is then in flight, possibly one of this client's) or on the
    // first get-roots-list, whichever comes first.  So the ask may have
    // come before this call; it must have come to this client.
    const r = await full.client.callTool({ name: 'get-roots-list', arguments: {} });
    assert.ok(seen.roots > 0, 'the client was asked for its roots');
    assert.match(textOf(r), /file:\/\/\/srv\/interop-root/);
  }));

  test('progress notifications are relayed on the call\'s stream', guarded(async () => {
    const progress = [];
    const r = await withTimeout(full.client.callTool({ name: 'trigger-long-running-operation',
      arguments: { duration: 0.3, steps: 3 } }, undefined,
    { onprogress: (p) => progress.push(p), timeout: 15000 }), 20000, 'long call');
    assert.match(textOf(r), /^Long running operation completed/);
    assert.deepEqual(progress.map((p) => p.progress), [1, 2, 3]);
  }));

  test('a client without the capability: the call fails cleanly, nothing hangs', guarded(async () => {
    let t = Date.now();
    const r = await withTimeout(bare.client.callTool({ name: 'ask', arguments: { question: 'q' } }),
      15000, 'ask without elicitation');
    assert.ok(Date.now() - t < 10000, `answered in ${Date.now() - t} ms`);
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.match(textOf(r), /did not declare the elicitation capability/);

    // server-everything (its tool exists: the bridge declares the
    // capability) gets the same refusal
    for (const [name, args] of [['trigger-elicitation-request', {}],
      ['trigger-sampling-request', { prompt: 'x' }]]) {
      t = Date.now();
      let out;
      try {
        out = await withTimeout(bare.client.callTool({ name, arguments: args }), 15000, name);
        assert.equal(out.isError, true, `${name}: ${JSON.stringify(out)}`);
      } catch (e) {
        if (e instanceof assert.AssertionError)
          throw e;
        assert.equal(typeof e.code, 'number', `${name}: a JSON-RPC error, not ${e}`);
      }
      assert.ok(Date.now() - t < 10000, `${name} answered in ${Date.now() - t} ms`);
    }
    assert.match(daemon.proc.output, /refused: the client did not declare the elicitation capability/);
  }));

  test('raw HTTP: the answer lands on the other worker; other sessions cannot answer',
    guarded(async () => {
      const { sid } = await openSessionCaps(daemon.port, { elicitation: {} });
      const { sid: intruder } = await openSessionCaps(daemon.port, { elicitation: {} });
      let crossed = 0, rounds = 0;
      for (; rounds < MAX_ROUNDS && crossed < 2; rounds++) {
        const s = await postStream(daemon.port, sid, 'tools/call',
          { name: 'ask', arguments: { question: `round ${rounds}` } }, { timeout: 20000 });
        assert.equal(s.status, 200);
        assert.match(s.headers['content-type'], /^text\/event-stream/);
        const callWorker = workerOf(s);
        const req = await s.until('the elicitation request', (x) => x.messages('elicitation/create')[0]);
        assert.match(req.id, /^vmcpd-r-[0-9a-f]{32}$/);
        assert.equal(req.params.message, `round ${rounds}`);
        if (rounds === 0) {
          // another session's answer is not taken
          const bad = await httpRequest(daemon.port, { headers: mcpHeaders({ session: intruder }),
            body: { jsonrpc: '2.0', id: req.id, result: { action: 'accept', content: { answer: 'intruder' } } } });
          assert.ok(bad.status === 202 || bad.status >= 400, `intruder answer: ${bad.status}`);
          await sleep(300);
          assert.equal(s.messages().filter((m) => m.result).length, 0, 'the call still waits');
        }
        // vary which worker the answer is likely to land on
        for (let i = 0; i < rounds % 3; i++)
          await rpc(daemon.port, sid, 'ping');
        const ans = await httpRequest(daemon.port, { headers: mcpHeaders({ session: sid }),
          body: { jsonrpc: '2.0', id: req.id, result: { action: 'accept', content: { answer: `r${rounds}` } } } });
        assert.equal(ans.status, 202, ans.text);
        const ansWorker = workerOf(ans);
        const resp = await s.until('the call\'s result', (x) => x.messages().find((m) => m.id !== undefined &&
          m.method === undefined));
        assert.equal(resp.error, undefined, JSON.stringify(resp));
        assert.equal(resp.result.content[0].text,
          `answer {"action":"accept","content":{"answer":"r${rounds}"}}`);
        if (ansWorker.pid !== callWorker.pid)
          crossed++;
        // a second answer to the same request changes nothing
        const again = await httpRequest(daemon.port, { headers: mcpHeaders({ session: sid }),
          body: { jsonrpc: '2.0', id: req.id, result: { action: 'accept', content: { answer: 'late' } } } });
        assert.ok(again.status === 202 || again.status >= 400, `late answer: ${again.status}`);
        s.close();
      }
      assert.ok(crossed >= 2, `an answer crossed workers in only ${crossed} of ${rounds} rounds`);
      assert.match(daemon.proc.output, /answered a request that is not its own/);
    }));

  test('a request relayed to a client that left unnoticed: the worker lives on',
    guarded(async () => {
      // The worker stops reading the call's connection (a byte pipelined
      // behind it), so the relayed request's write finds the close: the
      // stream's head is taken, the event's write finds the connection
      // reset, and the close callback freed the call under the relay.
      const { sid } = await openSessionCaps(daemon.port, { elicitation: {} });
      const calls = async () => Object.entries((await asker.stats()).methods)
        .filter(([k]) => k.endsWith(' tools/call')).reduce((a, [, v]) => a + v, 0);
      for (let i = 0; i < 3; i++) {
        const n = await calls();
        const s = await openUnwatched(daemon.port, { method: 'POST',
          headers: mcpHeaders({ session: sid }),
          body: JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: 'tools/call',
            params: { name: 'ask', arguments: { question: `gone ${i}` } } }) });
        s.close();
        // the backend asks as soon as it has the call
        await waitFor('the call at the backend', async () => (await calls()) > n,
          { timeout: 15000, interval: 100 });
        await sleep(1000);
      }
      const r = await rpc(daemon.port, sid, 'ping');
      assert.equal(r.status, 200, r.text);
    }));

  test('list_changed reaches GET streams held by either worker', guarded(async () => {
    // one GET stream held by each worker
    const want = await daemon.workerPids();
    const holders = new Map();
    for (let i = 0; i < 4 * MAX_ROUNDS && holders.size < want.length; i++) {
      const { sid } = await openSessionCaps(daemon.port);
      const g = await openGet(daemon.port, sid);
      assert.equal(g.status, 200, g.text);
      const w = workerOf(g);
      if (holders.has(w.pid))
        g.close();
      else
        holders.set(w.pid, { sid, g });
    }
    assert.equal(holders.size, want.length, 'a GET stream on every worker');
    await waitFor('vmcpd listening to asker', async () => (await asker.stats()).getStreams >= 1,
      { timeout: 20000, interval: 100 });

    // changes requested through both workers
    const [{ sid }] = holders.values();
    const callers = new Set();
    let n = 0;
    // a new connection lands on whichever worker accepts first: give the
    // other one enough chances (bounded)
    for (let i = 0; i < 4 * MAX_ROUNDS && (callers.size < want.length || n < 2); i++) {
      const r = await rpc(daemon.port, sid, 'tools/call', { name: 'add_tool', arguments: { name: `lc${i}` } });
      assert.equal(r.json.result?.content[0].text, `added tool lc${i}`, r.text);
      callers.add(workerOf(r).pid);
      n++;
      for (const [pid, h] of holders)
        await h.g.until(`list_changed ${n} on worker pid ${pid}`,
          (x) => x.messages('notifications/tools/list_changed').length >= n, 15000);
    }
    assert.equal(callers.size, want.length, 'add_tool went through every worker');
    for (const [pid, h] of holders) {
      assert.equal(h.g.messages('notifications/tools/list_changed').length, n,
        `worker pid ${pid}: one notification per change`);
      h.g.close();
    }
    const names = (await rpc(daemon.port, sid, 'tools/list', {})).json.result.tools.map((t) => t.name);
    for (let i = 0; i < n; i++)
      assert.ok(names.includes(`lc${i}`), `lc${i} listed`);
  }));
});
