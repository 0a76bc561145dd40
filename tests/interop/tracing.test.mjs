// Tracing (issue 28) end to end with real parts: a test client that makes
// its own span with the OpenTelemetry API and sends its traceparent,
// vmcpd, and a backend on the official MCP SDK traced with the official
// OpenTelemetry JS SDK (lib/otel_backend.mjs), over HTTP and over stdio;
// every span lands in one OTLP receiver (lib/otlp_receiver.mjs) that
// decodes with the official OTLP definitions.  One trace must run from
// the client's span through vmcpd's SERVER and CLIENT spans into the
// backend's SERVER span, for 2025-11-25 (SDK v1 client) and 2026-07-28
// (SDK v2 client) callers, with the names and attributes vmcpd promises
// (docs/ARCHITECTURE.md, Tracing; vmcpd(8), Tracing).
//
// Two daemons: A exports protobuf at samplingRate 1.0 with collector
// headers and custom resource attributes; B (one worker) exports
// OTLP/JSON to a receiver of its own at samplingRate 0 and passes
// baggage on.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';

import fs from 'node:fs/promises';
import path from 'node:path';

import { guarded, httpRequest, mcpHeaders, nextId, openSession, sleep, tmpDir, waitFor, LEGACY_VERSION } from './lib/harness.mjs';
import { useMulti, MODERN, modern, modernMeta, textOf } from './lib/multi.mjs';
import { startReceiver } from './lib/otlp_receiver.mjs';
import {
  startOtelBackend, stdioOtelBackend, startTracedDaemon, clientTracer, callerContext, headerFetch,
  isVmcpd, isBackend,
} from './lib/tracing.mjs';

useMulti();

const SERVICE = 'vmcpd-trace';
const AGG = 'conflictResolution: prefix\nconflictResolutionConfig:\n  prefixMode: always\n  prefixFormat: "{workload}_"';
const SECRET = 'collector-s3cret-from-env';
const SPAN_WAIT = 6000;	// ms: exportInterval is 200ms

/* a 2026-07-28 request over raw HTTP, with its Mcp-Name header */
const mreq = (d, method, params, headers = {}) => modern(d.port, method, params,
  { 'Mcp-Name': params.name ?? params.uri, ...headers });

