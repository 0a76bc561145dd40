// A raw MCP 2025-11-25 backend (node:http, no SDK) for the list_changed
// storm and the large answers (tests/interop/storm.test.mjs,
// tests/bench/storm.mjs).  In this process, on a free loopback port.
//
// - GET /mcp: an SSE stream, kept; storm(n, perTick) writes n
//   notifications/tools/list_changed on every stream, perTick of them
//   each millisecond tick, as fast as it can.
// - tools/list: counted (lists()); the tools are t0..t<ntools-1> (each
//   with a description of descLen bytes), big, and one named
//   gen<generation>: setGeneration(g) changes the list, so a test sees
//   which list the view has (each name after prefix, if given).
// - tools/call big {bytes}: a JSON answer whose text is that many
//   bytes; with holdBig set, each answer sends all but its last bytes
//   and waits for releaseBig() (so that several are buffered at once).
import http from 'node:http';
import path from 'node:path';

import { Daemon, HOST, LEGACY_VERSION, KEEP_NAMES, tmpDir, freePort } from './harness.mjs';
import { serve, jsonBody, rawGetOrDelete } from './multi.mjs';

/*
 * vmcpd in front of backends "storm" (urls[0]), "storm2", ... with the
 * diagnostics listener (d.diag, its port); extra: YAML lines after the
 * backends; bin: another vmcpd.
 */
export async function startStormDaemon(urls, { workers = 2, extra = [], bin } = {}) {
  const dir = await tmpDir('vmcpd-storm-');
  const diag = await freePort();
  const d = new Daemon(dir, path.join(dir, 'vmcpd.yaml'), { workers, bin });
  const backends = [].concat(urls).flatMap((url, i) => [`  - name: storm${i > 0 ? i + 1 : ''}`,
    `    url: ${url}`, '    transport: streamable-http']);
  await d.writeConfig(['daemon:', `  listen: ${HOST}:0`, `  portFile: ${d.portFile}`,
    `  workers: ${workers}`, `  stateDir: ${d.stateDir}`, `  diagnostics: ${HOST}:${diag}`,
    'backends:', ...backends, ...KEEP_NAMES, ...extra].join('\n') + '\n');
  await d.start({ timeout: 30000 });
  d.diag = diag;
  return d;
}

export async function startStorm({ ntools = 20, descLen = 200, name = 'storm', prefix = '' } = {}) {
  const b = {
    streams: new Set(), counts: {}, generation: 0, holdBig: false, held: [], bigStarted: 0,
  };
  const tools = () => {
    const t = [];
    for (let i = 0; i < ntools; i++)
      t.push({ name: `${prefix}t${i}`, description: 'd'.repeat(descLen),
        inputSchema: { type: 'object' } });
    t.push({ name: `${prefix}gen${b.generation}`, inputSchema: { type: 'object' } });
    t.push({ name: `${prefix}big`, inputSchema: { type: 'object' } });
    return t;
  };
  const srv = http.createServer((req, res) => {
    if (rawGetOrDelete(req, res, b.streams))
      return;
    jsonBody(req, res).then((m) => {
      if (m === undefined)
        return undefined;
      b.counts[m.method ?? 'response'] = (b.counts[m.method ?? 'response'] ?? 0) + 1;
      if (m.id === undefined)
        return res.writeHead(202).end();
      const json = (o) => res.writeHead(200, { 'Content-Type': 'application/json',
        'Mcp-Session-Id': `${name}-1` }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, ...o }));
      switch (m.method) {
      case 'initialize':
        return json({ result: { protocolVersion: LEGACY_VERSION,
          capabilities: { tools: { listChanged: true } }, serverInfo: { name, version: '1' } } });
      case 'tools/list':
        return json({ result: { tools: tools() } });
      case 'tools/call':
        if (m.params?.name === `${prefix}big`)
          return big(m, res);
        return json({ result: { content: [{ type: 'text', text: `${name}:${m.params?.name}` }] } });
      default:
        return json({ error: { code: -32601, message: `no ${m.method}` } });
      }
    });
  });
  /* the answer's text is bytes long; held before its last 64 bytes */
  function big(m, res) {
    const bytes = Number(m.params?.arguments?.bytes ?? 1024);
    const head = `{"jsonrpc":"2.0","id":${JSON.stringify(m.id)},"result":{"content":[{"type":"text","text":"`;
    const tail = '"}]}}';
    const text = Buffer.alloc(bytes, 'x');
    const body = Buffer.concat([Buffer.from(head), text, Buffer.from(tail)]);
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': body.length,
      'Mcp-Session-Id': `${name}-1` });
    b.bigStarted++;
    res.on('error', () => {});
    if (!b.holdBig)
      return res.end(body);
    res.write(body.subarray(0, body.length - 64));
    b.held.push(() => res.end(body.subarray(body.length - 64)));
    return undefined;
  }
  const port = await serve(srv);
  b.url = `http://${HOST}:${port}/mcp`;
  b.lists = () => b.counts['tools/list'] ?? 0;
  b.calls = () => b.counts['tools/call'] ?? 0;
  b.setGeneration = (g) => { b.generation = g; };
  b.releaseBig = () => {
    b.holdBig = false;
    for (const f of b.held.splice(0))
      f();
  };
  const note = `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0',
    method: 'notifications/tools/list_changed' })}\n\n`;
  b.notify = () => {
    for (const s of b.streams)
      s.write(note);
  };
  /* n notifications on every stream, perTick a millisecond tick */
  b.storm = (n, perTick = 1) => new Promise((resolve) => {
    let sent = 0;
    const tick = () => {
      for (let i = 0; i < perTick && sent < n; i++, sent++)
        b.notify();
      if (sent < n)
        setTimeout(tick, 1);
      else
        resolve(sent);
    };
    tick();
  });
  return b;
}
