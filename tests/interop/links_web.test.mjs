// Per-user upstream accounts, the person's side (worker/link/link_web.c;
// vmcpd(8) "Linking users' accounts"): /oauth/start and /oauth/callback
// with real parts (lib/links.mjs): the clients' OpenID provider and a
// second oidc-provider as the upstream service's authorization server,
// an upstream MCP backend that answers as the token's subject.  A
// consent's URL comes from a real elicitation (-32042 of a 2025-11-25
// session that declared elicitation.url).  Which side walks each case
// is said in its name: "browser" is Debian's chromium (headless,
// playwright-core), "jar" an HTTP client with a cookie jar, where a
// browser adds nothing (a replay, a forged or stale link, a refusal).
// A consent's expiry (CONSENT_TTL_MS, ten minutes, no knob) is walked
// with a consent of 6 s that tests/unit/drive_consent.c writes into the
// node's state as a worker does (sealed under its sealKeyFile).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';

import {
  guarded, mcpPost, nextId, httpRequest, vmcpctl, waitFor, LEGACY_VERSION, HOST, ROOT,
} from './lib/harness.mjs';
import { useMulti, openStream } from './lib/multi.mjs';
import { startLinks, consent, walk, get, Jar, closeBrowsers, AS_HOST } from './lib/links.mjs';
import { startRedis } from './lib/cluster.mjs';

useMulti();

const DRIVE_CONSENT = path.join(path.dirname(path.resolve(ROOT,
  process.env.VMCPD_BIN || 'build/vmcpd')), 'tests', 'drive_consent');

const bearer = (t) => ({ Authorization: `Bearer ${t}` });

/* a 2025-11-25 session of token's principal that takes URL elicitations */
async function session(port, token) {
  const init = await mcpPost(port, {
    jsonrpc: '2.0', id: nextId(), method: 'initialize',
    params: { protocolVersion: LEGACY_VERSION, capabilities: { elicitation: { url: {} } },
      clientInfo: { name: 'links-web', version: '1' } },
  }, { version: null, headers: bearer(token) });
  assert.equal(init.status, 200, init.text);
  const sid = init.headers['mcp-session-id'];
  const n = await mcpPost(port, { jsonrpc: '2.0', method: 'notifications/initialized' },
    { session: sid, headers: bearer(token) });
  assert.equal(n.status, 202, n.text);
  return sid;
}

/* whoami in that session: the JSON-RPC answer */
async function whoami(port, token, sid) {
  const r = await mcpPost(port, { jsonrpc: '2.0', id: nextId(), method: 'tools/call',
    params: { name: 'whoami', arguments: {} } }, { session: sid, headers: bearer(token) });
  assert.equal(r.status, 200, r.text);
  return r.json ?? r.messages?.find((m) => m.id !== undefined);
}

/* a new elicitation for token's principal: { id, url } */
async function elicit(port, token, sid) {
  const a = await whoami(port, token, sid);
  assert.equal(a.error?.code, -32042, JSON.stringify(a));
  const e = a.error.data.elicitations[0];
  assert.equal(e.mode, 'url');
  assert.match(e.url, new RegExp(`^http://${HOST.replace(/\./g, '\\.')}:\\d+/oauth/start\\?consent=vmcpd-e-[0-9a-f]{32}$`));
  return { id: e.elicitationId, url: e.url };
}

function assertPageHeaders(h) {
  assert.equal(h['cache-control'], 'no-store');
  assert.equal(h['referrer-policy'], 'no-referrer');
  assert.equal(h['content-security-policy'], "default-src 'none'; frame-ancestors 'none'");
}

