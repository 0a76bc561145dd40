// incomingAuth type oidc against a real OpenID provider (oidc-provider,
// lib/oidc.mjs): the official SDK v1 and v2 clients with real access
// tokens, discovery through the 401 and RFC 9728 metadata, opaque
// tokens through RFC 7662 introspection, sessions bound to their
// principal, and the authentication attack cases (docs/ARCHITECTURE.md,
// "Incoming authentication"), each its own test.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import net from 'node:net';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';

import {
  useHarness, guarded, startTestBackend, startDaemon, httpRequest, mcpPost, mcpHeaders,
  nextId, withTimeout, freePort, LEGACY_VERSION, HOST,
} from './lib/harness.mjs';
import { startIdp, oidcConfig, OPAQUE_RESOURCE, CLIENTS } from './lib/oidc.mjs';

useHarness();
// vmcpd's introspection secret (clientSecretEnv), for every daemon here
process.env.VMCPD_TEST_INTROSPECTION_SECRET = CLIENTS.vmcpd;

const bearer = (t) => ({ Authorization: `Bearer ${t}` });
const initMsg = () => ({
  jsonrpc: '2.0', id: nextId(), method: 'initialize',
  params: { protocolVersion: LEGACY_VERSION, capabilities: {}, clientInfo: { name: 'auth', version: '1' } },
});
const callMsg = () => ({
  jsonrpc: '2.0', id: nextId(), method: 'tools/call',
  params: { name: 'echo', arguments: { message: 'hi' } },
});

/* a tools/call with this token (no session: answered by auth first) */
function post(daemon, token, { headers = {}, path } = {}) {
  return httpRequest(daemon.port, {
    path, body: initMsg(),
    headers: mcpHeaders({ version: null, extra: { ...(token ? bearer(token) : {}), ...headers } }),
  });
}

