// Naming conflicts between real SDK backends that offer the same tool and
// prompt names, resolved by each aggregation strategy; filters,
// visibility and overrides; duplicate resource URIs; and determinism:
// the same backends listed in another order give byte-identical lists.
//
// Five SDK backends (lib/spec-backend.mjs) serve every scenario; each
// scenario is its own vmcpd.  Every tool answers "<label>:<own name>:
// <arguments>", so a call shows which backend ran it under which name.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';

import { guarded, mcpPost, rpc } from './lib/harness.mjs';
import {
  useMulti, startMulti, startSpec, openSessionCaps, errorLines, serve, jsonBody, modern,
} from './lib/multi.mjs';

useMulti();

const SPECS = {
  alpha: {
    label: 'alpha',
    tools: ['shared', 'dup2', 'onlyA',
      { name: 'annotated', annotations: { title: 'Orig', readOnlyHint: false, destructiveHint: true } }],
    prompts: ['greet', 'onlyAp'],
    resources: [{ uri: 'test://shared/doc', text: 'alpha doc' }, { uri: 'test://alpha/own', text: 'alpha own' }],
    templates: [{ name: 'shared-t', uriTemplate: 'test://shared/{id}' }],
  },
  beta: {
    label: 'beta',
    tools: ['shared', 'dup2', 'onlyB'],
    prompts: ['greet'],
    resources: [{ uri: 'test://shared/doc', text: 'beta doc' }],
    templates: [{ name: 'shared-t', uriTemplate: 'test://shared/{id}' },
      { name: 'beta-t', uriTemplate: 'test://beta/{id}' }],
  },
  gamma: { label: 'gamma', tools: ['shared', 'onlyG'] },
  gen1: { label: 'gen1', tools: ['b_x', 'y'] },
  gen2: { label: 'gen2', tools: ['x'] },
};

let be = {};
const daemons = [];

before(async () => {
  const started = await Promise.all(Object.values(SPECS).map((s) => startSpec(s)));
  be = Object.fromEntries(Object.keys(SPECS).map((k, i) => [k, started[i]]));
});

after(async () => {
  for (const d of daemons)
    if (!d.stopped && !d.proc.exited)
      await d.stop();
});

/* A vmcpd (one worker) on backends [[configName, specKey]...]. */
async function scenario(backends, aggregation) {
  const d = await startMulti({
    workers: 1,
    backends: backends.map(([name, k]) => ({ name, url: be[k].url })),
    aggregation,
  });
  daemons.push(d);
  const { sid } = await openSessionCaps(d.port);
  const req = async (method, params) => {
    const r = await rpc(d.port, sid, method, params, { timeout: 20000 });
    assert.equal(r.status, 200, `${method}: ${r.text}`);
    return r.json;
  };
  const ok = async (method, params) => {
    const j = await req(method, params);
    assert.equal(j.error, undefined, `${method} ${JSON.stringify(params)}: ${JSON.stringify(j.error)}`);
    return j.result;
  };
  return {
    d, sid, req, ok,
    tools: async () => (await ok('tools/list', {})).tools,
    toolNames: async () => (await ok('tools/list', {})).tools.map((t) => t.name),
    promptNames: async () => (await ok('prompts/list', {})).prompts.map((p) => p.name),
    call: async (name, x = '1') => {
      const r = await ok('tools/call', { name, arguments: { x } });
      return r.content[0].text;
    },
    /* a call that must fail as an unknown tool */
    unknown: async (name) => {
      const j = await req('tools/call', { name, arguments: {} });
      assert.ok(j.error, `${name} must not be callable: ${JSON.stringify(j.result)}`);
      assert.equal(j.error.code, -32602, JSON.stringify(j.error));
      assert.match(j.error.message, /^Unknown tool/);
    },
    stop: () => d.stop(),
  };
}

const sorted = (a) => [...a].sort();

