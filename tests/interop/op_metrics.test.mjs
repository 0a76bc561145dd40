// The MCP operation duration histograms in /metrics (issue 28, metrics):
// mcp_server_operation_duration_seconds{method, tool, prompt, backend,
// outcome} and mcp_client_operation_duration_seconds{backend, method},
// with the OpenTelemetry MCP conventions' buckets.  Two backends behind
// two workers: calls to a tool of each (over both revisions), a
// composite tool, an unknown tool and a prompt; their series counted
// exactly, summed over the workers' slots, the unknown name in no
// label, and promtool's lint.
import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';

import {
  useHarness, guarded, Daemon, tmpDir, freePort, httpRequest, openSession, rpc, waitFor, HOST,
} from './lib/harness.mjs';
import { useMulti, startSpec, multiConfig, modern } from './lib/multi.mjs';
import { parseMetrics, promtool } from './lib/prom.mjs';

useHarness();
useMulti();

const SERVER = 'mcp_server_operation_duration_seconds';
const CLIENT = 'mcp_client_operation_duration_seconds';
const LE = ['0.01', '0.02', '0.05', '0.1', '0.2', '0.5', '1', '2', '5', '10',
  '30', '60', '120', '300', '+Inf'];

/* the samples of name whose labels are exactly labels (le aside) */
const series = (m, name, labels) => m.samples.filter((s) => s.name === name &&
  [...s.labels.keys()].filter((k) => k !== 'le').length === Object.keys(labels).length &&
  Object.entries(labels).every(([k, v]) => s.labels.get(k) === v));
const count = (m, name, labels) => {
  const s = series(m, `${name}_count`, labels);
  assert.ok(s.length <= 1);
  return s[0]?.value ?? 0;
};
// a composite tool: vmcpd's own, no backend; its step is a backend call
const COMPOSITE = `
compositeTools:
  - name: combo
    description: one step on backend one
    steps:
      - id: a
        tool: one.alpha
        arguments: {x: "c"}
`;
const op = (method, tool, prompt, backend, outcome) =>
  ({ method, tool, prompt, backend, outcome });

