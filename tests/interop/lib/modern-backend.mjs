// A configurable MCP 2026-07-28 ("Modern") test backend on the official
// SDK v2 (McpServer per request through createMcpHandler), for the era
// tests.  Dual-era by default: 2025-11-25 requests are served with
// sessions (NodeStreamableHTTPServerTransport), the same tools on both.
// The spec comes as JSON in the SPEC environment variable; it listens on
// 127.0.0.1 (spec.port, default any free port) at /mcp and prints
// "listening <port>" once it accepts.
//
// Spec (every key optional):
//   label       a tag put in every answer, so a test sees who answered
//   port        the port to listen on (0: any)
//   modernOnly  true: only 2026-07-28; a 2025-11-25 request (initialize
//               included) gets the SDK's unsupported-version error
//   tools       [name]: each answers "<label>:<name>:<arguments as JSON>"
//               (the same text as spec-backend.mjs)
//   metaTools   [name]: the same, with a result _meta of its own:
//               {"com.example/label": label} (the SDK adds its serverInfo)
//   prompts     [name]: each takes a required "who" and answers
//               "<label>:<name>:<who>"
//   resources   [{uri, text}]: readable
//   templates   [{name, uriTemplate}]: a read answers "<label>:<the uri
//               read>", but a uri ending in /missing: the SDK's
//               ResourceNotFoundError (-32602, data {uri}), the backend's
//               own not-found
//   dynamic     true: tools add_tool {name} and add_prompt {name} add to
//               the lists (listChanged offered) and publish the list's
//               list_changed on the subscriptions/listen streams
//   subscribe   true: resources.subscribe is offered, so a
//               subscriptions/listen's resourceSubscriptions are honoured
//   noListen    true: a 2026-07-28 subscriptions/listen gets 404 and
//               -32601, as from a server that does not serve it
//   mrtr        true: the multi-round-trip tools (input_required results)
//                 mrtr_ask    elicits user_name {name}, with a requestState;
//                             answers "<label>:hello <name>" once the retry
//                             carries the answer and that exact state
//                 mrtr_two    two rounds: elicits "first", then "second"
//                             (the first answer carried in requestState);
//                             answers "<label>:first=<a> second=<b>"
//                 mrtr_shed   {n}: n input_required results with a
//                             requestState only (load shedding), then
//                             "<label>:shed <n>"
//                 mrtr_sample asks sampling/createMessage; answers
//                             "<label>:sampled <text of the answer>"
//                 mrtr_roots  asks roots/list; answers
//                             "<label>:roots <uri,uri>"
//               A requestState this process did not issue gets -32602.
//   rogue       true: answers no 2026-07-28 server may give: offers
//               completions and answers every completion/complete with
//               input_required (a requestState only), and lists a tool
//               rogue_type whose call answers resultType "bogus"
//
// GET /stats answers {modern, legacy, discover, sessions,
// sessionsInitialized, methods, lastModernCaps, retries, issuedStates}:
// 2026-07-28 requests seen (server/discover included, also counted
// apart), 2025-11-25 POSTs seen, Legacy sessions alive and ever
// initialized, counts by "<era> <method>", the clientCapabilities of the
// last 2026-07-28 tools/call, the MRTR retries seen ({tool,
// inputResponses keys, requestState}), and listening: the URIs the
// subscriptions/listen streams open now name (sorted, each once).
import http from 'node:http';
import { randomUUID, randomBytes } from 'node:crypto';

import { NodeStreamableHTTPServerTransport, toNodeHandler } from '@modelcontextprotocol/node';
import {
  CLIENT_CAPABILITIES_META_KEY, McpServer, ResourceNotFoundError, ResourceTemplate, acceptedContent, classifyInboundRequest,
  createMcpHandler, fromJsonSchema, inputRequired, isInitializeRequest,
} from '@modelcontextprotocol/server';

const spec = JSON.parse(process.env.SPEC || '{}');
const label = spec.label || 'modern';
const MAX_BODY = 4 * 1024 * 1024;

const stats = {
  modern: 0, legacy: 0, discover: 0, sessions: 0, sessionsInitialized: 0,
  methods: {}, lastModernCaps: null, retries: [], issuedStates: [],
};
const issued = new Set();		// requestStates this process minted
const listens = new Map();		// open listen streams -> their URIs
let listenSeq = 0;
const sessions = new Map();		// Legacy session id -> transport
const dynTools = new Set();		// spec.dynamic: added by add_tool
const dynPrompts = new Set();		// ...and add_prompt

