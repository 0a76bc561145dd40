// The tasks extension (io.modelcontextprotocol/tasks, SEP-2663) through
// vmcpd for 2026-07-28 clients (docs/ARCHITECTURE.md, "Tasks";
// worker/request/modern_task.c): the conformance fixture
// (tests/conformance/fixture.mjs, which serves the extension) behind vmcpd
// with 2 workers and OIDC principals.  vmcpd advertises the extension,
// hands out task ids of its own mapped in the store, so a task is polled
// to completion on both workers; another principal's tasks/get answers as
// an unknown id does and never reaches the backend; tasks/cancel does;
// a request without the extension gets -32021 and never a task.  A
// subscriptions/listen naming a task's id (notifications.taskIds), on the
// other worker than the one that made the task, gets its
// notifications/tasks under vmcpd's id as it goes working -> completed
// (vmcpd listens to the backend for it); another principal's listen
// naming it is acknowledged without it and hears nothing; without the
// extension the listen is -32021; a backend stream that ends leaves the
// client's open and is opened again.  A
// 2025-11-25 client gets -32601 for the experimental tasks, and a task it
// asks for (params.task) never reaches a 2025-11-25 backend.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';

import {
  guarded, vmcpctl, rpc, mcpPost, nextId, Daemon, tmpDir, waitFor, workerOf, sleep,
  LEGACY_VERSION, MCP_ACCEPT, httpRequest,
} from './lib/harness.mjs';
import { startIdp, oidcConfig, sessionAs } from './lib/oidc.mjs';
import {
  useMulti, modern, modernMeta, multiConfig, startFixture, rawBackend, serve, openStream,
  MODERN,
} from './lib/multi.mjs';

useMulti();

const EXT = 'io.modelcontextprotocol/tasks';
const TASK_ID = /^vmcpd-t-[0-9a-f]{32}$/;
const bearer = (t) => ({ Authorization: `Bearer ${t}` });
const declared = { extensions: { [EXT]: {} } };

/* GET /tasks-stats of the fixture: the tasks/* requests it served */
function fixtureStats(port) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: '/tasks-stats' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve(JSON.parse(body)));
    }).on('error', reject);
  });
}

