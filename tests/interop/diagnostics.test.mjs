// The diagnostics listener (daemon.diagnostics): /status and /metrics on
// an address of their own, answered by any worker with the figures of
// all; the main port keeps only /mcp and /healthz.  /metrics is checked
// against the Prometheus text format by lib/prom.mjs's parser, and by
// `promtool check metrics` too when it is installed.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import {
  useHarness, guarded, startTestBackend, configText, Daemon, tmpDir, freePort, waitFor,
  httpRequest, openSession, rpc, workerOf, mcpHeaders, vmcpctl, run, HOST, VMCPD_BIN,
} from './lib/harness.mjs';
import { modern } from './lib/multi.mjs';
import { parseMetrics, value, sum, promtool } from './lib/prom.mjs';

useHarness();

describe('the diagnostics listener', () => {
  let backend, daemon, diag;

  before(async () => {
    backend = await startTestBackend();
    diag = await freePort();
    const dir = await tmpDir('vmcpd-diag-');
    daemon = new Daemon(dir, path.join(dir, 'vmcpd.yaml'), { workers: 2 });
    // credentials in the backend's URL: they go to the backend only
    const text = configText({
      portFile: daemon.portFile, stateDir: daemon.stateDir,
      backendUrl: `http://u5er:pa55w0rd@${HOST}:${backend.port}/mcp?api_key=K3Y-S3CRET&region=eu`,
      backendName: 'b',
    }).replace('daemon:\n', `daemon:\n  diagnostics: ${HOST}:${diag}\n`)
      .replace('backends:\n', 'sessions:\n  maxSessions: 777\n  maxPerAddress: 333\nbackends:\n');
    assert.ok(text.includes('diagnostics:'));
    await daemon.writeConfig(text);
    await daemon.start();
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
  });

  const get = (port, p, method = 'GET') => httpRequest(port, { method, path: p, timeout: 10000 });

  test('the main port has /mcp and /healthz only', guarded(async () => {
    assert.equal((await get(daemon.port, '/healthz')).status, 200);
    for (const p of ['/status', '/metrics']) {
      const r = await get(daemon.port, p);
      assert.equal(r.status, 404, `${p} on the main port: ${r.text}`);
    }
  }));

  test('/status answers on the diagnostics port', guarded(async () => {
    const r = await get(diag, '/status');
    assert.equal(r.status, 200, r.text);
    assert.match(r.headers['content-type'], /^application\/json/);
    const s = r.json;
    assert.equal(s.backends.length, 1);
    assert.equal(s.backends[0].name, 'b');
    assert.equal(s.backends[0].transport, 'streamable-http');
    assert.equal(s.workers.length, 2);
    const pids = await daemon.workerPids();
    assert.deepEqual(s.workers.map((x) => x.pid).sort((a, b) => a - b), pids);
    assert.equal(typeof s.sessions, 'number');
    assert.equal(s.generation, 1);
    // only GET and HEAD, and nothing else on this port
    assert.equal((await get(diag, '/status', 'POST')).status, 405);
    assert.equal((await get(diag, '/status', 'HEAD')).status, 200);
    assert.equal((await get(diag, '/mcp')).status, 404);
    assert.equal((await get(diag, '/healthz')).status, 404);
  }));

  test('a backend URL\'s credentials are stored and shown redacted', guarded(async () => {
    const secret = /u5er|pa55w0rd|K3Y-S3CRET|\beu\b/;
    const { sid } = await openSession(daemon.port);
    const r = await rpc(daemon.port, sid, 'tools/call', { name: 'echo', arguments: { message: 'hi' } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.result?.content?.[0]?.text, 'Echo: hi', r.text);
    const shown = `http://***@${HOST}:${backend.port}/mcp?api_key=***&region=***`;
    await waitFor('the era recorded', async () => {
      const d = await vmcpctl(['dump', 'eras'], { stateDir: daemon.stateDir });
      return d.stdout.includes('"url":');
    });
    const dump = await vmcpctl(['dump', 'eras'], { stateDir: daemon.stateDir });
    assert.equal(dump.code, 0, dump.stderr);
    assert.ok(dump.stdout.includes(JSON.stringify(shown)), dump.stdout);
    assert.doesNotMatch(dump.stdout, secret);
    const all = await vmcpctl(['dump', '-a'], { stateDir: daemon.stateDir });
    assert.doesNotMatch(all.stdout, secret);
    const st = await get(diag, '/status');
    assert.equal(st.status, 200, st.text);
    assert.doesNotMatch(st.text, secret);
    const cs = await vmcpctl(['-f', daemon.cfg, 'status', '-j']);
    assert.equal(cs.code, 0, cs.stderr);
    assert.doesNotMatch(cs.stdout, secret);
    assert.doesNotMatch(daemon.proc.output, secret);
  }));

  // DNS rebinding: a page whose name is rebound to this address sends
  // its own name as Host; the main port's rules (http.allowedHosts)
  test('a request addressed to another name is refused (403), as on the main port', guarded(async () => {
    for (const p of ['/status', '/metrics']) {
      for (const headers of [{ Host: 'evil.example' }, { Host: `evil.example:${diag}` },
        { Host: `127.0.0.1:${diag}`, Origin: `http://evil.example:${diag}` }]) {
        const r = await httpRequest(diag, { method: 'GET', path: p, headers, timeout: 10000 });
        assert.equal(r.status, 403, `${p} ${JSON.stringify(headers)}: ${r.text}`);
        assert.match(r.json.error.message, /DNS rebinding/);
        assert.doesNotMatch(r.text, /"backends"|vmcpd_/);
      }
      for (const host of [`localhost:${diag}`, `127.0.0.1:${diag}`, '[::1]']) {
        const r = await httpRequest(diag, { method: 'GET', path: p, headers: { Host: host }, timeout: 10000 });
        assert.equal(r.status, 200, `${p} Host ${host}: ${r.text}`);
      }
    }
  }));

  test('/metrics is Prometheus text with the whole daemon\'s figures', guarded(async () => {
    const before = parseMetrics((await get(diag, '/metrics')).text);
    const { sid } = await openSession(daemon.port);
    const N = 8;
    const workers = new Set();
    for (let i = 0; i < N; i++) {
      const r = await rpc(daemon.port, sid, 'ping', {});
      assert.equal(r.status, 200, r.text);
      workers.add(workerOf(r)?.slot);
    }
    // several scrapes on new connections: whichever worker answers, the
    // per-worker counters of both are there
    for (let i = 0; i < 4; i++) {
      const r = await get(diag, '/metrics');
      assert.equal(r.status, 200, r.text);
      assert.match(r.headers['content-type'], /^text\/plain; version=0\.0\.4/);
      const m = parseMetrics(r.text);
      assert.equal(m.types.get('vmcpd_http_requests_total'), 'counter');
      assert.equal(m.samples.filter((x) => x.name === 'vmcpd_http_requests_total').length, 2);
      assert.ok(sum(m, 'vmcpd_http_requests_total') >=
        sum(before, 'vmcpd_http_requests_total') + N + 2, r.text);
      assert.ok(sum(m, 'vmcpd_mcp_requests_total') >=
        sum(before, 'vmcpd_mcp_requests_total') + N + 2, r.text);
      assert.ok(value(m, 'vmcpd_sessions') >= 1, r.text);
      assert.ok(value(m, 'vmcpd_lmdb_map_size_bytes') > 0);
      assert.ok(value(m, 'vmcpd_lmdb_map_used_bytes') > 0);
      assert.ok(value(m, 'vmcpd_lmdb_map_used_bytes') <= value(m, 'vmcpd_lmdb_map_size_bytes'));
      assert.ok(value(m, 'vmcpd_lmdb_readers_max') >= value(m, 'vmcpd_lmdb_readers'));
      assert.ok(value(m, 'vmcpd_lmdb_entries', { db: 'sessions' }) >= 1);
      assert.equal(value(m, 'vmcpd_sessions_max'), 777);
      assert.equal(value(m, 'vmcpd_sessions_per_address_max'), 333);
      assert.ok(value(m, 'vmcpd_lmdb_headroom_bytes') > 0);
      assert.ok(value(m, 'vmcpd_lmdb_map_free_bytes') >= 0);
      assert.equal(value(m, 'vmcpd_build_info') , 1);
      assert.equal(value(m, 'vmcpd_workers'), 2);
      assert.equal(value(m, 'vmcpd_backends'), 1);
      assert.equal(sum(m, 'vmcpd_worker_restarts_total'), 0);
      // users' links (outgoingAuth authorization_code): every outcome
      // there from the start, at 0 with no such backend
      assert.equal(m.types.get('vmcpd_link_consents_total'), 'counter');
      assert.equal(m.types.get('vmcpd_link_refreshes_total'), 'counter');
      for (const outcome of ['started', 'completed', 'refused'])
        assert.equal(value(m, 'vmcpd_link_consents_total', { outcome }), 0);
      for (const outcome of ['ok', 'refused', 'failed'])
        assert.equal(value(m, 'vmcpd_link_refreshes_total', { outcome }), 0);
      // pinned definitions (aggregation.pinning, warn by default): one
      // gauge a backend, nothing pending, nothing decided
      assert.equal(m.types.get('vmcpd_pins_pending'), 'gauge');
      assert.equal(r.text.match(/^vmcpd_pins_pending\{backend="[^"]+"\} 0$/mg).length, 1, r.text);
      assert.equal(value(m, 'vmcpd_pin_changes_total'), 0);
      for (const decision of ['approved', 'rejected'])
        assert.equal(value(m, 'vmcpd_pin_decisions_total', { decision }), 0);
    }
    // promtool (Debian's prometheus, from tools/deps.sh) lints it too
    const tool = promtool();
    if (tool) {
      const text = (await get(diag, '/metrics')).text;
      execFileSync(tool, ['check', 'metrics'], { input: text, timeout: 20000 });
    }
  }));

  test('a reload keeps the diagnostics listener; the new workers answer', guarded(async () => {
    const old = await daemon.workerPids();
    process.kill(daemon.pid, 'SIGHUP');
    let m;
    for (let i = 0; i < 150; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const r = await get(diag, '/metrics').catch(() => null);
      if (r?.status === 200 && value(m = parseMetrics(r.text), 'vmcpd_config_generation') === 2)
        break;
    }
    assert.equal(value(m, 'vmcpd_config_generation'), 2);
    // the old generation gone, every scrape is the new one's
    await new Promise((r) => setTimeout(r, 3000));
    const now = await daemon.workerPids();
    assert.ok(now.every((p) => !old.includes(p)), `${old} -> ${now}`);
    for (let i = 0; i < 4; i++) {
      const s = (await get(diag, '/status')).json;
      assert.equal(s.generation, 2);
      assert.ok(now.includes(s.pid));
    }
  }));

  test('a killed worker is counted as a restart', guarded(async () => {
    const [pid] = await daemon.workerPids();
    process.kill(pid, 'SIGKILL');
    let m;
    for (let i = 0; i < 100; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const r = await get(diag, '/metrics').catch(() => null);
      if (r?.status !== 200)
        continue;
      m = parseMetrics(r.text);
      if (sum(m, 'vmcpd_worker_restarts_total') === 1)
        break;
    }
    assert.equal(sum(m, 'vmcpd_worker_restarts_total'), 1);
  }));
});

/*
 * Both listeners set SO_REUSEPORT (a binary upgrade binds beside the
 * running daemon), so a diagnostics listener on the main one's address
 * under another name (or on a port the kernel drew for the main one)
 * would bind beside it and the kernel would split /mcp connections
 * between them; vmcpd refuses to start instead.  The configuration
 * check sees only equal strings; here `localhost` names 127.0.0.1.
 */
test('a diagnostics listener on the main listener\'s address is refused', guarded(async (t) => {
  const first = (await run('getent', ['ahosts', 'localhost'])).stdout.split(/\s+/)[0];
  if (first !== '127.0.0.1') {
    t.skip(`localhost is ${first} first here, not 127.0.0.1`);
    return;
  }
  const port = await freePort();
  const dir = await tmpDir('vmcpd-diag-same-');
  const cfg = path.join(dir, 'vmcpd.yaml');
  const text = configText({ portFile: path.join(dir, 'port'), stateDir: path.join(dir, 'state'),
    backendUrl: `http://${HOST}:9/mcp`, backendName: 'b' })
    .replace(`listen: ${HOST}:0`, `listen: ${HOST}:${port}`)
    .replace('daemon:\n', `daemon:\n  diagnostics: localhost:${port}\n`);
  assert.ok(text.includes(`listen: ${HOST}:${port}`) && text.includes('diagnostics: localhost'));
  fs.writeFileSync(cfg, text);
  const r = await run(VMCPD_BIN, ['-d', '-f', cfg], { timeout: 20000 });
  assert.notEqual(r.code, 'timeout', 'vmcpd started and kept running');
  assert.notEqual(r.code, 0, 'vmcpd started');
  assert.match(r.stderr, new RegExp(`daemon.diagnostics localhost:${port}: the main listener's address`));
}));

/* the diagnostics have no authentication: off loopback, vmcpd -n says so */
test('vmcpd -n warns about a diagnostics address off loopback', guarded(async () => {
  const dir = await tmpDir('vmcpd-diag-warn-');
  const cfg = path.join(dir, 'vmcpd.yaml');
  const base = configText({ portFile: path.join(dir, 'port'), stateDir: path.join(dir, 'state'),
    backendUrl: `http://${HOST}:9/mcp`, backendName: 'b' });
  for (const [addr, warned] of [['0.0.0.0:9100', true], ['"[::]:9100"', true],
    ['192.0.2.7:9100', true], ['127.0.0.1:9100', false], ['"[::1]:9100"', false],
    ['localhost:9100', false]]) {
    fs.writeFileSync(cfg, base.replace('daemon:\n', `daemon:\n  diagnostics: ${addr}\n`));
    const r = await run(VMCPD_BIN, ['-n', '-f', cfg]);
    assert.equal(r.code, 0, r.stderr);
    if (warned)
      assert.match(r.stderr, /warning: daemon\.diagnostics on \S+ is not a loopback address: \/status and \/metrics .* answer whoever reaches it, without authentication/, addr);
    else
      assert.doesNotMatch(r.stderr, /warning/, addr);
  }
}));

/*
 * What an operator watches: requests by method and outcome, each
 * backend's answer latency histogram and errors, its era record and
 * last error in /status; summed over the workers.  A second backend
 * nobody listens on fails every request (transport errors) while the
 * first keeps answering (partialFailureMode: best_effort).
 */
describe('the figures an operator watches', () => {
  let backend, daemon, diag;

  before(async () => {
    backend = await startTestBackend();
    diag = await freePort();
    const dead = await freePort();
    const dir = await tmpDir('vmcpd-diag2-');
    daemon = new Daemon(dir, path.join(dir, 'vmcpd.yaml'), { workers: 2 });
    const text = configText({
      portFile: daemon.portFile, stateDir: daemon.stateDir,
      backendUrl: backend.url, backendName: 'b',
      aggregation: null,
      extra: `  - name: dead\n    url: http://${HOST}:${dead}/mcp\n` +
        '    transport: streamable-http\n' +
        'operational:\n  failureHandling:\n    partialFailureMode: best_effort\n',
    }).replace('daemon:\n', `daemon:\n  diagnostics: ${HOST}:${diag}\n`);
    await daemon.writeConfig(text);
    await daemon.start();
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
  });

  const get = (p) => httpRequest(diag, { method: 'GET', path: p, timeout: 10000 });
  const scrape = async () => parseMetrics((await get('/metrics')).text);

  test('requests are counted by method and outcome, backends by latency and error', guarded(async () => {
    const m0 = await scrape();
    const { sid } = await openSession(daemon.port);
    const list = await rpc(daemon.port, sid, 'tools/list', {});
    assert.equal(list.status, 200, list.text);
    // no aggregation block: every name prefixed with its backend's
    assert.ok(list.json.result.tools.some((t) => t.name === 'b_echo'), list.text);
    const N = 6;
    for (let i = 0; i < N; i++) {
      const r = await rpc(daemon.port, sid, 'tools/call', { name: 'b_echo', arguments: { message: `x${i}` } });
      assert.equal(r.status, 200, r.text);
      assert.ok(r.json.result, r.text);
    }
    const unknown = await rpc(daemon.port, sid, 'tools/call', { name: 'nosuch', arguments: {} });
    assert.ok(unknown.json.error, unknown.text);
    const bad = await httpRequest(daemon.port, {
      body: '{"jsonrpc":', headers: mcpHeaders({ session: sid }),
    });
    assert.equal(bad.status, 400);
    // 2026-07-28 requests, stateless: counted by method as well (the
    // hot path answers them before the body is parsed here)
    const ml = await modern(daemon.port, 'tools/list');
    assert.equal(ml.status, 200, ml.text);
    const mc = await modern(daemon.port, 'tools/call', { name: 'b_echo', arguments: { message: 'm' } },
      { 'Mcp-Name': 'b_echo' });
    assert.equal(mc.status, 200, mc.text);
    const mm = await modern(daemon.port, 'tools/list', {}, { 'Mcp-Method': 'prompts/list' });
    assert.equal(mm.status, 400, mm.text);
    // a reply is counted once written, so the last one may still be
    // uncounted when its answer is read: wait for it
    let m;
    const d = (name, labels) => (value(m, name, labels) ?? 0) - (value(m0, name, labels) ?? 0);
    await waitFor('the last reply counted', async () => {
      m = await scrape();
      return d('vmcpd_requests_total', { method: 'tools/list', outcome: 'rejected' }) +
        d('vmcpd_requests_total', { method: 'prompts/list', outcome: 'rejected' }) >= 1 &&
        d('vmcpd_requests_total', { method: 'tools/call', outcome: 'ok' }) >= N + 1;
    }, { timeout: 3000 }).catch(() => {});
    assert.equal(m.types.get('vmcpd_requests_total'), 'counter');
    assert.equal(d('vmcpd_requests_total', { method: 'tools/call', outcome: 'ok' }), N + 1, 'tools/call ok');
    assert.equal(d('vmcpd_requests_total', { method: 'tools/call', outcome: 'rpc_error' }), 1);
    assert.equal(d('vmcpd_requests_total', { method: 'initialize', outcome: 'ok' }), 1);
    assert.equal(d('vmcpd_requests_total', { method: 'notifications/initialized', outcome: 'ok' }), 1);
    assert.equal(d('vmcpd_requests_total', { method: 'tools/list', outcome: 'ok' }), 2);
    assert.equal(d('vmcpd_requests_total', { method: 'tools/list', outcome: 'rejected' }) +
      d('vmcpd_requests_total', { method: 'prompts/list', outcome: 'rejected' }), 1,
      'a header that contradicts the body');
    assert.equal(d('vmcpd_requests_total', { method: 'invalid', outcome: 'rejected' }), 1);

    // b's histogram: every call answered, buckets cumulative up to +Inf
    assert.equal(m.types.get('vmcpd_backend_request_duration_seconds'), 'histogram');
    const h = 'vmcpd_backend_request_duration_seconds';
    const buckets = m.samples.filter((x) => x.name === `${h}_bucket` && x.labels.get('backend') === 'b');
    assert.equal(buckets.length, 13);
    for (let i = 1; i < buckets.length; i++)
      assert.ok(buckets[i].value >= buckets[i - 1].value, 'cumulative');
    assert.equal(buckets.at(-1).labels.get('le'), '+Inf');
    const count = value(m, `${h}_count`, { backend: 'b' });
    assert.equal(buckets.at(-1).value, count);
    assert.ok(d(`${h}_count`, { backend: 'b' }) >= N + 1, `calls and the list: ${count}`);
    assert.ok(value(m, `${h}_sum`, { backend: 'b' }) > 0);
    assert.equal(value(m, `${h}_count`, { backend: 'dead' }), 0);
    // dead: connection refused, a transport error; b none
    assert.ok(value(m, 'vmcpd_backend_errors_total', { backend: 'dead', kind: 'transport' }) >= 1,
      'dead backend transport errors');
    assert.equal(sum({ samples: m.samples.filter((x) => x.labels.get('backend') === 'b') },
      'vmcpd_backend_errors_total'), 0);
    for (const name of ['vmcpd_view_builds_total', 'vmcpd_era_reclassifications_total',
      'vmcpd_pending_relays', 'vmcpd_workflow_handles'])
      assert.ok(m.types.has(name), name);
    assert.ok(value(m, 'vmcpd_view_builds_total') >= 1);

    const tool = promtool();
    if (tool)
      execFileSync(tool, ['check', 'metrics'], { input: (await get('/metrics')).text, timeout: 20000 });
  }));

  test('/status names each backend\'s revision, last error and latency', guarded(async () => {
    const s = (await get('/status')).json;
    assert.equal(s.backends.length, 2);
    const [b, dead] = s.backends;
    assert.equal(b.name, 'b');
    assert.equal(b.transport, 'streamable-http');
    // health checks run from the builder's start (health.test.mjs)
    assert.ok(['unknown', 'healthy', 'degraded'].includes(b.health), b.health);
    assert.equal(b.breaker, 'disabled');	// circuitBreaker.enabled is false by default
    assert.ok(b.requests >= 1);
    assert.equal(typeof b.latencyMs, 'number');
    assert.equal(typeof b.meanLatencyMs, 'number');
    assert.match(b.lastAnswerAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(b.lastError, null);
    assert.ok(b.era === null || typeof b.era.era === 'string', JSON.stringify(b.era));
    assert.equal(dead.name, 'dead');
    assert.equal(dead.requests, 0);
    assert.ok(dead.errors.transport >= 1, JSON.stringify(dead));
    assert.match(dead.lastError.message, /dead/);
    assert.match(dead.lastError.at, /Z$/);
    assert.equal(dead.latencyMs, null);
    for (const k of ['sessions', 'pendingRelays', 'viewBuilds', 'eraChanges'])
      assert.equal(typeof s[k], 'number', k);
    assert.ok(s.lmdb.mapSize > 0 && s.lmdb.readers >= 1);
  }));

  test('vmcpctl status prints /status for a terminal, and as JSON', guarded(async () => {
    const r = await vmcpctl(['-f', daemon.cfg, 'status']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /generation 1; answered by worker \d \(pid \d+\)/);
    assert.match(r.stdout, /^b +streamable-http +2025-11-25 +(?:unknown|healthy|degraded) +disabled +\d+ +0 +[\d.]+ms/m);
    assert.match(r.stdout, /^dead +streamable-http .* (?:unknown|unhealthy) +disabled +0 +[1-9]\d* +- +-$/m);
    assert.match(r.stdout, /^ {2}last error at \S+Z: backend dead: .*refused/m);
    const pids = await daemon.workerPids();
    for (const pid of pids)
      assert.match(r.stdout, new RegExp(`^\\d +${pid} `, 'm'));
    const j = await vmcpctl(['-f', daemon.cfg, 'status', '-j']);
    assert.equal(j.code, 0, j.stderr);
    assert.deepEqual(JSON.parse(j.stdout).backends.map((x) => x.name), ['b', 'dead']);
    // without daemon.diagnostics there is nothing to ask
    const none = await vmcpctl(['-d', daemon.stateDir, 'status']);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /daemon\.diagnostics is not set/);
  }));

  test('vmcpctl rebuild-views, reprobe and drop-sessions: the daemon rebuilds, re-probes, reopens', guarded(async () => {
    const builds = async () => value(await scrape(), 'vmcpd_view_builds_total');
    const { sid } = await openSession(daemon.port);
    assert.equal((await rpc(daemon.port, sid, 'tools/list', {})).status, 200);
    const b0 = await builds();
    // a fresh list is served from the stored view: no build
    assert.equal((await rpc(daemon.port, sid, 'tools/list', {})).status, 200);
    assert.equal(await builds(), b0);
    const rv = await vmcpctl(['-f', daemon.cfg, 'rebuild-views']);
    assert.equal(rv.code, 0, rv.stderr);
    assert.match(rv.stdout, /^[1-9]\d* view records dropped/);
    const l = await rpc(daemon.port, sid, 'tools/list', {});
    assert.equal(l.status, 200);
    assert.ok(l.json.result.tools.some((t) => t.name === 'b_echo'));
    assert.ok(await builds() > b0, 'rebuilt');

    const era = async () => (await httpRequest(diag, { method: 'GET', path: '/status' }))
      .json.backends[0].era;
    assert.ok((await era())?.era, 'b has an era record');
    const rp = await vmcpctl(['-f', daemon.cfg, 'reprobe', 'b']);
    assert.equal(rp.code, 0, rp.stderr);
    assert.match(rp.stdout, /^backend b: era record dropped/);
    assert.equal(await era(), null);
    // the next request probes it again (after the workers' 1 s recheck)
    await waitFor('b probed again', async () => {
      await rpc(daemon.port, sid, 'tools/call', { name: 'b_echo', arguments: { message: 'p' } });
      return (await era())?.era;
    }, { timeout: 15000, interval: 300 });

    const ds = await vmcpctl(['-f', daemon.cfg, 'drop-sessions', 'b']);
    assert.equal(ds.code, 0, ds.stderr);
    assert.match(ds.stdout, /^backend b: \d+ identity scope sessions dropped/);
    assert.equal((await rpc(daemon.port, sid, 'tools/call', { name: 'b_echo',
      arguments: { message: 'after' } })).status, 200);
    for (const bad of [['reprobe'], ['reprobe', 'a|b'], ['drop-sessions', ''], ['rebuild-views', 'x']]) {
      const r = await vmcpctl(['-f', daemon.cfg, ...bad]);
      assert.equal(r.code, 1, bad.join(' '));
    }
  }));
});
