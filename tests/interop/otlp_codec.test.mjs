// The OTLP encoder (shared/otlp.c, shared/otlp_json.c) against the
// official decoder: tests/unit/drive_otlp.c writes a known trace and
// metrics export request as protobuf and as OTLP/JSON; the protobuf is
// decoded with the generated code of @opentelemetry/otlp-transformer
// (0.52.1, npm alias otlp-proto-decode: protobufjs static code of
// opentelemetry-proto), the JSON with JSON.parse, and every field is
// checked.  That code predates Span.flags (field 16, opentelemetry-proto
// 1.1.0) and skips it as an unknown field; the flags are read with
// protobufjs's own Reader.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BUILD = path.dirname(path.resolve(ROOT, process.env.VMCPD_BIN || 'build/vmcpd'));
const DRIVER = path.join(BUILD, 'tests', 'drive_otlp');
const require = createRequire(import.meta.url);
const root = require('otlp-proto-decode/build/src/generated/root.js');
const protobuf = require('protobufjs/minimal');
const { ExportTraceServiceRequest } = root.opentelemetry.proto.collector.trace.v1;
const { ExportMetricsServiceRequest } = root.opentelemetry.proto.collector.metrics.v1;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'otlp-codec-'));
const run = spawnSync(DRIVER, [dir], { encoding: 'utf8' });
if (run.status !== 0) {
  fs.rmSync(dir, { recursive: true, force: true });
  throw new Error(`${DRIVER}: exit ${run.status} ${run.error ?? ''} ${run.stderr}`);
}
const read = (name) => fs.readFileSync(path.join(dir, name));
const files = {
  tracesPb: read('traces.pb'), tracesJson: read('traces.json'),
  metricsPb: read('metrics.pb'), metricsJson: read('metrics.json'),
};
fs.rmSync(dir, { recursive: true, force: true });

