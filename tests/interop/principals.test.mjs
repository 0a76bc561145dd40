// sessions.maxPrincipals (docs/ARCHITECTURE.md, "Token exchange",
// per-principal scope): with a token_exchange backend every principal
// gets its own view, backend sessions and tokens; the number of
// principals holding such state is capped across the workers. A new
// principal beyond the cap is refused (HTTP 503 naming the limit, no
// exchange, no view) while those admitted go on; /metrics shows the
// count. The shared (anonymous) view build leaves the token_exchange
// backend out without logging an error for it.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import path from 'node:path';

import {
  useHarness, guarded, startTestBackend, httpRequest, vmcpctl, Daemon, configText,
  freePort, tmpDir, waitFor, sleep, HOST,
} from './lib/harness.mjs';
import { startIdp, oidcConfig, TX_CLIENT } from './lib/oidc.mjs';
import { useMulti, modern, startSpec } from './lib/multi.mjs';

useHarness();
useMulti();
process.env.VMCPD_TEST_TX_SECRET = 'tx-secret-9c41e07b2d';
const bearer = (t) => ({ Authorization: `Bearer ${t}` });

function config(idp, cap) {
  return oidcConfig(idp) + [
    'sessions:',
    `  maxPrincipals: ${cap}`,
    'outgoingAuth:',
    '  source: inline',
    '  backends:',
    '    b:',
    '      type: token_exchange',
    '      tokenExchange:',
    `        tokenUrl: ${idp.issuer}/token`,
    `        clientId: ${TX_CLIENT}`,
    '        clientSecretEnv: VMCPD_TEST_TX_SECRET',
    '        audience: backend-b',
    '        scopes: [mcp]',
  ].join('\n') + '\n';
}

async function metric(port, name) {
  const r = await httpRequest(port, { method: 'GET', path: '/metrics' });
  assert.equal(r.status, 200, r.text);
  const m = new RegExp(`^${name} (\\d+)$`, 'm').exec(r.text);
  assert.ok(m, `${name} not in /metrics`);
  return Number(m[1]);
}

async function call(port, token, message) {
  return modern(port, 'tools/call', { name: 'echo', arguments: { message } },
    { ...bearer(token), 'Mcp-Name': 'echo' });
}

describe('sessions.maxPrincipals with a real OpenID provider', () => {
  let idp, backend, shared, daemon, diag;
  const tokens = {};

  before(async () => {
    idp = await startIdp();
    backend = await startTestBackend();
    // a backend everyone shares, whose lists change
    shared = await startSpec({ label: 'd', tools: ['x'], dynamic: true });
    const dir = await tmpDir('vmcpd-principals-');
    daemon = new Daemon(dir, path.join(dir, 'vmcpd.yaml'), {});
    diag = await freePort();
    await daemon.writeConfig(configText({ portFile: daemon.portFile, stateDir: daemon.stateDir,
      backendUrl: backend.url, backendName: 'b', extra: config(idp, 2) })
      .replace('daemon:\n', `daemon:\n  diagnostics: ${HOST}:${diag}\n`)
      .replace('backends:\n', `backends:\n  - name: d\n    url: ${shared.url}\n    transport: streamable-http\n`));
    await daemon.start();
    for (const u of ['alice', 'bob', 'carol'])
      tokens[u] = idp.forge(idp.claims({ sub: u, client_id: u }));
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
    await idp?.stop();
  });

  test('a third principal beyond a cap of 2 is refused with 503 naming the limit; the two admitted go on',
    guarded(async () => {
      for (const u of ['alice', 'bob']) {
        const r = await call(daemon.port, tokens[u], u);
        assert.equal(r.status, 200, r.text);
        assert.match(r.text, new RegExp(`Echo: ${u}`));
      }
      assert.equal(await metric(diag, 'vmcpd_principals'), 2);
      assert.equal(await metric(diag, 'vmcpd_principals_max'), 2);

      // carol: refused on every worker (the count is in the store)
      for (let i = 0; i < 4; i++) {
        const r = await call(daemon.port, tokens.carol, 'c');
        assert.equal(r.status, 503, r.text);
        assert.equal(r.json?.error?.code, -32000, r.text);
        assert.match(r.json.error.message, /sessions\.maxPrincipals is 2/);
      }
      assert.equal(idp.exchanges.filter((x) => x.sub === 'carol').length, 0,
        'a refused principal cost an exchange');
      assert.equal(await metric(diag, 'vmcpd_principals'), 2);

      // those admitted keep their state and go on, with no new exchange
      for (const u of ['alice', 'bob']) {
        const r = await call(daemon.port, tokens[u], `${u}2`);
        assert.equal(r.status, 200, r.text);
        assert.match(r.text, new RegExp(`Echo: ${u}2`));
        assert.equal(idp.exchanges.filter((x) => x.sub === u).length, 1);
      }
      // two principals' views besides the shared one, none for carol
      const d = await vmcpctl(['dump', 'views'], { stateDir: daemon.stateDir });
      assert.equal(d.code, 0, d.stderr);
      const scopes = new Set(d.stdout.trim().split('\n').map((l) => JSON.parse(l).key)
        .filter((k) => k.startsWith('view|')).map((k) => k.split('|').at(-2))
        .filter((s) => s !== 'anon'));
      assert.equal(scopes.size, 2, [...scopes].join(' '));
    }));

  test('the shared view leaves the token_exchange backend out without an error', guarded(async () => {
    // d's lists change: the builder rebuilds the shared view, where b
    // has no client token to be listed with; that is no failure
    const views = async () => (await vmcpctl(['dump', 'views'], { stateDir: daemon.stateDir }))
      .stdout.trim().split('\n').filter((l) => l).map((l) => JSON.parse(l).key);
    // a list change d sends before vmcpd listens to it is missed
    await waitFor('vmcpd listening to d', async () => (await shared.stats()).getStreams >= 1,
      { timeout: 20000 });
    const r = await modern(daemon.port, 'tools/call', { name: 'add_tool', arguments: { name: 'y' } },
      { ...bearer(tokens.alice), 'Mcp-Name': 'add_tool' });
    assert.equal(r.status, 200, r.text);
    await waitFor('the shared view rebuilt', async () =>
      (await views()).some((k) => k.startsWith('view|') && k.includes('|anon|')), { timeout: 20000 });
    await sleep(500);
    assert.doesNotMatch(daemon.stderr, /view: .*backend b\b/);
  }));
});
