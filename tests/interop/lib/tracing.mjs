// Helpers of the tracing suites (tracing*.test.mjs), on top of multi.mjs:
// the traced backend (otel_backend.mjs) over HTTP or as a stdio backend
// entry, vmcpd with a telemetry: block pointing at an OTLP receiver
// (otlp_receiver.mjs), a test client that makes its own spans with the
// OpenTelemetry API, and the /metrics counters of the exporter.
import path from 'node:path';

import { ROOT_CONTEXT, SpanKind, TraceFlags, trace, defaultTextMapSetter } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';

import { Daemon, HOST, ROOT, tmpDir, waitFor, freshFetch, httpRequest } from './harness.mjs';
import { Child, NODE, multiConfig } from './multi.mjs';

export const OTEL_BACKEND = path.join(ROOT, 'tests/interop/lib/otel_backend.mjs');

/* The traced backend over HTTP (both revisions), exporting to recv. */
export async function startOtelBackend(recv, label = 'web', { timeout = 20000 } = {}) {
  const p = new Child(`otel-backend-${label}`, NODE, [OTEL_BACKEND],
    { env: { OTLP_URL: recv.url, LABEL: label } });
  p.port = await waitFor(`otel backend ${label} to listen`, () => {
    if (p.exited)
      throw new Error(`exited: ${p.output.slice(-2000)}`);
    const m = /^listening (\d+)$/m.exec(p.output);
    return m ? Number(m[1]) : null;
  }, { timeout });
  p.url = `http://${HOST}:${p.port}/mcp`;
  p.seen = async () => (await httpRequest(p.port, { method: 'GET', path: '/seen', timeout: 5000 })).json;
  return p;
}

/* The traced backend as a stdio backend entry of multiConfig(). */
export const stdioOtelBackend = (recv, name = 'pipe') => ({
  name, args: [OTEL_BACKEND, 'stdio'], env: { OTLP_URL: recv.url, LABEL: name },
});

const q = (s) => JSON.stringify(String(s));

/* vmcpd's telemetry: block (YAML) for receiver recv; opts: its keys. */
export function telemetryYaml(recv, opts = {}) {
  const o = { endpoint: recv.endpoint, insecure: true, tracingEnabled: true, samplingRate: '1.0',
    exportInterval: '200ms', ...opts };
  const l = ['telemetry:'];
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined)
      continue;
    if (v !== null && typeof v === 'object') {
      l.push(`  ${k}:`);
      for (const [k2, v2] of Object.entries(v))
        l.push(`    ${q(k2)}: ${q(v2)}`);
    } else
      l.push(`  ${k}: ${typeof v === 'string' ? q(v) : v}`);
  }
  return l.join('\n') + '\n';
}

/*
 * vmcpd with these backends and a telemetry: block, and a diagnostics
 * listener (daemon.diag: its port) for /metrics.  opts: multiConfig's,
 * plus telemetry (telemetryYaml's opts), name, env.
 */
export async function startTracedDaemon(recv, { telemetry = {}, name = 'vmcpd-trace', diag,
  env, ...opts }, { timeout = 30000 } = {}) {
  const dir = await tmpDir('vmcpd-trace-');
  const d = new Daemon(dir, path.join(dir, 'vmcpd.yaml'), { workers: opts.workers ?? 2, env });
  let text = multiConfig({ portFile: d.portFile, stateDir: d.stateDir, ...opts,
    extra: `name: ${name}\n` + telemetryYaml(recv, telemetry) + (opts.extra ?? '') });
  if (diag !== undefined)
    text = text.replace('daemon:\n', `daemon:\n  diagnostics: ${HOST}:${diag}\n`);
  await d.writeConfig(text);
  await d.start({ timeout });
  d.diag = diag;
  return d;
}

/* A vmcpd span: scope "vmcpd". */
export const isVmcpd = (s) => s.scope.name === 'vmcpd';
export const isBackend = (s) => s.resource['service.name'] === 'test-backend';

// ---------------------------------------------------------------------------
// the test client's own spans

export const propagator = new W3CTraceContextPropagator();

/*
 * The test client's tracer (service.name "test-client"), exporting to
 * recv with the official exporter.  span(name, fn): fn(carrier) runs
 * under a CLIENT span whose context carrier holds (traceparent), and
 * resolves {result, ctx: the span's context, carrier}.
 */
export function clientTracer(recv) {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'test-client' }),
    spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${recv.url}/v1/traces` }))],
  });
  const tracer = provider.getTracer('interop-test', '1.0.0');
  return {
    provider,
    async span(name, fn) {
      const span = tracer.startSpan(name, { kind: SpanKind.CLIENT });
      const carrier = {};
      propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter);
      try {
        return { result: await fn(carrier), ctx: span.spanContext(), carrier };
      } finally {
        span.end();
      }
    },
  };
}

const randHex = (n) => [...crypto.getRandomValues(new Uint8Array(n / 2))]
  .map((b) => b.toString(16).padStart(2, '0')).join('');

/* A W3C traceparent of a made-up caller: {traceId, spanId, header}. */
export function callerContext({ sampled = true } = {}) {
  const traceId = randHex(32);
  const spanId = randHex(16);
  const flags = sampled ? TraceFlags.SAMPLED : TraceFlags.NONE;
  return { traceId, spanId, header: `00-${traceId}-${spanId}-0${flags}` };
}

/*
 * A fetch for the SDK clients' transports that adds state.headers to
 * every request (set them around one call) and keeps the JSON-RPC
 * messages sent in state.sent.
 */
export function headerFetch(state) {
  return (url, init = {}) => {
    const h = new Headers(init.headers);
    for (const [k, v] of Object.entries(state.headers))
      h.set(k, v);
    if (typeof init.body === 'string') {
      try {
        state.sent.push(JSON.parse(init.body));
      } catch {
        /* not JSON */
      }
    }
    return freshFetch(url, { ...init, headers: h });
  };
}

/* The exporter's counters summed over the daemon's /metrics. */
export async function otelCounters(diag) {
  const r = await httpRequest(diag, { method: 'GET', path: '/metrics', timeout: 10000 });
  const sum = (name) => {
    let n = 0;
    let found = false;
    for (const line of r.text.split('\n')) {
      const m = new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`).exec(line);
      if (m) {
        n += Number(m[2]);
        found = true;
      }
    }
    return found ? n : undefined;
  };
  return {
    status: r.status,
    dropped: sum('vmcpd_otel_spans_dropped_total'),
    exported: sum('vmcpd_otel_spans_exported_total'),
    failures: sum('vmcpd_otel_export_failures_total'),
  };
}
