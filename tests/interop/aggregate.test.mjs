// Aggregation of real MCP servers behind one vmcpd, driven by the
// official SDK v1 client: server-everything twice (over stdio, run by
// vmcpd's bridge, and over Streamable HTTP), server-memory and
// server-filesystem over stdio, and an SDK backend with more tools than
// one page holds.  Prefix onConflict: the names both everything
// instances offer become <backend>_<name>, all others stay bare.
//
// The expected lists come from the same servers asked directly.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { guarded, connectClient, tmpDir, withTimeout, rpc } from './lib/harness.mjs';
import {
  useMulti, startMulti, startSpec, startEverythingHttp, listAll, textOf, rpcError, openSessionCaps,
  NODE, EVERYTHING, MEMORY, FILESYSTEM,
} from './lib/multi.mjs';

useMulti();

const MANY = 1100;		// tools of the "many" backend: two pages
const PAGE = 1000;		// aggregation.pageSize default
// what vmcpd's bridge declares to a stdio server on behalf of clients
const BRIDGE_CAPS = { elicitation: {}, sampling: {}, roots: {} };

/* The lists of a server asked directly, with the given capabilities. */
async function directLists(transport, capabilities = {}) {
  const c = new Client({ name: 'direct', version: '1.0.0' }, { capabilities });
  await withTimeout(c.connect(transport), 30000, 'direct connect');
  try {
    const caps = c.getServerCapabilities();
    return {
      tools: caps.tools ? await listAll(c, 'listTools', 'tools') : [],
      prompts: caps.prompts ? await listAll(c, 'listPrompts', 'prompts') : [],
      resources: caps.resources ? await listAll(c, 'listResources', 'resources') : [],
      templates: caps.resources ? await listAll(c, 'listResourceTemplates', 'resourceTemplates') : [],
    };
  } finally {
    await c.close().catch(() => {});
  }
}

/* prefix onConflict: a name offered by several backends gets "<b>_" */
function expectNames(byBackend) {
  const claims = new Map();
  for (const [b, names] of Object.entries(byBackend))
    for (const n of names)
      claims.set(n, (claims.get(n) ?? new Set()).add(b));
  const out = [];
  for (const [b, names] of Object.entries(byBackend))
    for (const n of names)
      out.push(claims.get(n).size > 1 ? `${b}_${n}` : n);
  return out.sort();
}

const sorted = (a) => [...a].sort();
const strcmpSorted = (a) => a.every((v, i) => i === 0 || Buffer.compare(Buffer.from(a[i - 1]),
  Buffer.from(v)) < 0);

