// Pinned definitions across nodes (sessionStorage.provider redis;
// vmcpd(8) "Pinned definitions"): two nodes on one Redis before one
// backend, pinning enforce.
// - the first node to pin a definition wins: node B, started after the
//   backend changed a tool, holds node A's pin (vmcpctl pins on B's
//   state shows A's hash) and withholds the tool as node A does;
// - a change seen on both is withheld on both;
// - an approval taken on node A (vmcpctl with A's config, written to
//   Redis too) reaches node B: its builder lists the backend again, the
//   tool is served there with its new text and B's session gets
//   tools/list_changed.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';

import {
  Daemon, HOST, KEEP_NAMES, configText, guarded, rpc, waitFor, tmpDir, freePort, vmcpctl,
} from './lib/harness.mjs';
import { useMulti, openSessionCaps, openGet } from './lib/multi.mjs';
import { startRedis } from './lib/cluster.mjs';
import { startPinBackend } from './lib/pin-backend.mjs';

useMulti();

/* a node on redis before b, pinning enforce */
async function startPinNode(redis, b) {
  const dir = await tmpDir('vmcpd-pinnode-');
  const d = new Daemon(dir, path.join(dir, 'vmcpd.yaml'), { workers: 1 });
  d.diagPort = await freePort();
  await d.writeConfig(configText({
    name: 'cluster', portFile: d.portFile, stateDir: d.stateDir, backendUrl: b.url,
    backendName: 'pinned', workers: 1,
    aggregation: [...KEEP_NAMES, '  pinning:', '    mode: enforce'],
    extra: ['sessionStorage:', '  provider: redis', `  address: ${HOST}:${redis.port}`, '']
      .join('\n'),
  }).replace('daemon:\n', `daemon:\n  diagnostics: ${HOST}:${d.diagPort}\n`));
  await d.start({ timeout: 30000 });
  return d;
}

const pinsOf = async (d) => {
  const r = await vmcpctl(['-f', d.cfg, 'pins', '-j'], { stateDir: d.stateDir });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
};
const pinOf = async (d, name) => (await pinsOf(d)).find((p) => p.name === name);
const toolNames = async (d, sid) =>
  (await rpc(d.port, sid, 'tools/list', {})).json.result.tools.map((t) => t.name).sort();

describe('pinned definitions on two nodes with Redis', () => {
  let redis, b, na, nb, sa, sb, gb;

  before(async () => {
    redis = await startRedis();
    b = await startPinBackend();
    na = await startPinNode(redis, b);
    ({ sid: sa } = await openSessionCaps(na.port));
    assert.deepEqual(await toolNames(na, sa), ['calc', 'stable']);
    await waitFor('node A\'s pins', async () => (await pinOf(na, 'calc'))?.state === 'pinned');
  });

  after(async () => {
    gb?.close();
    for (const d of [na, nb])
      if (d && !d.stopped)
        await d.stop();
    if (redis?.proc && !redis.proc.exited)
      await redis.kill();
  });

  test('the first pin wins: node B, started after a change, holds node A\'s pin and withholds',
    guarded(async () => {
      const pinned = (await pinOf(na, 'stable')).hash;
      assert.match(pinned, /^[0-9a-f]{64}$/);
      b.tools.stable.description = 'Changed before node B started';
      nb = await startPinNode(redis, b);
      ({ sid: sb } = await openSessionCaps(nb.port));
      gb = await openGet(nb.port, sb);
      await waitFor('node B holds node A\'s pin', async () =>
        (await pinOf(nb, 'stable'))?.hash === pinned, { timeout: 15000 });
      // both hear the backend's list_changed: both list the change
      await waitFor('both nodes listening to the backend', () => b.streams.size >= 2,
        { timeout: 15000 });
      b.notify();
      await waitFor('withheld on both nodes', async () =>
        !(await toolNames(na, sa)).includes('stable') &&
        !(await toolNames(nb, sb)).includes('stable'), { timeout: 15000 });
      assert.equal((await pinOf(nb, 'stable')).state, 'pending');
    }));

  test('an approval on node A reaches node B: served there, with list_changed', guarded(async () => {
    const before = gb.messages('notifications/tools/list_changed').length;
    const r = await vmcpctl(['-f', na.cfg, 'pins', 'approve', 'pinned', 'stable'],
      { stateDir: na.stateDir });
    assert.equal(r.code, 0, r.stderr);
    await waitFor('node B\'s session told', () =>
      gb.messages('notifications/tools/list_changed').length > before, { timeout: 20000 });
    assert.deepEqual(await toolNames(nb, sb), ['calc', 'stable']);
    const t = (await rpc(nb.port, sb, 'tools/list', {})).json.result.tools
      .find((x) => x.name === 'stable');
    assert.equal(t.description, 'Changed before node B started');
    assert.equal((await pinOf(nb, 'stable')).state, 'pinned');
  }));
});
