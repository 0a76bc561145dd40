// An OTLP/HTTP receiver for the tracing tests: POST /v1/traces and
// /v1/metrics on 127.0.0.1 (a free port), in protobuf
// (application/x-protobuf) or JSON (application/json).  Both are decoded
// with the official OTLP message definitions that
// @opentelemetry/otlp-transformer ships (package alias otlp-proto-decode:
// its protobufjs decoders), never with vmcpd's own code.  A JSON body is
// checked against OTLP/JSON as it goes: trace and span ids in hex, enums
// as integers, no key the messages do not have (each deviation is kept in
// receiver.problems).
//
// Spans are kept normalized: {traceId, spanId, parentSpanId (hex, '' for a
// root), traceState, name, kind ('SERVER', 'CLIENT', 'INTERNAL', ...),
// attributes {key: value}, status {code: 'UNSET'|'OK'|'ERROR', message},
// resource {key: value}, scope {name, version}, start, end (ns as
// BigInt), format ('protobuf'|'json')}.  Every request is recorded
// ({path, headers, contentType, bytes, mode}).
//
// receiver.setMode(mode, {ms}) changes how it answers, at once:
//   ok       200 with an empty Export*ServiceResponse (the default)
//   500      500 and a JSON error body
//   hang     reads the body, never answers (the socket stays open)
//   slow     answers 200 after ms milliseconds
//   garbage  200 with bytes that are no Export*ServiceResponse
//   junk     bytes that are not HTTP at all, then the connection closed
//   reset    resets the connection once the body is in
// receiver.down() closes the port (connections refused) and
// receiver.up() listens on it again.
// Spans and metrics are kept only from requests answered 200 (ok, slow).
import http from 'node:http';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const root = require('otlp-proto-decode/build/src/generated/root.js');
const proto = root.opentelemetry.proto;
const TraceReq = proto.collector.trace.v1.ExportTraceServiceRequest;
const MetricsReq = proto.collector.metrics.v1.ExportMetricsServiceRequest;

const KINDS = ['UNSPECIFIED', 'INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'];
const STATUS = ['UNSET', 'OK', 'ERROR'];
const TO_OBJECT = { longs: String, enums: Number, bytes: Array, arrays: true, objects: true };
const ID_FIELDS = { traceId: 32, spanId: 16, parentSpanId: 16 };

/* fields newer than the definitions at hand (OTLP 1.1: Span.flags,
 * Span.Link.flags, fixed32): allowed in JSON, if integers */
const NEWER_FIELDS = new Set(['flags']);

const hex = (b) => (b && b.length ? Buffer.from(b).toString('hex') : '');

/* An AnyValue (toObject form) as a plain JS value; ints as Numbers. */
export function anyValue(v) {
  if (v == null)
    return undefined;
  if ('stringValue' in v)
    return v.stringValue;
  if ('boolValue' in v)
    return v.boolValue;
  if ('intValue' in v)
    return Number(v.intValue);
  if ('doubleValue' in v)
    return v.doubleValue;
  if ('bytesValue' in v)
    return Buffer.from(v.bytesValue);
  if ('arrayValue' in v)
    return (v.arrayValue.values ?? []).map(anyValue);
  if ('kvlistValue' in v)
    return attrs(v.kvlistValue.values);
  return undefined;
}

function attrs(list) {
  const o = {};
  for (const kv of list ?? [])
    o[kv.key] = anyValue(kv.value);
  return o;
}

/*
 * OTLP/JSON (the OTLP specification, "JSON Protobuf Encoding"): ids
 * are hex, not base64; enums are integers.  Returns the object with
 * the ids as Buffers, for fromObject(), and pushes what is wrong.
 */
function jsonToProtoShape(v, where, problems) {
  if (Array.isArray(v))
    return v.map((x, i) => jsonToProtoShape(x, `${where}[${i}]`, problems));
  if (v === null || typeof v !== 'object')
    return v;
  const o = {};
  for (const [k, x] of Object.entries(v)) {
    if (k in ID_FIELDS && typeof x === 'string') {
      const ok = x === '' ? k === 'parentSpanId' : new RegExp(`^[0-9a-f]{${ID_FIELDS[k]}}$`).test(x);
      if (!ok)
        problems.push(`${where}.${k}: ${JSON.stringify(x)} is not ${ID_FIELDS[k]} lowercase hex digits`);
      o[k] = Buffer.from(x, 'hex');
    } else if ((k === 'kind' || (k === 'code' && where.endsWith('.status'))) &&
      typeof x !== 'number') {
      problems.push(`${where}.${k}: ${JSON.stringify(x)} is not an integer (OTLP/JSON enums are integers)`);
      o[k] = x;
    } else
      o[k] = jsonToProtoShape(x, `${where}.${k}`, problems);
  }
  return o;
}

