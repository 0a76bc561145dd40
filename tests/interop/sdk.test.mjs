// The official MCP SDK v1 client through vmcpd, compared with the same
// client talking to the backend (server-everything) directly.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  useHarness, guarded, startEverything, startTestBackend, startDaemon, connectClient, rpc,
  LEGACY_VERSION, withTimeout,
} from './lib/harness.mjs';

useHarness();

/* Outcome of a call that should fail: the McpError or the isError result. */
async function failure(p) {
  try {
    const r = await p;
    assert.equal(r.isError, true, `expected an error, got success: ${JSON.stringify(r)}`);
    return { kind: 'isError', result: r };
  } catch (e) {
    if (e instanceof assert.AssertionError)
      throw e;
    assert.equal(typeof e.code, 'number', `expected a JSON-RPC error, got ${e}`);
    return { kind: 'error', code: e.code, message: e.message };
  }
}

describe('SDK v1 client through vmcpd (server-everything backend)', () => {
  let everything, daemon, via, direct;

  before(async () => {
    everything = await startEverything();
    daemon = await startDaemon({ backendUrl: everything.url });	// no name: "vmcpd"
    via = await connectClient(daemon.url, { name: 'via-vmcpd' });
    direct = await connectClient(everything.url, { name: 'direct' });
  });

  after(async () => {
    await direct?.client.close().catch(() => {});
    await via?.client.close().catch(() => {});
    if (daemon)
      await daemon.stop();
  });

  test('initialize: serverInfo, protocol version, capabilities', guarded(async () => {
    const info = via.client.getServerVersion();
    assert.equal(info.name, 'vmcpd');
    assert.equal(typeof info.version, 'string');
    assert.ok(info.version.length > 0);
    assert.equal(via.transport.protocolVersion, LEGACY_VERSION);
    const caps = via.client.getServerCapabilities();
    assert.equal(typeof caps.tools, 'object');
    assert.equal(typeof caps.resources, 'object');
    assert.equal(typeof caps.prompts, 'object');
    assert.match(via.transport.sessionId, /^[\x21-\x7e]{22,}$/);
  }));

  test('tools/list equals the backend\'s own list', guarded(async () => {
    const [a, b] = await Promise.all([via.client.listTools(), direct.client.listTools()]);
    const names = (r) => r.tools.map((t) => t.name).sort();
    assert.ok(a.tools.length >= 5, `only ${a.tools.length} tools`);
    assert.deepEqual(names(a), names(b));
    for (const n of ['echo', 'get-sum', 'trigger-long-running-operation'])
      assert.ok(names(a).includes(n), `${n} listed`);
    const echoA = a.tools.find((t) => t.name === 'echo');
    const echoB = b.tools.find((t) => t.name === 'echo');
    assert.deepEqual(echoA, echoB);
  }));

  test('tools/call echo', guarded(async () => {
    const r = await via.client.callTool({ name: 'echo', arguments: { message: 'hello vmcpd ✓' } });
    assert.deepEqual(r.content, [{ type: 'text', text: 'Echo: hello vmcpd ✓' }]);
    assert.notEqual(r.isError, true);
  }));

  test('tools/call get-sum', guarded(async () => {
    const r = await via.client.callTool({ name: 'get-sum', arguments: { a: 19, b: 23.5 } });
    assert.equal(r.content[0].type, 'text');
    assert.equal(r.content[0].text, 'The sum of 19 and 23.5 is 42.5.');
  }));

  test('progress notifications stream through vmcpd', guarded(async () => {
    const progress = [];
    const r = await withTimeout(via.client.callTool(
      { name: 'trigger-long-running-operation', arguments: { duration: 0.6, steps: 3 } },
      undefined, { onprogress: (p) => progress.push(p), timeout: 15000 }), 20000, 'long call');
    assert.deepEqual(progress.map((p) => [p.progress, p.total]), [[1, 3], [2, 3], [3, 3]]);
    assert.equal(r.content[0].text,
      'Long running operation completed. Duration: 0.6 seconds, Steps: 3.');
  }));

  test('unknown tool: an error that names the tool', guarded(async () => {
    const a = await failure(via.client.callTool({ name: 'no-such-tool', arguments: {} }));
    await failure(direct.client.callTool({ name: 'no-such-tool', arguments: {} }));
    assert.match(a.kind === 'isError' ? a.result.content[0].text : a.message, /no-such-tool/);
    // the session is fine afterwards
    const r = await via.client.callTool({ name: 'echo', arguments: { message: 'still' } });
    assert.equal(r.content[0].text, 'Echo: still');
  }));

  test('wrong argument types: an error, as from the backend', guarded(async () => {
    const args = { a: 'one', b: 2 };
    const a = await failure(via.client.callTool({ name: 'get-sum', arguments: args }));
    const b = await failure(direct.client.callTool({ name: 'get-sum', arguments: args }));
    // a tool-level failure of the backend is passed on as it is
    if (b.kind === 'isError' && a.kind === 'isError')
      assert.deepEqual(a, b);
  }));

  test('ping', guarded(async () => {
    assert.deepEqual(await via.client.ping(), {});
  }));

  test('resources/list, resources/templates/list, prompts/list equal the backend\'s',
    guarded(async () => {
      // every page, then compared as sets: an aggregator may re-page and re-order
      const all = async (c, method, key) => {
        const out = [];
        let cursor;
        for (let pages = 0; pages < 50; pages++) {
          const r = await c.client[method](cursor === undefined ? undefined : { cursor });
          out.push(...r[key]);
          if ((cursor = r.nextCursor) === undefined)
            return out;
        }
        assert.fail(`${method}: more than 50 pages`);
      };
      const sorted = (list, k) => [...list].sort((x, y) => (x[k] < y[k] ? -1 : x[k] > y[k] ? 1 : 0));
      for (const [method, key, id] of [['listResources', 'resources', 'uri'],
        ['listResourceTemplates', 'resourceTemplates', 'uriTemplate'],
        ['listPrompts', 'prompts', 'name']]) {
        const [a, b] = await Promise.all([all(via, method, key), all(direct, method, key)]);
        assert.ok(a.length > 0, `${method} is not empty`);
        assert.deepEqual(sorted(a, id), sorted(b, id), method);
      }
    }));

  test('terminateSession: the old session id answers 404 -32001', guarded(async () => {
    const c = await connectClient(daemon.url, { name: 'short-lived' });
    const sid = c.transport.sessionId;
    const ok = await rpc(daemon.port, sid, 'tools/list', {});
    assert.equal(ok.status, 200);
    assert.ok(Array.isArray(ok.json.result.tools));
    await c.transport.terminateSession();
    assert.equal(c.transport.sessionId, undefined);
    await c.client.close();
    const gone = await rpc(daemon.port, sid, 'tools/list', {});
    assert.equal(gone.status, 404);
    assert.equal(gone.json.error.code, -32001);
    // and on every worker, not just the one that handled DELETE
    for (let i = 0; i < 6; i++) {
      const again = await rpc(daemon.port, sid, 'ping');
      assert.equal(again.status, 404);
    }
  }));
});