/* the refusal of a bad token: 401, invalid_token, the metadata named */
function assertRefused(res, why) {
  assert.equal(res.status, 401, `${why}: ${res.status} ${res.text}`);
  const ch = res.headers['www-authenticate'];
  assert.match(ch, /^Bearer resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"/);
  assert.match(ch, /error="invalid_token"/, ch);
  assert.equal(res.json.jsonrpc, '2.0');
  assert.equal(typeof res.json.error.code, 'number');
  assert.match(res.json.error.message, /^Unauthorized: /);
  if (why)
    assert.match(res.json.error.message, why);
}

describe('incomingAuth oidc with a real OpenID provider', () => {
  let idp, backend, daemon;

  before(async () => {
    idp = await startIdp();
    backend = await startTestBackend();
    daemon = await startDaemon({
      backendUrl: backend.url, backendName: 'b',
      extra: oidcConfig(idp, { introspection: true }),
    });
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
    await idp?.stop();
  });

  test('the official SDK v1 client with a real token calls a tool', guarded(async () => {
    const token = await idp.token('alice');
    const client = new Client({ name: 'v1', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(daemon.url),
      { requestInit: { headers: bearer(token) } });
    await withTimeout(client.connect(transport), 15000, 'v1 connect');
    const r = await client.callTool({ name: 'echo', arguments: { message: 'v1' } });
    assert.deepEqual(r.content, [{ type: 'text', text: 'Echo: v1' }]);
    await client.close();
  }));

  test('the official SDK v2 client with a real token calls a tool', guarded(async () => {
    const token = await idp.token('bob');
    const client = new V2Client({ name: 'v2', version: '1.0.0' });
    await withTimeout(client.connect(new V2Transport(new URL(daemon.url),
      { requestInit: { headers: bearer(token) } })), 15000, 'v2 connect');
    const r = await client.callTool({ name: 'echo', arguments: { message: 'v2' } });
    assert.deepEqual(r.content, [{ type: 'text', text: 'Echo: v2' }]);
    await client.close();
  }));

  test('without a token: 401 whose metadata names the authorization server', guarded(async () => {
    const res = await post(daemon, null);
    assert.equal(res.status, 401);
    const ch = res.headers['www-authenticate'];
    // RFC 6750 3.1: no error code when no credentials were sent
    assert.doesNotMatch(ch, /error=/);
    assert.match(ch, /scope="mcp"/);
    const url = /resource_metadata="([^"]+)"/.exec(ch)[1];
    assert.equal(url, `http://${HOST}:${daemon.port}/.well-known/oauth-protected-resource/mcp`);
    for (const p of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const m = await httpRequest(daemon.port, { method: 'GET', path: p });
      assert.equal(m.status, 200, m.text);
      assert.deepEqual(m.json.authorization_servers, [idp.issuer]);
      // the audience is no URL: the resource is the URL the client used
      assert.equal(m.json.resource, daemon.url);
      assert.deepEqual(m.json.bearer_methods_supported, ['header']);
      assert.deepEqual(m.json.scopes_supported, ['mcp']);
    }
    // and the authorization server is discoverable from there
    const d = await fetch(`${idp.issuer}/.well-known/openid-configuration`).then((r) => r.json());
    assert.equal(d.issuer, idp.issuer);
    assert.ok(d.token_endpoint);
  }));

  test('the SDK v1 client without a token fails to connect (401)', guarded(async () => {
    const client = new Client({ name: 'anon', version: '1.0.0' });
    await assert.rejects(client.connect(new StreamableHTTPClientTransport(new URL(daemon.url))),
      /401|Unauthorized/);
  }));

  test('a repeated token is accepted again (remembered until its exp)',
    guarded(async () => {
      const token = await idp.token('alice');
      assert.equal((await post(daemon, token)).status, 200);
      assert.equal((await post(daemon, token)).status, 200);
    }));

  test('attack: alg none', guarded(async () => {
    const h = Buffer.from(JSON.stringify({ alg: 'none', kid: idp.kid })).toString('base64url');
    const p = Buffer.from(JSON.stringify(idp.claims())).toString('base64url');
    assertRefused(await post(daemon, `${h}.${p}.`), /algorithm is not accepted/);
  }));

  test('attack: HS256 signed with the public key as the secret', guarded(async () => {
    const claims = idp.claims();
    for (const secret of [JSON.stringify(idp.publicJwk()),
      idp.publicKey.export({ format: 'pem', type: 'spki' })]) {
      const h = Buffer.from(JSON.stringify({ alg: 'HS256', kid: idp.kid })).toString('base64url');
      const p = Buffer.from(JSON.stringify(claims)).toString('base64url');
      const s = crypto.createHmac('sha256', secret).update(`${h}.${p}`).digest('base64url');
      assertRefused(await post(daemon, `${h}.${p}.${s}`), /algorithm is not accepted/);
    }
  }));

  test('attack: missing kid', guarded(async () => {
    const t = idp.forge(idp.claims(), { header: { kid: undefined } });
    assertRefused(await post(daemon, t), /no kid/);
  }));

  test('attack: unknown kid (one refetch of the JWKS, rate-limited under a flood)', guarded(async () => {
    const before = idp.count('/jwks');
    for (let i = 0; i < 10; i++) {
      const t = idp.forge(idp.claims(), { header: { kid: crypto.randomUUID() } });
      assertRefused(await post(daemon, t), /kid\) is unknown/);
    }
    // at most one refetch per 30 s across the workers
    assert.ok(idp.count('/jwks') - before <= 1, `${idp.count('/jwks') - before} JWKS fetches`);
  }));

  test('attack: signed by another key under the issuer\'s kid', guarded(async () => {
    const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    assertRefused(await post(daemon, idp.forge(idp.claims(), { key: privateKey })), /bad signature/);
  }));

  test('attack: tampered payload', guarded(async () => {
    const [h, , s] = (await idp.token('alice')).split('.');
    const p = Buffer.from(JSON.stringify(idp.claims({ sub: 'admin' }))).toString('base64url');
    assertRefused(await post(daemon, `${h}.${p}.${s}`), /bad signature/);
  }));

  test('attack: truncated token and a JWE-shaped token', guarded(async () => {
    const t = await idp.token('alice');
    assertRefused(await post(daemon, t.slice(0, t.lastIndexOf('.') + 10)));
    assertRefused(await post(daemon, 'a.b.c.d.e'), /JWE/);
  }));

  test('attack: expired token, and one expired within the clock skew', guarded(async () => {
    const now = Math.floor(Date.now() / 1000);
    assertRefused(await post(daemon, idp.forge(idp.claims({ iat: now - 900, exp: now - 300 }))),
      /expired/);
    assert.equal((await post(daemon, idp.forge(idp.claims({ iat: now - 900, exp: now - 5 })))).status,
      200);
  }));

  test('attack: nbf in the future', guarded(async () => {
    const now = Math.floor(Date.now() / 1000);
    assertRefused(await post(daemon, idp.forge(idp.claims({ nbf: now + 300 }))), /not valid yet/);
  }));

  test('attack: missing exp', guarded(async () => {
    assertRefused(await post(daemon, idp.forge(idp.claims({ exp: undefined }))), /no valid exp/);
  }));

  test('attack: wrong iss, and iss with a trailing slash or space', guarded(async () => {
    for (const iss of ['http://evil.example', `${idp.issuer}/`, `${idp.issuer} `])
      assertRefused(await post(daemon, idp.forge(idp.claims({ iss }))), /issuer/);
  }));

  test('attack: wrong aud, aud array without us, missing aud', guarded(async () => {
    for (const aud of ['urn:other', ['urn:other', 'x'], undefined])
      assertRefused(await post(daemon, idp.forge(idp.claims({ aud }))), /audience/);
  }));

  test('attack: missing, empty or non-string sub', guarded(async () => {
    for (const sub of [undefined, '', 42])
      assertRefused(await post(daemon, idp.forge(idp.claims({ sub }))), /subject/);
  }));

  // Authorization is no list: which of two is meant?  Neither.
  test('attack: two Authorization headers: 400, whichever comes first', guarded(async () => {
    const good = await idp.token('alice');
    const bad = idp.forge(idp.claims({ sub: 'mallory' }));
    for (const [a, b] of [[good, bad], [bad, good], [good, good]]) {
      const body = JSON.stringify(initMsg());
      const text = await new Promise((resolve, reject) => {
        const chunks = [];
        const sock = net.connect({ host: '127.0.0.1', port: daemon.port }, () => sock.end(
          `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
          `Accept: application/json, text/event-stream\r\nAuthorization: Bearer ${a}\r\n` +
          `authorization: Bearer ${b}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `Connection: close\r\n\r\n${body}`));
        sock.on('data', (d) => chunks.push(d));
        sock.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        sock.on('error', reject);
      });
      assert.match(text, /^HTTP\/1\.1 400 /, text);
      assert.match(text, /more than one Authorization header/);
      assert.doesNotMatch(text, /mcp-session-id/i);
    }
  }));

  test('attack: a 4 KB sub is refused as too long, naming the limit', guarded(async () => {
    const res = await post(daemon, idp.forge(idp.claims({ sub: 's'.repeat(4096) })));
    assertRefused(res, /subject \(sub\) is too long \(over 1024 bytes\)/);
    assert.match(res.headers['www-authenticate'], /too long \(over 1024 bytes\)/);
  }));

  test('attack: oversized token', guarded(async () => {
    const t = idp.forge(idp.claims({ pad: 'x'.repeat(9000) }));
    assertRefused(await post(daemon, t), /too large/);
  }));

  test('attack: token in the query string is refused', guarded(async () => {
    const token = await idp.token('alice');
    const res = await post(daemon, null, { path: `/mcp?access_token=${token}` });
    assert.equal(res.status, 400, res.text);
    assert.match(res.json.error.message, /query string/);
    // even beside a valid header
    const res2 = await post(daemon, token, { path: `/mcp?x=1&access_token=${token}` });
    assert.equal(res2.status, 400);
  }));

  test('attack: another principal\'s session is answered as an unknown one (404)', guarded(async () => {
    const alice = await idp.token('alice');
    const bob = await idp.token('bob');
    const init = await post(daemon, alice);
    assert.equal(init.status, 200, init.text);
    const sid = init.headers['mcp-session-id'];
    assert.ok(sid);
    const call = (tok, session) => mcpPost(daemon.port, callMsg(), { session, headers: bearer(tok) });
    const mine = await call(alice, sid);
    assert.equal(mine.status, 200, mine.text);
    const theirs = await call(bob, sid);
    const unknown = await call(bob, 'A'.repeat(43));
    assert.equal(theirs.status, 404, theirs.text);
    assert.equal(unknown.status, 404);
    // no oracle: the same code and message as a session that does not exist
    assert.equal(theirs.json.error.code, unknown.json.error.code);
    assert.equal(theirs.json.error.message, unknown.json.error.message);
    // and a token-less request is a 401, not a 404
    assert.equal((await mcpPost(daemon.port, callMsg(), { session: sid })).status, 401);
    // the owner still has it
    assert.equal((await call(alice, sid)).status, 200);
  }));

  test('opaque token: RFC 7662 introspection', guarded(async () => {
    const token = await idp.token('bob', { resource: OPAQUE_RESOURCE });
    assert.equal(token.split('.').length, 1, 'an opaque token');
    const r = await post(daemon, token);
    assert.equal(r.status, 200, r.text);
    assert.ok(idp.count('/token/introspection') >= 1);
    assertRefused(await post(daemon, 'not-a-token-the-provider-knows'), /not active/);
  }));

  test('attack: opaque token whose introspection says another audience, or no exp', guarded(async () => {
    const now = Math.floor(Date.now() / 1000);
    const base = { active: true, iss: idp.issuer, client_id: 'eve', scope: 'mcp', iat: now };
    try {
      idp.introspectionOverride = { ...base, aud: 'urn:other', exp: now + 600 };
      assertRefused(await post(daemon, crypto.randomUUID()), /audience/);
      idp.introspectionOverride = { ...base, aud: daemon.url };
      assertRefused(await post(daemon, crypto.randomUUID()), /audience/);
      idp.introspectionOverride = { ...base, aud: 'urn:vmcpd:test' };
      assertRefused(await post(daemon, crypto.randomUUID()), /no valid exp/);
      idp.introspectionOverride = { ...base, aud: 'urn:vmcpd:test', exp: now + 600, iss: 'http://evil' };
      assertRefused(await post(daemon, crypto.randomUUID()), /issuer/);
      // and the same answer, well-formed, passes: the checks above are what refused
      idp.introspectionOverride = { ...base, aud: 'urn:vmcpd:test', exp: now + 600 };
      assert.equal((await post(daemon, crypto.randomUUID())).status, 200);
    } finally {
      idp.introspectionOverride = null;
    }
  }));
});