/* Keys of a (JSON) object that the message definition does not have. */
function unknownKeys(orig, known, where, out) {
  if (Array.isArray(orig)) {
    orig.forEach((x, i) => unknownKeys(x, known?.[i], `${where}[${i}]`, out));
    return out;
  }
  if (orig === null || typeof orig !== 'object' || Buffer.isBuffer(orig))
    return out;
  for (const k of Object.keys(orig)) {
    if (NEWER_FIELDS.has(k) && /\.(spans|links)\[\d+\]$/.test(where)) {
      if (!Number.isInteger(orig[k]))
        out.push(`${where}.${k}: ${JSON.stringify(orig[k])} is not an integer`);
      continue;
    }
    if (known === null || typeof known !== 'object' || !(k in known))
      out.push(`${where}.${k}: no such field in the OTLP message`);
    else
      unknownKeys(orig[k], known[k], `${where}.${k}`, out);
  }
  return out;
}

/* body -> the request as a plain object (toObject form), or throws. */
function decode(Type, body, isJson, problems) {
  if (!isJson)
    return Type.toObject(Type.decode(body), TO_OBJECT);
  const parsed = JSON.parse(body.toString('utf8'));
  const shaped = jsonToProtoShape(parsed, '$', problems);
  const msg = Type.fromObject(shaped);
  unknownKeys(parsed, Type.toObject(msg, { ...TO_OBJECT, defaults: true }), '$', problems);
  return Type.toObject(msg, TO_OBJECT);
}

function normalizeSpans(req, format) {
  const out = [];
  for (const rs of req.resourceSpans ?? []) {
    const resource = attrs(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      const scope = { name: ss.scope?.name ?? '', version: ss.scope?.version ?? '',
        attributes: attrs(ss.scope?.attributes) };
      for (const s of ss.spans ?? [])
        out.push({
          traceId: hex(s.traceId), spanId: hex(s.spanId), parentSpanId: hex(s.parentSpanId),
          traceState: s.traceState ?? '', name: s.name ?? '',
          kind: KINDS[s.kind ?? 0] ?? String(s.kind), attributes: attrs(s.attributes),
          status: { code: STATUS[s.status?.code ?? 0] ?? String(s.status?.code),
            message: s.status?.message ?? '' },
          start: BigInt(s.startTimeUnixNano ?? 0), end: BigInt(s.endTimeUnixNano ?? 0),
          events: (s.events ?? []).map((e) => ({ name: e.name, attributes: attrs(e.attributes) })),
          resource, scope, format,
        });
    }
  }
  return out;
}

function normalizeMetrics(req, format) {
  const out = [];
  for (const rm of req.resourceMetrics ?? []) {
    const resource = attrs(rm.resource?.attributes);
    for (const sm of rm.scopeMetrics ?? [])
      for (const m of sm.metrics ?? []) {
        const type = ['gauge', 'sum', 'histogram', 'exponentialHistogram', 'summary']
          .find((t) => m[t] !== undefined) ?? 'unknown';
        const points = (m[type]?.dataPoints ?? []).map((p) => ({ ...p, attributes: attrs(p.attributes) }));
        out.push({ name: m.name, unit: m.unit ?? '', type, points, resource,
          scope: { name: sm.scope?.name ?? '', version: sm.scope?.version ?? '' }, format });
      }
  }
  return out;
}

export class OtlpReceiver {
  constructor() {
    this.spans = [];
    this.metrics = [];
    this.requests = [];
    this.problems = [];	// OTLP/JSON deviations and undecodable bodies
    this.mode = 'ok';
    this.slowMs = 0;
    this.sockets = new Set();
    this.pending = new Set();	// requests a 'hang' left unanswered
    this.server = http.createServer((req, res) => this.handle(req, res));
    this.server.on('connection', (c) => {
      this.sockets.add(c);
      c.on('close', () => this.sockets.delete(c));
    });
  }

