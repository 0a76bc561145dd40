// Tasks of the tasks extension shared through Redis
// (sessionStorage.provider redis; worker/state/task_redis.c): two vmcpd
// nodes in front of the conformance fixture (which serves the extension),
// OIDC principals.  A task made through one node is polled to completion
// and cancelled through the other (its record <prefix>task:<id> in Redis,
// with the task's TTL, none in either node's LMDB); another principal's
// id answers -32602 on every node without reaching the backend; a
// subscriptions/listen on one node naming a task made on the other (its
// record read from Redis) gets the task's notifications/tasks.  A
// composite run as a task (worker/composite/composite_task.c) keeps its
// state in the same record: made on one node, polled to completed and
// cancelled through the other.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import {
  guarded, vmcpctl, httpRequest, sleep, waitFor, nextId, MCP_ACCEPT,
} from './lib/harness.mjs';
import { startIdp, oidcConfig } from './lib/oidc.mjs';
import {
  useMulti, modern, modernMeta, startFixture, openStream, MODERN,
} from './lib/multi.mjs';
import { startRedis, startNode } from './lib/cluster.mjs';

useMulti();

const EXT = 'io.modelcontextprotocol/tasks';
const PREFIX = 'thv:vmcp:session:';
const declared = { extensions: { [EXT]: {} } };
const COMPOSITE = `
compositeTools:
  - name: wf_long
    description: A slow step, then a greeting
    longRunning: true
    parameters:
      type: object
      properties:
        seconds: {type: number}
      required: [seconds]
    steps:
      - id: slow
        tool: fx.slow_compute
        arguments: {seconds: "{{.params.seconds}}", label: wf}
      - id: hi
        tool: fx.greet
        dependsOn: [slow]
        arguments: {name: wf}
`;

