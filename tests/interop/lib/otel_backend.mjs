// An MCP backend instrumented with the official OpenTelemetry JS SDK, for
// the tracing tests: its own SERVER spans go over OTLP/HTTP (protobuf,
// the official exporter) to the receiver at OTLP_URL, with service.name
// "test-backend" and test.backend.label = LABEL (environment).
//
// HTTP (the default): both revisions on 127.0.0.1 (PORT or any free
// port) at /mcp, printing "listening <port>": a 2025-11-25 request is
// served by the official SDK v1 (McpServer, StreamableHTTPServerTransport
// with sessions), a 2026-07-28 one by the SDK v2 (createMcpHandler), as
// lib/modern-backend.mjs does.  The parent of each SERVER span is what
// the W3C traceparent HTTP header names (W3CTraceContextPropagator).
// "stdio" (argument): the same tools on stdin/stdout (SDK v1), the
// parent taken from params._meta.traceparent, the only place a stdio
// request carries one.
//
// Each request (tools/call, prompts/get, resources/read) gets a SERVER
// span "{method} {target}" and a record of what it carried:
//   {era, method, target, id, sessionId,
//    header: {traceparent, tracestate, baggage}  (HTTP headers, or null)
//    meta: {traceparent, tracestate, baggage}    (params._meta, or null)
//    span: {traceId, spanId, parentSpanId, sampled}}
// The records: GET /seen (HTTP), or the tool "seen" (any transport; its
// own calls are not recorded).  Tools: echo {message} -> "Echo: <message>",
// fail {message} -> an isError result, seen.  Prompt greet {who}; resource
// test://<LABEL>/doc.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';

import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, defaultTextMapGetter } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';

import { McpServer as McpServerV1 } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { McpServer as McpServerV2, classifyInboundRequest, createMcpHandler, fromJsonSchema } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';

const MODE = process.argv[2] || 'http';
const LABEL = process.env.LABEL || MODE;
const OTLP_URL = process.env.OTLP_URL;

const provider = new BasicTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'test-backend', 'test.backend.label': LABEL }),
  spanProcessors: OTLP_URL ?
    [new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${OTLP_URL}/v1/traces` }))] : [],
});
const tracer = provider.getTracer('test-backend', '1.0.0');
const propagator = new W3CTraceContextPropagator();
const records = [];

const text = (t) => ({ type: 'text', text: t });
const TOOLS = {
  echo: { props: { message: 'string' }, run: ({ message }) => ({ content: [text(`Echo: ${message}`)] }) },
  fail: { props: { message: 'string' },
    run: ({ message }) => ({ isError: true, content: [text(`failed: ${message}`)] }) },
  seen: { props: {}, run: () => ({ content: [text(JSON.stringify(records))] }) },
};
const greet = ({ who }) => ({ messages: [{ role: 'user', content: text(`hello ${who}`) }] });
const doc = { uri: `test://${LABEL}/doc`, text: 'the doc' };
const readDoc = async () => ({ contents: [{ uri: doc.uri, mimeType: 'text/plain', text: doc.text }] });

function serverV1() {
  const s = new McpServerV1({ name: `otel-${LABEL}`, version: '1.0.0' });
  for (const [name, t] of Object.entries(TOOLS))
    s.registerTool(name, {
      description: `${name} (${LABEL})`,
      inputSchema: Object.fromEntries(Object.keys(t.props).map((k) => [k, z.string()])),
    }, async (args) => t.run(args ?? {}));
  s.registerPrompt('greet', { description: 'greets', argsSchema: { who: z.string() } },
    async (args) => greet(args));
  s.registerResource('doc', doc.uri, { mimeType: 'text/plain' }, readDoc);
  return s;
}

function serverV2() {
  const s = new McpServerV2({ name: `otel-${LABEL}`, version: '1.0.0' },
    { capabilities: { tools: {}, prompts: {}, resources: {} } });
  for (const [name, t] of Object.entries(TOOLS))
    s.registerTool(name, {
      description: `${name} (${LABEL})`,
      inputSchema: fromJsonSchema({ type: 'object',
        properties: Object.fromEntries(Object.keys(t.props).map((k) => [k, { type: 'string' }])),
        required: Object.keys(t.props) }),
    }, async (args) => t.run(args ?? {}));
  s.registerPrompt('greet', { description: 'greets',
    argsSchema: fromJsonSchema({ type: 'object', properties: { who: { type: 'string' } }, required: ['who'] }) },
  async (args) => greet(args));
  s.registerResource('doc', doc.uri, { mimeType: 'text/plain' }, readDoc);
  return s;
}

const TARGETS = {
  'tools/call': (p) => p?.name,
  'prompts/get': (p) => p?.name,
  'resources/read': (p) => p?.uri,
};

const pick = (o) => (o ? {
  traceparent: o.traceparent ?? null, tracestate: o.tracestate ?? null, baggage: o.baggage ?? null,
} : null);

/*
 * One request in: record it and start its SERVER span, the child of what
 * carrier's traceparent names; returns the function that ends it (or
 * null when msg is nothing we trace).
 */
function observe(msg, { era, headers = null, sessionId = null }) {
  const target = TARGETS[msg?.method]?.(msg.params);
  if (target === undefined || (msg.method === 'tools/call' && target === 'seen'))
    return null;
  const meta = msg.params?._meta ?? null;
  const carrier = headers ?? meta ?? {};
  const parent = propagator.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);
  const span = tracer.startSpan(`${msg.method} ${target}`, {
    kind: SpanKind.SERVER,
    attributes: { 'mcp.method.name': msg.method, 'jsonrpc.request.id': String(msg.id),
      'mcp.protocol.version': era },
  }, parent);
  const sc = span.spanContext();
  records.push({
    era, method: msg.method, target, id: msg.id, sessionId,
    header: headers ? pick(headers) : null, meta: pick(meta),
    span: { traceId: sc.traceId, spanId: sc.spanId,
      parentSpanId: trace.getSpanContext(parent)?.spanId ?? '', sampled: span.isRecording() },
  });
  return (isError) => {
    if (isError)
      span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  };
}