describe('tasks through vmcpd (2 workers, OIDC)', () => {
  let idp, fixture, fport, daemon;
  const tokens = {};
  const legacyCalls = [];	// the 2025-11-25 backend's tools/call params

  /* a 2026-07-28 request as who, declaring the extension unless caps */
  const req = (who, method, params, { caps = declared, name } = {}) =>
    modern(daemon.port, method, { ...params, _meta: modernMeta(caps) }, {
      ...bearer(tokens[who]),
      ...(name !== undefined ? { 'Mcp-Name': name } : {}),
    });
  const call = (who, tool, args, opts) =>
    req(who, 'tools/call', { name: tool, arguments: args }, { name: tool, ...opts });
  const task = (who, method, taskId, extra = {}, opts) =>
    req(who, method, { taskId, ...extra }, { name: taskId, ...opts });

  /* a subscriptions/listen of who naming taskIds: its stream */
  const listen = (who, taskIds, { caps = declared, id = `L${nextId()}` } = {}) =>
    openStream(daemon.port, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: MCP_ACCEPT,
        'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'subscriptions/listen',
        ...bearer(tokens[who]) },
      body: { jsonrpc: '2.0', id, method: 'subscriptions/listen',
        params: { _meta: modernMeta(caps), notifications: { taskIds } } },
      timeout: 15000,
    });
  /* its acknowledgement's notifications */
  const acknowledged = async (g) => {
    assert.equal(g.status, 200, g.text);
    await g.until('acknowledged', (s) => s.events.length >= 1, 15000);
    const ack = g.events[0].msg;
    assert.equal(ack.method, 'notifications/subscriptions/acknowledged', g.text);
    return ack.params.notifications;
  };

  before(async () => {
    idp = await startIdp();
    fixture = await startFixture();
    fport = fixture.port;
    const lport = await serve(rawBackend('lg', ['legacy_echo'], (m, res, json) => {
      legacyCalls.push(m.params);
      json({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'ok' }] } });
    }));
    const dir = await tmpDir('vmcpd-tasks-');
    daemon = new Daemon(dir, path.join(dir, 'vmcpd.yaml'), { workers: 2 });
    await daemon.writeConfig(multiConfig({
      portFile: daemon.portFile, stateDir: daemon.stateDir,
      backends: [{ name: 'fx', url: fixture.url, era: 'modern' },
        { name: 'lg', url: `http://127.0.0.1:${lport}/mcp`, era: 'legacy' }],
      aggregation: 'conflictResolutionConfig:\n  prefixMode: onConflict',
      extra: oidcConfig(idp),
    }));
    await daemon.start();
    for (const u of ['alice', 'bob'])
      tokens[u] = idp.forge(idp.claims({ sub: u, client_id: u }));
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
    await idp?.stop();
  });

  test('server/discover advertises the extension', guarded(async () => {
    await waitFor('the view with the fixture', async () => {
      const r = await req('alice', 'server/discover', {});
      assert.equal(r.status, 200, r.text);
      return r.json.result.capabilities.extensions?.[EXT] !== undefined;
    }, { timeout: 15000 });
  }));

  test('a task made on one worker is polled to completion on both',
    guarded(async (t) => {
      const c = await call('alice', 'slow_compute', { seconds: 1, label: 'poll' });
      assert.equal(c.status, 200, c.text);
      assert.equal(c.json.error, undefined, c.text);
      const created = c.json.result;
      assert.equal(created.resultType, 'task', c.text);
      assert.match(created.taskId, TASK_ID, 'the id is vmcpd\'s');
      assert.equal(created.ttlMs, 60000, 'the backend\'s ttlMs');
      const seen = new Set();
      let last;
      for (let i = 0; i < 100; i++) {
        const g = await task('alice', 'tasks/get', created.taskId);
        assert.equal(g.status, 200, g.text);
        assert.equal(g.json.error, undefined, g.text);
        last = g.json.result;
        assert.equal(last.taskId, created.taskId, 'the id mapped back');
        seen.add(workerOf(g).pid);
        if (last.status === 'completed' && seen.size === 2)
          break;
        await sleep(50);
      }
      assert.equal(seen.size, 2, 'polled on both workers');
      assert.equal(last.status, 'completed', JSON.stringify(last));
      assert.match(last.result.content[0].text, /computed poll/);
      const d = await vmcpctl(['dump', 'tasks'], { stateDir: daemon.stateDir });
      assert.equal(d.code, 0, d.stderr);
      assert.match(d.stdout, /"db":"tasks"/);
      assert.match(d.stdout, /"backend":"fx"/);
      assert.ok(!d.stdout.includes(created.taskId), 'vmcpctl shows no whole id');
      t.diagnostic(`${seen.size} workers polled task ${created.taskId.slice(0, 14)}...`);
    }));

  test('another principal\'s task answers as an unknown one, and no backend hears of it',
    guarded(async () => {
      const c = await call('alice', 'slow_compute', { seconds: 60, label: 'mine' });
      const id = c.json.result.taskId;
      assert.match(id, TASK_ID, c.text);
      const before0 = await fixtureStats(fport);
      const theirs = await task('bob', 'tasks/get', id);
      const unknown = await task('bob', 'tasks/get', `vmcpd-t-${'0'.repeat(32)}`);
      for (const r of [theirs, unknown]) {
        assert.equal(r.status, 200, r.text);
        assert.equal(r.json.error?.code, -32602, r.text);
      }
      assert.deepEqual(theirs.json.error, unknown.json.error, 'identical answers');
      const cancel = await task('bob', 'tasks/cancel', id);
      assert.equal(cancel.json.error?.code, -32602, cancel.text);
      const after0 = await fixtureStats(fport);
      assert.equal(after0.get, before0.get, 'a tasks/get reached the backend');
      assert.equal(after0.cancel, before0.cancel, 'a tasks/cancel reached the backend');
      // still alice's, still running
      const g = await task('alice', 'tasks/get', id);
      assert.equal(g.json.result?.status, 'working', g.text);
      await task('alice', 'tasks/cancel', id);
    }));

  test('tasks/cancel reaches the backend', guarded(async () => {
    const c = await call('alice', 'slow_compute', { seconds: 60, label: 'stop' });
    const id = c.json.result.taskId;
    const before0 = await fixtureStats(fport);
    const x = await task('alice', 'tasks/cancel', id);
    assert.equal(x.status, 200, x.text);
    assert.deepEqual(Object.keys(x.json.result).sort(), ['_meta', 'resultType'], x.text);
    assert.equal(x.json.result.resultType, 'complete');
    assert.equal((await fixtureStats(fport)).cancel, before0.cancel + 1);
    const g = await task('alice', 'tasks/get', id);
    assert.equal(g.json.result.status, 'cancelled', g.text);
  }));

  test('without the extension: -32021, and a tool runs without a task',
    guarded(async () => {
      const c = await call('alice', 'slow_compute', { seconds: 60, label: 'ext' });
      const id = c.json.result.taskId;
      for (const m of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
        const r = await task('alice', m, id, m === 'tasks/update' ? { inputResponses: {} } : {},
          { caps: {} });
        assert.equal(r.status, 400, r.text);
        assert.equal(r.json.error.code, -32021, r.text);
        assert.deepEqual(r.json.error.data, { requiredCapabilities: { extensions: { [EXT]: {} } } });
      }
      const s = await call('alice', 'slow_compute', { seconds: 0, label: 'sync' }, { caps: {} });
      assert.equal(s.status, 200, s.text);
      assert.equal(s.json.result.resultType, 'complete', s.text);
      assert.equal(s.json.result.taskId, undefined, s.text);
      await task('alice', 'tasks/cancel', id);
      // tasks/result and tasks/list are not 2026-07-28 methods
      for (const m of ['tasks/result', 'tasks/list']) {
        const r = await req('alice', m, { taskId: id });
        assert.equal(r.json.error?.code, -32601, r.text);
      }
    }));

  test('notifications/tasks on a listen stream of the other worker, ids vmcpd\'s; not another\'s; -32021 without the extension',
    guarded(async (t) => {
      const c = await call('alice', 'confirm_delete', { filename: 'n.txt' });
      assert.equal(c.json?.result?.resultType, 'task', c.text);
      const id = c.json.result.taskId;
      assert.match(id, TASK_ID, c.text);
      assert.equal(c.json.result.status, 'input_required', c.text);
      const made = workerOf(c).pid;
      // a listen on the worker that did not make the task
      let g;
      for (let i = 0; i < 50 && g === undefined; i++) {
        const s = await listen('alice', [id], { id: `La${i}` });
        if (workerOf(s)?.pid !== made)
          g = s;
        else
          s.close();
      }
      assert.ok(g !== undefined, 'no listen landed on the other worker');
      assert.deepEqual(await acknowledged(g), { taskIds: [id] });
      // bob names alice's task: acknowledged without it
      const b = await listen('bob', [id]);
      assert.deepEqual(await acknowledged(b), {});
      // vmcpd's own listen to the backend, for alice's task alone
      await waitFor('vmcpd listening to the task at the backend',
        async () => (await fixtureStats(fport)).listening === 1, { timeout: 10000 });
      const u = await task('alice', 'tasks/update', id, { inputResponses: {
        confirm: { action: 'accept', content: { confirm: true } } } });
      assert.equal(u.json?.result?.resultType, 'complete', u.text);
      await g.until('completed', (s) => s.messages('notifications/tasks')
        .some((m) => m.params.status === 'completed'), 15000);
      const notes = g.messages('notifications/tasks');
      assert.deepEqual(notes.map((m) => m.params.status), ['working', 'completed'], g.text);
      for (const m of notes) {
        assert.equal(m.params.taskId, id, 'vmcpd\'s id');
        assert.equal(m.params._meta['io.modelcontextprotocol/subscriptionId'], g.events[0].msg
          .params._meta['io.modelcontextprotocol/subscriptionId'], 'the client\'s subscription');
      }
      assert.match(notes[1].params.result.content[0].text, /deleted n\.txt/, g.text);
      // the backend's stream closes once its task is over
      await waitFor('vmcpd\'s listen at the backend closed',
        async () => (await fixtureStats(fport)).listening === 0, { timeout: 10000 });
      await sleep(200);
      assert.equal(b.messages('notifications/tasks').length, 0, b.text);
      g.close();
      b.close();
      // without the extension: -32021, before any stream
      const x = await listen('alice', [id], { caps: {} });
      await x.until('the answer', (s) => s.ended, 15000);
      assert.equal(x.status, 400, x.text);
      const err = JSON.parse(x.text).error;
      assert.equal(err.code, -32021, x.text);
      assert.deepEqual(err.data, { requiredCapabilities: { extensions: { [EXT]: {} } } });
      t.diagnostic(`task ${id.slice(0, 14)}... made on ${made}, heard on ${workerOf(g).pid}`);
    }));

  test('a backend stream that ends: the client\'s goes on, and vmcpd listens again', guarded(async () => {
    const c = await call('alice', 'confirm_delete', { filename: 'r.txt' });
    const id = c.json?.result?.taskId;
    assert.match(String(id), TASK_ID, c.text);
    const g = await listen('alice', [id]);
    assert.deepEqual(await acknowledged(g), { taskIds: [id] });
    await waitFor('vmcpd listening to the task at the backend',
      async () => (await fixtureStats(fport)).listening === 1, { timeout: 10000 });
    const opened = (await fixtureStats(fport)).listens;
    const d = await httpRequest(fport, { method: 'POST', path: '/tasks-drop-listens' });
    assert.equal(d.json?.dropped, 1, d.text);
    await waitFor('vmcpd listening again', async () => {
      const s = await fixtureStats(fport);
      return s.listening === 1 && s.listens > opened;
    }, { timeout: 10000 });
    assert.equal(g.ended, false, 'the client\'s stream ended with the backend\'s');
    const u = await task('alice', 'tasks/update', id, { inputResponses: {
      confirm: { action: 'accept', content: { confirm: true } } } });
    assert.equal(u.json?.result?.resultType, 'complete', u.text);
    await g.until('completed', (s) => s.messages('notifications/tasks')
      .some((m) => m.params.status === 'completed'), 15000);
    assert.deepEqual(g.messages('notifications/tasks').map((m) => m.params.status),
      ['working', 'completed'], g.text);
    g.close();
  }));

  test('2025-11-25: the experimental tasks are refused, and a task asked for is not passed on',
    guarded(async () => {
      const auth = { headers: bearer(tokens.alice) };
      const sid = await sessionAs(daemon.port, tokens.alice, 'legacy-tasks');
      for (const m of ['tasks/get', 'tasks/result', 'tasks/list', 'tasks/cancel']) {
        const r = await rpc(daemon.port, sid, m, { taskId: 'x' }, auth);
        assert.equal(r.json?.error?.code, -32601, r.text);
        assert.match(r.json.error.message, /experimental 2025-11-25 tasks/, r.text);
      }
      const n = legacyCalls.length;
      const c = await rpc(daemon.port, sid, 'tools/call',
        { name: 'legacy_echo', arguments: {}, task: { ttl: 60000 } }, auth);
      assert.equal(c.json?.result?.content?.[0]?.text, 'ok', c.text);
      assert.equal(legacyCalls.length, n + 1);
      assert.equal(legacyCalls[n].task, undefined, JSON.stringify(legacyCalls[n]));
      assert.equal(legacyCalls[n].name, 'legacy_echo');
    }));

  test('2025-11-25: a client declaring the extension still never gets a task',
    guarded(async () => {
      const auth = { Authorization: `Bearer ${tokens.alice}` };
      const init = await mcpPost(daemon.port, {
        jsonrpc: '2.0', id: nextId(), method: 'initialize',
        params: { protocolVersion: LEGACY_VERSION, capabilities: declared,
          clientInfo: { name: 'legacy-declares', version: '1' } },
      }, { version: null, headers: auth });
      assert.equal(init.status, 200, init.text);
      const sid = init.headers['mcp-session-id'];
      await mcpPost(daemon.port, { jsonrpc: '2.0', method: 'notifications/initialized' },
        { session: sid, headers: auth });
      const c = await rpc(daemon.port, sid, 'tools/call',
        { name: 'slow_compute', arguments: { seconds: 0, label: 'legacy' } }, { headers: auth });
      assert.equal(c.json?.error, undefined, c.text);
      assert.equal(c.json.result.taskId, undefined, c.text);
      assert.match(c.json.result.content[0].text, /computed legacy/, c.text);
    }));
});

