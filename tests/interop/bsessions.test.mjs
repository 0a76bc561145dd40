// Per-principal synthesized backend sessions (docs/ARCHITECTURE.md,
// "Synthesized backend sessions"; worker/upstream/backend_session.c): a 2026-07-28
// client's request to a 2025-11-25 backend goes over a backend session
// of its principal, never one another user shares, and so do the steps
// of a composite whoever runs it.  The backend (lib/spec-backend.mjs,
// memory) keeps notes per backend session, as a backend keeping a cart
// or a shell per session does.  Two workers, OIDC with three users: bob
// never sees alice's note, alice keeps hers on both workers, one
// initialize per (principal, backend) however many requests race on
// both workers, composites (2025-11-25 and 2026-07-28 callers) keep to
// the caller's session, the cap per backend evicts the least recently
// used with a DELETE, idle ones are closed with a DELETE, /metrics
// counts both, vmcpctl shows them per principal scope.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  guarded, httpRequest, vmcpctl, Daemon, freePort, tmpDir, waitFor, sleep, withTimeout,
  workerOf, HOST,
} from './lib/harness.mjs';
import { startIdp, oidcConfig } from './lib/oidc.mjs';
import { useMulti, modern, startSpec, multiConfig } from './lib/multi.mjs';

useMulti();

const TTL_MS = 4000;		// sessions.backendSessionTtl
const CAP = 2;			// sessions.maxBackendSessions
const TIMEOUT_MS = 2000;	// the backend's: an evicted one is closed after it
const bearer = (t) => ({ Authorization: `Bearer ${t}` });
const COMPOSITES = `
compositeTools:
  - name: recall_note
    description: The caller's notes, through a composite
    steps:
      - id: r
        tool: mem.recall
        arguments: {}
  - name: remember_note
    description: A note kept through a composite
    parameters:
      type: object
      properties:
        note: {type: string}
      required: [note]
    steps:
      - id: w
        tool: mem.remember
        arguments: {note: "{{.params.note}}"}
`;

/* the notes in a recall's text, wherever a result (a composite's
 * output too, JSON in text) holds it; undefined if none */
function findNotes(v) {
  if (typeof v === 'string') {
    const m = /^M:recall:(\[.*\])$/.exec(v);
    if (m)
      return JSON.parse(m[1]);
    try {
      return v.startsWith('{') || v.startsWith('[') ? findNotes(JSON.parse(v)) : undefined;
    } catch {
      return undefined;
    }
  }
  for (const x of Object.values(v && typeof v === 'object' ? v : {})) {
    const n = findNotes(x);
    if (n !== undefined)
      return n;
  }
  return undefined;
}

/* the notes a recall's answer (a tool result, or a composite's) holds */
function notesOf(r) {
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json?.error, undefined, r.text);
  const n = findNotes(r.json.result);
  assert.ok(n, `a recall's answer: ${r.text}`);
  return n;
}

/* the principal scope of (iss, sub) as vmcpd names it (worker/auth/auth.h) */
const scopeOf = (iss, sub) => crypto.createHash('sha256').update(`${iss}\0${sub}`)
  .digest('hex').slice(0, 32);

async function metrics(port) {
  const r = await httpRequest(port, { method: 'GET', path: '/metrics' });
  assert.equal(r.status, 200, r.text);
  return r.text;
}

function metric(text, name, labels) {
  const m = new RegExp(`^${name}\\{${labels.replace(/[{}]/g, '\\$&')}\\} (\\d+)$`, 'm').exec(text);
  assert.ok(m, `${name}{${labels}} not in /metrics`);
  return Number(m[1]);
}

