// A configurable MCP 2025-11-25 backend on the official SDK v1 (McpServer
// + StreamableHTTPServerTransport with sessions), for the aggregation,
// notification, relay and failure tests.  The spec comes as JSON in the
// SPEC environment variable; it listens on 127.0.0.1 (any free port) at
// /mcp and prints "listening <port>" once it accepts.
//
// Spec (every key optional):
//   label      a tag put in every answer, so a test sees who answered
//   tools      [name | {name, description, annotations}]: each answers
//              "<label>:<name>:<arguments as JSON>"
//   manyTools  N: tools t00000..t(N-1), same answer
//   prompts    [name]: each takes a required "who" (completable:
//              alice, albert, bob) and answers "<label>:<name>:<who>"
//   resources  [{uri, text}]: readable, subscribable
//   templates  [{name, uriTemplate}]: a read answers
//              "<label>:<the uri read>"; each variable completes (alpha,
//              alpine, beta)
//   dynamic    true: tools add_tool {name}, remove_tool {name},
//              add_prompt {name}, remove_prompt {name} change the lists of
//              every session of this backend (each gets list_changed);
//              touch {uri} sends resources/updated to every session
//              subscribed to uri
//   elicit     true: tool ask {question} sends elicitation/create on the
//              call's stream (whatever the client declared) and answers
//              "answer <result as JSON>", or isError with the error
//   slow       true: tool slow {ms} answers "slept <ms>" after ms
//   hang       true: tool hang {} never answers
//   memory     true: tools remember {note} and recall {}: notes kept per
//              backend session (per Mcp-Session-Id), as a backend keeping
//              a cart or a shell per session does; recall answers
//              "<label>:recall:<the session's notes as a JSON array>"
//   port       the port to listen on (default 0: any free port)
//
// GET /stats answers {sessions, getStreams, getOpened, subscriptions,
// methods, deletes}: sessions alive, standalone GET streams open and
// ever opened, subscriptions held, the POSTs seen by
// "<MCP-Protocol-Version header or none> <method, or response>", and the
// DELETE requests (of a live session or not).
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import {
  ElicitResultSchema, SubscribeRequestSchema, UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

const spec = JSON.parse(process.env.SPEC || '{}');
const label = spec.label || 'backend';
const transports = new Map();
const instances = new Set();	// {mcp, tools: Map, prompts: Map, subs: Set}
const dynTools = new Set();
const dynPrompts = new Set();
let getStreams = 0;
let getOpened = 0;
let deletes = 0;
const methods = {};

const text = (t) => ({ content: [{ type: 'text', text: t }] });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function toolAnswer(name) {
  return async (args) => text(`${label}:${name}:${JSON.stringify(args ?? {})}`);
}

function addTool(inst, name) {
  if (inst.tools.has(name))
    return;
  inst.tools.set(name, inst.mcp.registerTool(name, {
    description: `dynamic tool ${name}`,
    inputSchema: { x: z.string().optional() },
  }, toolAnswer(name)));
}

function addPrompt(inst, name) {
  if (inst.prompts.has(name))
    return;
  inst.prompts.set(name, inst.mcp.registerPrompt(name, {
    description: `prompt ${name}`,
    argsSchema: { who: completable(z.string(), (v) =>
      ['alice', 'albert', 'bob'].filter((n) => n.startsWith(v ?? ''))) },
  }, ({ who }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `${label}:${name}:${who}` } }],
  })));
}