// Authorization on every tasks/* call: a task's polls are the call of
// the tool that made it, under the policies in force now.  alice makes a
// task while slow_compute is permitted; after a reload permits only
// greet, her tasks/get and tasks/cancel of that task are 403 and never
// reach the backend, and a listen naming it is the same 403.
describe('tasks through vmcpd: authorized under the policies of the time', () => {
  let idp, fixture, d, alice;
  const policies = (tool) => oidcConfig(idp) + [
    '  authz:',
    '    type: cedar',
    '    policies:',
    `      - permit(principal, action == Action::"call_tool", resource == Tool::"${tool}");`,
    '',
  ].join('\n');
  const config = (tool) => multiConfig({ portFile: d.portFile, stateDir: d.stateDir,
    backends: [{ name: 'fx', url: fixture.url, era: 'modern' }],
    aggregation: 'conflictResolutionConfig:\n  prefixMode: onConflict', extra: policies(tool) });
  const req = (method, params, name) => modern(d.port, method,
    { ...params, _meta: modernMeta(declared) }, { ...alice, 'Mcp-Name': name });

  before(async () => {
    idp = await startIdp();
    fixture = await startFixture();
    const dir = await tmpDir('vmcpd-tasks-authz-');
    d = new Daemon(dir, path.join(dir, 'vmcpd.yaml'), { workers: 2 });
    await d.writeConfig(config('slow_compute'));
    await d.start();
    alice = bearer(idp.forge(idp.claims({ sub: 'alice', client_id: 'alice' })));
  });

  after(async () => {
    if (d)
      await d.stop();
    await idp?.stop();
  });

  test('a reload that withdraws the tool withdraws its tasks', guarded(async () => {
    let c;
    await waitFor('slow_compute served', async () => {
      c = await req('tools/call', { name: 'slow_compute', arguments: { seconds: 30, label: 'authz' } },
        'slow_compute');
      return c.json?.result?.resultType === 'task';
    }, { timeout: 15000 });
    const id = c.json.result.taskId;
    const g = await req('tasks/get', { taskId: id }, id);
    assert.equal(g.json?.result?.status, 'working', g.text);

    await d.writeConfig(config('greet'));
    process.kill(d.pid, 'SIGHUP');
    await waitFor('the new policies', async () => {
      const r = await req('tools/call', { name: 'slow_compute', arguments: { seconds: 0 } },
        'slow_compute');
      return r.status === 403;
    }, { timeout: 20000 });
    const before0 = await fixtureStats(fixture.port);
    for (const [method, extra] of [['tasks/get', {}], ['tasks/cancel', {}],
      ['tasks/update', { inputResponses: {} }]]) {
      const r = await req(method, { taskId: id, ...extra }, id);
      assert.equal(r.status, 403, `${method}: ${r.text}`);
      assert.equal(r.json?.error?.code, 403, r.text);
      assert.match(r.json.error.message, /^Forbidden: /, r.text);
    }
    const after0 = await fixtureStats(fixture.port);
    assert.equal(after0.get, before0.get, 'a denied tasks/get reached the backend');
    assert.equal(after0.cancel, before0.cancel, 'a denied tasks/cancel reached the backend');
    assert.equal(after0.update, before0.update, 'a denied tasks/update reached the backend');
  }));
});