describe('conflict resolution between SDK backends', () => {
  test('prefix always: every tool and prompt is <backend>_<name>', guarded(async () => {
    const s = await scenario([['gamma', 'gamma'], ['beta', 'beta'], ['alpha', 'alpha']],
      'conflictResolution: prefix\nconflictResolutionConfig:\n  prefixMode: always');
    assert.deepEqual(sorted(await s.toolNames()), ['alpha_annotated', 'alpha_dup2', 'alpha_onlyA',
      'alpha_shared', 'beta_dup2', 'beta_onlyB', 'beta_shared', 'gamma_onlyG', 'gamma_shared']);
    assert.equal(await s.call('alpha_shared', 'a'), 'alpha:shared:{"x":"a"}');
    assert.equal(await s.call('beta_shared', 'b'), 'beta:shared:{"x":"b"}');
    assert.equal(await s.call('gamma_shared', 'g'), 'gamma:shared:{"x":"g"}');
    assert.equal(await s.call('gamma_onlyG'), 'gamma:onlyG:{"x":"1"}');
    await s.unknown('shared');
    await s.unknown('onlyG');

    // prompts are prefixed like tools and routed back under their own name
    assert.deepEqual(sorted(await s.promptNames()), ['alpha_greet', 'alpha_onlyAp', 'beta_greet']);
    for (const b of ['alpha', 'beta']) {
      const p = await s.ok('prompts/get', { name: `${b}_greet`, arguments: { who: 'bob' } });
      assert.equal(p.messages[0].content.text, `${b}:greet:bob`);
    }
    const g = await s.req('prompts/get', { name: 'greet', arguments: { who: 'x' } });
    assert.equal(g.error?.code, -32602, JSON.stringify(g));
    const c = await s.ok('completion/complete', { ref: { type: 'ref/prompt', name: 'alpha_greet' },
      argument: { name: 'who', value: 'al' } });
    assert.deepEqual(c.completion.values, ['alice', 'albert']);
    await s.stop();
  }));

  test('duplicate resource URIs and templates: the first backend in sorted order wins',
    guarded(async () => {
      // beta is listed first; alpha still wins (sorted order)
      const s = await scenario([['beta', 'beta'], ['alpha', 'alpha']],
        'conflictResolution: prefix\nconflictResolutionConfig:\n  prefixMode: always');
      const res = (await s.ok('resources/list', {})).resources;
      assert.deepEqual(sorted(res.map((r) => r.uri)), ['test://alpha/own', 'test://shared/doc']);
      const doc = await s.ok('resources/read', { uri: 'test://shared/doc' });
      assert.equal(doc.contents[0].text, 'alpha doc');
      assert.equal((await s.ok('resources/read', { uri: 'test://alpha/own' })).contents[0].text, 'alpha own');
      const tmpl = (await s.ok('resources/templates/list', {})).resourceTemplates;
      assert.deepEqual(sorted(tmpl.map((t) => t.uriTemplate)), ['test://beta/{id}', 'test://shared/{id}']);
      // never renamed; a template read forwards the concrete URI as is
      assert.equal((await s.ok('resources/read', { uri: 'test://shared/42' })).contents[0].text,
        'alpha:test://shared/42');
      assert.equal((await s.ok('resources/read', { uri: 'test://beta/7' })).contents[0].text,
        'beta:test://beta/7');
      const miss = await s.req('resources/read', { uri: 'test://nobody/1' });
      assert.equal(miss.error?.code, -32002, JSON.stringify(miss));
      const log = errorLines(s.d).join('\n');
      assert.match(log, /resource "test:\/\/shared\/doc" of backend "beta" dropped: already offered by backend "alpha"/);
      assert.match(log, /resource template "test:\/\/shared\/\{id\}" of backend "beta" dropped/);
      await s.stop();
    }));

  test('prefix onConflict (custom prefixFormat): only names claimed twice', guarded(async () => {
    const s = await scenario([['alpha', 'alpha'], ['beta', 'beta'], ['gamma', 'gamma']],
      'conflictResolution: prefix\nconflictResolutionConfig:\n  prefixFormat: "{workload}-"\n' +
      '  prefixMode: onConflict');
    assert.deepEqual(sorted(await s.toolNames()), ['alpha-dup2', 'alpha-shared', 'annotated',
      'beta-dup2', 'beta-shared', 'gamma-shared', 'onlyA', 'onlyB', 'onlyG']);
    assert.equal(await s.call('onlyA'), 'alpha:onlyA:{"x":"1"}');
    assert.equal(await s.call('beta-dup2'), 'beta:dup2:{"x":"1"}');
    assert.equal(await s.call('gamma-shared'), 'gamma:shared:{"x":"1"}');
    await s.unknown('shared');
    await s.unknown('alpha_shared');
    assert.deepEqual(sorted(await s.promptNames()), ['alpha-greet', 'beta-greet', 'onlyAp']);
    const p = await s.ok('prompts/get', { name: 'onlyAp', arguments: { who: 'x' } });
    assert.equal(p.messages[0].content.text, 'alpha:onlyAp:x');
    await s.stop();
  }));

  test('priority: the listed winner keeps the name, a listed loser is dropped, an unlisted one prefixed',
    guarded(async () => {
      const s = await scenario([['alpha', 'alpha'], ['beta', 'beta'], ['gamma', 'gamma']],
        'conflictResolution: priority\nconflictResolutionConfig:\n  priorityOrder: [beta, alpha]');
      assert.deepEqual(sorted(await s.toolNames()), ['annotated', 'dup2', 'gamma_shared', 'onlyA',
        'onlyB', 'onlyG', 'shared']);
      assert.equal(await s.call('shared'), 'beta:shared:{"x":"1"}');
      assert.equal(await s.call('dup2'), 'beta:dup2:{"x":"1"}');
      assert.equal(await s.call('gamma_shared'), 'gamma:shared:{"x":"1"}');
      assert.equal(await s.call('onlyA'), 'alpha:onlyA:{"x":"1"}');
      await s.unknown('alpha_shared');
      await s.unknown('alpha_dup2');
      await s.unknown('beta_shared');
      // listed backends keep bare prompt names; the loser is dropped
      assert.deepEqual(sorted(await s.promptNames()), ['greet', 'onlyAp']);
      const p = await s.ok('prompts/get', { name: 'greet', arguments: { who: 'z' } });
      assert.equal(p.messages[0].content.text, 'beta:greet:z');
      const log = errorLines(s.d).join('\n');
      assert.match(log, /tool "shared" of backend "alpha" dropped: the name "shared" goes to backend "beta"/);
      assert.match(log, /prompt "greet" of backend "alpha" dropped/);
      await s.stop();
    }));

  test('manual: overrides resolve one name; unresolved claimants are dropped, the rest works',
    guarded(async () => {
      const s = await scenario([['alpha', 'alpha'], ['beta', 'beta'], ['gamma', 'gamma']], [
        'conflictResolution: manual',
        'tools:',
        '  - workload: alpha',
        '    overrides:',
        '      shared: {name: shared_a}',
        '  - workload: beta',
        '    overrides:',
        '      shared: {name: shared_b}',
      ].join('\n'));
      assert.deepEqual(sorted(await s.toolNames()), ['annotated', 'onlyA', 'onlyB', 'onlyG', 'shared',
        'shared_a', 'shared_b']);
      assert.equal(await s.call('shared_a'), 'alpha:shared:{"x":"1"}');
      assert.equal(await s.call('shared_b'), 'beta:shared:{"x":"1"}');
      assert.equal(await s.call('shared'), 'gamma:shared:{"x":"1"}');
      await s.unknown('dup2');
      await s.unknown('alpha_dup2');
      // the rest of the view: prompts (prefixed, as in every strategy), resources
      assert.deepEqual(sorted(await s.promptNames()), ['alpha_greet', 'alpha_onlyAp', 'beta_greet']);
      assert.equal((await s.ok('resources/read', { uri: 'test://alpha/own' })).contents[0].text, 'alpha own');
      const log = errorLines(s.d).join('\n');
      assert.match(log, /tool "dup2" of backend "alpha" dropped: the name "dup2" is claimed by backends .*manual/);
      assert.match(log, /tool "dup2" of backend "beta" dropped/);
      assert.doesNotMatch(log, /tool "shared" of backend "\w+" dropped/);
      await s.stop();
    }));

  test('a generated-name collision drops every claimant, with an ERROR in the log',
    guarded(async () => {
      // a + "_" + b_x == a_b + "_" + x == "a_b_x"
      const s = await scenario([['a', 'gen1'], ['a_b', 'gen2']],
        'conflictResolution: prefix\nconflictResolutionConfig:\n  prefixMode: always');
      assert.deepEqual(await s.toolNames(), ['a_y']);
      await s.unknown('a_b_x');
      assert.equal(await s.call('a_y'), 'gen1:y:{"x":"1"}');
      const log = errorLines(s.d).join('\n');
      assert.match(log, /error: view: tool "b_x" of backend "a" dropped: its advertised name "a_b_x" is also generated for tool "x" of backend "a_b"/);
      assert.match(log, /error: view: tool "x" of backend "a_b" dropped: its advertised name "a_b_x" is also generated for tool "b_x" of backend "a"/);
      await s.stop();
    }));

  test('filter and excludeAll hide tools, and hidden tools are not callable', guarded(async () => {
    const s = await scenario([['alpha', 'alpha'], ['beta', 'beta'], ['gamma', 'gamma']], [
      'conflictResolution: prefix',
      'conflictResolutionConfig:',
      '  prefixMode: onConflict',
      'tools:',
      '  - workload: alpha',
      '    filter: [onlyA, annotated]',
      '  - workload: beta',
      '    excludeAll: true',
    ].join('\n'));
    // names are resolved among all tools, hidden ones included
    assert.deepEqual(sorted(await s.toolNames()), ['annotated', 'gamma_shared', 'onlyA', 'onlyG']);
    assert.equal(await s.call('onlyA'), 'alpha:onlyA:{"x":"1"}');
    for (const hidden of ['alpha_shared', 'alpha_dup2', 'onlyB', 'beta_shared', 'beta_dup2', 'dup2'])
      await s.unknown(hidden);
    // tool visibility leaves prompts alone
    assert.deepEqual(sorted(await s.promptNames()), ['alpha_greet', 'beta_greet', 'onlyAp']);
    await s.stop();
  }));

  test('defaultToolVisibility deny: only backends with a tools entry contribute tools',
    guarded(async () => {
      const s = await scenario([['alpha', 'alpha'], ['gamma', 'gamma']], [
        'conflictResolution: prefix',
        'conflictResolutionConfig:',
        '  prefixMode: onConflict',
        'defaultToolVisibility: deny',
        'tools:',
        '  - workload: gamma',
        '    filter: [onlyG]',
      ].join('\n'));
      assert.deepEqual(await s.toolNames(), ['onlyG']);
      await s.unknown('onlyA');
      await s.unknown('alpha_shared');
      assert.equal(await s.call('onlyG'), 'gamma:onlyG:{"x":"1"}');
      assert.deepEqual(sorted(await s.promptNames()), ['greet', 'onlyAp']);
      await s.stop();
    }));

  test('excludeAllTools: no tools at all, prompts and resources still there', guarded(async () => {
    const s = await scenario([['alpha', 'alpha'], ['gamma', 'gamma']],
      'excludeAllTools: true\nconflictResolutionConfig:\n  prefixMode: onConflict');
    assert.deepEqual(await s.toolNames(), []);
    await s.unknown('onlyG');
    await s.unknown('onlyA');
    assert.deepEqual(sorted(await s.promptNames()), ['greet', 'onlyAp']);
    assert.equal((await s.ok('resources/read', { uri: 'test://shared/doc' })).contents[0].text, 'alpha doc');
    await s.stop();
  }));

  test('overrides: rename, description, annotations only', guarded(async () => {
    const s = await scenario([['alpha', 'alpha'], ['beta', 'beta'], ['gamma', 'gamma']], [
      'conflictResolution: prefix',
      'conflictResolutionConfig:',
      '  prefixMode: onConflict',
      'tools:',
      '  - workload: alpha',
      '    overrides:',
      '      onlyA: {name: renamed, description: Renamed by vmcpd}',
      '      annotated:',
      '        annotations: {readOnlyHint: true}',
      '      dup2: {description: only the description}',
      '  - workload: gamma',
      '    overrides:',
      '      onlyG:',
      '        name: gamma_tool',
      '        annotations: {title: Gamma}',
    ].join('\n'));
    const tools = await s.tools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    assert.deepEqual(sorted(byName.keys()), ['alpha_dup2', 'alpha_shared', 'annotated', 'beta_dup2',
      'beta_shared', 'gamma_shared', 'gamma_tool', 'onlyB', 'renamed']);
    assert.equal(byName.get('renamed').description, 'Renamed by vmcpd');
    assert.deepEqual(byName.get('renamed').inputSchema, byName.get('onlyB').inputSchema);
    // annotations replaced one by one; the others stay as the backend has them
    assert.deepEqual(byName.get('annotated').annotations,
      { title: 'Orig', readOnlyHint: true, destructiveHint: true });
    assert.equal(byName.get('annotated').description, 'tool annotated of alpha');
    assert.equal(byName.get('alpha_dup2').description, 'only the description');
    assert.equal(byName.get('beta_dup2').description, 'tool dup2 of beta');
    assert.deepEqual(byName.get('gamma_tool').annotations, { title: 'Gamma' });
    // called by the advertised name, the backend gets its own
    assert.equal(await s.call('renamed'), 'alpha:onlyA:{"x":"1"}');
    assert.equal(await s.call('gamma_tool'), 'gamma:onlyG:{"x":"1"}');
    assert.equal(await s.call('annotated'), 'alpha:annotated:{"x":"1"}');
    await s.unknown('onlyA');
    await s.unknown('onlyG');
    await s.stop();
  }));
});

