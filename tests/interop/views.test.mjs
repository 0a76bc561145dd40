// Views that never make a call wait on someone else's listing
// (docs/ARCHITECTURE.md, "The view"): a backend that accepts and never
// answers delays only the first view of a generation, and only for a
// bounded time; a call to a healthy backend is routed from the view
// there is, under either partialFailureMode; a backend that stops
// answering keeps its last good lists, marked stale; a rebuild past
// cacheTtl and a backend's list_changed rebuild in the background while
// calls and lists are answered from the current view; list_changed
// re-lists only the backend that sent it.
//
// The toy backend below is a minimal MCP 2025-11-25 server whose
// tools/list can be held (not answered until the test releases it) or
// whose every POST can be left unanswered, and which counts the
// requests it gets.  Holding a listing instead of timing one makes
// "answered while the rebuild is in progress" a fact, not a speed.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

import {
  guarded, rpc, waitFor, sleep, httpRequest, mcpHeaders, nextId, startTestBackend, HOST, LEGACY_VERSION,
  vmcpctl,
} from './lib/harness.mjs';
import {
  useMulti, startMulti, openSessionCaps, openGet, serve, jsonBody, modern, rawGetOrDelete,
} from './lib/multi.mjs';

useMulti();

/* accepts, reads, never answers */
async function startHole() {
  const port = await serve(net.createServer((s) => {
    s.on('error', () => {});
    s.resume();
  }));
  return { url: `http://${HOST}:${port}/mcp` };
}

/*
 * The toy backend: tools answer "<label>:<name>".  holdLists: each
 * tools/list waits for release(); hang: no POST is answered any more;
 * changed(): notifications/tools/list_changed on the GET streams.
 */
