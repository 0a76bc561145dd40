// Resource subscriptions (docs/ARCHITECTURE.md, Resource subscriptions)
// with OIDC and Cedar (alice and bob from a real provider,
// lib/oidc.mjs), one worker (so a /healthz probe always meets the worker
// serving the listen) and a 2025-11-25 SDK backend that counts the
// subscriptions it holds and the POSTs it gets (lib/spec-backend.mjs):
//
//  - a subscriptions/listen of sessions.maxSubscriptions URIs is served
//    while the worker keeps answering /healthz; one more is refused
//    naming the limit; so is a listen, or a Legacy subscribe, past a
//    principal's sessions.maxSubscriptionsPerPrincipal, and a Legacy
//    session's subscribe past sessions.maxSubscriptions;
//  - a listen naming a URI the policy forbids is the 403 of a
//    resources/read of it, and nothing reaches the backend;
//  - bob's resources/unsubscribe of a URI he never subscribed to ends
//    nothing of alice's (her listen stream and her session keep their
//    updates) and reaches no backend; an unsubscribe is authorized as
//    a read;
//  - one backend subscription per URI whatever holds it, ended when
//    the last stream closes, session unsubscribes, is deleted or
//    expires;
//  - the worker holding a listen stream killed (kill -9): its
//    subscriptions are released at the backend;
//  - a 2026-07-28 backend (lib/modern-backend.mjs, which reports the
//    URIs its open listen streams name) is listened to with the URIs
//    held of it, and without them once released.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import {
  guarded, rpc, nextId, sleep, waitFor, workerOf, httpRequest, LEGACY_VERSION, MCP_ACCEPT,
} from './lib/harness.mjs';
import {
  useMulti, startMulti, startSpec, startModern, modern, modernMeta, openStream, openGet, MODERN,
} from './lib/multi.mjs';
import { startIdp, oidcConfig, sessionAs } from './lib/oidc.mjs';

useMulti();

const CAP = 40;		// sessions.maxSubscriptions
const PER_PRINCIPAL = 60;	// sessions.maxSubscriptionsPerPrincipal
const TTL = 4;		// sessions.ttl (s): the sessions here are busy or ended
const DOC = 'docs://readme';
const MDOC = 'docs://modern';	// the 2026-07-28 backend's
const SECRET = 'vault://secret';
const item = (i) => `docs://item/${i}`;
const UPDATED = 'notifications/resources/updated';
const READ_DENIED = 'Forbidden: read denied by authorization policy';

const POLICIES = [
  '      - permit(principal, action == Action::"call_tool", resource);',
  '      - |',
  '        permit(principal, action == Action::"read_resource", resource)',
  '        when { resource.uri like "docs://*" };',
];

const bearer = (t) => ({ Authorization: `Bearer ${t}` });