const hex = (b) => Buffer.from(b).toString('hex');
const str = (v) => (v === null || v === undefined ? v : v.toString());
const TRACE = '0102030405060708090a0b0c0d0e0f10';
const LONG300 = Array.from({ length: 300 }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');

const SPAN1_ATTRS = {
  'mcp.method.name': { stringValue: 'tools/call' },
  'http.response.status_code': { intValue: '200' },
  yes: { boolValue: true },
  no: { boolValue: false },
  neg: { intValue: '-5' },
  zero: { intValue: '0' },
  big: { intValue: '-9223372036854775808' },
  ratio: { doubleValue: 0.25 },
  bad: { stringValue: 'a\ufffdb\ufffd' },
  empty: { stringValue: '' },
  long300: { stringValue: LONG300 },
  long20k: { stringValue: 'z'.repeat(20000) },
  uni: { stringValue: '\u00e9\u20ac\u{1f600}' },
};

/* an AnyValue, decoded or parsed, as {type: string form} */
function anyValue(v) {
  const out = {};
  for (const k of ['stringValue', 'boolValue', 'intValue', 'doubleValue'])
    if (v[k] !== null && v[k] !== undefined)
      out[k] = k === 'intValue' ? str(v[k]) : v[k];
  assert.equal(Object.keys(out).length, 1, `one value: ${JSON.stringify(v)}`);
  return out;
}

function attrs(list) {
  const o = {};
  for (const kv of list || []) {
    assert.ok(!(kv.key in o), `key ${kv.key} once`);
    o[kv.key] = anyValue(kv.value);
  }
  return o;
}

/* Span.flags (16, fixed32) of each span, read with protobufjs's Reader:
 * request.1 (ResourceSpans) .2 (ScopeSpans) .2 (Span) .16 */
function spanFlags(buf) {
  const fields = (b) => {
    const r = protobuf.Reader.create(b), out = [];
    while (r.pos < r.len) {
      const tag = r.uint32(), no = tag >>> 3, wt = tag & 7;
      if (wt === 2) out.push([no, r.bytes()]);
      else if (wt === 5) out.push([no, r.fixed32()]);
      else { r.skipType(wt); out.push([no, null]); }
    }
    return out;
  };
  const sub = (b, no) => fields(b).filter(([n]) => n === no).map(([, v]) => v);
  const flags = [];
  for (const rs of sub(buf, 1))
    for (const ss of sub(rs, 2))
      for (const sp of sub(ss, 2))
        flags.push(sub(sp, 16)[0] ?? 0);
  return flags;
}

/* the decoded protobuf in OTLP/JSON's form, to compare with the JSON */
function pbToJson(Type, msg) {
  const o = Type.toObject(msg, { longs: String, enums: Number, bytes: String });
  return JSON.parse(JSON.stringify(o, (k, v) =>
    ['traceId', 'spanId', 'parentSpanId'].includes(k)
      ? Buffer.from(v, 'base64').toString('hex') : v));
}

function checkSpans(spans, flags, fmt) {
  assert.equal(spans.length, 3, fmt);
  const [s1, s2, s3] = spans;
  const id = (v) => (typeof v === 'string' ? v : hex(v));

  assert.equal(id(s1.traceId), TRACE, fmt);
  assert.equal(id(s1.spanId), 'a1a2a3a4a5a6a7a8', fmt);
  assert.ok(!s1.parentSpanId || s1.parentSpanId.length === 0, `${fmt}: root`);
  assert.equal(s1.traceState, 'vendor=abc,x=1', fmt);
  assert.equal(flags[0], 0x101, `${fmt}: flags`);
  assert.equal(s1.name, 'tools/call echo', fmt);
  assert.equal(s1.kind, 2, `${fmt}: SERVER`);
  assert.equal(str(s1.startTimeUnixNano), '1765000000123456789', fmt);
  assert.equal(str(s1.endTimeUnixNano), '1765000000223456789', fmt);
  assert.deepEqual(attrs(s1.attributes), SPAN1_ATTRS, fmt);
  assert.equal(s1.status.code, 2, `${fmt}: ERROR`);
  assert.equal(s1.status.message, 'boom', fmt);

  assert.equal(id(s2.traceId), TRACE, fmt);
  assert.equal(id(s2.spanId), 'a1a2a3a4a5a6a7ff', fmt);
  assert.equal(id(s2.parentSpanId), 'a1a2a3a4a5a6a7a8', `${fmt}: parent`);
  assert.ok(!s2.traceState, fmt);
  assert.equal(flags[1], 0x301, `${fmt}: flags`);
  assert.equal(s2.name, 'tools/call echo_backend', fmt);
  assert.equal(s2.kind, 3, `${fmt}: CLIENT`);
  assert.equal(str(s2.startTimeUnixNano), '1765000000133456789', fmt);
  assert.equal(str(s2.endTimeUnixNano), '1765000000213456789', fmt);
  assert.deepEqual(attrs(s2.attributes), {
    'vmcpd.backend.name': { stringValue: 'alpha' },
  }, fmt);
  assert.ok(!s2.status, `${fmt}: no status when UNSET`);

  assert.equal(id(s3.spanId), 'a1a2a3a4a5a6a7ee', fmt);
  assert.equal(id(s3.parentSpanId), 'a1a2a3a4a5a6a7a8', fmt);
  assert.equal(flags[2], 0, fmt);
  assert.equal(s3.name, 'vmcpd.ratelimit', fmt);
  assert.equal(s3.kind, 1, `${fmt}: INTERNAL`);
  assert.deepEqual(attrs(s3.attributes), {}, fmt);
  assert.equal(s3.status.code, 1, `${fmt}: OK`);
  assert.ok(!s3.status.message, fmt);
}

function checkResource(r, fmt) {
  assert.deepEqual(attrs(r.resource.attributes), {
    'service.name': { stringValue: 'vmcpd-test' },
    'process.pid': { intValue: '4242' },
  }, fmt);
}

function checkScope(s, fmt) {
  assert.equal(s.scope.name, 'vmcpd', fmt);
  assert.equal(s.scope.version, '1.2.3', fmt);
}

test('traces: the official protobuf decoder reads every field', () => {
  const req = ExportTraceServiceRequest.decode(files.tracesPb);
  assert.equal(req.resourceSpans.length, 1);
  checkResource(req.resourceSpans[0], 'pb');
  assert.equal(req.resourceSpans[0].scopeSpans.length, 1);
  checkScope(req.resourceSpans[0].scopeSpans[0], 'pb');
  const spans = req.resourceSpans[0].scopeSpans[0].spans;
  const { Span } = root.opentelemetry.proto.trace.v1;
  checkSpans(spans.map((s) => Span.toObject(s, { longs: String, enums: Number })),
    spanFlags(files.tracesPb), 'pb');
});

test('traces: OTLP/JSON has the same fields, ids in hex', () => {
  const req = JSON.parse(files.tracesJson.toString('utf8'));
  assert.equal(req.resourceSpans.length, 1);
  checkResource(req.resourceSpans[0], 'json');
  checkScope(req.resourceSpans[0].scopeSpans[0], 'json');
  const spans = req.resourceSpans[0].scopeSpans[0].spans;
  for (const s of spans) {
    assert.match(s.traceId, /^[0-9a-f]{32}$/);
    assert.equal(typeof s.startTimeUnixNano, 'string', '64-bit as a string');
  }
  checkSpans(spans, spans.map((s) => s.flags ?? 0), 'json');
  /* and nothing else: the protobuf, decoded, is the JSON */
  const pb = pbToJson(ExportTraceServiceRequest,
    ExportTraceServiceRequest.decode(files.tracesPb));
  const flags = spanFlags(files.tracesPb);
  pb.resourceSpans[0].scopeSpans[0].spans.forEach((s, i) => {
    if (flags[i]) s.flags = flags[i];
  });
  assert.deepEqual(req, pb);
});

function checkMetrics(req, fmt) {
  assert.equal(req.resourceMetrics.length, 1, fmt);
  checkResource(req.resourceMetrics[0], fmt);
  assert.equal(req.resourceMetrics[0].scopeMetrics.length, 1, fmt);
  const sm = req.resourceMetrics[0].scopeMetrics[0];
  checkScope(sm, fmt);
  assert.equal(sm.metrics.length, 2, fmt);
  const [m1, m2] = sm.metrics;
  assert.equal(m1.name, 'mcp.server.operation.duration', fmt);
  assert.equal(m1.description, 'MCP request duration', fmt);
  assert.equal(m1.unit, 's', fmt);
  assert.equal(m1.histogram.aggregationTemporality, 2, `${fmt}: CUMULATIVE`);
  const [p1, p2] = m1.histogram.dataPoints;
  assert.equal(m1.histogram.dataPoints.length, 2, fmt);
  assert.equal(str(p1.startTimeUnixNano), '1765000000000000000', fmt);
  assert.equal(str(p1.timeUnixNano), '1765000060000000001', fmt);
  assert.equal(str(p1.count), '10', fmt);
  assert.equal(p1.sum, 3.75, fmt);
  assert.deepEqual(p1.bucketCounts.map(str), ['1', '2', '3', '0', '4'], fmt);
  assert.deepEqual(p1.explicitBounds, [0.005, 0.01, 0.1, 1], fmt);
  assert.deepEqual(attrs(p1.attributes), {
    method: { stringValue: 'tools/call' },
  }, fmt);
  assert.ok(!p2.startTimeUnixNano || str(p2.startTimeUnixNano) === '0', fmt);
  assert.equal(str(p2.timeUnixNano), '1765000060000000001', fmt);
  assert.ok(!p2.count || str(p2.count) === '0', fmt);
  assert.equal(p2.sum, 0, `${fmt}: sum is optional: 0 is written`);
  assert.ok(!p2.bucketCounts || p2.bucketCounts.length === 0, fmt);
  assert.ok(!p2.explicitBounds || p2.explicitBounds.length === 0, fmt);
  assert.equal(m2.name, 'empty', fmt);
  assert.ok(!m2.description && !m2.unit, fmt);
  assert.equal(m2.histogram.aggregationTemporality, 2, fmt);
  assert.ok(!m2.histogram.dataPoints || m2.histogram.dataPoints.length === 0, fmt);
}

test('metrics: the official protobuf decoder reads every field', () => {
  const req = ExportMetricsServiceRequest.decode(files.metricsPb);
  checkMetrics(ExportMetricsServiceRequest.toObject(req,
    { longs: String, enums: Number }), 'pb');
});

test('metrics: OTLP/JSON has the same fields', () => {
  const req = JSON.parse(files.metricsJson.toString('utf8'));
  checkMetrics(req, 'json');
  assert.equal(typeof req.resourceMetrics[0].scopeMetrics[0].metrics[0]
    .histogram.dataPoints[0].count, 'string', '64-bit as a string');
  assert.deepEqual(req, pbToJson(ExportMetricsServiceRequest,
    ExportMetricsServiceRequest.decode(files.metricsPb)));
});
