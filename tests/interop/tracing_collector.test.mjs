// A hostile OpenTelemetry collector (issue 28): down (its port closed),
// hanging, slow, answering 500, answering 200 with garbage, answering
// bytes that are not HTTP, resetting the connection.  Whatever it does, a
// traced tools/call answers as it does with a healthy collector and about
// as fast (each call far below the export timeout), the exporter's
// counters on /metrics move (vmcpd_otel_export_failures_total,
// vmcpd_otel_spans_dropped_total), no worker dies, and exports resume once
// the collector is back.  With a tiny maxQueueSize and a hanging
// collector, a few thousand calls leave the workers' RSS bounded: the
// spans are dropped, not kept.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';

import { guarded, freePort, startTestBackend, waitFor, MCP_ACCEPT } from './lib/harness.mjs';
import { useMulti, MODERN, modernMeta } from './lib/multi.mjs';
import { startReceiver } from './lib/otlp_receiver.mjs';
import { startTracedDaemon, callerContext, otelCounters, isVmcpd } from './lib/tracing.mjs';

useMulti();

const QUEUE = 16;
const EXPORT_TIMEOUT_MS = 2000;
const SLOW_MS = 1500;
// a call that waited on an export would take EXPORT_TIMEOUT_MS or SLOW_MS
const CALL_BOUND_MS = 1000;

function rssKiB(pid) {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m[1]);
}

describe('a hostile collector', () => {
  let recv, backend, daemon, pids, baseline;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

  before(async () => {
    recv = await startReceiver();
    backend = await startTestBackend();
    daemon = await startTracedDaemon(recv, {
      backends: [{ name: 'b', url: backend.url }],
      aggregation: 'conflictResolution: prefix\nconflictResolutionConfig:\n  prefixMode: onConflict',
      diag: await freePort(),
      telemetry: { maxQueueSize: QUEUE, maxExportBatchSize: 8,
        exportTimeout: `${EXPORT_TIMEOUT_MS}ms` },
    });
    pids = await daemon.workerPids();
  });

  after(async () => {
    agent.destroy();
    if (recv) {
      recv.setMode('ok');
      if (!recv.server.listening)
        await recv.up().catch(() => {});
    }
    if (daemon)
      await daemon.stop();
    await recv?.close();
  });

  /* one sampled 2026-07-28 tools/call (a fresh trace): {ms, status, result} */
  function call(message, tracestate) {
    const caller = callerContext();
    const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call',
      params: { name: 'echo', arguments: { message }, _meta: modernMeta() } });
    const headers = { 'Content-Type': 'application/json', Accept: MCP_ACCEPT,
      'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tools/call', 'Mcp-Name': 'echo',
      traceparent: caller.header, 'Content-Length': Buffer.byteLength(body) };
    if (tracestate)
      headers.tracestate = tracestate;
    const t0 = Date.now();
    return new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: daemon.port, method: 'POST', path: '/mcp',
        agent, headers }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ ms: Date.now() - t0, status: res.statusCode, result: json?.result, text,
            traceId: caller.traceId });
        });
      });
      req.setTimeout(15000, () => req.destroy(new Error('no answer within 15 s')));
      req.on('error', reject);
      req.end(body);
    });
  }

  /* n calls, all answered as with a healthy collector and within the bound */
  async function calls(n, what) {
    const out = [];
    for (let i = 0; i < n; i++) {
      const r = await call('same');
      assert.equal(r.status, 200, `${what}: ${r.text}`);
      assert.deepEqual(r.result, baseline, `${what}: the same answer`);
      assert.ok(r.ms < CALL_BOUND_MS, `${what}: a call took ${r.ms} ms (bound ${CALL_BOUND_MS})`);
      out.push(r);
    }
    return out;
  }

  /* the counters once the last test's exports are over (stable 600 ms) */
  async function settled() {
    let last = await otelCounters(daemon.diag);
    for (let i = 0; i < 10; i++) {
      await new Promise((r) => setTimeout(r, 600));
      const c = await otelCounters(daemon.diag);
      if (c.failures === last.failures && c.dropped === last.dropped && c.exported === last.exported)
        return c;
      last = c;
    }
    return last;
  }

  async function stillUp(what) {
    assert.equal((await daemon.health()).status, 200, `${what}: /healthz`);
    assert.deepEqual(await daemon.workerPids(), pids, `${what}: the same workers (none died)`);
  }

  test('a healthy collector: the baseline answer, spans exported', guarded(async () => {
    const r = await call('same');
    assert.equal(r.status, 200, r.text);
    baseline = r.result;
    assert.equal(baseline.content[0].text, 'Echo: same');
    await recv.waitForSpans((s) => s.some((x) => isVmcpd(x) && x.traceId === r.traceId), 10000,
      'the baseline call\'s spans');
    const c = await otelCounters(daemon.diag);
    assert.equal(c.status, 200);
    for (const k of ['dropped', 'exported', 'failures'])
      assert.equal(typeof c[k], 'number', `${k} counter on /metrics`);
    assert.ok(c.exported > 0, `exported ${c.exported}`);
    // healthy: more calls are exported, and nothing fails or is dropped,
    // so what the tests below count is the collector's doing
    const last = (await calls(10, 'healthy')).at(-1);
    await recv.waitForSpans((s) => s.some((x) => isVmcpd(x) && x.traceId === last.traceId), 10000,
      'the spans of the healthy calls');
    const c2 = await otelCounters(daemon.diag);
    assert.ok(c2.exported > c.exported, `exported ${c.exported} -> ${c2.exported}`);
    assert.equal(c2.failures, c.failures, 'no export failed');
    assert.equal(c2.dropped, c.dropped, 'no span dropped');
  }));

  const failing = [
    ['down (its port closed)', async () => recv.down(), async () => recv.up()],
    ['answering 500', () => recv.setMode('500')],
    ['answering bytes that are not HTTP', () => recv.setMode('junk')],
    ['resetting the connection', () => recv.setMode('reset')],
    ['hanging', () => recv.setMode('hang')],
  ];
  for (const [what, set, unset] of failing) {
    test(`a collector ${what}: calls unaffected, failures counted`, guarded(async () => {
      assert.ok(baseline, 'the baseline test ran');
      const before = await settled();
      await set();
      try {
        await calls(30, what);
        await waitFor(`export failures counted (${what})`, async () => {
          const c = await otelCounters(daemon.diag);
          return c.failures > before.failures;
        }, { timeout: EXPORT_TIMEOUT_MS + 5000, interval: 100 });
        await stillUp(what);
      } finally {
        recv.setMode('ok');
        if (unset)
          await unset();
      }
    }));
  }

  test('a slow collector: calls unaffected, the full queue drops the oldest', guarded(async () => {
    const before = await settled();
    recv.setMode('slow', { ms: SLOW_MS });
    try {
      await calls(60, 'slow');
      await waitFor('spans dropped behind a slow export', async () =>
        (await otelCounters(daemon.diag)).dropped > before.dropped, { timeout: SLOW_MS + 5000 });
      await stillUp('slow');
    } finally {
      recv.setMode('ok');
    }
  }));

  test('a collector answering 200 with garbage: calls unaffected, vmcpd unharmed', guarded(async () => {
    const before = await settled();
    recv.setMode('garbage');
    try {
      await calls(30, 'garbage');
      await waitFor('the garbage answers accounted', async () => {
        const c = await otelCounters(daemon.diag);
        return c.exported + c.failures > before.exported + before.failures;
      });
      await stillUp('garbage');
    } finally {
      recv.setMode('ok');
    }
  }));

  test('back to healthy: spans land again', guarded(async () => {
    const r = (await calls(1, 'healthy again'))[0];
    await recv.waitForSpans((s) => s.some((x) => isVmcpd(x) && x.traceId === r.traceId),
      EXPORT_TIMEOUT_MS + 10000, 'the spans of a call made after the collector came back');
  }));

  test('a hanging collector and thousands of calls: the queue stays bounded, so does RSS',
    guarded(async () => {
      const N = 2000;
      const before = await settled();
      const rss0 = Object.fromEntries(pids.map((p) => [p, rssKiB(p)]));
      recv.setMode('hang');
      // a long tracestate (the W3C maximum is 512 characters): bigger spans
      const ts = Array.from({ length: 20 }, (_, i) => `v${i}=${'x'.repeat(20)}`).join(',');
      try {
        let next = 0;
        const worker = async () => {
          while (next < N) {
            next++;
            const r = await call('same', ts);
            assert.equal(r.status, 200, r.text);
            assert.deepEqual(r.result, baseline);
          }
        };
        await Promise.all(Array.from({ length: 16 }, worker));
        const c = await otelCounters(daemon.diag);
        // 2 spans a call (SERVER, CLIENT); a worker holds QUEUE of them
        // and the batches in flight at most
        assert.ok(c.dropped - before.dropped >= N,
          `spans dropped: ${c.dropped - before.dropped} of ${2 * N} made, queue ${QUEUE} per worker`);
        for (const p of pids) {
          const grew = rssKiB(p) - rss0[p];
          assert.ok(grew < 64 * 1024, `worker ${p}: RSS grew by ${grew} KiB over ${N} calls`);
        }
        await stillUp('hang, many calls');
      } finally {
        recv.setMode('ok');
      }
    }));
});