describe('tracing through vmcpd', () => {
  let recv, recvB, web, daemon, daemonB, ct, auditLog;
  const closers = [];

  before(async () => {
    auditLog = path.join(await tmpDir('vmcpd-trace-audit-'), 'audit.jsonl');
    recv = await startReceiver();
    recvB = await startReceiver();
    ct = clientTracer(recv);
    web = await startOtelBackend(recv, 'web');
    daemon = await startTracedDaemon(recv, {
      backends: [{ name: 'web', url: web.url }, stdioOtelBackend(recv, 'pipe')],
      aggregation: AGG,
      extra: `audit:\n  enabled: true\n  logFile: ${auditLog}\n` +
        'compositeTools:\n  - name: twice\n    description: echo twice\n' +
        '    parameters: {type: object, properties: {m: {type: string}}}\n    steps:\n' +
        '      - id: first\n        tool: web.echo\n        arguments: {message: "{{.params.m}}"}\n' +
        '      - id: second\n        tool: web.echo\n        dependsOn: [first]\n' +
        '        arguments: {message: "again"}\n',
      env: { OTEL_TEST_SECRET: SECRET },
      telemetry: {
        serviceName: SERVICE, serviceVersion: '9.9.9-test',
        headers: { 'X-Collector-Tenant': 'interop' },
        headersFromEnv: { 'X-Collector-Secret': 'OTEL_TEST_SECRET' },
        customAttributes: { 'deployment.environment.name': 'interop', team: 'tracing' },
      },
    });
    daemonB = await startTracedDaemon(recvB, {
      workers: 1,
      backends: [{ name: 'web', url: web.url }],
      aggregation: AGG,
      telemetry: { serviceName: `${SERVICE}-b`, protocol: 'http/json', samplingRate: '0',
        propagateBaggage: true, metricsEnabled: true, metricsInterval: '1s' },
    });
  });

  after(async () => {
    for (const c of closers)
      await c().catch(() => {});
    await ct?.provider.shutdown().catch(() => {});
    if (daemon)
      await daemon.stop();
    if (daemonB)
      await daemonB.stop();
    await recv?.close();
    await recvB?.close();
  });

  /* the SDK v1 (2025-11-25) or v2 (2026-07-28) client, headers per call */
  async function sdkClient(rev, d = daemon) {
    const state = { headers: {}, sent: [] };
    const url = new URL(d.url);
    let client, transport;
    if (rev === LEGACY_VERSION) {
      client = new Client({ name: 'trace-v1', version: '1.0.0' });
      transport = new StreamableHTTPClientTransport(url, { fetch: headerFetch(state) });
    } else {
      client = new ModernClient({ name: 'trace-v2', version: '1.0.0' },
        { versionNegotiation: { mode: { pin: MODERN } } });
      transport = new ModernTransport(url, { fetch: headerFetch(state) });
    }
    await client.connect(transport);
    closers.push(() => client.close());
    return {
      client, transport, state,
      /* a tools/call under the test client's span; its JSON-RPC id */
      async call(name, args) {
        return ct.span(`call ${name}`, async (carrier) => {
          state.headers = carrier;
          try {
            const result = await client.callTool({ name, arguments: args });
            const sent = state.sent.filter((m) => m.method === 'tools/call' && m.params?.name === name).at(-1);
            return { result, id: sent?.id };
          } finally {
            state.headers = {};
          }
        });
      },
    };
  }

  /* what the backend recorded for the requests of trace traceId */
  async function seenOf(backend, traceId, d = daemon) {
    const deadline = Date.now() + 5000;
    for (;;) {
      let records;
      if (backend === 'web')
        records = await web.seen();
      else {
        const r = await mreq(d, 'tools/call', { name: `${backend}_seen`, arguments: {} });
        assert.equal(r.status, 200, r.text);
        records = JSON.parse(r.json.result.content[0].text);
      }
      const rec = records.filter((x) => x.span.traceId === traceId ||
        x.header?.traceparent?.includes(traceId) || x.meta?.traceparent?.includes(traceId));
      if (rec.length)
        return rec;
      assert.ok(Date.now() < deadline, `backend ${backend} saw no request of trace ${traceId}: ` +
        JSON.stringify(records).slice(-1500));
      await sleep(50);
    }
  }

  /*
   * The chain of trace traceId: vmcpd's SERVER span (child of the
   * caller's span callerSpanId), its CLIENT span, and the backend's
   * SERVER span; each found by its parent link.
   */
  async function chain(r, traceId, callerSpanId) {
    const of = (spans) => [...spans, ...(r === recv ? [] : recv.spans)].filter((s) => s.traceId === traceId);
    try {
      return await r.waitForSpans((spans) => {
        const t = of(spans);
        const server = t.find((s) => isVmcpd(s) && s.kind === 'SERVER' && s.parentSpanId === callerSpanId);
        // its CLIENT spans: the call, and maybe the backend session's
        // initialize it had to open first
        const clients = server ? t.filter((s) => isVmcpd(s) && s.kind === 'CLIENT' &&
          s.parentSpanId === server.spanId) : [];
        const backend = t.find((s) => isBackend(s) && clients.some((c) => c.spanId === s.parentSpanId));
        const client = backend && clients.find((c) => c.spanId === backend.parentSpanId);
        return backend ? { server, client, backend, all: t } : null;
      }, SPAN_WAIT, `the trace ${traceId} from span ${callerSpanId} through vmcpd into the backend`);
    } catch (e) {
      e.message += `\nthe trace's spans (service kind name span <- parent):\n` + of(r.spans).map((s) =>
        `  ${s.resource['service.name']} ${s.kind} "${s.name}" ${s.spanId} <- ${s.parentSpanId || '(root)'}`)
        .join('\n');
      throw e;
    }
  }

  /*
   * Every way span s differs from what vmcpd promises, in one list (so a
   * failure names them all): want maps an attribute to its value, or to
   * ABSENT.
   */
  const ABSENT = Symbol('absent');
  function diff(s, want, out) {
    for (const [k, v] of Object.entries(want)) {
      const got = k === 'name' ? s.name : s.attributes[k];
      if (v === ABSENT ? got !== undefined : got !== v)
        out.push(`${s.kind} "${s.name}": ${k} is ${JSON.stringify(got)}, want ` +
          (v === ABSENT ? 'none' : JSON.stringify(v)));
    }
  }

  function diffResource(s, service, pids, out) {
    const r = s.resource;
    const want = { 'service.name': service, 'service.version': '9.9.9-test', 'vmcpd.process': 'worker' };
    if (service !== SERVICE)
      delete want['service.version'];
    for (const [k, v] of Object.entries(want))
      if (r[k] !== v)
        out.push(`${s.kind} resource ${k} is ${JSON.stringify(r[k])}, want ${JSON.stringify(v)}`);
    if (s.scope.name !== 'vmcpd' || !s.scope.version)
      out.push(`${s.kind} scope is ${JSON.stringify(s.scope)}, want vmcpd and its version`);
    if (!/^.+:\d+$/.test(String(r['service.instance.id'])))
      out.push(`${s.kind} resource service.instance.id is ${JSON.stringify(r['service.instance.id'])}`);
    if (!pids.includes(r['process.pid']))
      out.push(`${s.kind} resource process.pid ${r['process.pid']} is no worker's (${pids})`);
  }

  /* the spans of one tools/call, checked against what vmcpd promises */
  async function checkToolCall({ r = recv, d = daemon, service = SERVICE, traceId, callerSpanId,
    backend, tool, rev, id, session, backendPort }) {
    // what the backend got: vmcpd's own span in the caller's trace, as the
    // traceparent header and in params._meta alike
    const rec = (await seenOf(backend, traceId, d)).find((x) => x.target === tool);
    assert.ok(rec, `the backend recorded the call of ${tool}`);
    const tp = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(rec.meta?.traceparent ?? '');
    assert.ok(tp, `params._meta.traceparent reached the backend: ${JSON.stringify(rec)}`);
    assert.equal(tp[1], traceId, 'the backend request is in the caller\'s trace');
    assert.notEqual(tp[2], callerSpanId, 'the backend request names a span of vmcpd\'s as its parent');
    if (backendPort)
      assert.equal(rec.header.traceparent, rec.meta.traceparent, 'the header and _meta agree');

    // the chain of parents, then every attribute
    const { server, client, backend: bs } = await chain(r, traceId, callerSpanId);
    assert.equal(tp[2], client.spanId, 'the backend request\'s parent is the CLIENT span');
    assert.equal(bs.resource['test.backend.label'], backend);
    const bad = [];
    const pids = await d.workerPids();
    diffResource(server, service, pids, bad);
    diffResource(client, service, pids, bad);
    diff(server, {
      name: `tools/call ${backend}_${tool}`,
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': `${backend}_${tool}`,
      'gen_ai.operation.name': 'execute_tool',
      'mcp.protocol.version': rev,
      'http.response.status_code': 200,
      'vmcpd.backend.name': backend,
      'network.protocol.name': 'http',
      'client.address': '127.0.0.1',
      'jsonrpc.request.id': id === undefined ? server.attributes['jsonrpc.request.id'] : String(id),
      'mcp.session.id': session ?? ABSENT,
      'enduser.id': ABSENT,	// an anonymous caller
      'error.type': ABSENT,
    }, bad);
    if (server.status.code === 'ERROR')
      bad.push(`SERVER status ${JSON.stringify(server.status)}`);
    // the backend request: the backend's own tool name, its revision
    diff(client, {
      name: `tools/call ${tool}`,
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': tool,
      'vmcpd.backend.name': backend,
      'mcp.protocol.version': backend === 'pipe' ? LEGACY_VERSION : rev,
      // over HTTP the id the backend saw; a stdio backend sees the
      // bridge's own (it keeps the ids on its pipe apart)
      'jsonrpc.request.id': backendPort ? String(rec.id) : client.attributes['jsonrpc.request.id'] ?? '(an id)',
      'mcp.session.id': rec.sessionId ?? client.attributes['mcp.session.id'],
      ...(backendPort ? {
        'server.address': '127.0.0.1', 'server.port': backendPort, 'http.response.status_code': 200,
      } : { 'network.transport': 'pipe', 'server.port': ABSENT }),
    }, bad);
    // (its end may trail the SERVER span's by the few microseconds between
    // the reply written and the backend call closed: not checked)
    if (client.start < server.start)
      bad.push(`the CLIENT span starts ${server.start - client.start} ns before the SERVER span`);
    assert.deepEqual(bad, [], 'the spans as vmcpd(8) and docs/ARCHITECTURE.md promise them');
    return { server, client, backend: bs, rec };
  }

  for (const rev of [LEGACY_VERSION, MODERN]) {
    for (const backend of ['web', 'pipe']) {
      test(`one trace from a ${rev} client through vmcpd into the ${backend === 'web' ? 'HTTP' : 'stdio'} backend`,
        guarded(async () => {
          const c = await sdkClient(rev);
          const msg = `${rev} ${backend}`;
          const { result, ctx } = await c.call(`${backend}_echo`, { message: msg });
          assert.equal(textOf(result.result), `Echo: ${msg}`);
          const { server } = await checkToolCall({
            traceId: ctx.traceId, callerSpanId: ctx.spanId, backend, tool: 'echo', rev,
            id: result.id, session: rev === LEGACY_VERSION ? c.transport.sessionId : undefined,
            backendPort: backend === 'web' ? web.port : undefined,
          });
          // the test client's own span is the root, in the same receiver
          const root = await recv.waitForSpans((s) => s.find((x) => x.spanId === ctx.spanId), 5000,
            'the test client\'s span');
          assert.equal(root.resource['service.name'], 'test-client');
          assert.equal(root.parentSpanId, '');
          assert.equal(server.traceId, root.traceId);
        }));
    }
  }

  test('the audit line of a traced call names its trace, its SERVER span and its backend', guarded(async () => {
    const caller = callerContext();
    const r = await mreq(daemon, 'tools/call', { name: 'web_echo', arguments: { message: 'audited' } },
      { traceparent: caller.header });
    assert.equal(r.status, 200, r.text);
    const { server } = await checkToolCall({
      traceId: caller.traceId, callerSpanId: caller.spanId, backend: 'web', tool: 'echo', rev: MODERN,
      id: 1, backendPort: web.port,
    });
    const line = await waitFor('the audit line of the traced call', async () => {
      const text = await fs.readFile(auditLog, 'utf8').catch(() => '');
      return text.split('\n').filter(Boolean).map((l) => JSON.parse(l))
        .find((e) => e.metadata?.extra?.trace_id === caller.traceId);
    }, { timeout: 5000 });
    assert.equal(line.type, 'mcp_tool_call');
    assert.equal(line.metadata.extra.span_id, server.spanId);
    assert.equal(line.metadata.extra.backend_name, 'web');
  }));

  test('a composite tool: its workflow and each step a span, each step\'s backend request under its step', guarded(async () => {
    const caller = callerContext();
    const r = await mreq(daemon, 'tools/call', { name: 'twice', arguments: { m: 'wf' } },
      { traceparent: caller.header });
    assert.equal(r.status, 200, r.text);
    assert.ok(!r.json.result.isError, r.text);
    const got = await recv.waitForSpans((spans) => {
      const t = spans.filter((s) => s.traceId === caller.traceId);
      const server = t.find((s) => isVmcpd(s) && s.kind === 'SERVER' && s.parentSpanId === caller.spanId);
      const wf = server && t.find((s) => s.kind === 'INTERNAL' && s.parentSpanId === server.spanId &&
        s.name === 'vmcpd.workflow twice');
      const steps = wf ? t.filter((s) => s.kind === 'INTERNAL' && s.parentSpanId === wf.spanId) : [];
      const clients = t.filter((s) => isVmcpd(s) && s.kind === 'CLIENT' &&
        steps.some((st) => st.spanId === s.parentSpanId));
      const backends = t.filter((s) => isBackend(s) && clients.some((c) => c.spanId === s.parentSpanId));
      return backends.length === 2 ? { server, wf, steps, clients, backends } : null;
    }, SPAN_WAIT, 'the composite tool\'s spans');
    assert.equal(got.server.name, 'tools/call twice');
    assert.deepEqual(got.steps.map((s) => s.name).sort(),
      ['vmcpd.workflow.step first', 'vmcpd.workflow.step second']);
    for (const c of got.clients) {
      assert.equal(c.name, 'tools/call echo');
      assert.equal(c.attributes['vmcpd.backend.name'], 'web');
    }
    // each step's request under its own step
    assert.notEqual(got.clients[0].parentSpanId, got.clients[1].parentSpanId);
    assert.ok(got.wf.attributes['vmcpd.workflow.id'], 'the workflow span names its run');
  }));

  test('a 2026-07-28 request with only params._meta.traceparent: that is the parent', guarded(async () => {
    const caller = callerContext();
    const r = await mreq(daemon, 'tools/call', {
      name: 'web_echo', arguments: { message: 'meta only' },
      _meta: { ...modernMeta(), traceparent: caller.header, tracestate: 'vendor=meta' },
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.result.content[0].text, 'Echo: meta only');
    const { server, client, rec } = await checkToolCall({
      traceId: caller.traceId, callerSpanId: caller.spanId, backend: 'web', tool: 'echo', rev: MODERN,
      id: 1, backendPort: web.port,
    });
    assert.equal(server.traceState, 'vendor=meta');
    // vmcpd replaced the client's _meta.traceparent with its own span
    assert.notEqual(rec.meta.traceparent, caller.header);
    assert.equal(rec.meta.tracestate, 'vendor=meta');
    assert.equal(rec.header.tracestate, 'vendor=meta');
    assert.equal(client.traceState, 'vendor=meta');
  }));

  test('the traceparent header wins over params._meta; an invalid header gives way to it',
    guarded(async () => {
      const h = callerContext();
      const m = callerContext();
      let r = await mreq(daemon, 'tools/call', {
        name: 'web_echo', arguments: { message: 'both' }, _meta: { ...modernMeta(), traceparent: m.header },
      }, { traceparent: h.header });
      assert.equal(r.status, 200, r.text);
      const rec = (await seenOf('web', h.traceId)).find((x) => x.target === 'echo');
      assert.ok(rec.meta.traceparent.startsWith(`00-${h.traceId}-`), 'the header\'s trace went on');
      await chain(recv, h.traceId, h.spanId);
      const m2 = callerContext();
      r = await mreq(daemon, 'tools/call', {
        name: 'web_echo', arguments: { message: 'bad header' }, _meta: { ...modernMeta(), traceparent: m2.header },
      }, { traceparent: '00-not-a-trace-01' });
      assert.equal(r.status, 200, r.text);
      const rec2 = (await seenOf('web', m2.traceId)).find((x) => x.target === 'echo');
      assert.ok(rec2?.header.traceparent.startsWith(`00-${m2.traceId}-`),
        `the _meta's trace went on past an invalid header: ${JSON.stringify(rec2)}`);
      await chain(recv, m2.traceId, m2.spanId);
      assert.equal(recv.trace(m.traceId).filter(isVmcpd).length, 0,
        'no vmcpd span in the trace of the _meta the header overrode');
    }));

  test('an unsampled caller: no vmcpd span, and the backend gets the caller\'s traceparent',
    guarded(async () => {
      const c = await sdkClient(LEGACY_VERSION);
      const caller = callerContext({ sampled: false });
      c.state.headers = { traceparent: caller.header };
      const res = await c.client.callTool({ name: 'web_echo', arguments: { message: 'unsampled' } });
      c.state.headers = {};
      assert.equal(textOf(res), 'Echo: unsampled');
      const rec = (await seenOf('web', caller.traceId)).find((x) => x.target === 'echo');
      assert.equal(rec.header.traceparent, caller.header, 'the header passed on unchanged');
      if (rec.meta?.traceparent != null)
        assert.equal(rec.meta.traceparent, caller.header, '_meta carries the same');
      assert.equal(rec.span.sampled, false, 'the backend did not sample it either');
      // a sampled call after it lands; the unsampled one left nothing
      const { ctx } = await c.call('web_echo', { message: 'sentinel' });
      await chain(recv, ctx.traceId, ctx.spanId);
      await sleep(1000);
      assert.deepEqual(recv.trace(caller.traceId).map((s) => s.name), [], 'no span of the unsampled trace');
    }));

  test('baggage is not passed on by default', guarded(async () => {
    const caller = callerContext();
    const r = await mreq(daemon, 'tools/call', {
      name: 'web_echo', arguments: { message: 'bag' }, _meta: { ...modernMeta(), baggage: 'user=alice' },
    }, { traceparent: caller.header, baggage: 'user=alice' });
    assert.equal(r.status, 200, r.text);
    const rec = (await seenOf('web', caller.traceId)).find((x) => x.target === 'echo');
    assert.equal(rec.header.baggage, null, 'no baggage header');
    assert.equal(rec.meta?.baggage ?? null, null, 'no _meta.baggage');
  }));

  test('errors: a tool result with isError, a JSON-RPC error', guarded(async () => {
    const { sid } = await openSession(daemon.port);
    const caller = callerContext();
    const id = nextId();
    let r = await httpRequest(daemon.port, {
      headers: mcpHeaders({ session: sid, extra: { traceparent: caller.header } }),
      body: { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'web_fail', arguments: { message: 'x' } } },
    });
    assert.equal(r.json.result.isError, true, r.text);
    const { server } = await chain(recv, caller.traceId, caller.spanId);
    assert.equal(server.attributes['error.type'], 'tool_error');
    assert.equal(server.status.code, 'ERROR');
    assert.equal(server.attributes['jsonrpc.request.id'], String(id));
    assert.equal(server.attributes['mcp.session.id'], sid);

    const bad = callerContext();
    r = await httpRequest(daemon.port, {
      headers: mcpHeaders({ session: sid, extra: { traceparent: bad.header } }),
      body: { jsonrpc: '2.0', id: nextId(), method: 'tools/call', params: { name: 'no_such_tool', arguments: {} } },
    });
    const code = r.json?.error?.code;
    assert.equal(typeof code, 'number', r.text);
    const s = await recv.waitForSpans((sp) => sp.find((x) => isVmcpd(x) && x.traceId === bad.traceId &&
      x.kind === 'SERVER'), SPAN_WAIT, 'the SERVER span of the failed call');
    assert.equal(s.name, 'tools/call no_such_tool');
    assert.equal(s.attributes['error.type'], String(code));
    assert.equal(s.status.code, 'ERROR');
  }));

  test('prompts/get and resources/read spans name their target', guarded(async () => {
    const caller = callerContext();
    let r = await mreq(daemon, 'prompts/get', { name: 'web_greet', arguments: { who: 'x' } },
      { traceparent: caller.header });
    assert.equal(r.status, 200, r.text);
    let { server, client } = await chain(recv, caller.traceId, caller.spanId);
    assert.equal(server.name, 'prompts/get web_greet');
    assert.equal(server.attributes['gen_ai.prompt.name'], 'web_greet');
    assert.equal(client.name, 'prompts/get greet');
    assert.equal(client.attributes['gen_ai.prompt.name'], 'greet');

    const c2 = callerContext();
    r = await mreq(daemon, 'resources/read', { uri: 'test://web/doc' }, { traceparent: c2.header });
    assert.equal(r.status, 200, r.text);
    ({ server, client } = await chain(recv, c2.traceId, c2.spanId));
    assert.equal(server.name, 'resources/read test://web/doc');
    assert.equal(server.attributes['mcp.resource.uri'], 'test://web/doc');
    assert.equal(client.attributes['mcp.resource.uri'], 'test://web/doc');
  }));

  test('the builder\'s list fetches are root CLIENT spans of its own', guarded(async () => {
    const s = await recv.waitForSpans((sp) => sp.find((x) => isVmcpd(x) && x.kind === 'CLIENT' &&
      x.resource['vmcpd.process'] === 'builder' && x.attributes['mcp.method.name'] === 'tools/list' &&
      x.attributes['vmcpd.backend.name'] === 'web'), SPAN_WAIT, 'a tools/list CLIENT span of the builder');
    assert.equal(s.parentSpanId, '');
    assert.equal(s.name, 'tools/list');
  }));

  test('the collector gets the configured headers, protobuf, and the custom attributes',
    guarded(async () => {
      await recv.waitForSpans((sp) => sp.some(isVmcpd), SPAN_WAIT, 'any vmcpd span');
      const reqs = recv.requests.filter((x) => x.path === '/v1/traces' &&
        x.headers['x-collector-tenant'] !== undefined);
      assert.ok(reqs.length > 0, 'vmcpd\'s exports carry X-Collector-Tenant');
      for (const x of reqs) {
        assert.equal(x.headers['x-collector-tenant'], 'interop');
        assert.equal(x.headers['x-collector-secret'], SECRET, 'headersFromEnv');
        assert.equal(x.contentType, 'application/x-protobuf');
      }
      const s = recv.spans.find(isVmcpd);
      assert.equal(s.resource['deployment.environment.name'], 'interop');
      assert.equal(s.resource.team, 'tracing');
      assert.equal(s.resource['service.version'], '9.9.9-test');
      assert.deepEqual(recv.problems, []);
      assert.doesNotMatch(daemon.proc.output, new RegExp(SECRET), 'the collector secret is never logged');
    }));

  test('samplingRate "0": a call without a parent leaves no span', guarded(async () => {
    const c = await sdkClient(MODERN, daemonB);
    for (let i = 0; i < 5; i++)
      assert.equal(textOf(await c.client.callTool({ name: 'web_echo', arguments: { message: `u${i}` } })),
        `Echo: u${i}`);
    // a sampled caller is traced all the same (parent-based)
    const { ctx } = await c.call('web_echo', { message: 'sampled' });
    await chain(recvB, ctx.traceId, ctx.spanId);
    await sleep(1000);
    const other = recvB.spans.filter((s) => isVmcpd(s) && s.traceId !== ctx.traceId);
    assert.deepEqual(other.map((s) => `${s.kind} ${s.name}`), [], 'no span of an unsampled request');
  }));

  test('OTLP/JSON: the same spans, decoded by the official definitions', guarded(async () => {
    const c = await sdkClient(LEGACY_VERSION, daemonB);
    const { result, ctx } = await c.call('web_echo', { message: 'json' });
    assert.equal(textOf(result.result), 'Echo: json');
    await checkToolCall({ r: recvB, d: daemonB, service: `${SERVICE}-b`, traceId: ctx.traceId,
      callerSpanId: ctx.spanId, backend: 'web', tool: 'echo', rev: LEGACY_VERSION, id: result.id,
      session: c.transport.sessionId, backendPort: web.port });
    const reqs = recvB.requests.filter((x) => x.path === '/v1/traces');
    assert.ok(reqs.length > 0);
    for (const x of reqs)
      assert.equal(x.contentType, 'application/json');
    assert.ok(recvB.spans.filter(isVmcpd).every((s) => s.format === 'json'));
    assert.deepEqual(recvB.problems, [], 'OTLP/JSON as the specification has it');
  }));

  test('metricsEnabled: the operation durations go to /v1/metrics (OTLP/JSON)', guarded(async () => {
    const c = await sdkClient(MODERN, daemonB);
    assert.equal(textOf(await c.client.callTool({ name: 'web_echo', arguments: { message: 'm' } })), 'Echo: m');
    const hist = (name) => recvB.metrics.find((m) => m.name === name && m.type === 'histogram' &&
      m.points.some((p) => Number(p.count) > 0));
    const server = await waitFor('mcp.server.operation.duration on /v1/metrics', () =>
      hist('mcp.server.operation.duration'), { timeout: 8000 });
    assert.equal(server.unit, 's');
    assert.equal(server.resource['service.name'], `${SERVICE}-b`);
    assert.ok(server.points.some((p) => p.attributes['mcp.method.name'] === 'tools/call'),
      JSON.stringify(server.points.map((p) => p.attributes)));
    await waitFor('mcp.client.operation.duration on /v1/metrics', () =>
      hist('mcp.client.operation.duration'), { timeout: 8000 });
    assert.ok(recvB.requests.filter((x) => x.path === '/v1/metrics').every((x) =>
      x.contentType === 'application/json'));
    assert.deepEqual(recvB.problems, []);
  }));

  test('propagateBaggage: true passes a caller\'s baggage on', guarded(async () => {
    const caller = callerContext();
    const r = await mreq(daemonB, 'tools/call', {
      name: 'web_echo', arguments: { message: 'bag on' }, _meta: { ...modernMeta(), baggage: 'user=bob' },
    }, { traceparent: caller.header, baggage: 'user=bob' });
    assert.equal(r.status, 200, r.text);
    const rec = (await seenOf('web', caller.traceId, daemonB)).find((x) => x.target === 'echo');
    assert.equal(rec.header.baggage, 'user=bob');
    assert.equal(rec.meta.baggage, 'user=bob');
  }));
});
