import { test } from 'node:test';
import { startMulti, startSpec, useMulti, openGet, openSessionCaps } from './lib/multi.mjs';
import { sleep, rpc } from './lib/harness.mjs';
useMulti();
test('x', async () => {
  const dyn = await startSpec({ label: 'dyn', dynamic: true, tools: ['keep'], resources: [{ uri: 'test://dyn/doc', text: 'doc' }] });
  const other = await startSpec({ label: 'other', tools: ['clash'], prompts: ['p'] });
  const d = await startMulti({ backends: [{ name: 'dyn', url: dyn.url }, { name: 'other', url: other.url }],
    http: 'keepAlive: 1s', aggregation: 'conflictResolution: priority\nconflictResolutionConfig:\n  priorityOrder: [other, dyn]' });
  const { sid } = await openSessionCaps(d.port);
  const g = await openGet(d.port, sid);
  await rpc(d.port, sid, 'tools/list', {});
  for (let i = 0; i < 100 && (await dyn.stats()).getStreams < 1; i++) await sleep(100);
  console.log(JSON.stringify(await dyn.stats()));
  let r = await rpc(d.port, sid, 'tools/call', { name: 'add_tool', arguments: { name: 'clash' } });
  await sleep(1500);
  console.log('after clash', g.messages().map(m => m.method));
  await Promise.all(['r1', 'r2', 'r3'].map(n => rpc(d.port, sid, 'tools/call', { name: 'add_tool', arguments: { name: n } })));
  await sleep(2000);
  console.log('after rapid', g.messages().map(m => m.method));
  r = await rpc(d.port, sid, 'tools/list', {});
  console.log(r.json.result.tools.map(t => t.name));
  await sleep(3000);
  r = await rpc(d.port, sid, 'tools/list', {});
  console.log(r.json.result.tools.map(t => t.name));
  await d.stop();
  console.log(d.proc.output.slice(-3000));
});
