// Backend sessions end with their client sessions (issue 11 item 2).
// Each Legacy client session that calls a tool opens its own backend
// session; when the client session ends, by DELETE or by expiry, vmcpd
// closes it: an HTTP DELETE to a Streamable HTTP backend, a release in a
// stdio backend's bridge.  A backend that caps its live sessions (here
// MAX_SESSIONS, answering 503 "Too many sessions" past it) never sees
// more than the live client sessions plus vmcpd's scope session, however
// many client sessions come and go.
import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';
import {
  useHarness, guarded, startTestBackend, openSession, rpc, httpRequest, waitFor, vmcpctl,
  tmpDir, freePort, Daemon, LEGACY_VERSION, HOST,
} from './lib/harness.mjs';
import { startMulti, multiConfig, EVERYTHING, NODE } from './lib/multi.mjs';

useHarness();

/* one backend's names kept as they are */
const KEEP = 'conflictResolution: prefix\nconflictResolutionConfig:\n  prefixMode: onConflict';
const CAP = 10;		// the backend's session limit
const WAVE = 8;		// client sessions per wave
const WAVES = 5;	// 40 client sessions in all, four times the limit

function backendCounts(backend) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: HOST, port: backend.port, path: '/sessions', timeout: 5000 },
      (res) => {
        let s = '';
        res.setEncoding('utf8');
        res.on('data', (d) => { s += d; });
        res.on('end', () => resolve(JSON.parse(s)));
      });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
  });
}