// ---------------------------------------------------------------------------
// HTTP

const sessions = new Map();
const modern = toNodeHandler(createMcpHandler(() => serverV2(), { legacy: 'reject' }));

async function readJson(req) {
  const chunks = [];
  for await (const c of req)
    chunks.push(c);
  const s = Buffer.concat(chunks).toString('utf8');
  return s === '' ? undefined : JSON.parse(s);
}

async function serveLegacy(req, res, body) {
  const sid = req.headers['mcp-session-id'];
  let t = sid ? sessions.get(sid) : undefined;
  if (sid && !t) {
    res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({
      jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }));
    return;
  }
  if (!t) {
    t = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => sessions.set(id, t),
    });
    t.onclose = () => sessions.delete(t.sessionId);
    await serverV1().connect(t);
  }
  await t.handleRequest(req, res, body);
}

async function serve(req, res) {
  const { pathname } = new URL(req.url, 'http://x');
  if (pathname === '/seen') {
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(records));
    return;
  }
  if (pathname !== '/mcp') {
    res.writeHead(404).end();
    return;
  }
  const body = req.method === 'POST' ? await readJson(req) : undefined;
  const route = classifyInboundRequest({
    httpMethod: req.method,
    protocolVersionHeader: req.headers['mcp-protocol-version'],
    mcpMethodHeader: req.headers['mcp-method'],
    mcpNameHeader: req.headers['mcp-name'],
    body,
  });
  const era = route.kind === 'legacy' ? '2025-11-25' : '2026-07-28';
  const end = observe(body, { era, headers: req.headers,
    sessionId: req.headers['mcp-session-id'] ?? null });
  if (end)
    res.on('close', () => end(res.statusCode >= 400));
  if (route.kind === 'legacy')
    await serveLegacy(req, res, body);
  else
    await modern(req, res, body);
}

// ---------------------------------------------------------------------------
// stdio: the parent from params._meta, the span ended with the answer

async function serveStdio() {
  const t = new StdioServerTransport();
  await serverV1().connect(t);
  const onmessage = t.onmessage;
  const send = t.send.bind(t);
  const open = new Map();	// request id -> end()
  t.onmessage = (msg, extra) => {
    const end = observe(msg, { era: '2025-11-25' });
    if (end)
      open.set(msg.id, end);
    onmessage(msg, extra);
  };
  t.send = async (msg, opts) => {
    const end = msg.id !== undefined && msg.method === undefined ? open.get(msg.id) : undefined;
    if (end) {
      open.delete(msg.id);
      end(msg.error !== undefined || msg.result?.isError === true);
    }
    return send(msg, opts);
  };
  process.stdin.on('end', async () => {
    await provider.shutdown().catch(() => {});
    process.exit(0);
  });
}

if (MODE === 'stdio') {
  await serveStdio();
} else {
  const srv = http.createServer((req, res) => {
    serve(req, res).catch((e) => {
      process.stderr.write(`[otel-backend ${LABEL}] ${e.stack ?? e}\n`);
      if (!res.headersSent)
        res.writeHead(500, { 'Content-Type': 'application/json' }).end(JSON.stringify({
          jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error' } }));
    });
  });
  srv.listen(Number(process.env.PORT || 0), '127.0.0.1', () => {
    process.stdout.write(`listening ${srv.address().port}\n`);
  });
}
for (const sig of ['SIGTERM', 'SIGINT'])
  process.on(sig, () => process.exit(0));
