// Far more backends than the 64 vmcpd once capped a config at: 200
// entries (on four real backend processes, told apart by the query of
// their URL, so each entry is its own backend with its own sessions)
// are listed in full and routed to, the last one included.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { guarded, connectClient } from './lib/harness.mjs';
import { useMulti, startSpec, startMulti, listAll, textOf } from './lib/multi.mjs';

useMulti();

const N = 200;
const PROCS = 4;
const name = (i) => `b${String(i).padStart(3, '0')}`;

describe(`${N} backends behind one vmcpd`, () => {
  let daemon, client;

  before(async () => {
    const procs = [];
    for (let p = 0; p < PROCS; p++)
      procs.push(await startSpec({ label: `p${p}`, tools: ['t'] }));
    const backends = [];
    for (let i = 0; i < N; i++)
      backends.push({ name: name(i), url: `${procs[i % PROCS].url}?entry=${i}` });
    daemon = await startMulti({
      backends,
      // every entry has a tool "t": each is known by its backend's prefix
      aggregation: 'conflictResolution: prefix',
      operational: 'timeouts:\n  default: 60s',
    }, { timeout: 60000 });
    ({ client } = await connectClient(daemon.url, { timeout: 120000 }));
  });

  after(async () => {
    await client?.close().catch(() => {});
    if (daemon)
      await daemon.stop(20000);
  });

  test('every backend\'s tool is listed', guarded(async () => {
    const tools = (await listAll(client, 'listTools', 'tools', { maxPages: 100 }))
      .map((t) => t.name);
    assert.equal(tools.length, N, `${tools.length} tools`);
    for (let i = 0; i < N; i++)
      assert.ok(tools.includes(`${name(i)}_t`), `${name(i)}_t listed`);
  }));

  test('a call reaches the last backend, and the first', guarded(async () => {
    const last = await client.callTool({ name: `${name(N - 1)}_t`, arguments: { x: 'last' } },
      undefined, { timeout: 60000 });
    assert.equal(textOf(last), `p${(N - 1) % PROCS}:t:{"x":"last"}`);
    const first = await client.callTool({ name: `${name(0)}_t`, arguments: {} },
      undefined, { timeout: 60000 });
    assert.equal(textOf(first), 'p0:t:{}');
  }));
});