describe('per-principal synthesized backend sessions (2 workers, OIDC)', () => {
  let idp, mem, daemon, diag;
  const tokens = {};
  const inits = async () => (await mem.stats()).methods['none initialize'] ?? 0;
  const call = (who, name, args = {}) => modern(daemon.port, 'tools/call',
    { name, arguments: args }, { ...bearer(tokens[who]), 'Mcp-Name': name });
  const recall = async (who) => {
    const r = await call(who, 'recall');
    return { notes: notesOf(r), worker: workerOf(r) };
  };

  before(async () => {
    idp = await startIdp();
    mem = await startSpec({ label: 'M', memory: true });
    const dir = await tmpDir('vmcpd-bsessions-');
    daemon = new Daemon(dir, path.join(dir, 'vmcpd.yaml'), { workers: 2 });
    diag = await freePort();
    await daemon.writeConfig(multiConfig({
      portFile: daemon.portFile, stateDir: daemon.stateDir,
      backends: [{ name: 'mem', url: mem.url, era: 'legacy' }],
      aggregation: 'conflictResolutionConfig:\n  prefixMode: onConflict',
      operational: `timeouts:\n  default: ${TIMEOUT_MS / 1000}s`,
      sessions: `backendSessionTtl: ${TTL_MS / 1000}s\nmaxBackendSessions: ${CAP}`,
      extra: oidcConfig(idp) + COMPOSITES,
    }).replace('daemon:\n', `daemon:\n  diagnostics: ${HOST}:${diag}\n`));
    await daemon.start();
    for (const u of ['alice', 'bob', 'carol'])
      tokens[u] = idp.forge(idp.claims({ sub: u, client_id: u }));
    // the shared scope's session (lists, the listener's stream) first
    await waitFor('vmcpd listening to mem', async () => (await mem.stats()).getStreams >= 1,
      { timeout: 20000 });
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
    await idp?.stop();
  });

  test('bob never sees alice\'s note; alice keeps hers on both workers; one initialize each',
    guarded(async (t) => {
      const before0 = await inits();
      // lists are no one's: served from the shared view, no session opened
      const l = await modern(daemon.port, 'tools/list', {}, bearer(tokens.alice));
      assert.equal(l.status, 200, l.text);
      assert.ok(l.json.result.tools.some((x) => x.name === 'recall'), l.text);
      assert.equal(await inits(), before0, 'a list opened a backend session');
      // a burst of first uses on both workers: one initialize
      const burst = await Promise.all(Array.from({ length: 12 }, () => recall('alice')));
      assert.ok(burst.every((r) => r.notes.length === 0), JSON.stringify(burst));
      const alices = await inits() - before0;
      const r = await call('alice', 'remember', { note: 'alice-secret' });
      assert.equal(r.status, 200, r.text);
      const seen = new Set();
      for (let i = 0; i < 40 && seen.size < 2; i++) {
        const a = await recall('alice');
        assert.deepEqual(a.notes, ['alice-secret'], `alice on worker ${a.worker.slot}`);
        seen.add(a.worker.pid);
      }
      assert.equal(seen.size, 2, 'alice served by both workers');
      const bursts = await Promise.all(Array.from({ length: 12 }, () => recall('bob')));
      const bobSeen = new Set(bursts.map((b) => b.worker.pid));
      for (const b of bursts)
        assert.deepEqual(b.notes, [], `bob saw ${JSON.stringify(b.notes)}`);
      for (let i = 0; i < 40 && bobSeen.size < 2; i++) {
        const b = await recall('bob');
        assert.deepEqual(b.notes, []);
        bobSeen.add(b.worker.pid);
      }
      assert.equal(bobSeen.size, 2, 'bob served by both workers');
      const n = await inits();
      assert.equal(alices, 1, 'initializes for alice');
      assert.equal(n, before0 + 2, 'one initialize per (principal, backend)');
      t.diagnostic(`initialize requests: ${n - before0} for 2 principals ` +
        `(${burst.length + bursts.length} racing first calls, 2 workers)`);
    }));

  test('a 2026-07-28 caller\'s composite steps go over its principal\'s session',
    guarded(async () => {
      const ac = await call('alice', 'recall_note');
      assert.deepEqual(notesOf(ac), ['alice-secret']);
      const bw = await call('bob', 'remember_note', { note: 'bob-via-composite' });
      assert.equal(bw.status, 200, bw.text);
      assert.deepEqual(notesOf(await call('bob', 'recall_note')), ['bob-via-composite']);
      assert.deepEqual((await recall('bob')).notes, ['bob-via-composite']);
      assert.deepEqual((await recall('alice')).notes, ['alice-secret']);
    }));

  test('a 2025-11-25 caller\'s composite steps go over its client session\'s backend session',
    guarded(async () => {
      const legacy = async (who) => {
        const c = new Client({ name: `legacy-${who}`, version: '1.0.0' });
        await withTimeout(c.connect(new StreamableHTTPClientTransport(new URL(daemon.url),
          { requestInit: { headers: bearer(tokens[who]) } })), 15000, `${who} connects`);
        return c;
      };
      const la = await legacy('alice');
      const lb = await legacy('bob');
      try {
        const w = await la.callTool({ name: 'remember_note', arguments: { note: 'alice-legacy' } });
        assert.notEqual(w.isError, true, JSON.stringify(w));
        const notes = async (c, name) => findNotes(await c.callTool({ name, arguments: {} }));
        for (const name of ['recall_note', 'recall'])
          assert.deepEqual(await notes(lb, name), [], `bob's 2025-11-25 ${name}`);
        assert.deepEqual(await notes(la, 'recall'), ['alice-legacy'],
          'the composite\'s step and the direct call share a session');
        assert.deepEqual(await notes(la, 'recall_note'), ['alice-legacy']);
      } finally {
        await la.transport.terminateSession().catch(() => {});
        await lb.transport.terminateSession().catch(() => {});
        await la.close();
        await lb.close();
      }
    }));

  test('vmcpctl and /metrics show them per principal scope', guarded(async () => {
    const d = await vmcpctl(['dump', 'bsessions'], { stateDir: daemon.stateDir });
    assert.equal(d.code, 0, d.stderr);
    const recs = d.stdout.trim().split('\n').map((l) => JSON.parse(l)).filter((r) => r.holder);
    const mine = recs.filter((r) => r.holder === 'principal').map((r) => `${r.scope}|${r.backend}`);
    assert.deepEqual(mine.sort(), [scopeOf(idp.issuer, 'alice'), scopeOf(idp.issuer, 'bob')]
      .map((s) => `${s}|mem`).sort(), d.stdout);
    assert.ok(recs.some((r) => r.holder === 'shared' && r.scope === 'anon' && r.backend === 'mem'),
      d.stdout);
    for (const r of recs)
      assert.ok(r.lastUsed && r.expires, JSON.stringify(r));
    const s = await vmcpctl(['stat', '-j'], { stateDir: daemon.stateDir });
    assert.equal(s.code, 0, s.stderr);
    const st = JSON.parse(s.stdout);
    assert.equal(st.backendSessions.mem.principal, 2, s.stdout);
    assert.equal(st.backendSessions.mem.scope, 1, s.stdout);
    const text = await metrics(diag);
    assert.equal(metric(text, 'vmcpd_backend_sessions', 'backend="mem",holder="principal"'), 2);
    assert.equal(metric(text, 'vmcpd_backend_sessions', 'backend="mem",holder="scope"'), 1);
  }));

  test('the cap per backend evicts the least recently used, closed at the backend',
    guarded(async () => {
      // bob used before alice: bob's is the least recently used
      await recall('bob');
      await sleep(1100);
      assert.deepEqual((await recall('alice')).notes, ['alice-secret']);
      const { deletes, sessions } = await mem.stats();
      assert.deepEqual((await recall('carol')).notes, []);
      // closed once its calls could be over (the backend's timeout)
      await waitFor('bob\'s backend session closed', async () =>
        (await mem.stats()).deletes === deletes + 1, { timeout: TIMEOUT_MS + 8000, interval: 100 });
      assert.equal((await mem.stats()).sessions, sessions, 'carol\'s opened, bob\'s closed');
      const d = await vmcpctl(['dump', 'bsessions'], { stateDir: daemon.stateDir });
      const scopes = d.stdout.trim().split('\n').map((l) => JSON.parse(l))
        .filter((r) => r.holder === 'principal').map((r) => r.scope).sort();
      assert.deepEqual(scopes, [scopeOf(idp.issuer, 'alice'), scopeOf(idp.issuer, 'carol')].sort());
      assert.equal(metric(await metrics(diag), 'vmcpd_principal_sessions_closed_total',
        'backend="mem",reason="evicted"'), 1);
      // alice's session was kept
      assert.deepEqual((await recall('alice')).notes, ['alice-secret']);
    }));

  test('idle ones are closed at the backend after sessions.backendSessionTtl', guarded(async () => {
    const { deletes } = await mem.stats();
    // alice's and carol's: nothing uses them any more
    await waitFor('the idle sessions closed', async () =>
      (await mem.stats()).deletes === deletes + 2, { timeout: TTL_MS + 10000, interval: 200 });
    const text = await metrics(diag);
    assert.equal(metric(text, 'vmcpd_principal_sessions_closed_total',
      'backend="mem",reason="idle"'), 2);
    assert.equal(metric(text, 'vmcpd_backend_sessions', 'backend="mem",holder="principal"'), 0);
    const st = JSON.parse((await vmcpctl(['stat', '-j'], { stateDir: daemon.stateDir })).stdout);
    assert.equal(st.backendSessions.mem.principal, 0);
    // the shared scope's is still there, and alice starts over
    assert.equal((await mem.stats()).getStreams, 1);
    assert.deepEqual((await recall('alice')).notes, []);
  }));
});