describe('determinism', () => {
  const AGG = [
    'conflictResolution: prefix',
    'conflictResolutionConfig:',
    '  prefixMode: onConflict',
    'tools:',
    '  - workload: alpha',
    '    overrides:',
    '      onlyA: {name: renamed, description: Renamed}',
    '  - workload: beta',
    '    filter: [shared, onlyB]',
  ].join('\n');
  const METHODS = ['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list'];

  /* the raw answer text of each list, under one fixed request id */
  async function snapshot(order) {
    const s = await scenario(order.map((k) => [k, k]), AGG);
    const out = {};
    for (const m of METHODS) {
      const r = await mcpPost(s.d.port, { jsonrpc: '2.0', id: 'fixed', method: m, params: {} },
        { session: s.sid });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.error, undefined, r.text);
      out[m] = r.text;
    }
    await s.stop();
    return out;
  }

  test('backends listed in another order, daemon restarted: byte-identical lists',
    guarded(async () => {
      const a = await snapshot(['alpha', 'beta', 'gamma']);
      const b = await snapshot(['gamma', 'beta', 'alpha']);
      const c = await snapshot(['beta', 'gamma', 'alpha']);
      for (const m of METHODS) {
        assert.equal(b[m], a[m], `${m} differs when the backends are listed in another order`);
        assert.equal(c[m], a[m], `${m} differs when the backends are listed in a third order`);
      }
      // and the snapshot is not trivially empty
      assert.match(a['tools/list'], /"renamed"/);
      assert.match(a['prompts/list'], /"alpha_greet"/);
      assert.match(a['resources/list'], /test:\/\/shared\/doc/);
    }));
});

