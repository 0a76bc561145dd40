// Composite tools run as tasks (tasks extension, SEP-2663; docs/ARCHITECTURE.md
// "Composite tools as tasks"; worker/composite/composite_task.c): for a
// 2026-07-28 client that declared io.modelcontextprotocol/tasks, a composite
// marked longRunning (or whose timeout is at least 60 s) answers a
// CreateTaskResult at once and runs on, detached; tasks/get answers from the
// task's record on either worker (working, then completed with the result);
// tasks/cancel cancels the steps (the backend's call is cancelled); a kill -9
// of the worker running it reads failed once its lease runs out; an
// elicitation step reads input_required with its inputRequests, and
// tasks/update with the answers resumes the workflow on any worker, even
// after the worker that suspended it was killed (the state is the workflow
// handle); another principal's id answers as an unknown one.  A client without the extension,
// or a composite that is not long, is answered as before.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { guarded, waitFor, sleep, workerOf } from './lib/harness.mjs';
import { useMulti, startMulti, startSpec, modern, modernMeta } from './lib/multi.mjs';
import { startIdp, oidcConfig } from './lib/oidc.mjs';

useMulti();

const EXT = 'io.modelcontextprotocol/tasks';
const TASK_ID = /^vmcpd-t-[0-9a-f]{32}$/;
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const COMPOSITES = `
compositeTools:
  - name: build
    description: A slow step, then an echo
    longRunning: true
    parameters:
      type: object
      properties:
        ms: {type: integer}
        x: {type: string}
      required: [ms, x]
    steps:
      - id: wait
        tool: spec.slow
        arguments: {ms: "{{.params.ms}}"}
      - id: say
        tool: spec.echo
        dependsOn: [wait]
        arguments: {x: "{{.params.x}}"}
    output:
      properties:
        waited: {type: string, value: "{{.steps.wait.output.text}}"}
        said: {type: string, value: "{{.steps.say.output.text}}"}
  - name: deploy
    description: Long by its timeout
    timeout: 90s
    steps:
      - id: say
        tool: spec.echo
        arguments: {x: "deploy"}
  - name: approve
    description: Ask the user, then echo the choice
    longRunning: true
    steps:
      - id: confirm
        type: elicitation
        message: "Ship it?"
        schema:
          type: object
          properties:
            where: {type: string}
          required: [where]
        onCancel: {action: abort}
      - id: say
        tool: spec.echo
        dependsOn: [confirm]
        arguments: {x: "{{.steps.confirm.output.content.where}}"}
    output:
      properties:
        said: {type: string, value: "{{.steps.say.output.text}}"}
  - name: quick
    description: Neither marked nor long
    steps:
      - id: say
        tool: spec.echo
        arguments: {x: "quick"}
`;