describe('SDK v1 client through vmcpd (SDK test backend)', () => {
  let backend, daemon, via;

  before(async () => {
    backend = await startTestBackend();
    daemon = await startDaemon({ backendUrl: backend.url, backendName: 'fixture', name: 'interop-gw',
      timeout: '2s' });
    via = await connectClient(daemon.url);
  });

  after(async () => {
    await via?.client.close().catch(() => {});
    if (daemon)
      await daemon.stop();
  });

  test('serverInfo.name is the configured name', guarded(async () => {
    assert.equal(via.client.getServerVersion().name, 'interop-gw');
    assert.deepEqual((await via.client.listTools()).tools.map((t) => t.name).sort(),
      ['echo', 'fail', 'slow', 'whoami']);
  }));

  test('an isError result passes through unchanged', guarded(async () => {
    const r = await via.client.callTool({ name: 'fail', arguments: { message: 'boom' } });
    assert.equal(r.isError, true);
    assert.deepEqual(r.content, [{ type: 'text', text: 'failed: boom' }]);
  }));

  test('a backend slower than operational.timeouts.default gives an error', guarded(async () => {
    const t0 = Date.now();
    const f = await failure(via.client.callTool({ name: 'slow', arguments: { ms: 6000 } },
      undefined, { timeout: 15000 }));
    const took = Date.now() - t0;
    assert.ok(took < 5500, `answered after ${took} ms, the timeout is 2 s`);
    assert.equal(f.kind, 'error', JSON.stringify(f));
    // the session still works afterwards
    const r = await via.client.callTool({ name: 'echo', arguments: { message: 'after' } });
    assert.equal(r.content[0].text, 'Echo: after');
  }));

  test('concurrent calls on one session each get their own answer', guarded(async () => {
    const msgs = Array.from({ length: 20 }, (_, i) => `m${i}`);
    const rs = await Promise.all(msgs.map((m) =>
      via.client.callTool({ name: 'echo', arguments: { message: m } })));
    assert.deepEqual(rs.map((r) => r.content[0].text), msgs.map((m) => `Echo: ${m}`));
  }));
});
