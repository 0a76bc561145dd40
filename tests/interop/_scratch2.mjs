import { test } from 'node:test';
import { startMulti, startSpec, startEverythingHttp, useMulti, NODE, EVERYTHING, MEMORY, FILESYSTEM, procChildren, cmdline } from './lib/multi.mjs';
import { connectClient, rpc, openSession } from './lib/harness.mjs';
import { ElicitRequestSchema, CreateMessageRequestSchema, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
useMulti();
test('x', async () => {
  const t0 = Date.now();
  const d = await startMulti({
    backends: [
      { name: 'everything', command: NODE, args: [EVERYTHING, 'stdio'] },
      { name: 'memory', command: NODE, args: [MEMORY], env: { MEMORY_FILE_PATH: '/tmp/fsroot/mem.jsonl' } },
      { name: 'files', command: NODE, args: [FILESYSTEM, '/tmp/fsroot'] },
    ],
    aggregation: 'conflictResolution: prefix\nconflictResolutionConfig:\n  prefixMode: onConflict\n',
  });
  const { client } = await connectClient(d.url, { capabilities: { elicitation: {}, sampling: {}, roots: {listChanged: true} } });
  client.setRequestHandler(ElicitRequestSchema, async (req) => { console.log('ELICIT', JSON.stringify(req.params).slice(0,200)); return { action: 'accept', content: { name: 'Ada', check: true, firstLine: 'x', integer: 3, number: 1.5, email: 'a@b.c', uri: 'https://x.y', date: '2024-01-01', datetime: '2024-01-01T00:00:00Z', untitledSingleSelectEnum: 'option1', titledSingleSelectEnum: 'option1', legacyTitledEnum: 'option1', untitledMultipleSelectEnum: ['option1'], titledMultipleSelectEnum: ['option1'] } }; });
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => { console.log('SAMPLE', JSON.stringify(req.params).slice(0,300)); return { model: 'test-model', role: 'assistant', content: { type: 'text', text: 'sampled!' } }; });
  client.setRequestHandler(ListRootsRequestSchema, async () => { console.log('ROOTS'); return { roots: [{ uri: 'file:///tmp/rootA', name: 'A' }] }; });
  const show = async (what, p) => { try { const r = await p; console.log(what, JSON.stringify(r).slice(0, 600)); } catch (e) { console.log(what, 'ERR', e.code, e.message); } };
  await show('elicit', client.callTool({ name: 'trigger-elicitation-request', arguments: {} }));
  await show('sample', client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hi', maxTokens: 5 } }));
  await show('roots', client.callTool({ name: 'get-roots-list', arguments: {} }));
  await show('complete', client.complete({ ref: { type: 'ref/prompt', name: 'completable-prompt' }, argument: { name: 'department', value: 'E' } }));
  await show('complete2', client.complete({ ref: { type: 'ref/prompt', name: 'completable-prompt' }, argument: { name: 'name', value: '' }, context: { arguments: { department: 'Sales' } } }));
  await show('prompt', client.getPrompt({ name: 'args-prompt', arguments: { city: 'Paris', state: 'TX' } }));
  await show('read', client.readResource({ uri: 'demo://resource/static/document/features.md' }));
  await show('readtmpl', client.readResource({ uri: 'demo://resource/dynamic/text/3' }));
  await show('mem', client.callTool({ name: 'create_entities', arguments: { entities: [{ name: 'vmcpd', entityType: 'daemon', observations: ['aggregates'] }] } }));
  await show('graph', client.callTool({ name: 'read_graph', arguments: {} }));
  await show('write', client.callTool({ name: 'write_file', arguments: { path: '/tmp/fsroot/a.txt', content: 'hello fs' } }));
  await show('readf', client.callTool({ name: 'read_text_file', arguments: { path: '/tmp/fsroot/a.txt' } }));
  await show('setlevel', client.setLoggingLevel('debug'));
  await d.stop();
  console.log(d.proc.output.slice(-2000));
});