describe('composite tools as tasks (2 workers, OIDC)', () => {
  let d, spec, idp;
  const tokens = {};

  const req = (who, method, params, { caps = { elicitation: {}, extensions: { [EXT]: {} } }, name } = {}) =>
    modern(d.port, method, { ...params, _meta: modernMeta(caps) }, {
      Authorization: `Bearer ${tokens[who]}`,
      ...(name !== undefined ? { 'Mcp-Name': name } : {}),
    });
  const call = (who, tool, args, opts) =>
    req(who, 'tools/call', { name: tool, arguments: args }, { name: tool, ...opts });
  const task = (who, method, taskId, extra = {}) =>
    req(who, method, { taskId, ...extra }, { name: taskId });

  /* a CreateTaskResult checked: {id, pid} of the worker that made it */
  function created(r) {
    assert.equal(r.status, 200, r.text);
    const t = r.json?.result;
    assert.equal(t?.resultType, 'task', r.text);
    assert.match(t.taskId, TASK_ID);
    assert.equal(t.status, 'working');
    assert.match(t.createdAt, RFC3339);
    assert.match(t.lastUpdatedAt, RFC3339);
    assert.equal(typeof t.ttlMs, 'number');
    assert.equal(typeof t.pollIntervalMs, 'number');
    return { id: t.taskId, pid: workerOf(r).pid };
  }

  /* tasks/get until status is not working: the last DetailedTask and the
   * workers that answered */
  async function settle(who, id, { timeout = 20000 } = {}) {
    const pids = new Set();
    const end = Date.now() + timeout;
    for (;;) {
      const g = await task(who, 'tasks/get', id);
      assert.equal(g.status, 200, g.text);
      assert.equal(g.json?.error, undefined, g.text);
      const t = g.json.result;
      assert.equal(t.resultType, 'complete', g.text);
      assert.equal(t.taskId, id);
      pids.add(workerOf(g).pid);
      if (t.status !== 'working')
        return { t, pids };
      assert.ok(Date.now() < end, `still working after ${timeout} ms`);
      await sleep(100);
    }
  }

  before(async () => {
    idp = await startIdp();
    spec = await startSpec({ label: 'S', tools: ['echo'], slow: true });
    d = await startMulti({
      workers: 2,
      backends: [{ name: 'spec', url: spec.url }],
      aggregation: 'conflictResolutionConfig:\n  prefixMode: onConflict',
      extra: COMPOSITES + oidcConfig(idp),
    });
    for (const u of ['alice', 'bob'])
      tokens[u] = idp.forge(idp.claims({ sub: u, client_id: u }));
    await waitFor('the composites', async () => {
      const r = await req('alice', 'tools/list', {});
      const names = (r.json?.result?.tools ?? []).map((t) => t.name);
      return ['build', 'deploy', 'quick'].every((n) => names.includes(n));
    }, { timeout: 20000, interval: 200 });
  });

  after(async () => {
    if (d && !d.stopped)
      await d.stop();
    await idp?.stop();
  });

  test('a long composite answers a task, polled to completed on the other worker', guarded(async (t) => {
    const disc = await req('alice', 'server/discover', {});
    assert.notEqual(disc.json?.result?.capabilities?.extensions?.[EXT], undefined, disc.text);

    const c = created(await call('alice', 'build', { ms: 700, x: 'b1' }));
    const { t: done, pids } = await settle('alice', c.id);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.equal(done.result.resultType, 'complete');
    assert.deepEqual(done.result.structuredContent, { waited: 'slept 700', said: 'S:echo:{"x":"b1"}' });
    // completed stays, and reads the same on the other worker
    let other = null;
    for (let i = 0; i < 40 && other === null; i++) {
      const g = await task('alice', 'tasks/get', c.id);
      assert.equal(g.json?.result?.status, 'completed', g.text);
      assert.deepEqual(g.json.result.result, done.result);
      if (workerOf(g).pid !== c.pid)
        other = workerOf(g).pid;
    }
    assert.notEqual(other, null, 'a tasks/get answered by the other worker');
    t.diagnostic(`made on ${c.pid}, polled on ${[...pids].join(',')} and ${other}`);

    // another principal's id is an unknown one
    const theirs = await task('bob', 'tasks/get', c.id);
    assert.equal(theirs.json?.error?.code, -32602, theirs.text);
    const cancelTheirs = await task('bob', 'tasks/cancel', c.id);
    assert.equal(cancelTheirs.json?.error?.code, -32602, cancelTheirs.text);

    // a timeout of 90 s is long: a task too
    const dep = created(await call('alice', 'deploy', {}));
    const r2 = await settle('alice', dep.id);
    assert.equal(r2.t.status, 'completed');
    assert.match(r2.t.result.content[0].text, /deploy/);
  }));

  test('without the extension, or a short composite: answered as before', guarded(async () => {
    let r = await call('alice', 'build', { ms: 10, x: 'plain' }, { caps: {} });
    assert.equal(r.json?.result?.resultType, 'complete', r.text);
    assert.equal(r.json.result.structuredContent.said, 'S:echo:{"x":"plain"}');
    r = await call('alice', 'quick', {});
    assert.equal(r.json?.result?.resultType, 'complete', r.text);
    // and tasks/* without the extension: -32021
    const id = `vmcpd-t-${'0'.repeat(32)}`;
    r = await req('alice', 'tasks/get', { taskId: id }, { caps: {}, name: id });
    assert.equal(r.json?.error?.code, -32021, r.text);
  }));

  test('tasks/cancel cancels the running step', guarded(async () => {
    const before0 = (await spec.stats()).methods;
    const cancelledBefore = Object.entries(before0)
      .filter(([k]) => k.endsWith('notifications/cancelled')).reduce((a, [, v]) => a + v, 0);
    const c = created(await call('alice', 'build', { ms: 30000, x: 'never' }));
    await sleep(300);	// the slow step is under way
    const x = await task('alice', 'tasks/cancel', c.id);
    assert.equal(x.json?.error, undefined, x.text);
    assert.equal(x.json.result.resultType, 'complete', x.text);
    const g = await task('alice', 'tasks/get', c.id);
    assert.equal(g.json?.result?.status, 'cancelled', g.text);
    // the runner cancels its step: the backend is told
    await waitFor('the backend\'s notifications/cancelled', async () => {
      const m = (await spec.stats()).methods;
      const n = Object.entries(m).filter(([k]) => k.endsWith('notifications/cancelled'))
        .reduce((a, [, v]) => a + v, 0);
      return n > cancelledBefore;
    }, { timeout: 10000, interval: 100 });
    // and it stays cancelled, never completed
    await sleep(1500);
    for (let i = 0; i < 4; i++) {
      const again = await task('alice', 'tasks/get', c.id);
      assert.equal(again.json?.result?.status, 'cancelled', again.text);
    }
    // cancelling a terminal task changes nothing
    const y = await task('alice', 'tasks/cancel', c.id);
    assert.equal(y.json?.error, undefined, y.text);
  }));

  test('kill -9 of the worker running it: failed, on the other worker, in bounded time', guarded(async (t) => {
    const c = created(await call('alice', 'build', { ms: 60000, x: 'lost' }));
    // working while its worker lives, whichever worker answers
    for (let i = 0; i < 4; i++) {
      const g = await task('alice', 'tasks/get', c.id);
      assert.equal(g.json?.result?.status, 'working', g.text);
    }
    process.kill(c.pid, 'SIGKILL');
    const t0 = Date.now();
    const { t: end } = await settle('alice', c.id, { timeout: 20000 });
    const took = Date.now() - t0;
    assert.equal(end.status, 'failed', JSON.stringify(end));
    assert.equal(end.error.code, -32603);
    assert.match(end.error.message, /worker running the workflow stopped/);
    t.diagnostic(`failed ${took} ms after the kill`);
    await waitFor('a new worker', async () => {
      const pids = await d.workerPids();
      return pids.length === 2 && !pids.includes(c.pid);
    }, { timeout: 20000, interval: 200 });
  }));

  test('an elicitation step: input_required, answered by tasks/update, after a kill -9 too', guarded(async (t) => {
    const c = created(await call('alice', 'approve', {}));
    let { t: st } = await settle('alice', c.id);
    assert.equal(st.status, 'input_required', JSON.stringify(st));
    assert.deepEqual(Object.keys(st.inputRequests), ['confirm']);
    assert.equal(st.inputRequests.confirm.method, 'elicitation/create');
    assert.equal(st.inputRequests.confirm.params.message, 'Ship it?');
    // the suspended run lives in its handle, not in a worker
    process.kill(c.pid, 'SIGKILL');
    await waitFor('a new worker', async () => {
      const pids = await d.workerPids();
      return pids.length === 2 && !pids.includes(c.pid);
    }, { timeout: 20000, interval: 200 });
    const g = await task('alice', 'tasks/get', c.id);
    assert.equal(g.json?.result?.status, 'input_required', g.text);
    // another principal cannot answer it
    const theirs = await task('bob', 'tasks/update', c.id,
      { inputResponses: { confirm: { action: 'accept', content: { where: 'bob' } } } });
    assert.equal(theirs.json?.error?.code, -32602, theirs.text);
    const u = await task('alice', 'tasks/update', c.id,
      { inputResponses: { confirm: { action: 'accept', content: { where: 'prod' } } } });
    assert.equal(u.json?.error, undefined, u.text);
    assert.equal(u.json.result.resultType, 'complete', u.text);
    ({ t: st } = await settle('alice', c.id));
    assert.equal(st.status, 'completed', JSON.stringify(st));
    assert.deepEqual(st.result.structuredContent, { said: 'S:echo:{"x":"prod"}' });
    // a second update changes nothing
    const again = await task('alice', 'tasks/update', c.id,
      { inputResponses: { confirm: { action: 'accept', content: { where: 'x' } } } });
    assert.equal(again.json?.error, undefined, again.text);
    assert.equal((await task('alice', 'tasks/get', c.id)).json.result.status, 'completed');

    // an update without the answer asks again; a cancel while waiting
    // ends it, and a later update resumes nothing
    const c2 = created(await call('alice', 'approve', {}));
    assert.equal((await settle('alice', c2.id)).t.status, 'input_required');
    await task('alice', 'tasks/update', c2.id, { inputResponses: {} });
    ({ t: st } = await settle('alice', c2.id));
    assert.equal(st.status, 'input_required', JSON.stringify(st));
    const x = await task('alice', 'tasks/cancel', c2.id);
    assert.equal(x.json?.error, undefined, x.text);
    await task('alice', 'tasks/update', c2.id,
      { inputResponses: { confirm: { action: 'accept', content: { where: 'late' } } } });
    await sleep(300);
    st = (await task('alice', 'tasks/get', c2.id)).json.result;
    assert.equal(st.status, 'cancelled', JSON.stringify(st));
    t.diagnostic('resumed after the kill of ' + c.pid);
  }));
});