async function startToy(label, tools) {
  const toy = {
    label, tools: [...tools], counts: {}, held: [], streams: new Set(), holdLists: false, hang: false,
    listIds: [],
  };
  const srv = http.createServer((req, res) => {
    if (rawGetOrDelete(req, res, toy.streams))
      return;
    jsonBody(req, res).then((m) => {
      if (m === undefined)
        return;
      toy.counts[m.method ?? 'response'] = (toy.counts[m.method ?? 'response'] ?? 0) + 1;
      if (toy.hang)
        return;		// never answered
      if (m.id === undefined) {
        res.writeHead(202).end();
        return;
      }
      const json = (o) => res.writeHead(200, { 'Content-Type': 'application/json',
        'Mcp-Session-Id': `toy-${label}` }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, ...o }));
      switch (m.method) {
      case 'initialize':
        return json({ result: { protocolVersion: LEGACY_VERSION,
          capabilities: { tools: { listChanged: true } }, serverInfo: { name: `toy-${label}`, version: '1' } } });
      case 'tools/list': {
        toy.listIds.push(m.id);
        const answer = () => json({ result: { tools: toy.tools.map((name) =>
          ({ name, description: `${label} ${name}`, inputSchema: { type: 'object' } })) } });
        if (toy.holdLists)
          toy.held.push(answer);
        else
          answer();
        return;
      }
      case 'tools/call':
        return json({ result: { content: [{ type: 'text', text: `${label}:${m.params?.name}` }] } });
      default:	// server/discover included: a Legacy backend
        return json({ error: { code: -32601, message: `no ${m.method}` } });
      }
    });
  });
  const port = await serve(srv);
  toy.url = `http://${HOST}:${port}/mcp`;
  toy.lists = () => toy.counts['tools/list'] ?? 0;
  toy.release = () => {
    toy.holdLists = false;
    for (const a of toy.held.splice(0))
      a();
  };
  toy.changed = () => {
    for (const s of toy.streams)
      s.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0',
        method: 'notifications/tools/list_changed' })}\n\n`);
  };
  return toy;
}

const initialize = (d, timeout) => httpRequest(d.port, { headers: mcpHeaders({ version: null }), timeout,
  body: { jsonrpc: '2.0', id: nextId(), method: 'initialize', params: { protocolVersion: LEGACY_VERSION,
    capabilities: {}, clientInfo: { name: 'views', version: '1' } } } });
const names = (r) => (r.json.result?.tools ?? []).map((t) => t.name).sort();

/* the views db as vmcpctl dumps it: one record a line */
async function dumpViews(d) {
  const r = await vmcpctl(['dump', 'views'], { stateDir: d.stateDir });
  assert.equal(r.code, 0, `vmcpctl dump views: ${r.stderr}`);
  return r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

/* the keys of the shards the header names, and those stored, sorted */
async function layoutKeys(d) {
  const header = (await dumpViews(d)).find((o) => o.key.startsWith('view|'));
  assert.ok(header?.value?.layout, 'the header names its layout');
  return Object.values(header.value.shards ?? {}).flat()
    .map(([n]) => `${header.value.layout}.${n}`).sort();
}
async function storedShards(d) {
  return (await dumpViews(d)).filter((o) => o.key.startsWith('vdata|')).map((o) => o.key).sort();
}

for (const mode of ['fail', 'best_effort']) {
  describe(`a backend that never answers beside a healthy one (${mode})`, () => {
    let healthy, hole, d;

    before(async () => {
      [healthy, hole] = await Promise.all([startTestBackend(), startHole()]);
      // the hole's own timeout is far longer than any wait here
      d = await startMulti({
        workers: 1,
        backends: [{ name: 'healthy', url: healthy.url }, { name: 'hole', url: hole.url }],
        aggregation: 'conflictResolutionConfig:\n  prefixMode: onConflict',
        operational: 'timeouts:\n  default: 10s\n  perWorkload:\n    hole: 60s\n' +
          `failureHandling:\n  partialFailureMode: ${mode}`,
      });
    });

    after(async () => {
      if (d)
        await d.stop();
      healthy?.killGroup();
    });

    test('initialize does not wait for the hung backend, and a call to the healthy one succeeds',
      guarded(async () => {
        // before: initialize took the hole's whole timeout (60 s)
        const t = Date.now();
        const init = await initialize(d, 30000);
        assert.equal(init.status, 200, init.text);
        assert.equal(init.json?.error, undefined, init.text);
        assert.ok(Date.now() - t < 30000, `initialize took ${Date.now() - t} ms`);
        const sid = init.headers['mcp-session-id'];
        assert.ok(sid, 'a session');
        // before, under fail: an error after two timeouts
        const c = await rpc(d.port, sid, 'tools/call', { name: 'echo', arguments: { message: 'hi' } },
          { timeout: 20000 });
        assert.equal(c.json.result?.content?.[0]?.text, 'Echo: hi', c.text);
        const l = await rpc(d.port, sid, 'tools/list', {}, { timeout: 20000 });
        if (mode === 'fail') {
          assert.equal(l.json.error?.code, -32603, l.text);
          assert.match(l.json.error.message, /backend hole/);
        } else {
          assert.deepEqual(names(l), ['echo', 'fail', 'slow', 'whoami']);
        }
        assert.match(d.proc.output, /view: backend hole did not list within \d+ s; published without it/);
        // the same for a 2026-07-28 client
        const mc = await modern(d.port, 'tools/call', { name: 'echo', arguments: { message: 'm' } },
          { 'Mcp-Name': 'echo' });
        assert.equal(mc.json?.result?.content?.[0]?.text, 'Echo: m', mc.text);
        const ml = await modern(d.port, 'tools/list');
        if (mode === 'fail') {
          assert.equal(ml.json?.error?.code, -32603, ml.text);
          assert.match(ml.json.error.message, /backend hole/);
        } else {
          assert.deepEqual((ml.json?.result?.tools ?? []).map((t) => t.name).sort(),
            ['echo', 'fail', 'slow', 'whoami'], ml.text);
        }
      }));
  });
}

describe('a backend that stops answering keeps its last good lists', () => {
  let healthy, flaky, d;

  before(async () => {
    [healthy, flaky] = await Promise.all([startTestBackend(), startToy('flaky', ['f1', 'f2'])]);
    d = await startMulti({
      workers: 2,
      backends: [{ name: 'healthy', url: healthy.url }, { name: 'flaky', url: flaky.url }],
      aggregation: 'conflictResolutionConfig:\n  prefixMode: onConflict\ncacheTtl: 1s',
      operational: 'timeouts:\n  default: 10s\n  perWorkload:\n    flaky: 2s\n' +
        'failureHandling:\n  partialFailureMode: fail',
    });
  });

  after(async () => {
    if (d)
      await d.stop();
    healthy?.killGroup();
  });

  test('past cacheTtl a hung backend\'s tools come from the stale copy, even under fail', guarded(async () => {
    const { sid } = await openSessionCaps(d.port);
    let l = await rpc(d.port, sid, 'tools/list', {});
    assert.deepEqual(names(l), ['echo', 'f1', 'f2', 'fail', 'slow', 'whoami'], l.text);
    flaky.hang = true;
    // the rebuild past cacheTtl times out on flaky (2 s) and uses its
    // last good lists; before, the list failed (fail) or lost f1, f2
    await waitFor('a rebuild without fresh lists of flaky', async () => {
      await rpc(d.port, sid, 'tools/list', {}, { timeout: 20000 });
      return /view: backend flaky.*timed out.*its lists of \d+ s ago stand in/.test(d.proc.output);
    }, { timeout: 30000, interval: 500 });
    l = await rpc(d.port, sid, 'tools/list', {}, { timeout: 20000 });
    assert.deepEqual(names(l), ['echo', 'f1', 'f2', 'fail', 'slow', 'whoami'], l.text);
    const c = await rpc(d.port, sid, 'tools/call', { name: 'echo', arguments: { message: 'still' } },
      { timeout: 20000 });
    assert.equal(c.json.result?.content?.[0]?.text, 'Echo: still', c.text);
  }));
});

/*
 * toys a (a1) and b (b1) behind a vmcpd of 2 workers, and a session;
 * early(ctx): before the session is opened
 */
function toyPair(aggregation, { operational = '', early, env } = {}) {
  const ctx = {};

  before(async () => {
    [ctx.a, ctx.b] = await Promise.all([startToy('a', ['a1']), startToy('b', ['b1'])]);
    early?.(ctx);
    ctx.d = await startMulti({
      workers: 2,
      backends: [{ name: 'a', url: ctx.a.url }, { name: 'b', url: ctx.b.url }],
      aggregation: `conflictResolutionConfig:\n  prefixMode: onConflict${aggregation}`,
      operational: `timeouts:\n  default: 30s\n${operational}`,
      env,
    });
    ({ sid: ctx.sid } = await openSessionCaps(ctx.d.port));
  });

  after(async () => {
    ctx.a?.release();
    ctx.b?.release();
    if (ctx.d)
      await ctx.d.stop();
  });
  ctx.call = (name) => rpc(ctx.d.port, ctx.sid, 'tools/call', { name, arguments: {} }, { timeout: 10000 });
  ctx.list = () => rpc(ctx.d.port, ctx.sid, 'tools/list', {}, { timeout: 10000 });
  return ctx;
}

describe('rebuilds in the background', () => {
  const ctx = toyPair('\ncacheTtl: 2s');

  test('past cacheTtl, calls and lists are answered while a backend\'s listing is held', guarded(async () => {
    const { a, call, list } = ctx;

    assert.deepEqual(names(await list()), ['a1', 'b1']);
    a.holdLists = true;
    await sleep(2500);	// past cacheTtl (2s)
    // the first request past it starts the rebuild; it is not waited for
    let c = await call('b1');
    assert.equal(c.json.result?.content?.[0]?.text, 'b:b1', c.text);
    await waitFor('the rebuild listing a', () => a.held.length >= 1, { timeout: 15000 });
    for (const name of ['a1', 'b1']) {
      c = await call(name);
      assert.equal(c.json.result?.content?.[0]?.text, `${name[0]}:${name}`, c.text);
    }
    assert.deepEqual(names(await list()), ['a1', 'b1']);
    assert.ok(a.held.length >= 1, 'the listing was still held');
    a.tools.push('a2');
    a.release();
    await waitFor('the rebuilt view', async () => names(await list()).includes('a2'), { timeout: 15000 });
  }));
});

describe('the view builder', () => {
  const ctx = toyPair('\ncacheTtl: 2s');
  // vmcpd's backend request ids are vmcpd-<pid>-<seq>: who listed
  const listers = (...toys) => new Set(toys.flatMap((t) => t.listIds)
    .map((id) => Number(/^vmcpd-(\d+)-/.exec(String(id))?.[1])));

  test('lists and builds every view in its own process, not in a worker', guarded(async () => {
    const { a, b, d, call, list } = ctx;

    assert.deepEqual(names(await list()), ['a1', 'b1']);
    a.holdLists = true;
    await sleep(2500);	// past cacheTtl (2s)
    const c = await call('b1');	// starts the rebuild
    assert.equal(c.json.result?.content?.[0]?.text, 'b:b1', c.text);
    await waitFor('the rebuild listing a', () => a.held.length >= 1, { timeout: 15000 });
    const procs = await d.childProcs();
    const builders = procs.filter((p) => p.comm === 'vmcpd-builder').map((p) => p.pid);
    const workers = procs.filter((p) => p.comm === 'vmcpd-worker').map((p) => p.pid);
    assert.equal(builders.length, 1, `one builder: ${JSON.stringify(procs)}`);
    assert.equal(workers.length, 2);
    // before: the worker that took the lock listed on its own loop
    assert.deepEqual([...listers(a, b)], builders, `listed by ${[...listers(a, b)]}, ` +
      `workers ${workers}, builder ${builders}`);

    // a builder killed mid-build is respawned; the next request past
    // freshness has the new one build
    process.kill(builders[0], 'SIGKILL');
    a.tools.push('a2');
    a.release();
    await waitFor('a new builder', async () => (await d.childProcs()).some((p) =>
      p.comm === 'vmcpd-builder' && p.pid !== builders[0]), { timeout: 15000 });
    await waitFor('the rebuilt view', async () => names(await list()).includes('a2'), { timeout: 20000 });
    const now = (await d.childProcs()).filter((p) => p.comm === 'vmcpd-builder').map((p) => p.pid);
    for (const pid of listers(a, b))
      assert.ok(builders.includes(pid) || now.includes(pid), `listed by ${pid}, not a builder`);
    assert.match(d.proc.output, /builder -?\d+ \(pid \d+, generation \d+\) killed by signal 9/);
  }));
});

describe('list_changed from one backend', () => {
  // cacheTtl (default 5m) never expires here: only list_changed lists
  const ctx = toyPair('');

  test('re-lists only that backend, and calls go on meanwhile', guarded(async () => {
    const { a, b, call, list } = ctx;

    assert.deepEqual(names(await list()), ['a1', 'b1']);
    await waitFor('worker 0 listening to a', () => a.streams.size >= 1, { timeout: 15000 });
    const bBefore = b.lists();
    a.holdLists = true;
    a.tools.push('a2');
    a.changed();
    await waitFor('a listed again after its list_changed', () => a.held.length >= 1, { timeout: 10000 });
    // before: the view was dropped, and every request waited for it
    for (let i = 0; i < 4; i++) {	// on both workers
      const c = await call('b1');
      assert.equal(c.json.result?.content?.[0]?.text, 'b:b1', c.text);
      assert.deepEqual(names(await list()), ['a1', 'b1'], 'the current view, while a is listed');
    }
    assert.ok(a.held.length >= 1, 'the listing was still held');
    a.release();
    await waitFor('a2 in the view', async () => names(await list()).includes('a2'), { timeout: 10000 });
    assert.equal(b.lists(), bBefore, 'b was not listed again');
    // the view is read in place from its layout: the store keeps the
    // layout's shards the header names, and the ones it replaced are gone
    assert.deepEqual(await layoutKeys(ctx.d), await storedShards(ctx.d));
  }));
});

describe('a backend listing late at a cold start', () => {
  // b's first listing is held: the session opens without it
  const ctx = toyPair('', { operational: 'failureHandling:\n  partialFailureMode: best_effort',
    early: (c) => { c.b.holdLists = true; } });

  test('the first view comes without it, and sessions hear when its lists come', guarded(async () => {
    const { b, d, sid, list } = ctx;

    assert.ok(b.held.length >= 1, 'b\'s listing is held');
    assert.deepEqual(names(await list()), ['a1']);
    assert.match(d.proc.output, /view: backend b did not list within \d+ s; published without it/);
    const g = await openGet(d.port, sid);
    b.release();
    await g.until('tools/list_changed', (x) => x.messages('notifications/tools/list_changed').length >= 1,
      15000);
    assert.deepEqual(names(await list()), ['a1', 'b1']);
    g.close();
  }));
});

describe('list_changed while a rebuild waits on a hung backend', () => {
  let a, h, d, sid;

  before(async () => {
    [a, h] = await Promise.all([startToy('a', ['a1']), startToy('h', ['h1'])]);
    // one worker: the rebuild and the list_changed meet in it
    d = await startMulti({
      workers: 1,
      backends: [{ name: 'a', url: a.url }, { name: 'h', url: h.url }],
      aggregation: 'conflictResolutionConfig:\n  prefixMode: onConflict\ncacheTtl: 2s',
      operational: 'timeouts:\n  default: 30s\n  perWorkload:\n    h: 30s',
    });
    ({ sid } = await openSessionCaps(d.port));
  });

  after(async () => {
    if (d)
      await d.stop();
  });

  const list = () => rpc(d.port, sid, 'tools/list', {}, { timeout: 10000 });

  test('the changed backend\'s lists come at once, the hung one\'s stale', guarded(async () => {
    assert.deepEqual(names(await list()), ['a1', 'h1']);
    await waitFor('worker 0 listening to a', () => a.streams.size >= 1, { timeout: 15000 });
    h.hang = true;
    const hLists = h.lists();
    await sleep(2500);	// past cacheTtl (2s)
    await list();		// the rebuild starts, and waits on h (30 s)
    await waitFor('the rebuild listing h', () => h.lists() > hLists, { timeout: 10000 });
    a.tools.push('a2');
    a.changed();
    // before: the change waited for the rebuild, so for h's timeout
    await waitFor('a2 in the view', async () => names(await list()).includes('a2'), { timeout: 10000 });
    assert.deepEqual(names(await list()), ['a1', 'a2', 'h1']);
  }));
});

describe('a builder killed mid-publication', () => {
  // the builder (worker/view/view_store.c) stores a view's layout as shards, each
  // in a write transaction of its own, then the header that names them:
  // killed between two shards (VMCPD_TEST_BUILDER_CRASH: a one-shot
  // trigger file), it leaves the old view whole, and its respawn removes
  // the shards no header names
  const trigger = path.join(os.tmpdir(), `vmcpd-crash-${process.pid}-${Date.now()}`);
  const ctx = toyPair('\ncacheTtl: 2s', { env: { VMCPD_TEST_BUILDER_CRASH: trigger } });
  after(() => fs.rmSync(trigger, { force: true }));

  test('the old view is served throughout and no orphan shard is left', guarded(async () => {
    const { a, call, list, d } = ctx;

    assert.deepEqual(names(await list()), ['a1', 'b1']);
    const before = await layoutKeys(d);
    assert.ok(before.length >= 4, `a shard per kind at least: ${before}`);
    a.tools.push('a2');
    fs.writeFileSync(trigger, '');
    await sleep(2500);	// past cacheTtl (2s): the next request rebuilds
    // every call and list answers, from the old view or the new one
    await waitFor('a2 in the view after the crash', async () => {
      const c = await call('b1');
      assert.equal(c.json.result?.content?.[0]?.text, 'b:b1', c.text);
      const n = names(await list());
      assert.ok(['a1,b1', 'a1,a2,b1'].includes(n.join()), `a whole view: ${n}`);
      return !fs.existsSync(trigger) && n.includes('a2');
    }, { timeout: 20000 });
    assert.match(d.proc.output, /crashing mid-publication/);
    assert.match(d.proc.output, /killed by signal 9/);
    // the respawned builder removed the two shards the dead one stored
    await waitFor('the orphans removed', () => /2 orphan layout shards removed/.test(d.proc.output),
      { timeout: 10000 });
    // and after its own publication, only the new header's shards remain
    await waitFor('only the header\'s shards stored', async () =>
      JSON.stringify(await layoutKeys(d)) === JSON.stringify(await storedShards(d)), { timeout: 10000 });
    assert.notDeepEqual(await layoutKeys(d), before);
    const c = await call('a2');
    assert.equal(c.json.result?.content?.[0]?.text, 'a:a2', c.text);
  }));
});