describe('incomingAuth oidc with the issuer unreachable', () => {
  let backend, daemon, idp;

  before(async () => {
    idp = await startIdp();
    backend = await startTestBackend();
    const dead = await freePort();
    daemon = await startDaemon({
      backendUrl: backend.url, backendName: 'b',
      extra: oidcConfig(idp, { jwksUrl: `http://${HOST}:${dead}/jwks` }),
    });
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
    await idp?.stop();
  });

  test('attack: JWKS endpoint down: a valid token gets 401, never 500, never allowed', guarded(async () => {
    const token = await idp.token('alice');
    for (let i = 0; i < 3; i++)
      assertRefused(await post(daemon, token), /keys are unavailable/);
  }));

  test('attack: introspection endpoint down: an opaque token gets 401, never allowed', guarded(async () => {
    const dead = await freePort();
    const cfg = oidcConfig(idp, { introspection: true, jwksUrl: `http://${HOST}:${dead}/jwks` })
      .replace(`${idp.issuer}/token/introspection`, `http://${HOST}:${dead}/introspect`);
    const d = await startDaemon({ backendUrl: backend.url, backendName: 'b', extra: cfg });
    try {
      assertRefused(await post(d, crypto.randomUUID()), /could not be checked/);
    } finally {
      await d.stop();
    }
  }));

  test('the metadata is still served', guarded(async () => {
    const m = await httpRequest(daemon.port, { method: 'GET', path: '/.well-known/oauth-protected-resource' });
    assert.equal(m.status, 200);
    assert.deepEqual(m.json.authorization_servers, [idp.issuer]);
  }));
});

