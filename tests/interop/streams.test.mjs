// Standalone GET streams of client sessions: the priming event, one
// stream per session (409), keep-alive comments; list_changed and
// resources/updated from SDK backends delivered to the sessions' streams
// (only when the aggregated list really changed); and Last-Event-ID
// replay after the worker holding a stream is SIGKILLed.
//
// Backends (lib/spec-backend.mjs): "dyn", whose tools, prompts and
// resource updates are driven by its own tools (add_tool, remove_tool,
// add_prompt, remove_prompt, touch), and "other", first in
// priorityOrder, which owns the tool name "clash".
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';

import { guarded, rpc, sleep, waitFor, workerOf, httpRequest, LEGACY_VERSION } from './lib/harness.mjs';
import { useMulti, startMulti, startSpec, openGet, openSessionCaps, openUnwatched } from './lib/multi.mjs';

useMulti();

const DOC = 'test://dyn/doc';
const TOOLS_CHANGED = 'notifications/tools/list_changed';
const PROMPTS_CHANGED = 'notifications/prompts/list_changed';
const RES_UPDATED = 'notifications/resources/updated';

describe('GET streams and notifications (2 workers, keepAlive 1s)', () => {
  let dyn, other, daemon, fence = 0;

  before(async () => {
    [dyn, other] = await Promise.all([
      startSpec({ label: 'dyn', dynamic: true, tools: ['keep'], resources: [{ uri: DOC, text: 'doc' }] }),
      startSpec({ label: 'other', tools: ['clash'], prompts: ['p'] }),
    ]);
    daemon = await startMulti({
      backends: [{ name: 'dyn', url: dyn.url }, { name: 'other', url: other.url }],
      http: 'keepAlive: 1s',
      aggregation: 'conflictResolution: priority\nconflictResolutionConfig:\n  priorityOrder: [other, dyn]',
    });
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
  });

  async function ok(sid, method, params) {
    const r = await rpc(daemon.port, sid, method, params, { timeout: 20000 });
    assert.equal(r.status, 200, `${method}: ${r.text}`);
    assert.equal(r.json.error, undefined, `${method}: ${r.text}`);
    return r.json.result;
  }

  const call = async (sid, name, args) => (await ok(sid, 'tools/call', { name, arguments: args }))
    .content[0].text;
  const toolNames = async (sid) => (await ok(sid, 'tools/list', {})).tools.map((t) => t.name);
  const promptNames = async (sid) => (await ok(sid, 'prompts/list', {})).prompts.map((p) => p.name);

  /* worker 0 listens to dyn's notification stream (needs a view first) */
  async function listening(sid, { opened = 0 } = {}) {
    await toolNames(sid);
    await waitFor('vmcpd listening to dyn', async () => {
      const st = await dyn.stats();
      return st.getStreams >= 1 && st.getOpened > opened;
    }, { timeout: 20000, interval: 100 });
  }

  /* wait until every stream has n messages of method (counted from 0) */
  const count = (g, method) => g.messages(method).length;
  const until = (g, what, n, method, ms = 15000) =>
    g.until(what, () => count(g, method) >= n, ms);

  /* ids of message events: decimal, strictly increasing */
  function assertIds(g) {
    const ids = g.events.map((e) => e.id);
    for (const id of ids)
      assert.match(String(id), /^\d+$/, `event id ${id}`);
    for (let i = 1; i < ids.length; i++)
      assert.ok(Number(ids[i]) > Number(ids[i - 1]), `ids increase: ${ids}`);
  }

  /*
   * A change that is sure to notify (a new dyn tool), to prove that
   * nothing else came before it.
   */
  async function fenced(sid, streams) {
    const before = streams.map((g) => count(g, TOOLS_CHANGED));
    await call(sid, 'add_tool', { name: `fence${++fence}` });
    await Promise.all(streams.map((g, i) => until(g, 'fence', before[i] + 1, TOOLS_CHANGED)));
  }

  test('priming event, a second GET is 409, keep-alive comments', guarded(async () => {
    const { sid } = await openSessionCaps(daemon.port);
    const g = await openGet(daemon.port, sid);
    assert.equal(g.status, 200, g.text);
    assert.match(g.headers['content-type'], /^text\/event-stream/);
    await g.until('priming event', (s) => s.events.length >= 1);
    assert.match(String(g.events[0].id), /^\d+$/, 'the priming event has an id');
    assert.equal(g.events[0].data, '', 'and no data');

    const g2 = await openGet(daemon.port, sid);
    await g2.until('409 body', (s) => s.ended, 5000);
    assert.equal(g2.status, 409, g2.text);
    assert.equal(JSON.parse(g2.text).error.code, -32000);

    // keep-alive comments about every second
    const t0 = Date.now();
    await g.until('3 keep-alive comments', (s) => s.comments.length >= 3, 6000);
    const at = g.comments.map((c) => c.at);
    for (let i = 1; i < at.length; i++) {
      const gap = at[i] - at[i - 1];
      assert.ok(gap >= 500 && gap <= 2500, `keep-alive gap ${gap} ms`);
    }
    assert.ok(Date.now() - t0 >= 1500, 'not all at once');
    assert.equal(g.ended, false, 'the stream stays open');

    // closed: the session may open one again
    g.close();
    await waitFor('a new GET stream once the old one is closed', async () => {
      const g3 = await openGet(daemon.port, sid);
      if (g3.status === 200) {
        g3.close();
        return true;
      }
      await g3.until('end', (s) => s.ended, 5000).catch(() => {});
      return false;
    }, { timeout: 10000, interval: 200 });

    // the wrong requests
    const h = { Accept: 'text/event-stream', 'MCP-Protocol-Version': LEGACY_VERSION };
    let r = await httpRequest(daemon.port, { method: 'GET', headers: h });
    assert.equal(r.status, 400, `no session: ${r.text}`);
    r = await httpRequest(daemon.port, { method: 'GET',
      headers: { ...h, 'Mcp-Session-Id': 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' } });
    assert.equal(r.status, 404, `unknown session: ${r.text}`);
    r = await httpRequest(daemon.port, { method: 'GET',
      headers: { ...h, Accept: 'application/json', 'Mcp-Session-Id': sid } });
    assert.equal(r.status, 406, `Accept without text/event-stream: ${r.text}`);
    r = await httpRequest(daemon.port, { method: 'GET',
      headers: { ...h, 'Mcp-Session-Id': sid, 'Last-Event-ID': 'not-a-number' } });
    assert.equal(r.status, 400, `bad Last-Event-ID: ${r.text}`);
  }));

  test('a tool added and removed: every session\'s stream is told, the list follows',
    guarded(async () => {
      const a = await openSessionCaps(daemon.port);
      const b = await openSessionCaps(daemon.port);
      const ga = await openGet(daemon.port, a.sid);
      const gb = await openGet(daemon.port, b.sid);
      assert.equal(ga.status, 200);
      assert.equal(gb.status, 200);
      await listening(a.sid);

      assert.equal(await call(a.sid, 'add_tool', { name: 'fresh1' }), 'added tool fresh1');
      await Promise.all([until(ga, 'A: list_changed', 1, TOOLS_CHANGED),
        until(gb, 'B: list_changed', 1, TOOLS_CHANGED)]);
      assert.ok((await toolNames(b.sid)).includes('fresh1'), 'fresh1 listed');
      assert.equal(await call(b.sid, 'fresh1', { x: 'y' }), 'dyn:fresh1:{"x":"y"}');

      assert.equal(await call(b.sid, 'remove_tool', { name: 'fresh1' }), 'removed tool fresh1');
      await Promise.all([until(ga, 'A: 2nd list_changed', 2, TOOLS_CHANGED),
        until(gb, 'B: 2nd list_changed', 2, TOOLS_CHANGED)]);
      assert.ok(!(await toolNames(a.sid)).includes('fresh1'), 'fresh1 gone');
      const r = await rpc(daemon.port, a.sid, 'tools/call', { name: 'fresh1', arguments: {} });
      assert.equal(r.json.error?.code, -32602, r.text);

      for (const g of [ga, gb]) {
        assert.deepEqual(g.messages().map((m) => m.method), [TOOLS_CHANGED, TOOLS_CHANGED],
          'two tools changes, nothing else');
        assertIds(g);
        g.close();
      }
    }));

  test('a GET whose client is gone before the priming event is written: the worker lives on',
    guarded(async () => {
      // The priming write finds the connection reset and frees the
      // stream; the open must not go on with it (a use after free the
      // sanitizer build caught when an SDK client closed at once).
      for (let i = 0; i < 60; i++) {
        const { sid } = await openSessionCaps(daemon.port);
        await new Promise((resolve) => {
          const sock = net.connect(daemon.port, '127.0.0.1', () => {
            sock.write(`GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:${daemon.port}\r\n` +
              `Accept: text/event-stream\r\nMcp-Session-Id: ${sid}\r\n` +
              `MCP-Protocol-Version: ${LEGACY_VERSION}\r\n\r\n`, () => {
              sock.destroy();
              resolve();
            });
          });
          sock.on('error', resolve);
        });
      }
      const { sid } = await openSessionCaps(daemon.port);
      assert.deepEqual(await toolNames(sid), await toolNames(sid));
      const g = await openGet(daemon.port, sid);
      assert.equal(g.status, 200, g.text);
      await g.until('priming event', (s) => s.events.length >= 1);
      g.close();
    }));

  test('a GET stream whose client left unnoticed while events come: the worker lives on',
    guarded(async () => {
      // The worker stops reading the stream's connection (a byte
      // pipelined behind the GET), so it learns of the close only from
      // a write: the first event's write is taken, the next one's finds
      // the connection reset, in the middle of a flush (the close
      // callback freed the stream under the store scan writing it).
      const ctl = await openSessionCaps(daemon.port);
      const gc = await openGet(daemon.port, ctl.sid);
      assert.equal(gc.status, 200, gc.text);
      await listening(ctl.sid);
      for (let i = 0; i < 3; i++) {
        const { sid } = await openSessionCaps(daemon.port);
        const s = await openUnwatched(daemon.port, { headers: {
          Accept: 'text/event-stream', 'Mcp-Session-Id': sid,
          'MCP-Protocol-Version': LEGACY_VERSION }, until: 'data: \n\n' });
        s.close();
        await fenced(ctl.sid, [gc]);
        await fenced(ctl.sid, [gc]);
      }
      assert.equal(gc.ended, false);
      gc.close();
      const { sid } = await openSessionCaps(daemon.port);
      assert.deepEqual(await toolNames(sid), await toolNames(sid));
    }));

  test('Last-Event-ID past every event here (another node\'s, the session moved): what comes is sent',
    guarded(async () => {
      const { sid } = await openSessionCaps(daemon.port);
      const g = await openGet(daemon.port, sid, { lastEventId: '987654321' });
      assert.equal(g.status, 200, g.text);
      await listening(sid);
      await fenced(sid, [g]);
      assert.deepEqual(g.messages().map((m) => m.method), [TOOLS_CHANGED]);
      g.close();
    }));

  test('a prompt added and removed: prompts/list_changed', guarded(async () => {
    const { sid } = await openSessionCaps(daemon.port);
    const g = await openGet(daemon.port, sid);
    await listening(sid);
    assert.ok(!(await promptNames(sid)).includes('fresh_p'));
    await call(sid, 'add_prompt', { name: 'fresh_p' });
    await until(g, 'prompts/list_changed', 1, PROMPTS_CHANGED);
    assert.ok((await promptNames(sid)).includes('fresh_p'));
    const p = await ok(sid, 'prompts/get', { name: 'fresh_p', arguments: { who: 'eve' } });
    assert.equal(p.messages[0].content.text, 'dyn:fresh_p:eve');
    await call(sid, 'remove_prompt', { name: 'fresh_p' });
    await until(g, 'second prompts/list_changed', 2, PROMPTS_CHANGED);
    assert.ok(!(await promptNames(sid)).includes('fresh_p'));
    assert.deepEqual(g.messages().map((m) => m.method), [PROMPTS_CHANGED, PROMPTS_CHANGED]);
    g.close();
  }));

  test('a backend change the aggregated list does not show notifies nobody', guarded(async () => {
    const { sid } = await openSessionCaps(daemon.port);
    const g = await openGet(daemon.port, sid);
    await listening(sid);
    // "clash" belongs to other (first in priorityOrder): dyn's is dropped
    const dropped = /view: tool "clash" of backend "dyn" dropped/g;
    const seen = () => (daemon.proc.output.match(dropped) ?? []).length;
    const n0 = seen();
    await call(sid, 'add_tool', { name: 'clash' });
    await waitFor('the view rebuilt without dyn\'s clash', () => seen() > n0, { timeout: 15000 });
    await sleep(500);
    assert.equal(await call(sid, 'clash', {}), 'other:clash:{}');
    await fenced(sid, [g]);
    assert.deepEqual(g.messages().map((m) => m.method), [TOOLS_CHANGED],
      'only the fence\'s change was notified');
    g.close();
  }));

  test('resources/subscribe: touch reaches the subscribed session only; unsubscribe stops it',
    guarded(async () => {
      const a = await openSessionCaps(daemon.port);
      const b = await openSessionCaps(daemon.port);
      const ga = await openGet(daemon.port, a.sid);
      const gb = await openGet(daemon.port, b.sid);
      await listening(a.sid);
      assert.deepEqual(await ok(a.sid, 'resources/subscribe', { uri: DOC }), {});
      assert.match(await call(b.sid, 'touch', { uri: DOC }), /^touched test:\/\/dyn\/doc for [1-9]/);
      await until(ga, 'resources/updated', 1, RES_UPDATED);
      assert.deepEqual(ga.messages(RES_UPDATED)[0].params, { uri: DOC });
      await fenced(a.sid, [ga, gb]);
      assert.equal(count(gb, RES_UPDATED), 0, 'B did not subscribe');
      assert.equal(count(ga, RES_UPDATED), 1, 'one touch, one update');

      assert.deepEqual(await ok(a.sid, 'resources/unsubscribe', { uri: DOC }), {});
      await call(b.sid, 'touch', { uri: DOC });
      await fenced(a.sid, [ga, gb]);
      assert.equal(count(ga, RES_UPDATED), 1, 'no update after unsubscribe');
      assertIds(ga);
      ga.close();
      gb.close();
    }));

  test('resources/subscribe: one session unsubscribing leaves the others subscribed',
    guarded(async () => {
      const a = await openSessionCaps(daemon.port);
      const b = await openSessionCaps(daemon.port);
      const gb = await openGet(daemon.port, b.sid);
      await listening(a.sid);
      await ok(a.sid, 'resources/subscribe', { uri: DOC });
      await ok(b.sid, 'resources/subscribe', { uri: DOC });
      await ok(a.sid, 'resources/unsubscribe', { uri: DOC });
      await call(a.sid, 'touch', { uri: DOC });
      await fenced(a.sid, [gb]);
      gb.close();
      assert.equal(count(gb, RES_UPDATED), 1, 'B is still subscribed and gets the update');
    }));

  test('changes in quick succession: every one reaches the list, no spurious kinds',
    guarded(async () => {
      const { sid } = await openSessionCaps(daemon.port);
      const g = await openGet(daemon.port, sid);
      await listening(sid);
      await Promise.all(['q1', 'q2', 'q3', 'q4'].map((n) => call(sid, 'add_tool', { name: n })));
      await sleep(2000);
      const names = await toolNames(sid);
      g.close();
      for (const n of ['q1', 'q2', 'q3', 'q4'])
        assert.ok(names.includes(n), `${n} listed: ${names}`);
      const kinds = new Set(g.messages().map((m) => m.method));
      assert.deepEqual([...kinds], [TOOLS_CHANGED], 'only tools changed');
    }));

  test('Last-Event-ID: the holder worker SIGKILLed, every missed event replayed once, in order',
    guarded(async () => {
      const { sid } = await openSessionCaps(daemon.port);
      await ok(sid, 'resources/subscribe', { uri: DOC });
      const g = await openGet(daemon.port, sid);
      assert.equal(g.status, 200, g.text);
      const holder = workerOf(g);
      assert.ok(holder, 'Vmcpd-Worker on the GET answer');
      await listening(sid);
      await call(sid, 'add_tool', { name: 'k1' });
      await until(g, 'a first live event', 1, TOOLS_CHANGED);
      const last = Number(g.events.at(-1).id);
      assert.ok(last > 0, `an id to resume from: ${last}`);
      const opened = (await dyn.stats()).getOpened;

      const before = await daemon.workerPids();
      process.kill(holder.pid, 'SIGKILL');
      await g.until('the stream to end with its worker', (s) => s.ended, 10000);
      await waitFor('a respawned worker', async () => {
        const now = await daemon.workerPids();
        return now.length === before.length && !now.includes(holder.pid);
      }, { timeout: 20000 });
      // worker 0 listens to the backends: its successor must be listening
      if (holder.slot === 0)
        await listening(sid, { opened });

      // four notifications while no stream is open, each seen to land
      await call(sid, 'add_tool', { name: 'k2' });
      await waitFor('k2 listed', async () => (await toolNames(sid)).includes('k2'));
      await call(sid, 'add_prompt', { name: 'kp' });
      await waitFor('kp listed', async () => (await promptNames(sid)).includes('kp'));
      assert.match(await call(sid, 'touch', { uri: DOC }), /for [1-9]/);
      await call(sid, 'remove_tool', { name: 'k1' });
      await waitFor('k1 gone', async () => !(await toolNames(sid)).includes('k1'));
      await sleep(300);

      const r = await openGet(daemon.port, sid, { lastEventId: last });
      assert.equal(r.status, 200, r.text);
      const want = [TOOLS_CHANGED, PROMPTS_CHANGED, RES_UPDATED, TOOLS_CHANGED];
      await r.until('the replay', (s) => s.messages().length >= want.length, 10000);
      await sleep(1500);	// anything replayed twice would be here now
      assert.equal(r.events[0].data, '', 'a priming event first');
      const replay = r.events.filter((e) => e.msg);
      assert.deepEqual(replay.map((e) => e.msg.method), want, 'every missed event, in order, once');
      assert.deepEqual(replay[2].msg.params, { uri: DOC });
      assert.deepEqual(replay.map((e) => Number(e.id)), [last + 1, last + 2, last + 3, last + 4],
        'ids continue after Last-Event-ID');
      assertIds(r);
      process.stderr.write(`GET stream held by worker ${holder.slot} (pid ${holder.pid}), ` +
        `resumed on worker ${workerOf(r)?.slot} (pid ${workerOf(r)?.pid})\n`);

      // and the resumed stream is live
      await call(sid, 'add_tool', { name: 'k3' });
      await r.until('a live event after the replay', (s) => s.messages().length >= want.length + 1);
      assert.equal(Number(r.events.at(-1).id), last + 5);
      r.close();
      assert.equal(daemon.proc.exited, false, 'the master is still running');
    }));
});