const text = (t) => ({ type: 'text', text: t });
const objectSchema = (properties = {}, required = []) =>
  fromJsonSchema({ type: 'object', properties, required });

/* A requestState with characters that JSON escapes or a proxy might
 * touch, so that a byte-for-byte relay is checked. */
function mint(payload) {
  const s = `${label}|${payload}|é✓ "q" +/= \\ ${randomBytes(6).toString('base64')}`;
  issued.add(s);
  stats.issuedStates.push(s);
  if (stats.issuedStates.length > 50)
    stats.issuedStates.shift();
  return s;
}

/* the state the retry carries (absent, or one we issued: verify() above
 * refuses the others with -32602 before a handler runs), recorded */
function checkState(ctx, toolName) {
  const s = ctx.mcpReq.requestState();
  if (s !== undefined || ctx.mcpReq.inputResponses !== undefined) {
    stats.retries.push({
      tool: toolName,
      inputResponses: Object.keys(ctx.mcpReq.inputResponses ?? {}),
      requestState: s ?? null,
    });
    if (stats.retries.length > 50)
      stats.retries.shift();
  }
  return s;
}

const askString = (message, field) => inputRequired.elicit({
  message,
  requestedSchema: { type: 'object', properties: { [field]: { type: 'string' } }, required: [field] },
});