// A renamed call on the hot path goes on as the client's params text with
// only the name's text replaced: what sits around it must arrive intact.
describe('a prefixed tools/call passed on as text', () => {
  test('the backend gets its own name and the arguments around it as sent',
    guarded(async () => {
      const s = await scenario([['beta', 'beta'], ['alpha', 'alpha']],
        'conflictResolution: prefix\nconflictResolutionConfig:\n  prefixMode: always');
      // the name last, after arguments that spell another tool's name
      const x = '"name":"beta_shared" \u00e9\u2603';
      let r = await s.ok('tools/call', { arguments: { x }, name: 'alpha_shared' });
      assert.equal(r.content[0].text, `alpha:shared:${JSON.stringify({ x })}`);
      r = await s.ok('tools/call', { name: 'beta_dup2', arguments: { x: 'b' } });
      assert.equal(r.content[0].text, 'beta:dup2:{"x":"b"}');
      // an escaped name is not the hot path's, and still routed
      const e = await mcpPost(s.d.port, '{"jsonrpc":"2.0","id":77,"method":"tools/call",' +
        '"params":{"name":"alpha\\u005fonlyA","arguments":{"x":"c"}}}',
      { session: s.sid, version: '2025-11-25' });
      assert.equal(e.status, 200, e.text);
      assert.equal(e.json.result.content[0].text, 'alpha:onlyA:{"x":"c"}');
      await s.stop();
    }));
});

