import { test } from 'node:test';
import { startMulti, startSpec, useMulti, openGet, openSessionCaps, postStream, multiConfig } from './lib/multi.mjs';
import { sleep, rpc, httpRequest, mcpHeaders } from './lib/harness.mjs';
useMulti();
test('x', async () => {
  const dyn = await startSpec({ label: 'dyn', dynamic: true, tools: ['keep'], resources: [{ uri: 'test://dyn/doc', text: 'doc' }] });
  const other = await startSpec({ label: 'other', tools: ['keep2'], prompts: ['p'] });
  const opts = { backends: [{ name: 'dyn', url: dyn.url }, { name: 'other', url: other.url }],
    http: 'keepAlive: 1s\nmaxBodySize: 64KiB', aggregation: 'conflictResolution: prefix\nconflictResolutionConfig:\n  prefixMode: onConflict' };
  const d = await startMulti(opts);
  const A = (await openSessionCaps(d.port)).sid;
  const B = (await openSessionCaps(d.port)).sid;
  const ga = await openGet(d.port, A), gb = await openGet(d.port, B);
  await rpc(d.port, A, 'tools/list', {}); for (let i=0;i<100 && (await dyn.stats()).getStreams<1;i++) await sleep(100); console.log('listening', JSON.stringify(await dyn.stats()));
  console.log('subA', (await rpc(d.port, A, 'resources/subscribe', { uri: 'test://dyn/doc' })).text);
  console.log('subB', (await rpc(d.port, B, 'resources/subscribe', { uri: 'test://dyn/doc' })).text);
  console.log((await rpc(d.port, A, 'tools/call', { name: 'touch', arguments: { uri: 'test://dyn/doc' } })).text); await sleep(800);
  console.log('A', ga.messages().map(m => m.method), 'B', gb.messages().map(m => m.method));
  console.log('unsubA', (await rpc(d.port, A, 'resources/unsubscribe', { uri: 'test://dyn/doc' })).text);
  console.log(JSON.stringify(await dyn.stats()));
  console.log((await rpc(d.port, A, 'tools/call', { name: 'touch', arguments: { uri: 'test://dyn/doc' } })).text);
  await sleep(800);
  console.log('A', ga.messages().map(m => m.method), 'B', gb.messages().map(m => m.method));
  // malformed
  const raw = (body, extra={}) => httpRequest(d.port, { headers: mcpHeaders({ session: A, ...extra }), body });
  let r = await raw('{not json'); console.log('badjson', r.status, r.text);
  r = await raw('{"foo":1}'); console.log('notrpc', r.status, r.text);
  r = await raw('[{"jsonrpc":"2.0","id":1,"method":"ping"}]'); console.log('batch', r.status, r.text);
  r = await rpc(d.port, A, 'tools/frobnicate', {}); console.log('unknown', r.status, r.text);
  r = await rpc(d.port, A, 'tools/call', { arguments: {} }); console.log('noname', r.status, r.text);
  r = await rpc(d.port, A, 'tools/call', [1,2]); console.log('arrparams', r.status, r.text);
  r = await rpc(d.port, A, 'resources/read', {}); console.log('nouri', r.status, r.text);
  r = await rpc(d.port, A, 'resources/read', {uri: 'nope://x'}); console.log('unknownuri', r.status, r.text);
  r = await rpc(d.port, A, 'logging/setLevel', {level: 'loud'}); console.log('badlevel', r.status, r.text);
  r = await rpc(d.port, A, 'prompts/get', {name: 'nope'}); console.log('badprompt', r.status, r.text);
  r = await rpc(d.port, A, 'tools/list', {cursor: 'bogus'}); console.log('badcursor', r.status, r.text);
  r = await rpc(d.port, A, 'tools/list', {cursor: 7}); console.log('badcursor2', r.status, r.text);
  r = await raw(JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping', params: { pad: 'x'.repeat(100000) } })); console.log('big', r.status, r.text.slice(0, 300));
  r = await rpc(d.port, A, 'tools/call', { name: 'keep', arguments: { x: 'y'.repeat(60000) } }); console.log('justunder', r.status, r.text.slice(0, 100));
  await d.stop();
  // restart with changed config on same stateDir
  opts.aggregation = 'conflictResolution: prefix\nconflictResolutionConfig:\n  prefixMode: always';
  await d.writeConfig(multiConfig({ portFile: d.portFile, stateDir: d.stateDir, ...opts }));
  await d.start();
  const C = (await openSessionCaps(d.port)).sid;
  r = await rpc(d.port, C, 'tools/list', {}); console.log('after restart', r.json.result.tools.map(t => t.name));
  await d.stop();
  console.log(d.proc.output.slice(-3000));
});
