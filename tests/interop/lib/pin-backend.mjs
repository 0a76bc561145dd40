// A raw MCP 2025-11-25 backend (node:http, no SDK) whose definitions a
// test changes (tests/interop/pins.test.mjs, cluster_pins.test.mjs): in
// this process, on a free loopback port.
//
// - tools "calc" and "stable", prompt "greet", resource template
//   "notes://{id}"; b.tools.calc, b.prompts.greet, b.templates.notes are
//   the objects listed: a test changes them (b.tools.calc.description =
//   ...) and calls b.notify(), which writes the tools, prompts and
//   resources list_changed on every GET stream open;
// - tools/call answers "<name> ran"; prompts/get a one-message prompt;
//   resources/read "a note";
// - b.stop() takes it down, b.start() brings it back on its port.
import http from 'node:http';

import { HOST, LEGACY_VERSION } from './harness.mjs';
import { serve, jsonBody, rawGetOrDelete } from './multi.mjs';

export async function startPinBackend({ name = 'pinned' } = {}) {
  const b = {
    streams: new Set(),
    tools: {
      calc: { name: 'calc', description: 'Adds two numbers',
        inputSchema: { type: 'object', properties: { a: { type: 'number' } } } },
      stable: { name: 'stable', description: 'Never changes', inputSchema: { type: 'object' } },
    },
    prompts: {
      greet: { name: 'greet', description: 'Says hello', arguments: [] },
    },
    templates: {
      notes: { uriTemplate: 'notes://{id}', name: 'notes', description: 'A note by id' },
    },
  };
  /* the result of each method served, from the request */
  const results = {
    initialize: () => ({ protocolVersion: LEGACY_VERSION,
      capabilities: { tools: { listChanged: true }, prompts: { listChanged: true },
        resources: { listChanged: true } },
      serverInfo: { name, version: '1' } }),
    'tools/list': () => ({ tools: Object.values(b.tools) }),
    'prompts/list': () => ({ prompts: Object.values(b.prompts) }),
    'resources/list': () => ({ resources: [] }),
    'resources/templates/list': () => ({ resourceTemplates: Object.values(b.templates) }),
    'resources/read': (m) => ({ contents: [{ uri: m.params?.uri, text: 'a note' }] }),
    'tools/call': (m) => ({ content: [{ type: 'text', text: `${m.params?.name} ran` }] }),
    'prompts/get': () => ({ messages: [{ role: 'user', content: { type: 'text', text: 'hello' } }] }),
  };
  const srv = http.createServer((req, res) => {
    if (rawGetOrDelete(req, res, b.streams))
      return;
    jsonBody(req, res).then((m) => {
      if (m !== undefined && m.id === undefined)
        res.writeHead(202).end();
      if (m?.id === undefined)
        return;
      const f = results[m.method];
      const body = f ? { result: f(m) } : { error: { code: -32601, message: `no ${m.method}` } };
      res.writeHead(200, { 'Content-Type': 'application/json', 'Mcp-Session-Id': `${name}-1` })
        .end(JSON.stringify({ jsonrpc: '2.0', id: m.id, ...body }));
    });
  });
  const port = await serve(srv);
  b.url = `http://${HOST}:${port}/mcp`;
  /* down (every connection cut) and up again on its port */
  b.stop = async () => {
    srv.closeAllConnections();
    await new Promise((r) => srv.close(r));
  };
  b.start = () => new Promise((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(port, HOST, resolve);
  });
  b.notify = () => {
    for (const method of ['notifications/tools/list_changed',
      'notifications/prompts/list_changed', 'notifications/resources/list_changed'])
      for (const s of b.streams)
        s.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method })}\n\n`);
  };
  return b;
}