describe('linking a user\'s upstream account, the web leg', () => {
  let L, port;

  before(async () => {
    L = await startLinks({ sealKey: true });
    port = L.daemon.port;
  });

  after(async () => {
    await closeBrowsers();
    await L?.stop();
  });

  let sid, elicited;

  test('browser: alice\'s link opened by a browser logged in as bob links nothing', guarded(async () => {
    sid = await session(port, L.tokens.alice);
    elicited = await elicit(port, L.tokens.alice, sid);
    const wrong = await consent(elicited.url, { as: 'bob', name: 'wrong-person' });
    assert.equal(wrong.status, 403, wrong.text);
    assert.match(wrong.text, /signed in as someone other than the person who asked/);
    assert.match(wrong.text, /nothing was linked/);
    assertPageHeaders(wrong.headers);
    assert.equal(L.as.count('authorization_code'), 0, 'the upstream server was reached');
    assert.equal((await whoami(port, L.tokens.alice, sid)).error?.code, -32042);
  }));

  test('browser: alice consents (the same link); the link is stored and used, the session told, no token shown or logged', guarded(async () => {
    const { id, url } = elicited;
    // the session's GET stream, for notifications/elicitation/complete
    const stream = await openStream(port, { headers: { ...bearer(L.tokens.alice),
      'Mcp-Session-Id': sid, 'MCP-Protocol-Version': LEGACY_VERSION, Accept: 'text/event-stream' } });
    assert.equal(stream.status, 200);
    const page = await consent(url, { as: 'alice', name: 'alice-linked' });
    assert.equal(page.status, 200, page.text);
    assert.match(page.text, /up is linked to your account; you can return to your client/);
    assertPageHeaders(page.headers);
    assert.equal(L.as.count('authorization_code'), 1);
    const done = await waitFor('notifications/elicitation/complete', () =>
      stream.events.find((e) => e.msg?.method === 'notifications/elicitation/complete'));
    assert.deepEqual(done.msg.params, { elicitationId: id });
    stream.close();
    // the call now goes, as alice's upstream account
    const a = await whoami(port, L.tokens.alice, sid);
    assert.equal(a.result?.content?.[0]?.text, 'user alice', JSON.stringify(a));
    // bob is not linked by it
    const bsid = await session(port, L.tokens.bob);
    assert.equal((await whoami(port, L.tokens.bob, bsid)).error?.code, -32042);
    // vmcpctl links lists it (principal, backend, expiry)
    const links = await vmcpctl(['links', '-j'], { stateDir: L.daemon.stateDir });
    assert.equal(links.code, 0, links.stderr);
    const mine = JSON.parse(links.stdout).filter((l) => l.sub === 'alice');
    assert.equal(mine.length, 1, links.stdout);
    assert.equal(mine[0].backend, 'up');
    // no token in it, the dump, /status, the log, or the page
    const dump = await vmcpctl(['dump', '-a'], { stateDir: L.daemon.stateDir });
    const status = await httpRequest(L.daemon.diag, { method: 'GET', path: '/status', timeout: 5000 });
    assert.equal(status.status, 200);
    assert.ok(L.as.issued.length >= 1);
    for (const t of L.as.issued)
      for (const [where, text] of [['links', links.stdout], ['dump', dump.stdout], ['/status', status.text],
        ['log', L.daemon.proc.output], ['page', page.text]])
        assert.ok(!text.includes(t), `an upstream token in ${where}`);
  }));

  test('jar: the upstream callback replayed is refused; so is one from another browser', guarded(async () => {
    // a principal of its own: carol (a token signed with the IdP's key)
    const carol = L.idp.forge(L.idp.claims({ sub: 'carol' }));
    const sid = await session(port, carol);
    const { url } = await elicit(port, carol, sid);
    const w = await walk(url, { as: 'carol', stopAt: 'upstream-callback' });
    assert.ok(w.callback, `no callback: ${w.status} ${w.text}`);
    // another browser (no cookie) with the very callback
    const other = await get(new Jar(), w.callback);
    assert.equal(other.status, 400, other.text);
    assert.match(other.text, /started in another browser/);
    const first = await get(w.jar, w.callback);
    assert.equal(first.status, 200, first.text);
    assert.match(first.text, /is linked/);
    const again = await get(w.jar, w.callback);
    assert.equal(again.status, 410, again.text);
    assert.match(again.text, /unknown, used already or expired/);
    assert.doesNotMatch(again.text, /code=|access_token/);
  }));

  test('jar: a sign-in answer naming another issuer is refused (RFC 9207); the genuine one goes on', guarded(async () => {
    const dave = L.idp.forge(L.idp.claims({ sub: 'dave' }));
    const sid = await session(port, dave);
    const { url } = await elicit(port, dave, sid);
    const w = await walk(url, { as: 'dave', stopAt: 'login-callback' });
    assert.ok(w.callback, `no callback: ${w.status} ${w.text}`);
    const cb = new URL(w.callback);
    assert.equal(cb.searchParams.get('iss'), L.idp.issuer);
    cb.searchParams.set('iss', `http://${HOST}:1`);
    const mixed = await get(w.jar, cb.href);
    assert.equal(mixed.status, 400, mixed.text);
    assert.match(mixed.text, /names another server/);
    const genuine = await get(w.jar, w.callback);
    assert.equal(genuine.status, 302, genuine.text);
    assert.equal(new URL(genuine.location).hostname, AS_HOST);
  }));

  test('jar: a consent past its expiry is refused at the callback, though it was good at the start', guarded(async () => {
    // drive_consent writes alice's consent as a worker does, sealed
    // under the node's sealKeyFile, expiring in 6 s (a worker's last
    // CONSENT_TTL_MS, 10 min): started in time, answered too late
    const iss = L.idp.issuer;
    const grants0 = L.as.grants.length;
    const scope = crypto.createHash('sha256').update(`${iss}\0alice`).digest('hex').slice(0, 32);
    const d = spawnSync(DRIVE_CONSENT, [L.daemon.stateDir, L.sealKeyFile, scope, iss, 'alice',
      'up', '6000'], { encoding: 'utf8' });
    assert.equal(d.status, 0, d.stderr);
    const [id, until] = d.stdout.trim().split(' ');
    const w = await walk(`http://${HOST}:${port}/oauth/start?consent=${id}`,
      { as: 'alice', stopAt: 'login-callback' });
    assert.ok(w.callback, `no callback: ${w.status} ${w.text}`);
    assert.ok(Date.now() < Number(until), 'the login took longer than the consent lasts');
    await new Promise((r) => setTimeout(r, Number(until) - Date.now() + 500));
    const late = await get(w.jar, w.callback);
    assert.equal(late.status, 410, late.text);
    assert.match(late.text, /unknown, used already or expired/);
    assert.equal(L.as.grants.length, grants0, 'the upstream server was reached');
  }));

  test('jar: an unknown, used or malformed consent or state is refused', guarded(async () => {
    const base = `http://${HOST}:${port}`;
    const jar = new Jar();
    const unknown = await get(jar, `${base}/oauth/start?consent=vmcpd-e-${'0'.repeat(32)}`);
    assert.equal(unknown.status, 410, unknown.text);
    assertPageHeaders(Object.fromEntries(unknown.headers));
    const bad = await get(jar, `${base}/oauth/start?consent=<script>`);
    assert.equal(bad.status, 400);
    assert.doesNotMatch(bad.text, /<script>/);
    const noState = await get(jar, `${base}/oauth/callback?code=x`);
    assert.equal(noState.status, 400);
    const badNonce = await get(jar, `${base}/oauth/callback?code=x&state=vmcpd-e-${'0'.repeat(32)}.short`);
    assert.equal(badNonce.status, 400);
    const gone = await get(jar, `${base}/oauth/callback?code=x&state=vmcpd-e-${'0'.repeat(32)}.${'a'.repeat(43)}`);
    assert.equal(gone.status, 410);
    const post = await httpRequest(port, { method: 'POST', path: '/oauth/start', body: '', timeout: 5000 });
    assert.equal(post.status, 405);
  }));

  test('jar: access_denied at the upstream server is a refusal page; nothing linked', guarded(async () => {
    const tok = L.idp.forge(L.idp.claims({ sub: 'dave' }));
    const s2 = await session(port, tok);
    const { url } = await elicit(port, tok, s2);
    L.as.denyConsent = true;
    try {
      const r = await walk(url, { as: 'dave' });
      assert.equal(r.status, 403, r.text);
      assert.match(r.text, /Consent refused/);
    } finally {
      L.as.denyConsent = false;
    }
    assert.equal((await whoami(port, tok, s2)).error?.code, -32042);
  }));

  test('jar: a token near its expiry is refreshed at the token endpoint; a refused refresh asks again', guarded(async () => {
    const tok = L.idp.forge(L.idp.claims({ sub: 'frank' }));
    const s = await session(port, tok);
    const { url } = await elicit(port, tok, s);
    // within LINK_MARGIN_MS (a minute) of its expiry from the start
    L.as.accessTtl = 30;
    try {
      const r = await walk(url, { as: 'frank' });
      assert.equal(r.status, 200, r.text);
      const before = L.as.count('refresh_token');
      const a = await whoami(port, tok, s);
      assert.equal(a.result?.content?.[0]?.text, 'user frank', JSON.stringify(a));
      assert.ok(L.as.count('refresh_token') > before, 'no refresh');
      assert.ok(L.as.grants.filter((g) => g.grant_type === 'refresh_token').every((g) => g.status === 200));
      L.as.refuseRefresh = true;
      const b = await whoami(port, tok, s);
      assert.equal(b.error?.code, -32042, JSON.stringify(b));
    } finally {
      L.as.accessTtl = 600;
      L.as.refuseRefresh = false;
    }
  }));
});