describe('incomingAuth oidc: daemons of their own (private addresses, key rotation, a hostile JWKS)', () => {
  let backend, idp;
  const daemons = [];

  before(async () => {
    idp = await startIdp();
    backend = await startTestBackend();
  });

  after(async () => {
    for (const d of daemons)
      await d.stop();
    await idp?.stop();
  });

  test('attack: a JWKS on a loopback address or a name that resolves to one, without jwksAllowPrivateIp',
    guarded(async () => {
      const token = await idp.token('alice');
      for (const host of [HOST, 'localhost']) {
        const cfg = oidcConfig(idp, { jwksUrl: `http://${host}:${idp.port}/jwks` })
          .replace('    jwksAllowPrivateIp: true\n', '');
        const before = idp.count('/jwks');
        const d = await startDaemon({ backendUrl: backend.url, backendName: 'b', extra: cfg });
        daemons.push(d);
        assertRefused(await post(d, token), /keys are unavailable/);
        assert.equal(idp.count('/jwks'), before, `${host}: the JWKS was fetched`);
      }
    }));

  test('a token signed with a key the issuer published after vmcpd fetched its keys: one refetch, then accepted',
    guarded(async () => {
      const d = await startDaemon({ backendUrl: backend.url, backendName: 'b', extra: oidcConfig(idp) });
      daemons.push(d);
      // vmcpd has the keys (a good token passes)
      assert.equal((await post(d, await idp.token('alice'))).status, 200);
      const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const jwk2 = { ...publicKey.export({ format: 'jwk' }), kid: 'k2', use: 'sig', alg: 'ES256' };
      const forgeEs = (claims) => {
        const h = Buffer.from(JSON.stringify({ alg: 'ES256', kid: 'k2', typ: 'at+jwt' })).toString('base64url');
        const p = Buffer.from(JSON.stringify(claims)).toString('base64url');
        const sig = crypto.sign('sha256', Buffer.from(`${h}.${p}`), { key: privateKey, dsaEncoding: 'ieee-p1363' });
        return `${h}.${p}.${sig.toString('base64url')}`;
      };
      idp.jwksOverride = { keys: [idp.publicJwk(), jwk2] };
      const before = idp.count('/jwks');
      const r = await post(d, forgeEs(idp.claims({ sub: 'rotated' })));
      assert.equal(r.status, 200, r.text);
      assert.equal(idp.count('/jwks') - before, 1, 'one refetch');
      // the new key verifies only its own algorithm
      assertRefused(await post(d, idp.forge(idp.claims(), { header: { kid: 'k2' } })), /does not match/);
      idp.jwksOverride = null;
    }));

  test('attack: a JWKS that redirects (to a private address) is not followed: 401', guarded(async () => {
    const token = await idp.token('alice');
    idp.jwksRedirect = `http://169.254.169.254/latest/meta-data/`;
    try {
      const d = await startDaemon({ backendUrl: backend.url, backendName: 'b', extra: oidcConfig(idp) });
      daemons.push(d);
      assertRefused(await post(d, token), /keys are unavailable/);
    } finally {
      idp.jwksRedirect = null;
    }
  }));

  test('attack: a JWKS that never answers: 401 within the fetch timeout, never a hang', guarded(async () => {
    const token = await idp.token('alice');
    idp.jwksHang = true;
    try {
      const d = await startDaemon({ backendUrl: backend.url, backendName: 'b', extra: oidcConfig(idp) });
      daemons.push(d);
      const t0 = Date.now();
      assertRefused(await post(d, token), /keys are unavailable/);
      // the fetch is bounded (5 s) and a request waits at most 5 s
      assert.ok(Date.now() - t0 < 12000, `${Date.now() - t0} ms`);
    } finally {
      idp.jwksHang = false;
    }
  }));

  test('attack: a flood of random opaque tokens: introspections in flight are bounded (503), none allowed',
    guarded(async () => {
      idp.introspectionHang = true;
      try {
        const d = await startDaemon({ backendUrl: backend.url, backendName: 'b', workers: 1,
          extra: oidcConfig(idp, { introspection: true }) });
        daemons.push(d);
        const before = idp.count('/token/introspection');
        const res = await Promise.all(Array.from({ length: 40 }, () => post(d, crypto.randomUUID())));
        const by = (s) => res.filter((r) => r.status === s).length;
        assert.equal(by(503) + by(401), 40, res.map((r) => r.status).join(' '));
        assert.ok(by(503) >= 8, `${by(503)} answered 503`);
        for (const r of res.filter((x) => x.status === 503))
          assert.equal(r.headers['retry-after'], '1');
        assert.ok(idp.count('/token/introspection') - before <= 32);
      } finally {
        idp.introspectionHang = false;
      }
    }));

  test('attack: a JWKS too large to be one: refused, 401', guarded(async () => {
    idp.jwksOverride = JSON.stringify({ keys: [idp.publicJwk()], pad: 'x'.repeat(300 * 1024) });
    try {
      const d = await startDaemon({ backendUrl: backend.url, backendName: 'b', extra: oidcConfig(idp) });
      daemons.push(d);
      assertRefused(await post(d, await idp.token('alice')), /keys are unavailable/);
    } finally {
      idp.jwksOverride = null;
    }
  }));
});

describe('incomingAuth anonymous', () => {
  let backend, daemon;

  before(async () => {
    backend = await startTestBackend();
    daemon = await startDaemon({ backendUrl: backend.url, backendName: 'b' });
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
  });

  test('no metadata, and any Authorization header is ignored', guarded(async () => {
    const m = await httpRequest(daemon.port, { method: 'GET', path: '/.well-known/oauth-protected-resource' });
    assert.equal(m.status, 404);
    const r = await post(daemon, 'whatever');
    assert.equal(r.status, 200, r.text);
  }));
});
