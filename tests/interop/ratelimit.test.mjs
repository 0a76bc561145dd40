// rateLimiting: token buckets shared by every worker through the store.
// The limit holds in total across 2 workers (each call on a new
// connection, so both workers serve); per-user buckets keep principals
// apart; a tool's bucket adds to the server's; only tools/call is
// metered; a rejection is code 429 "Rate limit exceeded" with
// data.retryAfterSeconds: an isError result for 2025-11-25 clients, a
// JSON-RPC error at HTTP 200 for 2026-07-28 ones (as the reference vMCP).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  useHarness, guarded, startTestBackend, startDaemon, openSession, rpc, workerOf,
} from './lib/harness.mjs';
import { modern } from './lib/multi.mjs';
import { startIdp, oidcConfig } from './lib/oidc.mjs';

useHarness();

const LIMITED = { code: 429, message: 'Rate limit exceeded' };

function assertLegacyLimited(res) {
  assert.equal(res.status, 200, res.text);
  const r = res.json.result;
  assert.equal(r.isError, true, res.text);
  assert.equal(r.structuredContent.code, LIMITED.code);
  assert.equal(r.structuredContent.message, LIMITED.message);
  assert.ok(r.structuredContent.data.retryAfterSeconds >= 1, res.text);
}

function assertModernLimited(res) {
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.error.code, LIMITED.code, res.text);
  assert.equal(res.json.error.message, LIMITED.message);
  assert.ok(res.json.error.data.retryAfterSeconds >= 1, res.text);
}

const echo = (message) => ({ name: 'echo', arguments: { message } });

describe('rateLimiting shared across 2 workers', () => {
  let backend, daemon;

  before(async () => {
    backend = await startTestBackend();
    daemon = await startDaemon({
      backendUrl: backend.url, workers: 2,
      extra: [
        'rateLimiting:',
        '  shared: {maxTokens: 12, refillPeriod: 1h}',
        '  tools:',
        '    - name: fail',
        '      shared: {maxTokens: 2, refillPeriod: 1h}',
        '',
      ].join('\n'),
    });
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
  });

  test('a tool bucket rejects without draining the shared one; the total holds over both workers',
    guarded(async () => {
      const { sid } = await openSession(daemon.port);
      // the tool's bucket: 2 calls, then 429; those 2 came out of the
      // shared bucket too, the third (rejected) did not
      for (let i = 0; i < 2; i++) {
        const r = await rpc(daemon.port, sid, 'tools/call', { name: 'fail', arguments: {} });
        assert.equal(r.status, 200, r.text);
        assert.equal(r.json.result.structuredContent, undefined, r.text);
      }
      assertLegacyLimited(await rpc(daemon.port, sid, 'tools/call', { name: 'fail', arguments: {} }));

      // 10 shared tokens left: over 40 calls on new connections, exactly
      // 10 go through whichever worker serves them
      const workers = new Set();
      let ok = 0, limited = 0;
      for (let i = 0; i < 40; i++) {
        const r = await rpc(daemon.port, sid, 'tools/call', echo(`n${i}`));
        workers.add(workerOf(r)?.pid);
        if (r.json?.result?.isError === true) {
          assertLegacyLimited(r);
          limited++;
        } else {
          assert.deepEqual(r.json.result.content, [{ type: 'text', text: `Echo: n${i}` }], r.text);
          ok++;
        }
      }
      assert.equal(workers.size, 2, 'both workers served');
      assert.equal(ok, 10, `calls let through in total (${limited} limited)`);

      // a 2026-07-28 client: a JSON-RPC error at HTTP 200
      assertModernLimited(await modern(daemon.port, 'tools/call', echo('m'), { 'Mcp-Name': 'echo' }));
      // only tools/call is metered
      const l = await rpc(daemon.port, sid, 'tools/list', {});
      assert.equal(l.status, 200);
      assert.ok(Array.isArray(l.json.result.tools), l.text);
    }));
});

/* a composite of three steps, one after the other, none on echo */
const THRICE = [
  'compositeTools:',
  '  - name: thrice',
  '    description: Three steps in a row',
  '    steps:',
  '      - {id: s1, tool: slow, arguments: {ms: 1}}',
  '      - {id: s2, tool: slow, arguments: {ms: 1}, dependsOn: [s1]}',
  '      - {id: s3, tool: slow, arguments: {ms: 1}, dependsOn: [s2]}',
  '',
].join('\n');

// an issuer, a backend and a vmcpd on 2 workers with oidc and these
// rateLimiting lines
async function oidcDaemon(limits) {
  const idp = await startIdp();
  const backend = await startTestBackend();
  const daemon = await startDaemon({
    backendUrl: backend.url, workers: 2,
    extra: oidcConfig(idp) + ['rateLimiting:', ...limits, ''].join('\n'),
  });
  return { idp, backend, daemon };
}

