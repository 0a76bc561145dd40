// The circuit breaker on real requests (operational.failureHandling.
// circuitBreaker), shared by the workers through the store: a backend
// killed, then restarted on its port; a backend that hangs (timeouts
// count); a backend whose JSON-RPC errors must not open the breaker.
// Other backends answer throughout.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

import {
  guarded, rpc, waitFor, httpRequest, freePort, tmpDir, Daemon, HOST, LEGACY_VERSION, vmcpctl,
} from './lib/harness.mjs';
import {
  useMulti, multiConfig, startSpec, startModern, openSessionCaps, openGet, serve as listen, rawBackend, jsonBody,
} from './lib/multi.mjs';

useMulti();

const PROMTOOL = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((p) => fs.existsSync(p));
const THRESHOLD = 3;
const OPEN_S = 3;

/* A session's GET stream, once the one a previous test closed is gone
 * at vmcpd too (until it has seen that close, a second GET is a 409). */
async function openGetAgain(port, sid) {
  const t0 = Date.now();
  for (;;) {
    const g = await openGet(port, sid);
    if (g.status !== 409 || Date.now() - t0 > 10000)
      return g;
    g.close();
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function listedTools(daemon, sid) {
  const r = await rpc(daemon.port, sid, 'tools/list', {});
  assert.equal(r.json.error, undefined, r.text);
  return r.json.result.tools.map((t) => t.name);
}

/* the backend's entry in /status, and /metrics (checked by promtool) */
async function diagSeen(diag, backend) {
  const st = await httpRequest(diag, { method: 'GET', path: '/status', timeout: 5000 });
  assert.equal(st.status, 200, st.text);
  const b = JSON.parse(st.text).backends.find((x) => x.name === backend);
  const m = await httpRequest(diag, { method: 'GET', path: '/metrics', timeout: 5000 });
  assert.equal(m.status, 200, m.text);
  if (PROMTOOL)
    execFileSync(PROMTOOL, ['check', 'metrics'], { input: m.text, timeout: 20000 });
  return { b, metrics: m.text };
}

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

  const toolNames = () => listedTools(daemon, sid);
  /* the backend's breaker as /status and /metrics tell it */
  async function breakerSeen(backend) {
    const { b, metrics } = await diagSeen(diag, backend);
    const line = metrics.split('\n').find((l) => l.startsWith(`vmcpd_backend_circuit_open{backend="${backend}"} `));
    assert.ok(line, metrics);
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
      const g = await openGetAgain(daemon.port, sid);
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
      const g = await openGetAgain(daemon.port, sid);
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

/*
 * Active health checks (probe.c): with no client traffic, each backend
 * gets a ping (2025-11-25) every healthCheckInterval; a dead one
 * becomes unhealthy and leaves the lists, comes back when restarted on
 * its port; one that answers 401 is unauthenticated.
 */
const INTERVAL_MS = 1000;
const UNHEALTHY = 2;
const BREAKER_OPEN_S = 120;	/* longer than the test: only a probe closes it */

/* a 2025-11-25 backend that records the methods it is sent; deny: 401 */
function probedBackend(name, tool, seen, { deny = false } = {}) {
  return http.createServer((req, res) => {
    if (req.method !== 'POST')
      return void res.writeHead(405).end();
    if (deny)
      return void res.writeHead(401, { 'WWW-Authenticate': 'Bearer' }).end();
    jsonBody(req, res).then((m) => {
      if (m === undefined)
        return undefined;
      seen.push(m.method);
      if (m.id === undefined)
        return res.writeHead(202).end();
      const json = (o) => res.writeHead(200, { 'Content-Type': 'application/json',
        'Mcp-Session-Id': `${name}-session-1` }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, ...o }));
      switch (m.method) {
      case 'initialize':
        return json({ result: { protocolVersion: LEGACY_VERSION,
          capabilities: { tools: {} }, serverInfo: { name, version: '1' } } });
      case 'ping':
        return json({ result: {} });
      case 'tools/list':
        return json({ result: { tools: [{ name: tool, inputSchema: { type: 'object' } }] } });
      default:
        return json({ error: { code: -32601, message: 'no' } });
      }
    });
  });
}

describe('active health checks', () => {
  const seen = [];
  let daemon, diag, sid, port, srv, modernBe;

  before(async () => {
    srv = probedBackend('pinged', 'p', seen);
    port = await listen(srv);
    const denyPort = await listen(probedBackend('locked', 'l', [], { deny: true }));
    const steady = await startSpec({ label: 'steady', tools: ['ok'] });
    modernBe = await startModern({ label: 'modern', tools: ['m'] });
    const dir = await tmpDir('vmcpd-probe-');
    daemon = new Daemon(dir, path.join(dir, 'vmcpd.yaml'), { workers: 2 });
    diag = await freePort();
    await daemon.writeConfig(multiConfig({
      portFile: daemon.portFile, stateDir: daemon.stateDir,
      backends: [
        { name: 'pinged', url: `http://${HOST}:${port}/mcp` },
        { name: 'steady', url: steady.url },
        { name: 'locked', url: `http://${HOST}:${denyPort}/mcp` },
        { name: 'modern', url: modernBe.url },
      ],
      aggregation: 'conflictResolutionConfig:\n  prefixMode: onConflict\ncacheTtl: 60s',
      operational: 'failureHandling:\n  partialFailureMode: best_effort\n' +
        `  healthCheckInterval: ${INTERVAL_MS}ms\n  healthCheckTimeout: ${INTERVAL_MS - 200}ms\n` +
        `  unhealthyThreshold: ${UNHEALTHY}\n  statusReportingInterval: 1s\n` +
        `  circuitBreaker: {enabled: true, failureThreshold: ${UNHEALTHY}, timeout: ${BREAKER_OPEN_S}s}`,
    }).replace('daemon:\n', `daemon:\n  diagnostics: ${HOST}:${diag}\n`));
    await daemon.start({ timeout: 30000 });
    ({ sid } = await openSessionCaps(daemon.port));
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
  });

  const toolNames = () => listedTools(daemon, sid);
  async function healthOf(backend) {
    const { b, metrics } = await diagSeen(diag, backend);
    const one = metrics.split('\n').filter((l) => l.startsWith(`vmcpd_backend_health{backend="${backend}",`) &&
      l.endsWith(' 1'));
    assert.equal(one.length, 1, metrics);
    assert.match(one[0], new RegExp(`state="${b.health}"`));
    return b;
  }
  const changes = (g) => g.messages('notifications/tools/list_changed').length;

  test('probes are pings, not listings; a 401 is unauthenticated', guarded(async () => {
    const n = seen.length;
    await waitFor('a few probes', () => seen.slice(n).filter((x) => x === 'ping').length >= 2,
      { timeout: INTERVAL_MS * 15 });
    assert.ok(!seen.slice(n).includes('tools/list'), seen.slice(n).join());
    await waitFor('pinged healthy', async () => ['healthy', 'degraded'].includes((await healthOf('pinged')).health),
      { timeout: 15000, interval: 300 });
    const b = await waitFor('locked unauthenticated', async () => {
      const x = await healthOf('locked');
      return x.health === 'unauthenticated' && x;
    }, { timeout: 15000, interval: 300 });
    assert.match(b.healthCheck.lastError, /401/);
    // vmcpctl status prints it; reprobe forgets it until the next check
    const st = await vmcpctl(['-f', daemon.cfg, 'status']);
    assert.equal(st.code, 0, st.stderr);
    assert.match(st.stdout, /locked\b.*\bunauthenticated\b/, st.stdout);
    const rp = await vmcpctl(['-f', daemon.cfg, 'reprobe', 'locked']);
    assert.equal(rp.code, 0, rp.stderr);
    assert.match(rp.stdout, /health record dropped/, rp.stdout);
    await waitFor('locked checked again', async () => {
      const x = await healthOf('locked');
      return x.health === 'unauthenticated' && Date.parse(x.healthCheck.at) > Date.parse(b.healthCheck.at);
    }, { timeout: 15000, interval: 300 });
  }));

  test('a 2026-07-28 backend is probed with server/discover', guarded(async () => {
    const calls = async (m) => Object.entries((await modernBe.stats()).methods)
      .filter(([k]) => k.endsWith(` ${m}`)).reduce((a, [, v]) => a + v, 0);
    const [d0, l0] = [await calls('server/discover'), await calls('tools/list')];
    await waitFor('server/discover probes', async () => (await calls('server/discover')) >= d0 + 2,
      { timeout: INTERVAL_MS * 15, interval: 300 });
    assert.equal(await calls('tools/list'), l0, JSON.stringify((await modernBe.stats()).methods));
    assert.ok(['healthy', 'degraded'].includes((await healthOf('modern')).health));
  }));

  test('a killed backend becomes unhealthy and leaves; restarted, it is back', guarded(async () => {
    const g = await openGetAgain(daemon.port, sid);
    after(() => g.close());
    assert.equal(g.status, 200, g.text);
    assert.ok((await toolNames()).includes('p'));
    srv.close();
    srv.closeAllConnections();
    const b = await waitFor('pinged unhealthy', async () => {
      const x = await healthOf('pinged');
      return x.health === 'unhealthy' && x;
    }, { timeout: INTERVAL_MS * (UNHEALTHY + 15), interval: 300 });
    assert.ok(b.healthCheck.consecutiveFailures >= UNHEALTHY, JSON.stringify(b));
    assert.ok(b.healthCheck.lastError, JSON.stringify(b));
    // no client traffic needed: the session is told
    await g.until('tools/list_changed', () => changes(g) >= 1, 20000);
    const names = await toolNames();
    assert.ok(!names.includes('p') && names.includes('ok'), names.join());
    await waitFor('the status line', () => /health: \d+ of \d+ backends not healthy: .*pinged unhealthy/
      .test(daemon.proc.output), { timeout: 10000 });
    const n = changes(g);
    await new Promise((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(port, HOST, resolve);
    });
    await g.until('tools/list_changed again', () => changes(g) > n, INTERVAL_MS * 20);
    assert.ok((await toolNames()).includes('p'));
    assert.ok(['healthy', 'degraded'].includes((await healthOf('pinged')).health));
    g.close();
  }));

  test('probes are not counted by the breaker, and an answered one closes it', guarded(async () => {
    srv.close();
    srv.closeAllConnections();
    // real calls open the breaker (or find the tool gone already)
    for (let i = 0; i < UNHEALTHY * 4; i++) {
      const r = await rpc(daemon.port, sid, 'tools/call', { name: 'p', arguments: {} });
      assert.ok(r.json.error || r.json.result?.isError, r.text);
    }
    const open = await waitFor('the breaker open', async () => {
      const x = await healthOf('pinged');
      return x.breaker === 'open' && x;
    }, { timeout: 15000, interval: 300 });
    // failed probes go on (no client traffic) without counting as failures
    const at = Date.parse((await healthOf('pinged')).healthCheck.at);
    await waitFor('more failed probes', async () =>
      Date.parse((await healthOf('pinged')).healthCheck.at) > at + INTERVAL_MS * 2,
    { timeout: INTERVAL_MS * 20, interval: 300 });
    assert.equal((await healthOf('pinged')).consecutiveFailures, open.consecutiveFailures);
    await new Promise((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(port, HOST, resolve);
    });
    // long before the breaker's timeout, with no client traffic
    await waitFor('the breaker closed by a probe', async () =>
      (await healthOf('pinged')).breaker === 'closed', { timeout: INTERVAL_MS * 20, interval: 300 });
    await waitFor('p listed again', async () => (await toolNames()).includes('p'),
      { timeout: 15000, interval: 300 });
  }));
});