function buildServer() {
  const caps = { tools: spec.dynamic ? { listChanged: true } : {} };
  if (spec.prompts?.length || spec.dynamic)
    caps.prompts = spec.dynamic ? { listChanged: true } : {};
  if (spec.resources?.length || spec.templates?.length)
    caps.resources = spec.subscribe ? { subscribe: true } : {};
  if (spec.rogue)
    caps.completions = {};
  const server = new McpServer({ name: `modern-${label}`, version: '1.0.0' }, {
    capabilities: caps,
    // an echoed state we did not mint is refused at the SDK's seam (-32602)
    requestState: {
      verify: (s) => {
        if (!issued.has(s))
          throw new Error(`unknown requestState: ${JSON.stringify(s)}`);
        return s;
      },
    },
  });

  for (const name of [...spec.tools || [], ...dynTools])
    server.registerTool(name, {
      description: `tool ${name} of ${label}`,
      inputSchema: objectSchema({ x: { type: 'string' } }),
    }, async (args) => ({ content: [text(`${label}:${name}:${JSON.stringify(args ?? {})}`)] }));

  for (const name of spec.metaTools || [])
    server.registerTool(name, {
      description: `tool ${name} of ${label}`,
      inputSchema: objectSchema({ x: { type: 'string' } }),
    }, async (args) => ({
      content: [text(`${label}:${name}:${JSON.stringify(args ?? {})}`)],
      _meta: { 'com.example/label': label },
    }));

  for (const name of [...spec.prompts || [], ...dynPrompts])
    server.registerPrompt(name, {
      description: `prompt ${name}`,
      argsSchema: objectSchema({ who: { type: 'string' } }, ['who']),
    }, async ({ who }) => ({
      messages: [{ role: 'user', content: text(`${label}:${name}:${who}`) }],
    }));

  for (const r of spec.resources || [])
    server.registerResource(r.uri, r.uri, { mimeType: 'text/plain' }, async () => ({
      contents: [{ uri: r.uri, mimeType: 'text/plain', text: r.text ?? `${label}:${r.uri}` }],
    }));

  for (const t of spec.templates || [])
    server.registerResource(t.name, new ResourceTemplate(t.uriTemplate, { list: undefined }),
      { mimeType: 'text/plain' }, async (uri) => {
        if (uri.href.endsWith('/missing'))
          throw new ResourceNotFoundError(uri.href);
        return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: `${label}:${uri.href}` }] };
      });

  if (spec.dynamic) {
    const adder = (kind, set, notify) => server.registerTool(`add_${kind}`, {
      description: `adds a ${kind} to the list`,
      inputSchema: objectSchema({ name: { type: 'string' } }, ['name']),
    }, async ({ name }) => {
      set.add(name);
      notify();
      return { content: [text(`added ${kind} ${name}`)] };
    });
    adder('tool', dynTools, () => modern.notify.toolsChanged());
    adder('prompt', dynPrompts, () => modern.notify.promptsChanged());
  }

  if (spec.rogue)	// its calls are answered in rogue() below
    server.registerTool('rogue_type', {
      description: 'answers a resultType no revision has',
      inputSchema: objectSchema(),
    }, async () => ({ content: [text(`${label}:rogue_type`)] }));

  if (spec.mrtr) {
    server.registerTool('mrtr_ask', {
      description: 'MRTR: elicits a name',
      inputSchema: objectSchema({ x: { type: 'string' } }),
    }, async (_args, ctx) => {
      const state = checkState(ctx, 'mrtr_ask');
      const name = acceptedContent(ctx.mcpReq.inputResponses, 'user_name')?.name;
      if (typeof name !== 'string' || state === undefined)
        return inputRequired({
          inputRequests: { user_name: askString('What is your name?', 'name') },
          requestState: mint('ask'),
        });
      return { content: [text(`${label}:hello ${name}`)] };
    });

    server.registerTool('mrtr_two', {
      description: 'MRTR: two rounds of elicitation',
      inputSchema: objectSchema(),
    }, async (_args, ctx) => {
      const state = checkState(ctx, 'mrtr_two');
      const first = /^[^|]*\|first=([^|]*)\|/.exec(state ?? '')?.[1];
      if (first === undefined) {
        const a = acceptedContent(ctx.mcpReq.inputResponses, 'first')?.answer;
        if (typeof a !== 'string')
          return inputRequired({ inputRequests: { first: askString('First question?', 'answer') } });
        return inputRequired({
          inputRequests: { second: askString('Second question?', 'answer') },
          requestState: mint(`first=${encodeURIComponent(a)}`),
        });
      }
      const b = acceptedContent(ctx.mcpReq.inputResponses, 'second')?.answer;
      if (typeof b !== 'string')
        return inputRequired({
          inputRequests: { second: askString('Second question?', 'answer') },
          requestState: state,
        });
      return { content: [text(`${label}:first=${decodeURIComponent(first)} second=${b}`)] };
    });

    server.registerTool('mrtr_shed', {
      description: 'MRTR: defers n times (requestState only), then answers',
      inputSchema: objectSchema({ n: { type: 'integer' } }, ['n']),
    }, async ({ n }, ctx) => {
      const state = checkState(ctx, 'mrtr_shed');
      const k = Number(/^[^|]*\|shed=(\d+)\|/.exec(state ?? '')?.[1] ?? 0);
      if (k < n)
        return inputRequired({ requestState: mint(`shed=${k + 1}`) });
      return { content: [text(`${label}:shed ${k}`)] };
    });

    server.registerTool('mrtr_sample', {
      description: 'MRTR: asks for an LLM completion',
      inputSchema: objectSchema(),
    }, async (_args, ctx) => {
      checkState(ctx, 'mrtr_sample');
      const r = ctx.mcpReq.inputResponses?.capital;
      if (r === undefined)
        return inputRequired({
          inputRequests: {
            capital: inputRequired.createMessage({
              messages: [{ role: 'user', content: text('What is the capital of France?') }],
              maxTokens: 50,
            }),
          },
        });
      return { content: [text(`${label}:sampled ${r.content?.text ?? JSON.stringify(r)}`)] };
    });

    server.registerTool('mrtr_roots', {
      description: 'MRTR: asks for the roots',
      inputSchema: objectSchema(),
    }, async (_args, ctx) => {
      checkState(ctx, 'mrtr_roots');
      const roots = ctx.mcpReq.inputResponses?.roots?.roots;
      if (!Array.isArray(roots))
        return inputRequired({ inputRequests: { roots: inputRequired.listRoots() } });
      return { content: [text(`${label}:roots ${roots.map((x) => x.uri).join(',')}`)] };
    });
  }
  return server;
}

const modern = createMcpHandler(() => {
  const s = buildServer();
  return s;
}, { legacy: 'reject' });
const serveModern = toNodeHandler(modern);

function header(req, name) {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function jsonError(res, status, code, message) {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify({
    jsonrpc: '2.0', id: null, error: { code, message },
  }));
}