// What a backend may advertise (docs/ARCHITECTURE.md): a hostile backend
// lists names with a newline, a terminal escape, 100,000 characters, one
// that breaks MCP's tool-name rule only once prefixed, a prompt with a
// bidi override, a resource URI with a CR LF, and a 100 KB description.
// Those names are left out of every list (Legacy and 2026-07-28), each
// said once per build naming backend and entry, quoted so that no raw
// control byte reaches the log; the description is cut to
// aggregation.maxDescriptionLength; the rest of the view is served.
describe('names and texts a backend lists, checked before clients see them', () => {
  test('bad names dropped once per build with a warning, long texts cut', guarded(async () => {
    const long = 'x'.repeat(100000);
    const tools = [
      { name: 'ok', description: 'd'.repeat(100000), inputSchema: { type: 'object' } },
      { name: 'new\nline', inputSchema: { type: 'object' } },
      { name: '\u001b[31mred', inputSchema: { type: 'object' } },
      { name: long, inputSchema: { type: 'object' } },
      { name: 'y'.repeat(127), inputSchema: { type: 'object' } },
    ];
    const srv = http.createServer((req, res) => {
      if (req.method !== 'POST')
        return res.writeHead(405).end();
      jsonBody(req, res).then((m) => {
        if (m === undefined)
          return;
        if (m.id === undefined)
          return res.writeHead(202).end();
        const json = (result) => res.writeHead(200, { 'Content-Type': 'application/json',
          'Mcp-Session-Id': 'hostile-1' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
        switch (m.method) {
        case 'initialize':
          return json({ protocolVersion: '2025-11-25', serverInfo: { name: 'hostile', version: '1' },
            capabilities: { tools: {}, prompts: {}, resources: {} } });
        case 'tools/list':
          return json({ tools });
        case 'prompts/list':
          return json({ prompts: [{ name: 'fine prompt' }, { name: 'p\u202eq' }] });
        case 'resources/list':
          return json({ resources: [{ uri: 'file:///ok', name: 'ok' },
            { uri: 'file:///a\r\nb', name: 'crlf' }] });
        case 'resources/templates/list':
          return json({ resourceTemplates: [] });
        case 'tools/call':
          return json({ content: [{ type: 'text', text: `hostile:${m.params.name}` }] });
        default:
          return res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(
            { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'no' } }));
        }
      });
    });
    const port = await serve(srv);
    const d = await startMulti({
      workers: 1,
      backends: [{ name: 'alpha', url: be.alpha.url }, { name: 'h', url: `http://127.0.0.1:${port}/mcp` }],
      aggregation: 'maxDescriptionLength: 1000',
    });
    daemons.push(d);
    const { sid } = await openSessionCaps(d.port);
    const list = async () => {
      const r = await rpc(d.port, sid, 'tools/list', {}, { timeout: 20000 });
      assert.equal(r.status, 200, r.text);
      return r.json.result.tools;
    };
    for (let i = 0; i < 3; i++) {
      const t = await list();
      assert.deepEqual(t.map((x) => x.name).filter((n) => n.startsWith('h_')), ['h_ok']);
      const ok = t.find((x) => x.name === 'h_ok');
      assert.equal([...ok.description].length, 1000);
      assert.ok(ok.description.endsWith('d\u2026'), ok.description.slice(-10));
    }
    // the 2026-07-28 lists are the same view
    const m = await modern(d.port, 'tools/list');
    assert.equal(m.status, 200, m.text);
    assert.deepEqual(m.json.result.tools.map((x) => x.name).filter((n) => n.startsWith('h_')), ['h_ok']);
    let r = await rpc(d.port, sid, 'prompts/list', {});
    assert.deepEqual(r.json.result.prompts.map((p) => p.name).filter((n) => n.startsWith('h_')),
      ['h_fine prompt']);
    r = await rpc(d.port, sid, 'resources/list', {});
    assert.deepEqual(r.json.result.resources.map((x) => x.uri).filter((u) => u.startsWith('file:')),
      ['file:///ok']);
    r = await rpc(d.port, sid, 'tools/call', { name: 'h_ok', arguments: {} });
    assert.equal(r.json.result.content[0].text, 'hostile:ok');
    r = await rpc(d.port, sid, 'tools/call', { name: 'h_new\nline', arguments: {} });
    assert.equal(r.json.error?.code, -32602, r.text);
    // each said once (one build), named and quoted
    const log = d.proc.output;
    const count = (re) => (log.match(re) ?? []).length;
    const rule = 'is not a tool name as MCP has them \\(1 to 128 characters of A-Z a-z 0-9 _ - \\.\\)';
    assert.equal(count(new RegExp(`backend "h": tool "new\\\\nline" dropped: its name ${rule}`, 'g')), 1, log);
    assert.equal(count(new RegExp(`backend "h": tool "\\\\x1b\\[31mred" dropped: its name ${rule}`, 'g')), 1);
    assert.equal(count(new RegExp(`backend "h": tool "x{48}\\.\\.\\.\\(99952 more\\)" dropped`, 'g')), 1);
    assert.equal(count(new RegExp(`tool "y{127}" of backend "h" dropped: its advertised name "h_y{46}` +
      `\\.\\.\\.\\(81 more\\)" ${rule}`, 'g')), 1);
    assert.equal(count(/backend "h": prompt "p\\u202eq" dropped: its name is empty, over 128 characters, or has a control or bidirectional formatting character/g), 1);
    assert.equal(count(/backend "h": resource "file:\/\/\/a\\x0d\\nb" dropped/g), 1);
    assert.equal(count(/backend "h": tool "ok": description cut to 1000 characters \(aggregation\.maxDescriptionLength; it has 100000\)/g), 1);
    assert.ok(!log.includes('\u001b'), 'a raw ESC reached the log');
    assert.ok(!log.includes(long.slice(0, 200)), 'the 100,000-character name reached the log');
    await d.stop();
  }));
});
