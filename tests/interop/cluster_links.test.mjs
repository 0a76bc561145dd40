// Per-user upstream accounts on two nodes sharing one Redis
// (sessionStorage.provider redis, one sealKeyFile; docs/ARCHITECTURE.md,
// "Linking users' accounts"): a consent asked through node B completes
// on node A (the callbackUrl's, where the browser goes: an HTTP client
// with a cookie jar here, lib/links.mjs walk()), and both nodes' calls
// then carry alice's own token, read from Redis; bob, through either
// node, is asked his own consent and never sent hers.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fsp from 'node:fs/promises';
import path from 'node:path';

import { useHarness, guarded, mcpPost, nextId, freePort, tmpDir, HOST } from './lib/harness.mjs';
import { startIdp, sessionAs } from './lib/oidc.mjs';
import { UpstreamAs, startUpstream, linkConfig, walk } from './lib/links.mjs';
import { startRedis, startNode } from './lib/cluster.mjs';

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
  let redis, idp, as, upstream, a, b, tokens;

  before(async () => {
    const port = await freePort();
    const callbackUrl = `http://${HOST}:${port}/oauth/callback`;
    idp = await startIdp({ webRedirect: callbackUrl });
    as = await new UpstreamAs({ redirectUri: callbackUrl }).start();
    upstream = await startUpstream(as, { openLists: true });
    redis = await startRedis();
    const key = path.join(await tmpDir('vmcpd-links-key-'), 'seal.key');
    await fsp.writeFile(key, `${crypto.randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
    const opts = { redis, backendUrl: upstream.url, backendName: 'up',
      extra: `  sealKeyFile: ${key}\n${linkConfig(idp, as, 'up', callbackUrl)}` };
    a = await startNode({ ...opts, port });
    b = await startNode(opts);
    tokens = { alice: await idp.token('alice'), bob: await idp.token('bob') };
  });

  after(async () => {
    for (const n of [a, b])
      if (n && !n.stopped)
        await n.stop();
    await upstream?.stop();
    await as?.stop();
    await idp?.stop();
    await redis?.kill();
  });

  test('a consent asked on node B completes on node A; both nodes send her link, never to bob', guarded(async () => {
    const r = await whoami(b, tokens.alice);
    assert.equal(r.isError, true, JSON.stringify(r));
    const url = /open (\S+) to connect it/.exec(r.content[0].text)?.[1];
    assert.ok(url?.startsWith(`http://${HOST}:${a.port}/oauth/start?consent=vmcpd-e-`), r.content[0].text);
    const w = await walk(url, { as: 'alice' });
    assert.equal(w.status, 200, w.text);
    for (const n of [b, a])
      assert.deepEqual((await whoami(n, tokens.alice)).content, [{ type: 'text', text: 'user alice' }]);
    for (const n of [a, b]) {
      const x = await whoami(n, tokens.bob);
      assert.equal(x.isError, true, JSON.stringify(x));
      assert.match(x.content[0].text, /^Backend up acts as your own account there/);
    }
    const calls = upstream.calls.filter((e) => e.rpc === 'tools/call');
    assert.deepEqual(calls.map((e) => e.sub), ['alice', 'alice']);
  }));
});
