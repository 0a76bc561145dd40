// A tiny MCP 2025-11-25 backend on the official SDK v1 (McpServer +
// StreamableHTTPServerTransport with sessions) for tests that need exact
// control.  Listens on 127.0.0.1 (PORT or any free port) at /mcp and
// prints "listening <port>" once it accepts.  With the argument "stdio"
// it serves stdin/stdout instead; with "sse" the 2024-11-05 HTTP+SSE
// transport (GET /sse, POST /messages) and prints "listening <port>".
//
// Tools: echo {message} -> "Echo: <message>"; fail {message} -> isError
// result; slow {ms, steps} -> sleeps, sending progress if asked, and
// stops early when cancelled; whoami {} -> "session <backend session
// id>"; cancels {} -> JSON text {started: [request id of each slow call],
// cancelled: [{id, reason} of each slow call cancelled]}, in this
// process, only if CANCELS_TOOL is set in the environment.  TOOL_PREFIX
// (environment) is put before every tool name.
//
// MAX_SESSIONS=N (env, HTTP mode): past N live sessions an initialize is
// answered 503 "Too many sessions", as real servers that cap their
// sessions do.  GET /sessions answers {"live", "peak", "refused",
// "closed"}.
//
// GET /seen answers [{method, rpc, sid, authorization, apiKey}] for every
// request to /mcp so far (HTTP method, JSON-RPC method, the
// Mcp-Session-Id, the Authorization and X-Api-Key headers it carried or
// null): what credentials vmcpd sent, which sessions it DELETEd.
//
// TLS_CERT and TLS_KEY (env, PEM file paths, HTTP mode): serve https.
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

const transports = new Map();
const maxSessions = Number(process.env.MAX_SESSIONS || 0);
const counts = { peak: 0, refused: 0, closed: 0 };
const P = process.env.TOOL_PREFIX || '';
const MODE = process.argv[2] || 'http';
const seen = { started: [], cancelled: [] };
const heard = [];

function newServer() {
  const server = new McpServer({ name: 'interop-backend', version: '1.0.0' },
    { capabilities: { logging: {} } });
  server.registerTool(`${P}echo`, {
    description: 'Echoes back the input string',
    inputSchema: { message: z.string() },
  }, async ({ message }) => ({ content: [{ type: 'text', text: `Echo: ${message}` }] }));
  server.registerTool(`${P}fail`, {
    description: 'Always fails with isError',
    inputSchema: { message: z.string() },
  }, async ({ message }) => ({ isError: true, content: [{ type: 'text', text: `failed: ${message}` }] }));
  server.registerTool(`${P}slow`, {
    description: 'Sleeps ms milliseconds in steps, with progress',
    inputSchema: { ms: z.number(), steps: z.number().default(1) },
  }, async ({ ms, steps }, extra) => {
    const token = extra._meta?.progressToken;
    const id = extra.requestId;
    seen.started.push(id);
    const aborted = new Promise((r) => extra.signal.addEventListener('abort', () => {
      seen.cancelled.push({ id, reason: extra.signal.reason });
      r();
    }, { once: true }));
    for (let i = 1; i <= steps && !extra.signal.aborted; i++) {
      let timer;
      await Promise.race([aborted, new Promise((r) => { timer = setTimeout(r, ms / steps); })]);
      clearTimeout(timer);
      if (extra.signal.aborted)
        break;
      if (token !== undefined)
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken: token, progress: i, total: steps },
        });
    }
    return { content: [{ type: 'text', text: `slept ${ms}` }] };
  });
  server.registerTool(`${P}whoami`, { description: 'The backend session id' },
    async (extra) => ({ content: [{ type: 'text', text: `session ${extra.sessionId}` }] }));
  if (process.env.CANCELS_TOOL)
    server.registerTool(`${P}cancels`, { description: 'The slow calls seen and cancelled' },
      async () => ({ content: [{ type: 'text', text: JSON.stringify(seen) }] }));
  return server;
}

async function readBody(req) {
  const chunks = [];
  for await (const c of req)
    chunks.push(c);
  const s = Buffer.concat(chunks).toString('utf8');
  return s === '' ? undefined : JSON.parse(s);
}

/* the 2024-11-05 HTTP+SSE transport: one server per GET stream */
const sseTransports = new Map();

async function handleSse(req, res) {
  const u = new URL(req.url, 'http://x');
  if (req.method === 'GET' && u.pathname === '/sse') {
    const t = new SSEServerTransport('/messages', res);
    sseTransports.set(t.sessionId, t);
    res.on('close', () => sseTransports.delete(t.sessionId));
    await newServer().connect(t);
    return;
  }
  const t = sseTransports.get(u.searchParams.get('sessionId'));
  if (req.method === 'POST' && u.pathname === '/messages' && t) {
    await t.handlePostMessage(req, res);
    return;
  }
  res.writeHead(404).end();
}

const tls = process.env.TLS_CERT && process.env.TLS_KEY ?
  { cert: fs.readFileSync(process.env.TLS_CERT), key: fs.readFileSync(process.env.TLS_KEY) } : null;
const httpServer = (tls ? https.createServer.bind(https, tls) : http.createServer)(async (req, res) => {
  if (MODE === 'sse') {
    await handleSse(req, res).catch(() => {
      if (!res.headersSent)
        res.writeHead(500).end();
    });
    return;
  }
  try {
    if (new URL(req.url, 'http://x').pathname === '/sessions') {
      res.writeHead(200, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ live: transports.size, ...counts }));
      return;
    }
    if (new URL(req.url, 'http://x').pathname === '/seen') {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(heard));
      return;
    }
    if (new URL(req.url, 'http://x').pathname !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    const sid = req.headers['mcp-session-id'];
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    heard.push({
      method: req.method, rpc: body?.method ?? null, sid: sid ?? null,
      authorization: req.headers.authorization ?? null, apiKey: req.headers['x-api-key'] ?? null,
    });
    let transport = sid ? transports.get(sid) : undefined;
    if (sid && !transport) {
      res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({
        jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' },
      }));
      return;
    }
    if (!transport && maxSessions > 0 && transports.size >= maxSessions) {
      counts.refused++;
      res.writeHead(503, { 'Content-Type': 'application/json' }).end(JSON.stringify({
        jsonrpc: '2.0', id: body?.id ?? null, error: { code: -32000, message: 'Too many sessions' },
      }));
      return;
    }
    if (!transport) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          transports.set(id, transport);
          counts.peak = Math.max(counts.peak, transports.size);
        },
      });
      transport.onclose = () => {
        if (transport.sessionId && transports.delete(transport.sessionId))
          counts.closed++;
      };
      await newServer().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  } catch (e) {
    if (!res.headersSent)
      res.writeHead(400, { 'Content-Type': 'application/json' }).end(JSON.stringify({
        jsonrpc: '2.0', id: null, error: { code: -32700, message: `Parse error: ${e.message}` },
      }));
  }
});

if (MODE === 'stdio') {
  await newServer().connect(new StdioServerTransport());
  process.stdin.on('end', () => process.exit(0));
} else {
  httpServer.listen(Number(process.env.PORT || 0), '127.0.0.1', () => {
    process.stdout.write(`listening ${httpServer.address().port}\n`);
  });
}
for (const sig of ['SIGTERM', 'SIGINT'])
  process.on(sig, () => process.exit(0));
