// The default configuration (etc/vmcpd.yaml, compiled into vmcpd) runs
// as shipped: its two demo backends over stdio, started from the repo
// root.  Only listen (port 0 + portFile) and stateDir (a temp dir) are
// changed, so that the test runs anywhere and beside other daemons.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { guarded, connectClient, tmpDir, run, Daemon, ROOT, VMCPD_BIN } from './lib/harness.mjs';
import { useMulti, listAll, textOf } from './lib/multi.mjs';

useMulti();

const SRC = path.join(ROOT, 'etc/vmcpd.yaml');

describe('the embedded default config', () => {
  let daemon, sdk;

  before(async () => {
    const text = fs.readFileSync(SRC, 'utf8');
    const dir = await tmpDir('vmcpd-demo-');
    const cfg = path.join(dir, 'vmcpd.yaml');
    const portFile = path.join(dir, 'port');
    const listen = /^( {2}listen: )127\.0\.0\.1:4483( .*)?$/m;
    const state = /^( {2}stateDir: )\.\/var( .*)?$/m;
    assert.match(text, listen, 'daemon.listen as expected');
    assert.match(text, state, 'daemon.stateDir as expected');
    fs.writeFileSync(cfg, text
      .replace(listen, `$1127.0.0.1:0\n  portFile: ${portFile}`)
      .replace(state, `$1${path.join(dir, 'state')}`));
    // workers: auto, one per online core
    const ncpu = Number((await run('getconf', ['_NPROCESSORS_ONLN'])).stdout.trim());
    assert.ok(ncpu >= 1);
    daemon = new Daemon(dir, cfg, { workers: ncpu });
    await daemon.start({ timeout: 30000 });	// cwd: the repo root
    sdk = await connectClient(daemon.url, { name: 'demo', timeout: 30000 });
  });

  after(async () => {
    await sdk?.client.close().catch(() => {});
    if (daemon)
      await daemon.stop();
  });

  test('etc/vmcpd.yaml is what vmcpd embeds, and it checks', guarded(async () => {
    const bin = fs.readFileSync(VMCPD_BIN);
    assert.ok(bin.includes(fs.readFileSync(SRC)), `${VMCPD_BIN} embeds etc/vmcpd.yaml as it is`);
    const r = await run(VMCPD_BIN, ['-n', '-f', SRC]);
    assert.equal(r.code, 0, r.stderr);
  }));

  test('both demo backends\' tools are listed; echo is called', guarded(async () => {
    assert.equal(sdk.client.getServerVersion().name, 'vmcpd');
    const names = (await listAll(sdk.client, 'listTools', 'tools')).map((t) => t.name);
    for (const n of ['echo', 'get-sum', 'create_entities', 'read_graph'])
      assert.ok(names.includes(n), `${n} listed: ${names}`);
    const r = await sdk.client.callTool({ name: 'echo', arguments: { message: 'demo ✓' } });
    assert.equal(textOf(r), 'Echo: demo ✓');
    const s = await sdk.client.callTool({ name: 'get-sum', arguments: { a: 2, b: 40 } });
    assert.equal(textOf(s), 'The sum of 2 and 40 is 42.');
    // the composite over both demo backends
    assert.ok(names.includes('echo_sum'), `echo_sum listed: ${names}`);
    const c = await sdk.client.callTool({ name: 'echo_sum', arguments: { note: 'demo', a: 40 } });
    assert.deepEqual(c.structuredContent, { echo: 'Echo: demo', sum: 'The sum of 40 and 2 is 42.' });
    // a stdio bridge per backend
    const bridges = (await daemon.childProcs()).filter((c) => c.comm === 'vmcpd-bridge');
    assert.equal(bridges.length, 2);
  }));
});
