import { test } from 'node:test';
import { startMulti, startSpec, startEverythingHttp, useMulti, NODE, EVERYTHING, MEMORY, FILESYSTEM, procChildren, cmdline } from './lib/multi.mjs';
import { connectClient, rpc, openSession } from './lib/harness.mjs';
useMulti();
test('x', async () => {
  const t0 = Date.now();
  const eh = await startEverythingHttp();
  console.log('everything http', Date.now() - t0);
  const d = await startMulti({
    backends: [
      { name: 'everything', command: NODE, args: [EVERYTHING, 'stdio'] },
      { name: 'remote', url: eh.url },
      { name: 'memory', command: NODE, args: [MEMORY], env: { MEMORY_FILE_PATH: '/tmp/fsroot/mem.jsonl' } },
      { name: 'files', command: NODE, args: [FILESYSTEM, '/tmp/fsroot'] },
    ],
    aggregation: 'conflictResolution: prefix\nconflictResolutionConfig:\n  prefixMode: onConflict\n',
  });
  console.log('daemon', Date.now() - t0, procChildren(d.pid));
  for (const c of procChildren(d.pid)) console.log(c, cmdline(c.pid), procChildren(c.pid).map(x => [x, cmdline(x.pid)]));
  const { client } = await connectClient(d.url, { capabilities: { elicitation: {}, sampling: {}, roots: {} } });
  console.log('connected', Date.now() - t0);
  const tl = await client.listTools();
  console.log(tl.tools.map(t => t.name).join(' '), Date.now() - t0);
  const pl = await client.listPrompts();
  console.log(pl.prompts.map(t => t.name).join(' '));
  const rl = await client.listResources();
  console.log(rl.resources.length, rl.resources.slice(0,3).map(r => r.uri), rl.nextCursor);
  const rt = await client.listResourceTemplates();
  console.log(rt.resourceTemplates.map(r => r.uriTemplate));
  console.log(client.getServerCapabilities());
  await d.stop();
  console.log(d.proc.output.slice(-3000));
});