async function readBody(req) {
  const chunks = [];
  let size = 0;
  for await (const c of req) {
    size += c.length;
    if (size > MAX_BODY)
      return null;
    chunks.push(c);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function count(era, method) {
  const k = `${era} ${method ?? '?'}`;
  stats.methods[k] = (stats.methods[k] ?? 0) + 1;
}

async function serveLegacy(req, res, body) {
  const sid = header(req, 'mcp-session-id');
  if (sid !== undefined) {
    const t = sessions.get(sid);
    if (t === undefined) {
      jsonError(res, 404, -32001, 'Session not found');
      return;
    }
    await t.handleRequest(req, res, body);
    return;
  }
  if (req.method !== 'POST' || !isInitializeRequest(body)) {
    jsonError(res, 400, -32000, 'Bad Request: Mcp-Session-Id required');
    return;
  }
  const server = buildServer();
  const transport = new NodeStreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => {
      sessions.set(id, transport);
      stats.sessionsInitialized++;
      stats.sessions = sessions.size;
    },
  });
  transport.onclose = () => {
    if (transport.sessionId !== undefined && sessions.get(transport.sessionId) === transport) {
      sessions.delete(transport.sessionId);
      stats.sessions = sessions.size;
    }
    server.close().catch(() => {});
  };
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

/* spec.rogue: the answers no 2026-07-28 server may give; 1 if answered */
function rogue(body, res) {
  let result;

  if (body?.method === 'completion/complete')
    result = { resultType: 'input_required', requestState: mint('rogue') };
  else if (body?.method === 'tools/call' && body.params?.name === 'rogue_type')
    result = { resultType: 'bogus', content: [text(`${label}:rogue_type`)] };
  else
    return false;
  res.writeHead(200, { 'Content-Type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result }));
  return true;
}

/* GET /seen: {method, authorization, apiKey} of every /mcp request */
const heard = [];

async function serve(req, res) {
  const { pathname } = new URL(req.url ?? '/', 'http://x');
  if (pathname === '/stats') {
    const listening = [...new Set([...listens.values()].flat())].sort();
    res.writeHead(200, { 'Content-Type': 'application/json' })
      .end(JSON.stringify({ ...stats, listening }));
    return;
  }
  if (pathname === '/seen') {
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(heard));
    return;
  }
  if (pathname !== '/mcp') {
    res.writeHead(404).end();
    return;
  }
  let body;
  if (req.method === 'POST') {
    const raw = await readBody(req);
    if (raw === null) {
      jsonError(res, 413, -32600, 'Request body too large');
      return;
    }
    try {
      body = JSON.parse(raw);
    } catch {
      jsonError(res, 400, -32700, 'Parse error');
      return;
    }
  }
  const route = classifyInboundRequest({
    httpMethod: req.method,
    protocolVersionHeader: header(req, 'mcp-protocol-version'),
    mcpMethodHeader: header(req, 'mcp-method'),
    mcpNameHeader: header(req, 'mcp-name'),
    body,
  });
  const method = Array.isArray(body) ? 'batch' : body?.method ?? (req.method === 'POST' ? 'response' : req.method);
  heard.push({ method, authorization: header(req, 'authorization'), apiKey: header(req, 'x-api-key') });
  if (route.kind === 'legacy') {
    stats.legacy++;
    count('legacy', method);
    if (spec.modernOnly)
      await serveModern(req, res, body);	// legacy: 'reject' answers
    else
      await serveLegacy(req, res, body);
    return;
  }
  stats.modern++;
  count('modern', method);
  if (method === 'server/discover')
    stats.discover++;
  if (method === 'tools/call')
    stats.lastModernCaps = body?.params?._meta?.[CLIENT_CAPABILITIES_META_KEY] ?? null;
  if (method === 'subscriptions/listen' && spec.noListen) {
    jsonError(res, 404, -32601, 'Method not found');
    return;
  }
  if (spec.rogue && rogue(body, res))
    return;
  if (method === 'subscriptions/listen') {
    const id = ++listenSeq;
    const uris = body?.params?.notifications?.resourceSubscriptions;
    listens.set(id, Array.isArray(uris) ? uris.map(String) : []);
    res.on('close', () => listens.delete(id));
  }
  await serveModern(req, res, body);
}

const httpServer = http.createServer((req, res) => {
  serve(req, res).catch((e) => {
    process.stderr.write(`[modern-backend ${label}] ${e.stack ?? e}\n`);
    if (!res.headersSent)
      jsonError(res, 500, -32603, 'Internal error');
    else
      res.end();
  });
});

httpServer.listen(Number(spec.port ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${httpServer.address().port}\n`);
});
for (const sig of ['SIGTERM', 'SIGINT'])
  process.on(sig, () => process.exit(0));