async function stat(d) {
  const r = await vmcpctl(['-f', d.cfg, 'stat', '-j']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/* vmcpd_backend_sessions{backend="capped",holder} from /metrics */
async function metric(port, holder) {
  const r = await httpRequest(port, { method: 'GET', path: '/metrics' });
  assert.equal(r.status, 200, r.text);
  const m = new RegExp(`^vmcpd_backend_sessions\\{backend="capped",holder="${holder}"\\} (\\d+)$`, 'm')
    .exec(r.text);
  assert.ok(m, r.text);
  return Number(m[1]);
}

function end(port, sid) {
  return httpRequest(port, {
    method: 'DELETE', headers: { 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': LEGACY_VERSION },
  });
}

/* a wave: WAVE sessions, each calling a tool once; none may fail */
async function wave(d, n) {
  const sids = await Promise.all(Array.from({ length: WAVE }, async (_, i) => {
    const { sid } = await openSession(d.port, { clientName: `bclose-${n}-${i}` });
    const r = await rpc(d.port, sid, 'tools/call',
      { name: 'echo', arguments: { message: `wave ${n} call ${i}` } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json?.error, undefined, `wave ${n} call ${i}: ${r.text}`);
    assert.equal(r.json.result.content[0].text, `Echo: wave ${n} call ${i}`);
    return sid;
  }));
  return sids;
}

describe('backend sessions close with their client sessions', () => {
  let backend, d, scope, diag;

  before(async () => {
    backend = await startTestBackend({ env: { MAX_SESSIONS: String(CAP) } });
    const dir = await tmpDir('vmcpd-bclose-');
    d = new Daemon(dir, path.join(dir, 'vmcpd.yaml'), { workers: 2 });
    diag = await freePort();
    await d.writeConfig(multiConfig({
      portFile: d.portFile, stateDir: d.stateDir,
      backends: [{ name: 'capped', url: backend.url }],
      sessions: 'ttl: 2s\nmaxLifetime: 1m',
      aggregation: KEEP,
    }).replace('daemon:\n', `daemon:\n  diagnostics: ${HOST}:${diag}\n`));
    await d.start();
    // the scope session vmcpd lists the backend on
    const { sid } = await openSession(d.port);
    const r = await rpc(d.port, sid, 'tools/list');
    assert.equal(r.status, 200, r.text);
    // once settled: an era probe's own session goes away by itself
    let same = 0, last = -1;
    await waitFor('the backend\'s session count to settle', async () => {
      const live = (await backendCounts(backend)).live;
      same = live === last ? same + 1 : 0;
      last = live;
      return same >= 4 || null;
    }, { timeout: 20000, interval: 500 });
    scope = last;
    assert.ok(scope >= 1 && scope < CAP, `scope sessions: ${scope}`);
  });

  test('waves of expiring sessions never reach the backend\'s limit', { timeout: 240000 },
    guarded(async () => {
      for (let n = 0; n < WAVES; n++) {
        await wave(d, n);
        // open while their client sessions live, and counted
        const live = (await backendCounts(backend)).live;
        assert.equal(live, scope + WAVE, `wave ${n}: backend sessions while the clients live`);
        if (n === 0) {
          const s = await stat(d);
          assert.equal(s.backendSessions.capped.client, WAVE, JSON.stringify(s.backendSessions));
          assert.ok(s.backendSessions.capped.scope >= 1, JSON.stringify(s.backendSessions));
          assert.equal(await metric(diag, 'client'), WAVE);
          assert.equal(await metric(diag, 'scope'), s.backendSessions.capped.scope);
        }
        // the clients leave without DELETE: their sessions expire
        await waitFor(`wave ${n}'s backend sessions closed`, async () =>
          (await backendCounts(backend)).live === scope, { timeout: 30000, interval: 200 });
      }
      const c = await backendCounts(backend);
      assert.equal(c.refused, 0, 'no session refused by the backend');
      assert.ok(c.closed >= WAVES * WAVE, `closed ${c.closed}`);
      assert.ok(c.peak <= scope + WAVE, `peak ${c.peak}`);
      const s = await stat(d);
      assert.equal(s.backendSessions.capped.client, 0, JSON.stringify(s.backendSessions));
      assert.equal(s.dbs.closing.entries, 0);
      assert.equal(await metric(diag, 'client'), 0);
    }));

  test('a client\'s DELETE closes its backend session at once', guarded(async () => {
    const sids = await wave(d, 'delete');
    assert.equal((await backendCounts(backend)).live, scope + WAVE);
    for (const sid of sids)
      assert.equal((await end(d.port, sid)).status, 200);
    await waitFor('the backend sessions closed', async () =>
      (await backendCounts(backend)).live === scope, { timeout: 10000, interval: 100 });
    const s = await stat(d);
    assert.equal(s.backendSessions.capped.client, 0, JSON.stringify(s.backendSessions));
  }));

  test('stops cleanly', guarded(async () => { await d.stop(); }));
});

describe('a stdio backend\'s bridge releases an expired session\'s backend session', () => {
  let d;

  before(async () => {
    d = await startMulti({
      backends: [{ name: 'every', command: NODE, args: [EVERYTHING, 'stdio'] }],
      sessions: 'ttl: 2s\nmaxLifetime: 1m',
      aggregation: KEEP,
    });
  });

  /* a ping on the bridge's socket: 200 while it holds the session, 404 once released */
  function bridgePing(bsid) {
    return new Promise((resolve, reject) => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 'probe', method: 'ping' });
      const req = http.request({
        socketPath: path.join(d.stateDir, 'bridge-every.sock'), method: 'POST', path: '/mcp',
        headers: {
          'Mcp-Session-Id': bsid, 'MCP-Protocol-Version': LEGACY_VERSION,
          'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
          'Content-Length': Buffer.byteLength(body),
        },
        timeout: 5000,
      }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode)); });
      req.on('error', reject);
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.end(body);
    });
  }

  test('the bridge no longer knows it once the client session expired', { timeout: 120000 },
    guarded(async () => {
      const { sid } = await openSession(d.port);
      const r = await rpc(d.port, sid, 'tools/call', { name: 'echo', arguments: { message: 'hi' } });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json?.error, undefined, r.text);
      // the session's backend session, as recorded
      const dump = await vmcpctl(['-f', d.cfg, 'dump', 'sessions']);
      assert.equal(dump.code, 0, dump.stderr);
      const rec = dump.stdout.trim().split('\n').map((l) => JSON.parse(l))
        .find((o) => o.key === sid);
      const bsid = rec?.value?.backends?.every?.sid;
      assert.ok(bsid, `a backend session recorded: ${dump.stdout}`);
      assert.equal(await bridgePing(bsid), 200, 'the bridge holds it while the client lives');
      // expired, swept, closed: the bridge forgets it
      await waitFor('the bridge to release the expired session\'s backend session',
        async () => (await bridgePing(bsid)) === 404 || null,
        { timeout: 30000, interval: 1000 });
      await d.stop();
    }));
});