describe('MCP operation durations in /metrics', () => {
  let daemon, diag;

  before(async () => {
    const one = await startSpec({ label: 'one', tools: ['alpha'], prompts: ['greet'] });
    const two = await startSpec({ label: 'two', tools: ['beta'] });
    diag = await freePort();
    const dir = await tmpDir('vmcpd-opm-');
    daemon = new Daemon(dir, path.join(dir, 'vmcpd.yaml'), { workers: 2 });
    await daemon.writeConfig(multiConfig({
      portFile: daemon.portFile, stateDir: daemon.stateDir, workers: 2,
      backends: [{ name: 'one', url: one.url }, { name: 'two', url: two.url }],
      extra: COMPOSITE,
    }).replace('daemon:\n', `daemon:\n  diagnostics: ${HOST}:${diag}\n`));
    await daemon.start();
  });

  test('tools and prompts of the view by backend and outcome; others folded', guarded(async () => {
    const { sid } = await openSession(daemon.port);
    // both backends in the view, their names prefixed (the default):
    // the labels name tools as the view does (tools/list is not
    // counted below)
    await waitFor('both tools listed', async () => {
      const l = await rpc(daemon.port, sid, 'tools/list', {});
      const names = (l.json?.result?.tools ?? []).map((t) => t.name);
      return ['one_alpha', 'two_beta', 'combo'].every((n) => names.includes(n));
    });
    const call = async (name, expect = 200) => {
      const r = await rpc(daemon.port, sid, 'tools/call', { name, arguments: { x: 'y' } });
      assert.equal(r.status, expect, r.text);
      return r;
    };
    for (let i = 0; i < 3; i++)
      assert.equal((await call('one_alpha')).json.result?.content?.[0]?.text, 'one:alpha:{"x":"y"}');
    for (let i = 0; i < 2; i++)
      assert.equal((await call('two_beta')).json.result?.content?.[0]?.text, 'two:beta:{"x":"y"}');
    // 2026-07-28: the other codec's route
    const mr = await modern(daemon.port, 'tools/call', { name: 'two_beta', arguments: { x: 'z' } },
      { 'Mcp-Name': 'two_beta' });
    assert.equal(mr.status, 200, mr.text);
    assert.equal(mr.json.result?.content?.[0]?.text, 'two:beta:{"x":"z"}', mr.text);
    const c = await call('combo');
    assert.ok(!c.json.result?.isError && c.json.result, c.text);
    const bad = await call('no_such_tool');
    assert.ok(bad.json.error, bad.text);
    const p = await rpc(daemon.port, sid, 'prompts/get', { name: 'one_greet', arguments: { who: 'ann' } });
    assert.equal(p.status, 200, p.text);
    assert.ok(p.json.result?.messages, p.text);

    // a reply is counted just after it is written: the last one may be
    // a moment behind the client that read it
    let r, m;
    await waitFor('the last call counted', async () => {
      r = await httpRequest(diag, { method: 'GET', path: '/metrics', timeout: 10000 });
      assert.equal(r.status, 200, r.text);
      m = parseMetrics(r.text);
      return count(m, SERVER, op('prompts/get', '', 'one_greet', 'one', 'ok')) === 1;
    }, { timeout: 5000 });
    assert.equal(m.types.get(SERVER), 'histogram');
    assert.equal(m.types.get(CLIENT), 'histogram');
    // every server series has the same five labels; no name outside the view
    for (const s of m.samples.filter((x) => x.name.startsWith(SERVER))) {
      const keys = [...s.labels.keys()].filter((k) => k !== 'le').sort();
      assert.deepEqual(keys, ['backend', 'method', 'outcome', 'prompt', 'tool'], s.name);
      assert.doesNotMatch([...s.labels.values()].join(' '), /no_such_tool/);
    }
    assert.equal(count(m, SERVER, op('tools/call', 'one_alpha', '', 'one', 'ok')), 3, r.text);
    assert.equal(count(m, SERVER, op('tools/call', 'two_beta', '', 'two', 'ok')), 3, r.text);
    assert.equal(count(m, SERVER, op('tools/call', '', '', '', 'rpc_error')), 1, r.text);
    assert.equal(count(m, SERVER, op('tools/call', 'combo', '', '', 'ok')), 1, r.text);
    assert.equal(count(m, SERVER, op('prompts/get', '', 'one_greet', 'one', 'ok')), 1, r.text);
    assert.equal(series(m, `${SERVER}_count`, {}).length, 0);
    const toolSeries = m.samples.filter((x) => x.name === `${SERVER}_count` &&
      x.labels.get('method') === 'tools/call');
    assert.equal(toolSeries.length, 4, r.text);
    assert.equal(count(m, SERVER, op('initialize', '', '', '', 'ok')), 1, r.text);
    assert.equal(count(m, SERVER, op('notifications/initialized', '', '', '', 'ok')), 1, r.text);
    // the buckets: OpenTelemetry's bounds, cumulative, +Inf the count
    const b = series(m, `${SERVER}_bucket`, op('tools/call', 'one_alpha', '', 'one', 'ok'));
    assert.deepEqual(b.map((s) => s.labels.get('le')), LE);
    for (let i = 1; i < b.length; i++)
      assert.ok(b[i].value >= b[i - 1].value);
    assert.equal(b.at(-1).value, 3);
    assert.ok(series(m, `${SERVER}_sum`, op('tools/call', 'one_alpha', '', 'one', 'ok'))[0].value > 0);

    // the backend requests: the calls by backend and method, and the
    // builder's lists (its own slot) among them
    // with the composite's step
    assert.equal(count(m, CLIENT, { backend: 'one', method: 'tools/call' }), 4, r.text);
    assert.equal(count(m, CLIENT, { backend: 'two', method: 'tools/call' }), 3, r.text);
    assert.equal(count(m, CLIENT, { backend: 'one', method: 'prompts/get' }), 1, r.text);
    assert.equal(count(m, CLIENT, { backend: 'two', method: 'prompts/get' }), 0, r.text);
    for (const be of ['one', 'two']) {
      assert.ok(count(m, CLIENT, { backend: be, method: 'initialize' }) >= 1, r.text);
      assert.ok(count(m, CLIENT, { backend: be, method: 'tools/list' }) >= 1, r.text);
    }
    for (const s of m.samples.filter((x) => x.name.startsWith(CLIENT)))
      assert.notEqual(s.labels.get('method'), 'other', `${s.name}: ${r.text}`);
    const tool = promtool();
    if (tool)
      execFileSync(tool, ['check', 'metrics'], { input: r.text, timeout: 20000 });
  }));
});
