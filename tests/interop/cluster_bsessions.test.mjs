// Principals' synthesized backend sessions shared by the nodes
// (sessionStorage.provider redis; docs/ARCHITECTURE.md, Beyond one
// host; worker/upstream/backend_session_redis.c): two nodes on one Redis, OIDC, the SDK
// v1 spec backend keeping notes per backend session.  A principal's
// 2026-07-28 requests on either node go over one backend session (her
// note follows her, bob's stays his), opened once across the nodes
// however many first requests race; a session used on one node is not
// closed by another whose copy went idle, and an idle one is closed
// once (one DELETE), by one node.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';

import { useHarness, guarded, sleep, waitFor } from './lib/harness.mjs';
import { startIdp, oidcConfig } from './lib/oidc.mjs';
import { useMulti, modern, startSpec } from './lib/multi.mjs';
import { startRedis, startNode } from './lib/cluster.mjs';

useHarness();
useMulti();
const TTL_MS = 3000;	// sessions.backendSessionTtl
const PREFIX = 'thv:vmcp:session:';
const bearer = (t) => ({ Authorization: `Bearer ${t}` });

describe('principals\' backend sessions shared through Redis (2 nodes)', () => {
  let idp, mem, redis, a, b;
  const tokens = {};
  const inits = async () => (await mem.stats()).methods['none initialize'] ?? 0;
  const deletes = async () => (await mem.stats()).deletes;
  const recall = async (node, who) => {
    const r = await modern(node.port, 'tools/call', { name: 'recall', arguments: {} },
      { ...bearer(tokens[who]), 'Mcp-Name': 'recall' });
    assert.equal(r.status, 200, r.text);
    const m = /M:recall:(\[.*?\])"/.exec(r.text.replace(/\\"/g, '"'));
    assert.ok(m, r.text);
    return JSON.parse(m[1]);
  };
  const bsKey = (sub) => `${PREFIX}bs:${crypto.createHash('sha256')
    .update(`${idp.issuer}\0${sub}`).digest('hex').slice(0, 32)}:mem`;

  before(async () => {
    idp = await startIdp();
    mem = await startSpec({ label: 'M', memory: true });
    redis = await startRedis();
    const opts = { redis, backendUrl: mem.url, backendName: 'mem', workers: 1,
      extra: `sessions:\n  backendSessionTtl: ${TTL_MS / 1000}s\n` +
        `operational:\n  timeouts:\n    default: 2s\n${oidcConfig(idp)}` };
    a = await startNode(opts);
    b = await startNode(opts);
    for (const u of ['alice', 'bob'])
      tokens[u] = idp.forge(idp.claims({ sub: u, client_id: u }));
    // each node's shared scope (lists, its listener's stream) first
    await waitFor('both nodes listening to mem', async () => (await mem.stats()).getStreams >= 2,
      { timeout: 20000 });
  });

  after(async () => {
    for (const n of [a, b])
      if (n && !n.stopped)
        await n.stop();
    await idp?.stop();
  });

  test('a principal\'s session follows her across the nodes, opened once', guarded(async (t) => {
    const i0 = await inits();
    // first calls on both nodes at once: one initialize for alice
    const first = await Promise.all([a, b, a, b, a, b].map((n) => recall(n, 'alice')));
    assert.deepEqual(first, [[], [], [], [], [], []]);
    assert.equal(await inits(), i0 + 1, 'initializes for alice on two nodes');
    const w = await modern(a.port, 'tools/call', { name: 'remember', arguments: { note: 'a1' } },
      { ...bearer(tokens.alice), 'Mcp-Name': 'remember' });
    assert.equal(w.status, 200, w.text);
    assert.deepEqual(await recall(b, 'alice'), ['a1']);
    assert.deepEqual(await recall(a, 'alice'), ['a1']);
    // bob: his own, on both nodes
    assert.deepEqual(await recall(b, 'bob'), []);
    assert.deepEqual(await recall(a, 'bob'), []);
    assert.equal(await inits(), i0 + 2, 'one initialize per principal across the nodes');
    t.diagnostic(`initialize requests: ${(await inits()) - i0} for 2 principals on 2 nodes`);
    const ttl = Number(await redis.cli('PTTL', bsKey('alice')));
    assert.ok(ttl > 0 && ttl <= TTL_MS, `alice's record in Redis: PTTL ${ttl}`);
    assert.match(await redis.cli('GET', bsKey('alice')), /"sid":/);
  }));

  test('a session used on one node outlives another\'s idle copy; an idle one is closed once',
    guarded(async () => {
      const d0 = await deletes();
      // alice keeps to node B while node A's copy goes idle; bob idles
      const until = Date.now() + TTL_MS + 2500;
      while (Date.now() < until) {
        assert.deepEqual(await recall(b, 'alice'), ['a1']);
        await sleep(300);
      }
      // bob's closed (once, whichever node found it gone first), alice's kept
      await waitFor('bob\'s idle session closed', async () => (await deletes()) >= d0 + 1,
        { timeout: 8000, interval: 200 });
      assert.equal(await redis.cli('EXISTS', bsKey('bob')), '0');
      assert.deepEqual(await recall(a, 'alice'), ['a1'], 'alice\'s session kept on node A');
      // now nobody uses alice's: closed once, her note gone with it
      await waitFor('alice\'s idle session closed', async () => (await deletes()) >= d0 + 2,
        { timeout: TTL_MS + 8000, interval: 200 });
      await sleep(2500);	// both nodes' copies had their look
      assert.equal(await deletes(), d0 + 2, 'one DELETE per session');
      assert.equal(await redis.cli('EXISTS', bsKey('alice')), '0');
      assert.deepEqual(await recall(b, 'alice'), []);
    }));
});