// here the upstream server is configured by its issuer alone: its
// endpoints come from its metadata (RFC 8414, then OpenID's document)
describe('two nodes on one Redis: one refresh of a link for the fleet', () => {
  let L, a, b;

  before(async () => {
    const redis = await startRedis();
    L = await startLinks({ redis, workers: 1, issuerOnly: true });
    a = L.daemon;
    b = await L.node();
  });

  after(async () => {
    await L?.stop();
  });

  test('jar: a link near its expiry used on both nodes at once is refreshed once', guarded(async () => {
    const tok = L.idp.forge(L.idp.claims({ sub: 'gina' }));
    const sa = await session(a.port, tok);
    const { url } = await elicit(a.port, tok, sa);
    L.as.accessTtl = 30;	// within LINK_MARGIN_MS: the next use refreshes
    const r = await walk(url, { as: 'gina' });
    assert.equal(r.status, 200, r.text);
    // the endpoints from the metadata, RFC 8414's document first (each
    // node's worker fetched it once)
    const wk = L.as.paths.filter((p) => p.startsWith('/.well-known/'));
    assert.deepEqual([...new Set(wk)], ['/.well-known/oauth-authorization-server']);
    L.as.accessTtl = 600;	// the refreshed one is not
    const sb = await session(b.port, tok);
    const before = L.as.count('refresh_token');
    const [x, y] = await Promise.all([whoami(a.port, tok, sa), whoami(b.port, tok, sb)]);
    assert.equal(x.result?.content?.[0]?.text, 'user gina', JSON.stringify(x));
    assert.equal(y.result?.content?.[0]?.text, 'user gina', JSON.stringify(y));
    assert.equal(L.as.count('refresh_token') - before, 1, JSON.stringify(L.as.grants));
  }));
});