  listen(port = 0) {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => {
        this.port = this.server.address().port;
        resolve(this);
      });
    });
  }

  /* "host:port" as vmcpd's telemetry.endpoint takes it, and the URL */
  get endpoint() { return `127.0.0.1:${this.port}`; }
  get url() { return `http://127.0.0.1:${this.port}`; }

  setMode(mode, { ms = 0 } = {}) {
    if (!['ok', '500', 'hang', 'slow', 'garbage', 'junk', 'reset'].includes(mode))
      throw new Error(`unknown receiver mode ${mode}`);
    this.mode = mode;
    this.slowMs = ms;
    if (mode !== 'hang')
      this.releaseHung();
  }

  /* answer (500) what a hang held, so that no socket stays open */
  releaseHung() {
    for (const res of this.pending)
      if (!res.headersSent)
        res.writeHead(503).end();
    this.pending.clear();
  }

  clear() {
    this.spans = [];
    this.metrics = [];
    this.requests = [];
    this.problems = [];
  }

  count(path) {
    return this.requests.filter((r) => path === undefined || r.path === path).length;
  }

  async handle(req, res) {
    const chunks = [];
    for await (const c of req)
      chunks.push(c);
    const body = Buffer.concat(chunks);
    const path = new URL(req.url, 'http://x').pathname;
    const contentType = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    const mode = this.mode;
    this.requests.push({ path, method: req.method, headers: { ...req.headers }, contentType,
      bytes: body.length, mode, at: Date.now() });
    const Type = path === '/v1/traces' ? TraceReq : path === '/v1/metrics' ? MetricsReq : null;
    if (req.method !== 'POST' || Type === null) {
      res.writeHead(404).end();
      return;
    }
    const isJson = contentType === 'application/json';
    if (!isJson && contentType !== 'application/x-protobuf') {
      this.problems.push(`${path}: Content-Type ${JSON.stringify(contentType)}`);
      res.writeHead(415).end();
      return;
    }
    switch (mode) {
    case '500':
      res.writeHead(500, { 'Content-Type': 'application/json' })
        .end('{"code":13,"message":"collector failed"}');
      return;
    case 'hang':
      this.pending.add(res);
      res.on('close', () => this.pending.delete(res));
      return;
    case 'garbage':
      res.writeHead(200, { 'Content-Type': isJson ? 'application/json' : 'application/x-protobuf' })
        .end(Buffer.from('\xff\xfe\x00 not an OTLP response {{{ \x07\x08\x09'.repeat(50), 'latin1'));
      return;
    case 'junk':
      req.socket.end('\x16\x03\x01 this is no HTTP answer\r\n\r\n\x00\xff');
      return;
    case 'reset':
      req.socket.resetAndDestroy();
      return;
    case 'slow':
      await new Promise((r) => setTimeout(r, this.slowMs));
      break;
    default:
      break;
    }
    let decoded;
    const problems = [];
    try {
      decoded = decode(Type, body, isJson, problems);
    } catch (e) {
      this.problems.push(`${path} (${contentType}): undecodable: ${e.message}`);
      res.writeHead(400, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ code: 3, message: e.message }));
      return;
    }
    this.problems.push(...problems.map((p) => `${path}: ${p}`));
    const format = isJson ? 'json' : 'protobuf';
    if (Type === TraceReq)
      this.spans.push(...normalizeSpans(decoded, format));
    else
      this.metrics.push(...normalizeMetrics(decoded, format));
    res.writeHead(200, { 'Content-Type': isJson ? 'application/json' : 'application/x-protobuf' })
      .end(isJson ? '{}' : Buffer.alloc(0));
  }

  /*
   * Poll until predicate(spans) gives a truthy value (returned), or
   * fail after timeout ms naming what was there.
   */
  async waitForSpans(predicate, timeout = 10000, what = 'spans') {
    const deadline = Date.now() + timeout;
    for (;;) {
      const v = predicate(this.spans);
      if (v)
        return v;
      if (Date.now() >= deadline)
        throw new Error(`timed out after ${timeout} ms waiting for ${what}; have ` +
          `${this.spans.length} spans: ${this.spans.slice(-20).map((s) =>
            `${s.resource['service.name']}:${s.kind}:${s.name}`).join(', ')}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  trace(traceId) {
    return this.spans.filter((s) => s.traceId === traceId);
  }

  /* stop listening (its port then refuses connections); up() again */
  async down() {
    this.releaseHung();
    const closed = new Promise((r) => this.server.close(r));
    for (const s of this.sockets)
      s.destroy();
    await closed;
  }

  up() {
    return this.listen(this.port);
  }

  async close() {
    if (this.server.listening)
      await this.down();
  }
}

/* A receiver listening on a free loopback port. */
export function startReceiver() {
  return new OtlpReceiver().listen();
}