function newServer() {
  const caps = { logging: {} };
  if (spec.resources || spec.templates || spec.dynamic)
    caps.resources = { subscribe: true, listChanged: true };
  const mcp = new McpServer({ name: `spec-${label}`, version: '1.0.0' }, { capabilities: caps });
  const inst = { mcp, tools: new Map(), prompts: new Map(), subs: new Set() };

  for (const t of spec.tools || []) {
    const d = typeof t === 'string' ? { name: t } : t;
    const cfg = {
      description: d.description ?? `tool ${d.name} of ${label}`,
      inputSchema: { x: z.string().optional() },
    };
    if (d.annotations)
      cfg.annotations = d.annotations;
    mcp.registerTool(d.name, cfg, toolAnswer(d.name));
  }
  for (let i = 0; i < (spec.manyTools || 0); i++) {
    const name = `t${String(i).padStart(5, '0')}`;
    mcp.registerTool(name, { description: `many ${i}`, inputSchema: { x: z.string().optional() } },
      toolAnswer(name));
  }
  for (const p of spec.prompts || [])
    addPrompt(inst, p);
  for (const r of spec.resources || [])
    mcp.registerResource(r.uri, r.uri, { mimeType: 'text/plain' }, async (uri) => ({
      contents: [{ uri: uri.href, mimeType: 'text/plain', text: r.text ?? `${label}:${r.uri}` }],
    }));
  for (const t of spec.templates || [])
    mcp.registerResource(t.name, new ResourceTemplate(t.uriTemplate, {
      list: undefined,
      complete: Object.fromEntries([...t.uriTemplate.matchAll(/\{([^}]+)\}/g)].map(([, v]) =>
        [v, (x) => ['alpha', 'alpine', 'beta'].filter((n) => n.startsWith(x ?? ''))])),
    }),
      { mimeType: 'text/plain' }, async (uri) => ({
        contents: [{ uri: uri.href, mimeType: 'text/plain', text: `${label}:${uri.href}` }],
      }));
  if (caps.resources) {
    mcp.server.setRequestHandler(SubscribeRequestSchema, async (req) => {
      inst.subs.add(req.params.uri);
      return {};
    });
    mcp.server.setRequestHandler(UnsubscribeRequestSchema, async (req) => {
      inst.subs.delete(req.params.uri);
      return {};
    });
  }
  if (spec.dynamic) {
    // a baseline prompt, so that prompt handlers exist before connect
    addPrompt(inst, 'base');
    const all = (fn) => { for (const i of instances) fn(i); };
    mcp.registerTool('add_tool', { inputSchema: { name: z.string() } }, async ({ name }) => {
      dynTools.add(name);
      all((i) => addTool(i, name));
      return text(`added tool ${name}`);
    });
    mcp.registerTool('remove_tool', { inputSchema: { name: z.string() } }, async ({ name }) => {
      dynTools.delete(name);
      all((i) => { i.tools.get(name)?.remove(); i.tools.delete(name); });
      return text(`removed tool ${name}`);
    });
    mcp.registerTool('add_prompt', { inputSchema: { name: z.string() } }, async ({ name }) => {
      dynPrompts.add(name);
      all((i) => addPrompt(i, name));
      return text(`added prompt ${name}`);
    });
    mcp.registerTool('remove_prompt', { inputSchema: { name: z.string() } }, async ({ name }) => {
      dynPrompts.delete(name);
      all((i) => { i.prompts.get(name)?.remove(); i.prompts.delete(name); });
      return text(`removed prompt ${name}`);
    });
    mcp.registerTool('touch', { inputSchema: { uri: z.string() } }, async ({ uri }) => {
      let n = 0;
      for (const i of instances)
        if (i.subs.has(uri)) {
          n++;
          await i.mcp.server.sendResourceUpdated({ uri }).catch(() => {});
        }
      return text(`touched ${uri} for ${n}`);
    });
    for (const n of dynTools)
      addTool(inst, n);
    for (const n of dynPrompts)
      addPrompt(inst, n);
  }
  if (spec.elicit)
    mcp.registerTool('ask', { inputSchema: { question: z.string() } }, async ({ question }, extra) => {
      try {
        const r = await extra.sendRequest({
          method: 'elicitation/create',
          params: {
            message: question,
            requestedSchema: {
              type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'],
            },
          },
        }, ElicitResultSchema, { timeout: 30000 });
        return text(`answer ${JSON.stringify(r)}`);
      } catch (e) {
        return { isError: true, content: [{ type: 'text', text: `elicitation failed: ${e.message}` }] };
      }
    });
  if (spec.slow)
    mcp.registerTool('slow', { inputSchema: { ms: z.number() } }, async ({ ms }) => {
      await sleep(ms);
      return text(`slept ${ms}`);
    });
  if (spec.hang)
    mcp.registerTool('hang', { description: 'never answers' }, () => new Promise(() => {}));
  if (spec.memory) {
    const notes = [];
    mcp.registerTool('remember', { inputSchema: { note: z.string() } }, async ({ note }) => {
      notes.push(note);
      return text(`${label}:remembered:${note}`);
    });
    mcp.registerTool('recall', { inputSchema: {} }, async () =>
      text(`${label}:recall:${JSON.stringify(notes)}`));
  }
  return inst;
}

async function readBody(req) {
  const chunks = [];
  for await (const c of req)
    chunks.push(c);
  const s = Buffer.concat(chunks).toString('utf8');
  return s === '' ? undefined : JSON.parse(s);
}

const httpServer = http.createServer(async (req, res) => {
  try {
    const { pathname } = new URL(req.url, 'http://x');
    if (pathname === '/stats') {
      let subscriptions = 0;
      for (const i of instances)
        subscriptions += i.subs.size;
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({
        sessions: transports.size, getStreams, getOpened, subscriptions, methods, deletes,
      }));
      return;
    }
    if (pathname !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    const sid = req.headers['mcp-session-id'];
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    if (req.method === 'POST') {
      const k = `${req.headers['mcp-protocol-version'] ?? 'none'} ${body?.method ?? 'response'}`;
      methods[k] = (methods[k] ?? 0) + 1;
    }
    let transport = sid ? transports.get(sid) : undefined;
    if (req.method === 'DELETE')
      deletes++;
    if (sid && !transport) {
      res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({
        jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' },
      }));
      return;
    }
    if (!transport) {
      const inst = newServer();
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          transports.set(id, transport);
          instances.add(inst);
        },
      });
      transport.onclose = () => {
        if (transport.sessionId)
          transports.delete(transport.sessionId);
        instances.delete(inst);
      };
      await inst.mcp.connect(transport);
    }
    if (req.method === 'GET') {
      getStreams++;
      getOpened++;
      res.on('close', () => { getStreams--; });
    }
    await transport.handleRequest(req, res, body);
  } catch (e) {
    if (!res.headersSent)
      res.writeHead(400, { 'Content-Type': 'application/json' }).end(JSON.stringify({
        jsonrpc: '2.0', id: null, error: { code: -32700, message: `Parse error: ${e.message}` },
      }));
  }
});

httpServer.listen(Number(spec.port ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${httpServer.address().port}\n`);
});
for (const sig of ['SIGTERM', 'SIGINT'])
  process.on(sig, () => process.exit(0));