describe('resource subscriptions: caps, the gate, shared and released (1 worker, OIDC + Cedar)', () => {
  let idp, dyn, mb, d;
  const tok = {};

  before(async () => {
    idp = await startIdp();
    dyn = await startSpec({ label: 'dyn', dynamic: true,
      resources: [{ uri: DOC, text: 'readme' }, { uri: SECRET, text: 'secret' }],
      templates: [{ name: 'item', uriTemplate: 'docs://item/{id}' }] });
    mb = await startModern({ label: 'mb', modernOnly: true, subscribe: true, tools: ['noop'],
      resources: [{ uri: MDOC, text: 'modern' }] });
    d = await startMulti({
      workers: 1,
      backends: [{ name: 'dyn', url: dyn.url }, { name: 'mb', url: mb.url, era: 'modern' }],
      sessions: `ttl: ${TTL}s\nmaxSubscriptions: ${CAP}\nmaxSubscriptionsPerPrincipal: ${PER_PRINCIPAL}`,
      extra: oidcConfig(idp) + ['  authz:', '    type: cedar', '    policies:', ...POLICIES, ''].join('\n'),
    });
    tok.alice = await idp.token('alice');
    tok.bob = await idp.token('bob');
    // a view, and worker 0 listening to dyn on its scope session
    const l = await mod('alice', 'tools/list');
    assert.equal(l.status, 200, l.text);
    await waitFor('vmcpd listening to dyn', async () => (await dyn.stats()).getStreams >= 1,
      { timeout: 20000, interval: 100 });
  });

  after(async () => {
    if (d && !d.stopped)
      await d.stop();
    await idp?.stop();
  });

  const mod = (who, method, params = {}, headers = {}) => modern(d.port, method, params,
    { ...bearer(tok[who]), ...headers });
  const legacy = (who, sid, method, params) =>
    rpc(d.port, sid, method, params, { headers: bearer(tok[who]), timeout: 20000 });
  const held = async () => (await dyn.stats()).subscriptions;
  /* the POSTs of method the backend got */
  const posts = async (method) => Object.entries((await dyn.stats()).methods)
    .filter(([k]) => k.endsWith(` ${method}`)).reduce((n, [, v]) => n + v, 0);
  const heldIs = (n, what, timeout = 20000) => waitFor(`${what}: ${n} held at the backend`,
    async () => (await held()) === n, { timeout, interval: 100 });

  /* a Legacy session of who: its id */
  const session = (who) => sessionAs(d.port, tok[who], who);


  async function ok(who, sid, method, params) {
    const r = await legacy(who, sid, method, params);
    assert.equal(r.status, 200, `${method}: ${r.text}`);
    assert.deepEqual(r.json.result, {}, `${method}: ${r.text}`);
  }

  async function end(who, sid) {
    const r = await httpRequest(d.port, { method: 'DELETE',
      headers: { 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': LEGACY_VERSION, ...bearer(tok[who]) } });
    assert.equal(r.status, 200, r.text);
  }

  /* a listen stream of who on uris: opened, not yet answered */
  function listen(who, uris, id = `L${nextId()}`) {
    return openStream(d.port, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: MCP_ACCEPT, 'MCP-Protocol-Version': MODERN,
        'Mcp-Method': 'subscriptions/listen', ...bearer(tok[who]) },
      body: { jsonrpc: '2.0', id, method: 'subscriptions/listen',
        params: { _meta: modernMeta(), notifications: { resourceSubscriptions: uris } } },
      timeout: 30000,
    });
  }

  /* a listen acknowledged (with expect, its URIs by default): its stream */
  async function listening(who, uris, expect = uris) {
    const g = await listen(who, uris);
    assert.equal(g.status, 200, g.text);
    await g.until('acknowledged', (s) => s.events.length >= 1, 15000);
    const ack = g.events[0].msg;
    assert.equal(ack.method, 'notifications/subscriptions/acknowledged', g.text);
    assert.deepEqual(ack.params.notifications.resourceSubscriptions, expect);
    return g;
  }

  /* a listen refused before its stream: the JSON answer */
  async function refused(who, uris) {
    const g = await listen(who, uris);
    await g.until('the answer', (s) => s.ended, 15000);
    assert.match(String(g.headers['content-type']), /^application\/json/, g.text);
    return { status: g.status, json: JSON.parse(g.text) };
  }

  const updates = (g) => g.events.filter((e) => e.msg?.method === UPDATED);

  test('a listen of sessions.maxSubscriptions URIs is served while /healthz answers; one more is refused',
    guarded(async () => {
      const uris = Array.from({ length: CAP }, (_, i) => item(i));
      const before = await posts('resources/subscribe');
      let stop = false, worst = 0, probes = 0;
      const pids = new Set();
      const prober = (async () => {
        while (!stop) {
          const t = Date.now();
          const h = await d.health();
          worst = Math.max(worst, Date.now() - t);
          assert.equal(h.status, 200, h.text);
          pids.add(h.json.pid);
          probes++;
          await sleep(10);
        }
      })();
      const g = await listening('alice', uris);
      // every URI subscribed once at the backend, a few calls at a time
      await heldIs(CAP, 'the listen\'s');
      stop = true;
      await prober;
      assert.equal(pids.size, 1, 'one worker answers everything');
      assert.ok(probes >= 3, `${probes} probes`);
      assert.ok(worst < 2000, `/healthz took ${worst} ms while the listen was served`);
      assert.equal(await posts('resources/subscribe') - before, CAP);

      // one URI over the cap: refused, nothing held, the limit named
      const r = await refused('alice', [...uris, item(CAP)]);
      assert.equal(r.status, 200);
      assert.equal(r.json.error.code, -32602);
      assert.match(r.json.error.message, /41 resources; sessions\.maxSubscriptions is 40/);
      assert.deepEqual(r.json.error.data, { limit: 'sessions.maxSubscriptions', max: CAP });
      // a URI named twice is one
      const twice = await listening('alice', [DOC, DOC], [DOC]);
      twice.close();
      g.close();
      await heldIs(0, 'the streams closed');
    }));

  test('a principal\'s subscriptions are capped across its streams and sessions; a session\'s too',
    guarded(async () => {
      const g = await listening('alice', Array.from({ length: CAP }, (_, i) => item(i)));
      // alice has 40 of 60: a listen of 21 more is refused, naming the limit
      const r = await refused('alice', Array.from({ length: 21 }, (_, i) => item(100 + i)));
      assert.equal(r.status, 200);
      assert.equal(r.json.error.code, -32000);
      assert.match(r.json.error.message, /sessions\.maxSubscriptionsPerPrincipal is 60/);
      assert.deepEqual(r.json.error.data, { limit: 'sessions.maxSubscriptionsPerPrincipal',
        max: PER_PRINCIPAL });
      // bob counts on his own
      const gb = await listening('bob', Array.from({ length: 21 }, (_, i) => item(100 + i)));
      // alice's session: 20 more, then the 61st refused
      const sid = await session('alice');
      for (let i = 0; i < PER_PRINCIPAL - CAP; i++)
        await ok('alice', sid, 'resources/subscribe', { uri: item(200 + i) });
      const over = await legacy('alice', sid, 'resources/subscribe', { uri: item(300) });
      assert.equal(over.status, 200, over.text);
      assert.equal(over.json.error.code, -32000, over.text);
      assert.equal(over.json.error.data.limit, 'sessions.maxSubscriptionsPerPrincipal');
      // one the session holds already is no new one
      await ok('alice', sid, 'resources/subscribe', { uri: item(200) });
      // bob's session: at most 40 of its own, whatever his principal has
      gb.close();
      const sb = await session('bob');
      for (let i = 0; i < CAP; i++)
        await ok('bob', sb, 'resources/subscribe', { uri: item(400 + i) });
      const more = await legacy('bob', sb, 'resources/subscribe', { uri: item(500) });
      assert.equal(more.json.error.code, -32602, more.text);
      assert.match(more.json.error.message, /sessions\.maxSubscriptions \(40\)/);
      g.close();
      await end('alice', sid);
      await end('bob', sb);
      await heldIs(0, 'all ended');
    }));

  test('a listen naming a forbidden URI is the 403 of its read, and nothing reaches the backend',
    guarded(async () => {
      const read = await mod('alice', 'resources/read', { uri: SECRET }, { 'Mcp-Name': SECRET });
      assert.equal(read.status, 403, read.text);
      const before = await posts('resources/subscribe');
      const r = await refused('alice', [DOC, SECRET]);
      assert.equal(r.status, 403);
      assert.deepEqual(r.json.error, read.json.error);
      assert.deepEqual(r.json.error, { code: 403, message: READ_DENIED });
      await sleep(300);
      assert.equal(await posts('resources/subscribe'), before);
      assert.equal(await held(), 0);
    }));

  test('bob\'s unsubscribe of what he never subscribed to ends nothing of alice\'s', guarded(async () => {
    // alice: a listen stream, and a session with its GET stream
    const g = await listening('alice', [DOC]);
    const sa = await session('alice');
    const ga = await openGet(d.port, sa, { headers: bearer(tok.alice) });
    assert.equal(ga.status, 200, ga.text);
    await ok('alice', sa, 'resources/subscribe', { uri: DOC });
    await heldIs(1, 'alice\'s');
    const unsubs = await posts('resources/unsubscribe');
    // bob, from a session that never subscribed
    const sb = await session('bob');
    await ok('bob', sb, 'resources/unsubscribe', { uri: DOC });
    // an unsubscribe is authorized as the read it ends
    const denied = await legacy('bob', sb, 'resources/unsubscribe', { uri: SECRET });
    assert.equal(denied.status, 403, denied.text);
    assert.equal(denied.json.error.message, READ_DENIED);
    await sleep(300);
    assert.equal(await posts('resources/unsubscribe'), unsubs, 'nothing reached the backend');
    assert.equal(await held(), 1);
    // alice's stream and session are still told
    const touch = await mod('alice', 'tools/call', { name: 'dyn_touch', arguments: { uri: DOC } },
      { 'Mcp-Name': 'dyn_touch' });
    assert.match(touch.json?.result?.content?.[0]?.text ?? touch.text, /^touched docs:\/\/readme for 1/);
    await g.until('the listen\'s update', () => updates(g).length >= 1, 15000);
    await ga.until('the session\'s update', () => ga.messages(UPDATED).length >= 1, 15000);
    assert.deepEqual(updates(g)[0].msg.params.uri, DOC);
    // her own unsubscribe ends her session's only: the stream holds on
    await ok('alice', sa, 'resources/unsubscribe', { uri: DOC });
    await sleep(300);
    assert.equal(await held(), 1);
    g.close();
    ga.close();
    await heldIs(0, 'the last holder gone');
    await end('alice', sa);
    await end('bob', sb);
  }));

  test('one backend subscription per URI, whatever holds it, until the last holder goes',
    guarded(async () => {
      const subs0 = await posts('resources/subscribe');
      const unsubs0 = await posts('resources/unsubscribe');
      const l1 = await listening('alice', [DOC, item(1)]);
      const l2 = await listening('bob', [DOC]);
      await heldIs(2, 'two URIs');
      const sa = await session('alice');
      const sc = await session('bob');
      await ok('alice', sa, 'resources/subscribe', { uri: DOC });
      await ok('bob', sc, 'resources/subscribe', { uri: item(2) });
      await heldIs(3, 'three URIs');
      // one subscribe per URI: four holders of DOC made one
      assert.equal(await posts('resources/subscribe') - subs0, 3);
      l1.close();
      await heldIs(2, 'item 1 released with its stream');
      l2.close();
      await sleep(300);
      assert.equal(await held(), 2, 'DOC still held by the session');
      await ok('alice', sa, 'resources/unsubscribe', { uri: DOC });
      await heldIs(1, 'DOC released by its last holder');
      await end('bob', sc);
      await heldIs(0, 'item 2 released with its session');
      await end('alice', sa);
      assert.equal(await posts('resources/unsubscribe') - unsubs0, 3);
    }));

  test('a session that expires takes its subscriptions with it', guarded(async () => {
    const sid = await session('alice');
    await ok('alice', sid, 'resources/subscribe', { uri: item(9) });
    await heldIs(1, 'the session\'s');
    // idle past sessions.ttl: swept, then its end handled (backend_session_close.c)
    await heldIs(0, 'released with the expired session', (TTL + 10) * 1000);
    const r = await legacy('alice', sid, 'tools/list', {});
    assert.equal(r.status, 404, r.text);
  }));

  test('a 2026-07-28 backend is listened to with the URIs held of it, and without them once released',
    guarded(async () => {
      const asked = async () => (await mb.stats()).listening;
      await waitFor('vmcpd listening to mb', async () =>
        (await mb.stats()).methods['modern subscriptions/listen'] >= 1, { timeout: 20000, interval: 100 });
      const g = await listening('alice', [MDOC]);
      await waitFor('mb asked for it', async () => (await asked()).includes(MDOC),
        { timeout: 15000, interval: 100 });
      const sid = await session('bob');
      await ok('bob', sid, 'resources/subscribe', { uri: MDOC });
      g.close();
      await sleep(600);
      assert.deepEqual(await asked(), [MDOC], 'still held by bob\'s session');
      await ok('bob', sid, 'resources/unsubscribe', { uri: MDOC });
      await waitFor('mb no longer asked for it', async () => (await asked()).length === 0,
        { timeout: 15000, interval: 100 });
      await end('bob', sid);
    }));

  test('the worker holding a listen stream killed: its subscriptions are released', guarded(async () => {
    const g = await listening('alice', [DOC, item(7)]);
    await heldIs(2, 'the listen\'s');
    const holder = workerOf(g);
    assert.ok(holder, 'Vmcpd-Worker on the listen');
    const before = await d.workerPids();
    process.kill(holder.pid, 'SIGKILL');
    await g.until('the stream to end with its worker', (s) => s.ended, 10000);
    await waitFor('a respawned worker', async () => {
      const now = await d.workerPids();
      return now.length === before.length && !now.includes(holder.pid);
    }, { timeout: 20000 });
    await heldIs(0, 'released for the dead worker', 30000);
  }));
});
