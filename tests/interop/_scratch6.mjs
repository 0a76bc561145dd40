import { test } from 'node:test';
import { startMulti, startSpec, useMulti, openGet, openSessionCaps, postStream, NODE, EVERYTHING } from './lib/multi.mjs';
import { sleep, rpc, httpRequest, mcpHeaders, connectClient, workerOf } from './lib/harness.mjs';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
useMulti();
test('x', async () => {
  const asker = await startSpec({ label: 'asker', elicit: true, dynamic: true });
  const d = await startMulti({ backends: [{ name: 'asker', url: asker.url }, { name: 'everything', command: NODE, args: [EVERYTHING, 'stdio'] }],
    aggregation: 'conflictResolutionConfig:\n  prefixMode: onConflict' });
  // no capability
  const { client } = await connectClient(d.url, { capabilities: {} });
  let t = Date.now();
  try { console.log('nocap ask', JSON.stringify(await client.callTool({ name: 'ask', arguments: { question: 'q?' } })), Date.now() - t); } catch (e) { console.log('nocap ask err', e.code, e.message, Date.now() - t); }
  t = Date.now();
  try { console.log('nocap trig', JSON.stringify(await client.callTool({ name: 'trigger-elicitation-request', arguments: {} })).slice(0, 500), Date.now() - t); } catch (e) { console.log('nocap trig err', e.code, e.message, Date.now() - t); }
  const c2 = (await connectClient(d.url, { capabilities: { elicitation: {} } })).client;
  c2.setRequestHandler(ElicitRequestSchema, async (req, extra) => { console.log('handler id', extra.requestId, JSON.stringify(req.params)); return { action: 'accept', content: { answer: '42' } }; });
  console.log('cap ask', JSON.stringify(await c2.callTool({ name: 'ask', arguments: { question: 'q?' } })));
  // raw cross worker
  const { sid } = await openSessionCaps(d.port, { elicitation: {} });
  const { sid: other } = await openSessionCaps(d.port, { elicitation: {} });
  for (let round = 0; round < 6; round++) {
    const s = await postStream(d.port, sid, 'tools/call', { name: 'ask', arguments: { question: `round ${round}` } });
    const w = workerOf(s);
    const req = await s.until('elicitation', (x) => x.messages('elicitation/create')[0]);
    console.log('call on', w, s.headers['content-type'], 'req', JSON.stringify(req));
    const bad = await httpRequest(d.port, { headers: mcpHeaders({ session: other }), body: { jsonrpc: '2.0', id: req.id, result: { action: 'accept', content: { answer: 'intruder' } } } });
    console.log('intruder', bad.status, bad.text, workerOf(bad));
    await sleep(200);
    const ans = await httpRequest(d.port, { headers: mcpHeaders({ session: sid }), body: { jsonrpc: '2.0', id: req.id, result: { action: 'accept', content: { answer: `r${round}` } } } });
    console.log('answer', ans.status, ans.text, workerOf(ans));
    const resp = await s.until('response', (x) => x.events.find(e => e.msg && e.msg.id !== undefined && !e.msg.method));
    console.log('resp', JSON.stringify(resp.msg), JSON.stringify(s.events.map(e => e.id)));
    const again = await httpRequest(d.port, { headers: mcpHeaders({ session: sid }), body: { jsonrpc: '2.0', id: req.id, result: { action: 'accept', content: { answer: `late` } } } });
    console.log('again', again.status, again.text);
  }
  await d.stop();
  console.log(d.proc.output.slice(-3000));
});