describe('tasks across two nodes with Redis', () => {
  let idp, fixture, redis;
  const nodes = [];
  const tokens = {};

  const req = (node, who, method, params, name) =>
    modern(nodes[node].port, method, { ...params, _meta: modernMeta(declared) },
      { Authorization: `Bearer ${tokens[who]}`, ...(name !== undefined ? { 'Mcp-Name': name } : {}) });
  const stats = async () => (await httpRequest(fixture.port,
    { method: 'GET', path: '/tasks-stats' })).json;

  before(async () => {
    idp = await startIdp();
    fixture = await startFixture();
    redis = await startRedis();
    for (let i = 0; i < 2; i++)
      nodes.push(await startNode({ redis, backendUrl: fixture.url, backendName: 'fx',
        name: 'tasks', extra: oidcConfig(idp) + COMPOSITE }));
    for (const u of ['alice', 'bob'])
      tokens[u] = idp.forge(idp.claims({ sub: u, client_id: u }));
  });

  after(async () => {
    for (const d of nodes)
      await d.stop();
    await idp?.stop();
  });

  test('made on one node, polled and cancelled on the other', guarded(async () => {
    const c = await req(0, 'alice', 'tools/call',
      { name: 'slow_compute', arguments: { seconds: 1, label: 'across' } }, 'slow_compute');
    assert.equal(c.json?.error, undefined, c.text);
    const id = c.json.result.taskId;
    assert.match(id, /^vmcpd-t-[0-9a-f]{32}$/, c.text);
    const ttl = Number(await redis.cli('PTTL', `${PREFIX}task:${id}`));
    assert.ok(ttl > 0 && ttl <= 60000, `the record's TTL in Redis: ${ttl}`);
    for (const d of nodes) {
      const dump = await vmcpctl(['dump', 'tasks'], { stateDir: d.stateDir });
      assert.equal(dump.code, 0, dump.stderr);
      assert.equal(dump.stdout.trim(), '', 'a task record in a node\'s LMDB');
    }
    let g;
    for (let i = 0; i < 60; i++) {
      g = await req(1, 'alice', 'tasks/get', { taskId: id }, id);
      assert.equal(g.json?.error, undefined, g.text);
      assert.equal(g.json.result.taskId, id);
      if (g.json.result.status === 'completed')
        break;
      await sleep(100);
    }
    assert.equal(g.json.result.status, 'completed', g.text);

    const long = await req(1, 'alice', 'tools/call',
      { name: 'slow_compute', arguments: { seconds: 60, label: 'stop' } }, 'slow_compute');
    const lid = long.json.result.taskId;
    const x = await req(0, 'alice', 'tasks/cancel', { taskId: lid }, lid);
    assert.equal(x.json?.result?.resultType, 'complete', x.text);
    const after0 = await req(1, 'alice', 'tasks/get', { taskId: lid }, lid);
    assert.equal(after0.json.result.status, 'cancelled', after0.text);
  }));

  test('a listen on one node hears of a task made on the other', guarded(async () => {
    const c = await req(0, 'alice', 'tools/call',
      { name: 'confirm_delete', arguments: { filename: 'x.txt' } }, 'confirm_delete');
    const id = c.json?.result?.taskId;
    assert.match(String(id), /^vmcpd-t-[0-9a-f]{32}$/, c.text);
    const g = await openStream(nodes[1].port, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: MCP_ACCEPT,
        'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'subscriptions/listen',
        Authorization: `Bearer ${tokens.alice}` },
      body: { jsonrpc: '2.0', id: `L${nextId()}`, method: 'subscriptions/listen',
        params: { _meta: modernMeta(declared), notifications: { taskIds: [id] } } },
    });
    assert.equal(g.status, 200, g.text);
    await g.until('acknowledged', (s) => s.events.length >= 1, 15000);
    assert.deepEqual(g.events[0].msg.params.notifications, { taskIds: [id] }, g.text);
    for (let i = 0; i < 100 && (await stats()).listening < 1; i++)
      await sleep(50);
    const u = await req(0, 'alice', 'tasks/update', { taskId: id, inputResponses: {
      confirm: { action: 'accept', content: { confirm: true } } } }, id);
    assert.equal(u.json?.result?.resultType, 'complete', u.text);
    await g.until('completed', (s) => s.messages('notifications/tasks')
      .some((m) => m.params.status === 'completed'), 15000);
    for (const m of g.messages('notifications/tasks'))
      assert.equal(m.params.taskId, id, 'vmcpd\'s id');
    g.close();
  }));

  test('another principal\'s task is unknown on every node', guarded(async () => {
    const c = await req(0, 'alice', 'tools/call',
      { name: 'slow_compute', arguments: { seconds: 60, label: 'mine' } }, 'slow_compute');
    const id = c.json.result.taskId;
    const before0 = await stats();
    assert.equal(typeof before0.get, 'number', JSON.stringify(before0));
    for (const n of [0, 1]) {
      const r = await req(n, 'bob', 'tasks/get', { taskId: id }, id);
      assert.equal(r.json?.error?.code, -32602, r.text);
      assert.equal(r.json.error.message, 'Invalid params: unknown taskId');
    }
    assert.equal((await stats()).get, before0.get, 'a tasks/get reached the backend');
    await req(1, 'alice', 'tasks/cancel', { taskId: id }, id);
  }));

  test('a composite\'s task: made on one node, completed and cancelled through the other', guarded(async () => {
    const call = (node, seconds) => req(node, 'alice', 'tools/call',
      { name: 'wf_long', arguments: { seconds } }, 'wf_long');
    for (const n of [0, 1])
      await waitFor(`the composite in node ${n}'s view`, async () => {
        const r = await req(n, 'alice', 'tools/list', {});
        return (r.json?.result?.tools ?? []).some((t) => t.name === 'wf_long');
      }, { timeout: 20000, interval: 200 });
    const c = await call(0, 1);
    assert.equal(c.json?.result?.resultType, 'task', c.text);
    const id = c.json.result.taskId;
    const rec = JSON.parse(await redis.cli('GET', `${PREFIX}task:${id}`));
    assert.equal(rec.backend, ':composite');
    let g;
    for (let i = 0; i < 100; i++) {
      g = await req(1, 'alice', 'tasks/get', { taskId: id }, id);
      assert.equal(g.json?.error, undefined, g.text);
      if (g.json.result.status !== 'working')
        break;
      await sleep(100);
    }
    assert.equal(g.json.result.status, 'completed', g.text);
    assert.match(g.json.result.result.content[0].text, /Hello, wf!/);

    const l = await call(0, 60);
    const lid = l.json.result.taskId;
    const x = await req(1, 'alice', 'tasks/cancel', { taskId: lid }, lid);
    assert.equal(x.json?.result?.resultType, 'complete', x.text);
    assert.equal((await req(0, 'alice', 'tasks/get', { taskId: lid }, lid)).json.result.status,
      'cancelled');
    // the runner on node 0 saw the mark and wrote the end
    for (let i = 0; i < 50; i++) {
      if (JSON.parse(await redis.cli('GET', `${PREFIX}task:${lid}`)).status === 'cancelled')
        break;
      await sleep(100);
    }
    assert.equal(JSON.parse(await redis.cli('GET', `${PREFIX}task:${lid}`)).status, 'cancelled');
  }));
});
