// audit: one JSON line per /mcp request, from every worker into one
// file: initialize, tools/call, resources/read, a 401, a rate-limited
// call (denied), a name with a newline and quotes (one line, escaped),
// no token anywhere; SIGUSR1 reopens the file (rename it, signal, the
// new file gets the lines).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import {
  useHarness, guarded, startTestBackend, startDaemon, mcpPost, nextId, waitFor, LEGACY_VERSION,
  configText, tmpDir, run, VMCPD_BIN,
} from './lib/harness.mjs';
import { startIdp, oidcConfig } from './lib/oidc.mjs';
import { modern, modernMeta } from './lib/multi.mjs';

useHarness();

async function lines(file) {
  const t = await fsp.readFile(file, 'utf8').catch(() => '');
  assert.ok(t === '' || t.endsWith('\n'), 'whole lines only');
  return t.split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

describe('audit log', () => {
  let idp, backend, daemon, file, token, sid;

  before(async () => {
    idp = await startIdp();
    backend = await startTestBackend();
    const dir = await fsp.mkdtemp(path.join((await import('node:os')).tmpdir(), 'vmcpd-audit-'));
    file = path.join(dir, 'audit.jsonl');
    daemon = await startDaemon({
      backendUrl: backend.url, workers: 2,
      extra: oidcConfig(idp) + [
        'audit:',
        '  enabled: true',
        `  logFile: ${file}`,
        '  component: audit-test',
        '  excludeEventTypes: [mcp_notification]',
        'rateLimiting:',
        '  tools:',
        '    - name: fail',
        '      perUser: {maxTokens: 1, refillPeriod: 1h}',
        '',
      ].join('\n'),
    });
    token = await idp.token('alice');
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
    await idp?.stop();
  });

  const auth = () => ({ Authorization: `Bearer ${token}` });
  const call = (method, params) => mcpPost(daemon.port,
    { jsonrpc: '2.0', id: nextId(), method, params }, { session: sid, headers: auth() });

  test('each request is one line with the reference schema', guarded(async () => {
    const init = await mcpPost(daemon.port, {
      jsonrpc: '2.0', id: nextId(), method: 'initialize',
      params: { protocolVersion: LEGACY_VERSION, capabilities: {}, clientInfo: { name: 'a', version: '1' } },
    }, { version: null, headers: { ...auth(), 'User-Agent': 'audit-ua', 'X-Request-ID': 'rq-1' } });
    assert.equal(init.status, 200, init.text);
    sid = init.headers['mcp-session-id'];
    await mcpPost(daemon.port, { jsonrpc: '2.0', method: 'notifications/initialized' },
      { session: sid, headers: auth() });
    const echo = await call('tools/call', { name: 'echo', arguments: { message: 'secret-arg' } });
    assert.equal(echo.status, 200, echo.text);
    await call('resources/read', { uri: 'file:///nowhere' });
    // no token: 401
    const denied = await mcpPost(daemon.port,
      { jsonrpc: '2.0', id: nextId(), method: 'tools/call', params: { name: 'echo', arguments: {} } },
      { session: sid });
    assert.equal(denied.status, 401);
    // a disallowed Origin: 403
    const bad = await mcpPost(daemon.port,
      { jsonrpc: '2.0', id: nextId(), method: 'tools/list', params: {} },
      { session: sid, headers: { ...auth(), Origin: 'http://evil.example' } });
    assert.equal(bad.status, 403, bad.text);
    // fail's per-user bucket holds 1: the second is rate limited
    await call('tools/call', { name: 'fail', arguments: {} });
    const limited = await call('tools/call', { name: 'fail', arguments: {} });
    assert.equal(limited.json.result.isError, true, limited.text);
    // a name trying to forge a line
    const forged = 'x\n{"type":"forged","outcome":"success"}\n"';
    await call('tools/call', { name: forged, arguments: {} });

    const ev = await waitFor('audit lines', async () => {
      const l = await lines(file);
      return l.length >= 9 ? l : null;
    });
    const text = await fsp.readFile(file, 'utf8');
    assert.ok(!text.includes(token), 'no token in the audit log');
    assert.ok(!text.includes(token.split('.')[2]), 'no token signature');
    assert.ok(!text.includes('secret-arg'), 'no arguments without includeRequestData');
    assert.ok(!ev.some((e) => e.type === 'forged'), 'no forged line');
    assert.ok(!ev.some((e) => e.type === 'mcp_notification'), 'excluded type left out');
    for (const e of ev) {
      assert.match(e.audit_id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.match(e.logged_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
      assert.equal(e.component, 'audit-test');
      assert.equal(e.source.type, 'network');
      assert.equal(e.source.value, '127.0.0.1');
      assert.equal(e.target.endpoint, '/mcp');
      assert.ok(['success', 'failure', 'error', 'denied', 'application_error'].includes(e.outcome));
    }
    const initEv = ev.find((e) => e.type === 'mcp_initialize');
    assert.equal(initEv.outcome, 'success');
    assert.equal(initEv.subjects.user_id, 'alice');
    assert.equal(initEv.source.extra.user_agent, 'audit-ua');
    assert.equal(initEv.source.extra.request_id, 'rq-1');
    const calls = ev.filter((e) => e.type === 'mcp_tool_call');
    const ok = calls.find((e) => e.target.name === 'echo' && e.outcome === 'success');
    assert.ok(ok, JSON.stringify(calls));
    assert.equal(ok.target.type, 'tool');
    assert.equal(ok.target.method, 'tools/call');
    assert.equal(ok.data, undefined);
    assert.ok(ev.some((e) => e.type === 'mcp_resource_read' && e.target.name === 'file:///nowhere'));
    const unauth = calls.find((e) => e.metadata.extra.status_code === 401);
    assert.equal(unauth?.outcome, 'denied', JSON.stringify(calls));
    assert.equal(unauth.subjects.user, 'anonymous');
    const forbidden = ev.find((e) => e.metadata.extra.status_code === 403);
    assert.equal(forbidden?.outcome, 'denied', JSON.stringify(ev));
    assert.equal(forbidden.type, 'mcp_tools_list');
    const fails = calls.filter((e) => e.target.name === 'fail');
    assert.deepEqual(fails.map((e) => e.outcome), ['success', 'denied']);
    assert.ok(calls.some((e) => e.target.name === forged), 'the forged name, escaped in its own line');
  }));

  test('SIGUSR1 reopens the file', guarded(async () => {
    const old = `${file}.1`;
    await fsp.rename(file, old);
    process.kill(daemon.pid, 'SIGUSR1');
    // every worker reopens: calls on new connections until both wrote
    await waitFor('lines in the new file', async () => {
      await call('tools/list', {});
      const l = await lines(file);
      return l.filter((e) => e.type === 'mcp_tools_list').length >= 4 ? l : null;
    }, { timeout: 15000, interval: 100 });
    // then nothing more in the old file: every worker writes to the new
    const before = (await lines(old)).length;
    assert.ok(before >= 8);
    for (let i = 0; i < 12; i++)
      await call('tools/list', {});
    await waitFor('the 12 lines', async () =>
      (await lines(file)).filter((e) => e.type === 'mcp_tools_list').length >= 16);
    assert.equal((await lines(old)).length, before, 'no worker kept the old file');
  }));
});

describe('audit with includeRequestData and eventTypes', () => {
  let backend, daemon, file;

  before(async () => {
    backend = await startTestBackend();
    const dir = await fsp.mkdtemp(path.join((await import('node:os')).tmpdir(), 'vmcpd-audit-'));
    file = path.join(dir, 'audit.jsonl');
    daemon = await startDaemon({
      backendUrl: backend.url, workers: 2,
      extra: [
        'audit:',
        '  enabled: true',
        `  logFile: ${file}`,
        '  eventTypes: [mcp_tool_call]',
        '  includeRequestData: true',
        '  maxDataSize: 40',
        '',
      ].join('\n'),
    });
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
  });

  test('the params, cut at maxDataSize; other types left out', guarded(async () => {
    const { sid } = await (await import('./lib/harness.mjs')).openSession(daemon.port);
    const message = 'm'.repeat(100);
    const r = await mcpPost(daemon.port, { jsonrpc: '2.0', id: nextId(), method: 'tools/call',
      params: { name: 'echo', arguments: { message } } }, { session: sid });
    assert.equal(r.status, 200, r.text);
    const ev = await waitFor('the call line', async () => {
      const l = await lines(file);
      return l.length >= 1 ? l : null;
    });
    assert.ok(ev.every((e) => e.type === 'mcp_tool_call'), JSON.stringify(ev));
    assert.equal(ev.length, 1);
    assert.equal(ev[0].component, 'vmcpd');
    assert.equal(ev[0].subjects.user, 'anonymous');
    const full = JSON.stringify({ name: 'echo', arguments: { message } });
    assert.equal(ev[0].data.request, full.slice(0, 40));

    // a 2026-07-28 call (the Modern hot path's scan tells the audit)
    const m = await modern(daemon.port, 'tools/call', { name: 'echo', arguments: { message } },
      { 'Mcp-Name': 'echo' });
    assert.equal(m.json?.error, undefined, m.text);
    const two = await waitFor('the second call line', async () => {
      const l = await lines(file);
      return l.length >= 2 ? l : null;
    });
    assert.equal(two[1].target.name, 'echo');
    assert.equal(two[1].target.method, 'tools/call');
    assert.equal(two[1].data.request,
      JSON.stringify({ _meta: modernMeta(), name: 'echo', arguments: { message } }).slice(0, 40));
  }));
});

describe('an audit log that cannot be opened', () => {
  // a path under a regular file: refused even for root, which access(2)
  // and open(2) would let through a mode check
  test('is refused by vmcpd -n and at start, not by workers in a restart loop',
    guarded(async () => {
      const d = await tmpDir();
      await fsp.writeFile(path.join(d, 'plain'), '');
      const bad = path.join(d, 'plain', 'audit.jsonl');
      const cfg = path.join(d, 'vmcpd.yaml');
      await fsp.writeFile(cfg, configText({
        portFile: path.join(d, 'port'), stateDir: path.join(d, 'state'),
        backendUrl: 'http://127.0.0.1:9/mcp',
        extra: `audit:\n  enabled: true\n  logFile: ${bad}\n`,
      }));
      let r = await run(VMCPD_BIN, ['-n', '-f', cfg]);
      assert.notEqual(r.code, 0, 'vmcpd -n accepted it');
      assert.match(r.stderr, /audit\.logFile .*audit\.jsonl: Not a directory/);
      assert.doesNotMatch(r.stderr, /configuration OK/);
      r = await run(VMCPD_BIN, ['-d', '-f', cfg], { timeout: 10000 });
      assert.equal(r.code, 1, `vmcpd started anyway: ${r.stderr.slice(-400)}`);
      assert.match(r.stderr, /audit\.logFile .*: Not a directory/);
    }));
});