describe('rateLimiting perUser keys on the principal', () => {
  let idp, backend, daemon;

  before(async () => {
    ({ idp, backend, daemon } = await oidcDaemon([
      '  perUser: {maxTokens: 3, refillPeriod: 1h}',
      '  tools:',
      '    - name: echo',
      '      perUser: {maxTokens: 3, refillPeriod: 1h}',
      THRICE,
    ]));
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
    await idp?.stop();
  });

  test('alice spends her tokens; bob still has his', guarded(async () => {
    const alice = { Authorization: `Bearer ${await idp.token('alice')}` };
    const bob = { Authorization: `Bearer ${await idp.token('bob')}` };
    const call = (h, i) => modern(daemon.port, 'tools/call', echo(`u${i}`),
      { 'Mcp-Name': 'echo', ...h });
    for (let i = 0; i < 3; i++) {
      const r = await call(alice, i);
      assert.equal(r.json.error, undefined, r.text);
    }
    assertModernLimited(await call(alice, 3));
    for (let i = 0; i < 3; i++) {
      const r = await call(bob, i);
      assert.equal(r.json.error, undefined, r.text);
    }
    assertModernLimited(await call(bob, 3));
  }));

  // a composite's steps are the caller's calls too: with 3 tokens, the
  // composite's own call and two steps go through, the third step is
  // refused, and the caller has nothing left for a direct call
  test('each composite step takes a token of the caller\'s per-user bucket', guarded(async () => {
    const dave = { Authorization: `Bearer ${idp.forge(idp.claims({ sub: 'dave' }))}` };
    const erin = { Authorization: `Bearer ${idp.forge(idp.claims({ sub: 'erin' }))}` };
    let r = await modern(daemon.port, 'tools/call', { name: 'thrice', arguments: {} },
      { 'Mcp-Name': 'thrice', ...dave });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.result?.isError, true, r.text);
    assert.match(r.json.result.content[0].text, /step s3: tool slow: Rate limit exceeded/);
    assertModernLimited(await modern(daemon.port, 'tools/call',
      { name: 'slow', arguments: { ms: 1 } }, { 'Mcp-Name': 'slow', ...dave }));
    // another principal's bucket is untouched
    r = await modern(daemon.port, 'tools/call', { name: 'slow', arguments: { ms: 1 } },
      { 'Mcp-Name': 'slow', ...erin });
    assert.equal(r.json.error, undefined, r.text);
  }));

  // security.md 6.4 #56: were keys the parts joined by ':', the per-user
  // bucket of sub "bob:tool:echo" would be bob's bucket of tool echo
  test('bucket keys cannot be forged by a subject with separators', guarded(async () => {
    const mallory = { Authorization: `Bearer ${idp.forge(idp.claims({ sub: 'carol:tool:echo' }))}` };
    const carol = { Authorization: `Bearer ${idp.forge(idp.claims({ sub: 'carol' }))}` };
    const call = (h, name, i) => modern(daemon.port, 'tools/call',
      { name, arguments: name === 'echo' ? { message: `f${i}` } : {} }, { 'Mcp-Name': name, ...h });
    for (let i = 0; i < 3; i++) {
      const r = await call(mallory, 'fail', i);
      assert.equal(r.json.error, undefined, r.text);
    }
    assertModernLimited(await call(mallory, 'fail', 3));
    // carol's own buckets are untouched
    for (let i = 0; i < 3; i++) {
      const r = await call(carol, 'echo', i);
      assert.equal(r.json.error, undefined, r.text);
      assert.deepEqual(r.json.result.content, [{ type: 'text', text: `Echo: f${i}` }]);
    }
    assertModernLimited(await call(carol, 'echo', 3));
  }));
});

// On one host a generous per-user bucket is leased as shared ones are
// (tests/unit/test_ratelimit_lease.c shows the lease); a small one stays
// exact across the workers, and a call refused by it spends nothing of
// the leased one (all or none).
describe('rateLimiting perUser: small exact, large leased, across 2 workers', () => {
  let idp, backend, daemon;

  before(async () => {
    ({ idp, backend, daemon } = await oidcDaemon([
      '  perUser: {maxTokens: 10, refillPeriod: 1h}',
      '  tools:',
      '    - name: echo',
      '      perUser: {maxTokens: 6400, refillPeriod: 1h}',
    ]));
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
    await idp?.stop();
  });

  test('10 per user pass in total, whichever worker serves them', guarded(async () => {
    const alice = { Authorization: `Bearer ${await idp.token('alice')}` };
    const workers = new Set();
    let ok = 0;
    // each call on a new connection; which worker accepts it is the
    // kernel's choice, so go on past 14 until both have served
    for (let i = 0; i < 14 || (workers.size < 2 && i < 80); i++) {
      const r = await modern(daemon.port, 'tools/call', echo(`e${i}`), { 'Mcp-Name': 'echo', ...alice });
      workers.add(workerOf(r)?.pid);
      if (r.json?.error !== undefined)
        assertModernLimited(r);
      else {
        assert.deepEqual(r.json.result.content, [{ type: 'text', text: `Echo: e${i}` }], r.text);
        ok++;
      }
    }
    assert.equal(workers.size, 2, 'both workers served');
    assert.equal(ok, 10);
  }));
});