// A stopping vmcpd sends the spans it still holds: with an export
// interval longer than the test and a batch it never fills, the last
// call's spans reach the collector only through the drain's flush.
describe('the spans of the last calls when vmcpd stops', () => {
  let recv, backend, daemon;

  before(async () => {
    recv = await startReceiver();
    backend = await startTestBackend();
    daemon = await startTracedDaemon(recv, {
      backends: [{ name: 'b', url: backend.url }],
      aggregation: 'conflictResolution: prefix\nconflictResolutionConfig:\n  prefixMode: onConflict',
      telemetry: { exportInterval: '600s', maxExportBatchSize: 512 },
    });
  });

  after(async () => {
    if (daemon && !daemon.stopped)
      await daemon.stop();
    await recv?.close();
  });

  test('sent before the workers exit', guarded(async () => {
    const caller = callerContext();
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call',
      params: { name: 'echo', arguments: { message: 'last' }, _meta: modernMeta() } });
    const res = await fetch(`http://127.0.0.1:${daemon.port}/mcp`, { method: 'POST', body,
      headers: { 'Content-Type': 'application/json', Accept: MCP_ACCEPT,
        'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tools/call', 'Mcp-Name': 'echo',
        traceparent: caller.header } });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.deepEqual(JSON.parse(text).result?.content, [{ type: 'text', text: 'Echo: last' }], text);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(recv.spans.filter((s) => s.traceId === caller.traceId).length, 0,
      'nothing exported before the stop (the interval is 600 s)');
    await daemon.stop();
    const spans = await recv.waitForSpans((s) => {
      const mine = s.filter((x) => isVmcpd(x) && x.traceId === caller.traceId);
      return mine.some((x) => x.kind === 'SERVER') && mine.some((x) => x.kind === 'CLIENT') ?
        mine : null;
    }, 10000, 'the last call\'s SERVER and CLIENT spans after the stop');
    const server = spans.find((x) => x.kind === 'SERVER');
    assert.equal(server.parentSpanId, caller.spanId, `the SERVER span's parent: ${server.parentSpanId}`);
  }));
});
