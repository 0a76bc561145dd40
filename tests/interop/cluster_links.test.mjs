// Per-user upstream accounts on two nodes sharing one Redis
// (sessionStorage.provider redis, one sealKeyFile: lib/links.mjs
// startLinks({ redis }); docs/ARCHITECTURE.md, "Linking users'
// accounts"): a consent asked through node B completes on node A (the
// callbackUrl's, where the browser goes: an HTTP client with a cookie
// jar here, walk()), and both nodes' calls then carry alice's own
// token, read from Redis; bob, through either node, is asked his own
// consent and never sent hers.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { useHarness, guarded, mcpPost, nextId, HOST } from './lib/harness.mjs';
import { sessionAs } from './lib/oidc.mjs';
import { startLinks, walk } from './lib/links.mjs';
import { startRedis } from './lib/cluster.mjs';

useHarness();
const bearer = (t) => ({ Authorization: `Bearer ${t}` });

/* a 2025-11-25 whoami through node as token: its result */
async function whoami(node, token) {
  const sid = await sessionAs(node.port, token, 'cluster-links');
  const r = await mcpPost(node.port, { jsonrpc: '2.0', id: nextId(), method: 'tools/call',
    params: { name: 'whoami', arguments: {} } }, { session: sid, headers: bearer(token) });
  assert.equal(r.status, 200, r.text);
  return r.json.result;
}

describe('linked accounts across two nodes on Redis', () => {
  let redis, L, a, b;

  before(async () => {
    redis = await startRedis();
    L = await startLinks({ redis, workers: 1 });
    a = L.daemon;
    b = await L.node();
  });

  after(async () => {
    await L?.stop();
    await redis?.kill();
  });

  test('a consent asked on node B completes on node A; both nodes send her link, never to bob', guarded(async () => {
    const r = await whoami(b, L.tokens.alice);
    assert.equal(r.isError, true, JSON.stringify(r));
    const url = /open (\S+) to connect it/.exec(r.content[0].text)?.[1];
    assert.ok(url?.startsWith(`http://${HOST}:${a.port}/oauth/start?consent=vmcpd-e-`), r.content[0].text);
    const w = await walk(url, { as: 'alice' });
    assert.equal(w.status, 200, w.text);
    for (const n of [b, a])
      assert.deepEqual((await whoami(n, L.tokens.alice)).content, [{ type: 'text', text: 'user alice' }]);
    for (const n of [a, b]) {
      const x = await whoami(n, L.tokens.bob);
      assert.equal(x.isError, true, JSON.stringify(x));
      assert.match(x.content[0].text, /^Backend up acts as your own account there/);
    }
    const calls = L.upstream.seen.filter((e) => e.method === 'tools/call');
    assert.equal(calls.length, 2);
    assert.equal(calls[0].authorization, calls[1].authorization, 'one link, from Redis');
    assert.equal(await L.as.introspect(/^Bearer (\S+)$/.exec(calls[0].authorization)[1]), 'alice');
  }));
});