describe('four real servers and one big SDK backend behind one vmcpd', () => {
  let remote, many, daemon, dir, fsDir, memFile, sdk, direct;

  before(async () => {
    dir = fs.realpathSync(await tmpDir('vmcpd-aggregate-'));
    fsDir = path.join(dir, 'files');	// the filesystem server's only directory
    fs.mkdirSync(fsDir);
    memFile = path.join(dir, 'memory.jsonl');
    [remote, many] = await Promise.all([
      startEverythingHttp({ env: { VMCPD_INTEROP_INSTANCE: 'http' } }),
      startSpec({ label: 'many', manyTools: MANY }),
    ]);
    daemon = await startMulti({
      backends: [
        { name: 'remote', url: remote.url },
        { name: 'everything', command: NODE, args: [EVERYTHING, 'stdio'],
          env: { VMCPD_INTEROP_INSTANCE: 'stdio' } },
        { name: 'memory', command: NODE, args: [MEMORY], env: { MEMORY_FILE_PATH: memFile } },
        { name: 'files', command: NODE, args: [FILESYSTEM, fsDir] },
        { name: 'many', url: many.url },
      ],
      aggregation: 'conflictResolution: prefix\nconflictResolutionConfig:\n  prefixMode: onConflict',
      operational: 'timeouts:\n  default: 30s',
    });
    // the same servers, directly; remote is seen as vmcpd lists it (a
    // session without client capabilities), everything as the bridge
    // runs it (with the capabilities it relays)
    const stdio = (args, env) => new StdioClientTransport({ command: NODE, args,
      env: { ...process.env, ...env }, stderr: 'ignore' });
    const [r, e, m, f, y] = await Promise.all([
      directLists(new StreamableHTTPClientTransport(new URL(remote.url))),
      directLists(stdio([EVERYTHING, 'stdio'], {}), BRIDGE_CAPS),
      directLists(stdio([MEMORY], { MEMORY_FILE_PATH: path.join(dir, 'direct-memory.jsonl') })),
      directLists(stdio([FILESYSTEM, fsDir], {})),
      directLists(new StreamableHTTPClientTransport(new URL(many.url))),
    ]);
    direct = { remote: r, everything: e, memory: m, files: f, many: y };
    sdk = await connectClient(daemon.url, { name: 'aggregate', timeout: 30000 });
  });

  after(async () => {
    await sdk?.client.close().catch(() => {});
    if (daemon)
      await daemon.stop();
  });

  const names = (kind) => Object.fromEntries(Object.entries(direct)
    .map(([b, l]) => [b, l[kind].map((x) => x.name)]));

  test('tools/list is the union, prefixed only where the two everything instances collide',
    guarded(async () => {
      const tools = await listAll(sdk.client, 'listTools', 'tools');
      const got = tools.map((t) => t.name);
      assert.equal(new Set(got).size, got.length, 'no name twice');
      assert.deepEqual(sorted(got), expectNames(names('tools')));
      // the sample the brief names
      for (const n of ['everything_echo', 'remote_echo', 'create_entities', 'read_graph',
        'write_file', 'read_text_file', 't00000', `t0${MANY - 1}`])
        assert.ok(got.includes(n), `${n} listed`);
      assert.ok(!got.includes('echo'), 'the colliding bare name is not advertised');
      // a bare tool is passed through untouched; a prefixed one only renamed
      const byName = new Map(tools.map((t) => [t.name, t]));
      assert.deepEqual(byName.get('create_entities'),
        direct.memory.tools.find((t) => t.name === 'create_entities'));
      assert.deepEqual(byName.get('remote_echo'),
        { ...direct.remote.tools.find((t) => t.name === 'echo'), name: 'remote_echo' });
      assert.ok(strcmpSorted(got), 'sorted by advertised name');
    }));

  test('tools/list pages: 1000, then the rest; a bad cursor is -32602', guarded(async () => {
    const first = await sdk.client.listTools();
    assert.equal(first.tools.length, PAGE);
    assert.equal(typeof first.nextCursor, 'string');
    const second = await sdk.client.listTools({ cursor: first.nextCursor });
    assert.equal(second.nextCursor, undefined, 'the last page has no nextCursor');
    const all = [...first.tools, ...second.tools].map((t) => t.name);
    assert.equal(all.length, expectNames(names('tools')).length);
    assert.equal(new Set(all).size, all.length, 'no tool on both pages');
    assert.ok(strcmpSorted(all), 'pages continue in order');
    for (const cursor of ['bogus', '', 'x'.repeat(5000)]) {
      const e = await rpcError(sdk.client.listTools({ cursor }));
      assert.equal(e.code, -32602, `cursor ${cursor.slice(0, 10)}: ${e.message}`);
    }
    // a cursor of one list is not one of another
    const e = await rpcError(sdk.client.listPrompts({ cursor: first.nextCursor }));
    assert.equal(e.code, -32602, e.message);
    // a tool from the second page routes to its backend
    const r = await sdk.client.callTool({ name: `t0${MANY - 1}`, arguments: {} });
    assert.equal(textOf(r), `many:t0${MANY - 1}:{}`);
  }));

  test('raw tools/list: the same pages over plain HTTP', guarded(async () => {
    const { sid } = await openSessionCaps(daemon.port);
    const p1 = await rpc(daemon.port, sid, 'tools/list', {});
    assert.equal(p1.status, 200, p1.text);
    assert.equal(p1.json.result.tools.length, PAGE);
    const p2 = await rpc(daemon.port, sid, 'tools/list', { cursor: p1.json.result.nextCursor });
    assert.equal(p2.json.result.nextCursor, undefined);
    const bad = await rpc(daemon.port, sid, 'tools/list', { cursor: 42 });
    assert.equal(bad.json.error.code, -32602, bad.text);
  }));

  test('echo is routed to each everything instance', guarded(async () => {
    for (const b of ['everything', 'remote']) {
      const r = await sdk.client.callTool({ name: `${b}_echo`, arguments: { message: `via ${b}` } });
      assert.equal(textOf(r), `Echo: via ${b}`);
    }
    // which process answered: the environment each was started with
    for (const [b, want] of [['everything', 'stdio'], ['remote', 'http']]) {
      const r = await sdk.client.callTool({ name: `${b}_get-env`, arguments: {} });
      const env = JSON.parse(textOf(r));
      assert.equal(env.VMCPD_INTEROP_INSTANCE, want, `${b}_get-env ran in the ${want} instance`);
    }
    const e = await rpcError(sdk.client.callTool({ name: 'echo', arguments: { message: 'x' } }));
    assert.equal(e.code, -32602);
    assert.match(e.message, /Unknown tool/);
  }));

  test('memory: create_entities then read_graph, in the configured file', guarded(async () => {
    const name = `vmcpd-${process.pid}-${Date.now()}`;
    const c = await sdk.client.callTool({ name: 'create_entities', arguments: {
      entities: [{ name, entityType: 'daemon', observations: ['aggregates MCP servers'] }],
    } });
    assert.notEqual(c.isError, true, JSON.stringify(c));
    const g = await sdk.client.callTool({ name: 'read_graph', arguments: {} });
    const graph = g.structuredContent ?? JSON.parse(textOf(g));
    const ent = graph.entities.find((x) => x.name === name);
    assert.deepEqual(ent, { name, entityType: 'daemon', observations: ['aggregates MCP servers'] });
    // MEMORY_FILE_PATH reached the server through the bridge
    assert.match(fs.readFileSync(memFile, 'utf8'), new RegExp(name));
  }));

  test('filesystem: write_file then read_text_file in the temp dir', guarded(async () => {
    const file = path.join(fsDir, 'note.txt');
    const content = `hello from vmcpd ✓ ${Date.now()}`;
    const w = await sdk.client.callTool({ name: 'write_file', arguments: { path: file, content } });
    assert.notEqual(w.isError, true, JSON.stringify(w));
    assert.equal(fs.readFileSync(file, 'utf8'), content);
    const r = await sdk.client.callTool({ name: 'read_text_file', arguments: { path: file } });
    assert.equal(textOf(r), content);
    // outside the allowed directory: the server refuses, as an error result
    const o = await sdk.client.callTool({ name: 'read_text_file', arguments: { path: '/etc/hostname' } });
    assert.equal(o.isError, true, JSON.stringify(o));
  }));

  test('resources: the union once each; read by URI and by template', guarded(async () => {
    const res = await listAll(sdk.client, 'listResources', 'resources');
    const uris = res.map((r) => r.uri);
    assert.equal(new Set(uris).size, uris.length, 'a duplicate URI is advertised once');
    const want = new Set(Object.values(direct).flatMap((l) => l.resources.map((r) => r.uri)));
    assert.deepEqual(sorted(uris), sorted(want));
    const tmpls = await listAll(sdk.client, 'listResourceTemplates', 'resourceTemplates');
    assert.deepEqual(sorted(tmpls.map((t) => t.uriTemplate)),
      sorted(new Set(Object.values(direct).flatMap((l) => l.templates.map((t) => t.uriTemplate)))));

    const uri = 'demo://resource/static/document/features.md';
    assert.ok(uris.includes(uri), `${uri} listed`);
    const r = await sdk.client.readResource({ uri });
    assert.equal(r.contents[0].uri, uri);
    assert.match(r.contents[0].text, /^# Everything Server - Features/);
    const t = await sdk.client.readResource({ uri: 'demo://resource/dynamic/text/7' });
    assert.equal(t.contents[0].uri, 'demo://resource/dynamic/text/7');
    assert.match(t.contents[0].text, /^Resource 7: /);
    const e = await rpcError(sdk.client.readResource({ uri: 'nosuch://resource' }));
    assert.equal(e.code, -32002, e.message);
  }));

  test('prompts: prefixed where they collide; prompts/get with arguments', guarded(async () => {
    const prompts = await listAll(sdk.client, 'listPrompts', 'prompts');
    assert.deepEqual(sorted(prompts.map((p) => p.name)), expectNames(names('prompts')));
    for (const b of ['everything', 'remote']) {
      const p = await sdk.client.getPrompt({ name: `${b}_args-prompt`,
        arguments: { city: 'Paris', state: 'TX' } });
      assert.deepEqual(p.messages, [{ role: 'user',
        content: { type: 'text', text: 'What\'s weather in Paris, TX?' } }]);
    }
    const e = await rpcError(sdk.client.getPrompt({ name: 'args-prompt', arguments: { city: 'x' } }));
    assert.equal(e.code, -32602, e.message);
  }));

  test('completion/complete on a prompt argument, with context', guarded(async () => {
    const ref = { type: 'ref/prompt', name: 'everything_completable-prompt' };
    const a = await sdk.client.complete({ ref, argument: { name: 'department', value: 'E' } });
    assert.deepEqual(a.completion.values, ['Engineering']);
    const b = await sdk.client.complete({ ref, argument: { name: 'name', value: '' },
      context: { arguments: { department: 'Sales' } } });
    assert.deepEqual(b.completion.values, ['David', 'Eve', 'Frank']);
    const c = await sdk.client.complete({ ref: { type: 'ref/prompt', name: 'remote_completable-prompt' },
      argument: { name: 'department', value: 'Su' } });
    assert.deepEqual(c.completion.values, ['Support']);
    const e = await rpcError(sdk.client.complete({ ref: { type: 'ref/prompt', name: 'nope' },
      argument: { name: 'x', value: '' } }));
    assert.equal(e.code, -32602, e.message);
  }));

  test('logging/setLevel is accepted', guarded(async () => {
    assert.deepEqual(await sdk.client.setLoggingLevel('warning'), {});
  }));
});
