// The circuit breaker on real requests (operational.failureHandling.
// circuitBreaker), shared by the workers through the store: a backend
// killed, then restarted on its port; a backend that hangs (timeouts
// count); a backend whose JSON-RPC errors must not open the breaker.
// Other backends answer throughout.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import {
  guarded, rpc, waitFor, httpRequest, freePort, tmpDir, Daemon, HOST,
} from './lib/harness.mjs';
import {
  useMulti, multiConfig, startSpec, openSessionCaps, openGet, serve as listen, rawBackend,
} from './lib/multi.mjs';

useMulti();

const PROMTOOL = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((p) => fs.existsSync(p));
const THRESHOLD = 3;
const OPEN_S = 3;

/* tools/call e_err answers a JSON-RPC error; e_hang never answers */
const errServer = () => rawBackend('errs', ['e_err', 'e_hang'], (m, res, json) => {
  if (m.params?.name === 'e_hang')
    return undefined;	// the socket stays open, unanswered
  return json({ jsonrpc: '2.0', id: m.id, error: { code: -32042, message: 'errs says no' } });
});

describe('circuit breaker on real requests', () => {
  let victim, steady, daemon, sid, victimPort, errPort, diag;

  before(async () => {
    [victim, steady] = await Promise.all([
      startSpec({ label: 'victim', tools: ['v'] }),
      startSpec({ label: 'steady', tools: ['ok'] }),
    ]);
    victimPort = victim.port;
    errPort = await listen(errServer());
    const dir = await tmpDir('vmcpd-health-');
    daemon = new Daemon(dir, path.join(dir, 'vmcpd.yaml'), { workers: 2 });
    diag = await freePort();
    await daemon.writeConfig(multiConfig({
      portFile: daemon.portFile, stateDir: daemon.stateDir,
      backends: [
        { name: 'victim', url: victim.url },
        { name: 'steady', url: steady.url },
        { name: 'errs', url: `http://${HOST}:${errPort}/mcp` },
      ],
      aggregation: 'conflictResolutionConfig:\n  prefixMode: onConflict\ncacheTtl: 2s',
      operational: 'timeouts:\n  default: 20s\n  perWorkload:\n    errs: 2s\n' +
        'failureHandling:\n  partialFailureMode: best_effort\n' +
        `  circuitBreaker: {enabled: true, failureThreshold: ${THRESHOLD}, timeout: ${OPEN_S}s}`,
    }).replace('daemon:\n', `daemon:\n  diagnostics: ${HOST}:${diag}\n`));
    await daemon.start({ timeout: 30000 });
    ({ sid } = await openSessionCaps(daemon.port));
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
  });

  const call = (name, args = {}, timeout = 30000) =>
    rpc(daemon.port, sid, 'tools/call', { name, arguments: args }, { timeout });
  async function works() {
    const r = await call('ok', { x: 'still' });
    assert.equal(r.json.result?.content[0].text, 'steady:ok:{"x":"still"}', r.text);
  }
  const unavailable = (b) => new RegExp(`backend ${b} is unavailable \\(circuit open after \\d+ failures; retry in \\d+ s\\)`);

  test('JSON-RPC errors from a live backend do not open the breaker', guarded(async () => {
    for (let i = 0; i < THRESHOLD * 2; i++) {
      const r = await call('e_err');
      assert.equal(r.json.error?.message, 'errs says no', r.text);
    }
    assert.doesNotMatch(daemon.proc.output, /backend errs: circuit open/);
  }));

  const toolNames = async () => {
    const r = await rpc(daemon.port, sid, 'tools/list', {});
    assert.equal(r.json.error, undefined, r.text);
    return r.json.result.tools.map((t) => t.name);
  };
  /* the backend's breaker as /status and /metrics tell it */
  async function breakerSeen(backend) {
    const st = await httpRequest(diag, { method: 'GET', path: '/status', timeout: 5000 });
    assert.equal(st.status, 200, st.text);
    const b = JSON.parse(st.text).backends.find((x) => x.name === backend);
    const m = await httpRequest(diag, { method: 'GET', path: '/metrics', timeout: 5000 });
    assert.equal(m.status, 200, m.text);
    const line = m.text.split('\n').find((l) => l.startsWith(`vmcpd_backend_circuit_open{backend="${backend}"} `));
    assert.ok(line, m.text);
    if (PROMTOOL)
      execFileSync(PROMTOOL, ['check', 'metrics'], { input: m.text, timeout: 20000 });
    return { state: b.breaker, failures: b.consecutiveFailures, open: Number(line.split(' ')[1]) };
  }
  const changes = (g) => g.messages('notifications/tools/list_changed').length;
  /*
   * Once the breaker is open a call fails at once: refused by the
   * breaker, naming the backend, or (once the view is rebuilt without
   * the backend) as a tool that is not listed.
   */
  async function failsFast(tool, backend, limitMs) {
    const t = Date.now();
    const r = await call(tool);
    const took = Date.now() - t;
    assert.ok(took < limitMs, `refused after ${took} ms`);
    assert.ok(r.json.error || r.json.result?.isError, r.text);
    const msg = r.json.error?.message ?? r.json.result.content[0].text;
    if (!unavailable(backend).test(msg))
      assert.match(msg, new RegExp(tool), r.text);
    return msg;
  }

  test('a hung backend: timeouts count, calls fail at once, its tools leave; back when it answers',
    guarded(async () => {
      const g = await openGet(daemon.port, sid);
      after(() => g.close());
      assert.equal(g.status, 200, g.text);
      const hung = await Promise.all(Array.from({ length: THRESHOLD }, () => call('e_hang')));
      for (const r of hung)
        assert.match(r.json.error?.message ?? '', /errs/, r.text);
      await waitFor('the breaker to open', () => /backend errs: circuit open after/.test(daemon.proc.output),
        { timeout: 10000 });
      await failsFast('e_err', 'errs', 1500);
      await works();
      await waitFor('errs to leave tools/list', async () => !(await toolNames()).includes('e_err'),
        { timeout: 15000, interval: 200 });
      await g.until('tools/list_changed', () => changes(g) >= 1, 15000);
      const names = await toolNames();
      assert.ok(names.includes('ok') && names.includes('v'), names.join());
      // past the open time the view's next listing of errs is the trial:
      // it answers, the breaker closes, its tools come back
      await waitFor('errs back in tools/list', async () => (await toolNames()).includes('e_err'),
        { timeout: (OPEN_S + 20) * 1000, interval: 500 });
      await g.until('tools/list_changed again', () => changes(g) >= 2, 15000);
      const again = await call('e_err');
      assert.equal(again.json.error?.message, 'errs says no', again.text);
      assert.match(daemon.proc.output, /backend errs: circuit closed/);
      g.close();
    }));

  test('a backend killed: fail fast once open, its tools leave; restarted on its port: back',
    guarded(async () => {
      const g = await openGet(daemon.port, sid);
      after(() => g.close());
      assert.equal(g.status, 200, g.text);
      assert.equal((await call('v')).json.result?.content[0].text, 'victim:v:{}');
      victim.kill();
      await victim.waitExit();
      // refused by the backend until the breaker opens (the log may lag)
      for (let i = 0; i < THRESHOLD * 4; i++) {
        const r = await call('v');
        assert.ok(r.json.error, r.text);
        if (unavailable('victim').test(r.json.error.message) || /Unknown tool: v$/.test(r.json.error.message))
          break;
        assert.match(r.json.error.message, /victim/, r.text);
      }
      await waitFor('the breaker to open', () => /backend victim: circuit open after/.test(daemon.proc.output),
        { timeout: 10000 });
      await failsFast('v', 'victim', 5000);	// the backend timeout is 20s
      let seen = await breakerSeen('victim');
      assert.ok(['open', 'half-open'].includes(seen.state), JSON.stringify(seen));
      assert.ok(seen.failures >= THRESHOLD, JSON.stringify(seen));
      assert.equal(seen.open, 1);
      assert.deepEqual(await breakerSeen('steady'), { state: 'closed', failures: 0, open: 0 });
      await works();
      await waitFor('victim to leave tools/list', async () => !(await toolNames()).includes('v'),
        { timeout: 15000, interval: 200 });
      await g.until('tools/list_changed', () => changes(g) >= 1, 15000);
      const n = changes(g);
      assert.ok((await toolNames()).includes('ok'));
      victim = await startSpec({ label: 'victim', tools: ['v'], port: victimPort });
      await waitFor('victim back in tools/list', async () => (await toolNames()).includes('v'),
        { timeout: (OPEN_S + 20) * 1000, interval: 500 });
      await g.until('tools/list_changed again', () => changes(g) > n, 15000);
      assert.equal((await call('v')).json.result?.content[0].text, 'victim:v:{}');
      await works();
      seen = await breakerSeen('victim');
      assert.deepEqual(seen, { state: 'closed', failures: 0, open: 0 });
      g.close();
    }));
});
