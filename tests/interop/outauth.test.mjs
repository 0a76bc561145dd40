// outgoingAuth (docs/ARCHITECTURE.md, "Outgoing authentication"): the
// credential header_injection sends on every request to a backend, as
// the backend saw it (lib/backend.mjs GET /seen); the client's own
// Authorization never reaches a backend, with a real OpenID provider's
// token (lib/oidc.mjs); the secret is in no log; an https:// backend's
// certificate is verified (caBundlePath).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';

import {
  guarded, startTestBackend, startDaemon, connectClient, httpRequest, withTimeout,
  Daemon, configText, tmpDir, run,
} from './lib/harness.mjs';
import { startIdp, oidcConfig } from './lib/oidc.mjs';
import { useMulti, startModern } from './lib/multi.mjs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

useMulti();

const SECRET = 'backend-key-7f3a9c2e41d8';
const BEARER = 'Bearer injected-5b8e1d0c77aa';
process.env.VMCPD_TEST_BACKEND_KEY = SECRET;
process.env.VMCPD_TEST_BACKEND_BEARER = BEARER;

async function seen(backend) {
  const r = await httpRequest(backend.port, { method: 'GET', path: '/seen', timeout: 5000 });
  assert.equal(r.status, 200, r.text);
  return r.json;
}

const outgoing = (lines) => ['outgoingAuth:', '  source: inline', ...lines].join('\n') + '\n';

/* a daemon whose one backend gets X-Api-Key: SECRET (as the default,
 * or as its backends entry), debug logging; stopped after the suite */
function injecting(backendName, asDefault) {
  const at = asDefault ? ['  default:'] : ['  backends:', `    ${backendName}:`];
  const ind = asDefault ? '    ' : '      ';
  const ctx = {};
  before(async () => {
    ctx.daemon = await startDaemon({
      backendUrl: ctx.backend.url, backendName,
      extra: 'operational:\n  logLevel: debug\n' + outgoing([...at,
        `${ind}type: header_injection`,
        `${ind}headerInjection:`,
        `${ind}  headerName: X-Api-Key`,
        `${ind}  headerValueEnv: VMCPD_TEST_BACKEND_KEY`,
      ]),
    });
  });
  after(async () => {
    if (ctx.daemon)
      await ctx.daemon.stop();
  });
  return ctx;
}

describe('outgoingAuth header_injection', () => {
  let backend;

  before(async () => {
    backend = ctx.backend = await startTestBackend();
  });
  const ctx = injecting('b', true);

  test('every request to the backend carries the header', guarded(async () => {
    const { client } = await connectClient(ctx.daemon.url);
    try {
      const tools = await client.listTools();
      assert.ok(tools.tools.some((t) => t.name === 'echo'), JSON.stringify(tools));
      const r = await client.callTool({ name: 'echo', arguments: { message: 'x' } });
      assert.equal(r.content[0].text, 'Echo: x');
    } finally {
      await client.close();
    }
    const s = await seen(backend);
    assert.ok(s.some((e) => e.rpc === 'initialize'), JSON.stringify(s));
    assert.ok(s.some((e) => e.rpc === 'tools/list'), JSON.stringify(s));
    assert.ok(s.some((e) => e.rpc === 'tools/call'), JSON.stringify(s));
    for (const e of s)
      assert.equal(e.apiKey, SECRET, `${e.method} ${e.rpc} without the credential`);
  }));

  test('the secret is in no log line', guarded(async () => {
    assert.ok(ctx.daemon.stderr.length > 0);
    assert.ok(!ctx.daemon.stderr.includes(SECRET), 'the header value in the log');
  }));
});

describe('outgoingAuth header_injection to a 2026-07-28 backend', () => {
  let backend;

  before(async () => {
    backend = ctx.backend = await startModern({ modernOnly: true, tools: ['t1'] });
  });
  const ctx = injecting('m', false);

  test('discover, lists and calls all carry the header', guarded(async () => {
    const { client } = await connectClient(ctx.daemon.url);
    try {
      const r = await client.callTool({ name: 't1', arguments: {} });
      assert.match(r.content[0].text, /t1/);
    } finally {
      await client.close();
    }
    const s = await seen(backend);
    assert.ok(s.some((e) => e.method === 'server/discover'), JSON.stringify(s));
    assert.ok(s.some((e) => e.method === 'tools/call'), JSON.stringify(s));
    for (const e of s)
      assert.equal(e.apiKey, SECRET, `${e.method} without the credential`);
  }));
});

describe('the client\'s Authorization is never forwarded', () => {
  let idp, plain, injected, daemonPlain, daemonInjected;

  before(async () => {
    idp = await startIdp();
    plain = await startTestBackend();
    injected = await startTestBackend();
    daemonPlain = await startDaemon({
      backendUrl: plain.url, backendName: 'b', extra: oidcConfig(idp),
    });
    daemonInjected = await startDaemon({
      backendUrl: injected.url, backendName: 'b',
      extra: oidcConfig(idp) + outgoing([
        '  backends:',
        '    b:',
        '      type: header_injection',
        '      headerInjection:',
        '        headerName: Authorization',
        '        headerValueEnv: VMCPD_TEST_BACKEND_BEARER',
      ]),
    });
  });

  after(async () => {
    for (const d of [daemonPlain, daemonInjected])
      if (d)
        await d.stop();
    await idp?.stop();
  });

  async function callAs(daemon, token) {
    const client = new Client({ name: 'outauth', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(daemon.url),
      { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
    await withTimeout(client.connect(transport), 15000, 'connect');
    try {
      await client.listTools();
      const r = await client.callTool({ name: 'echo', arguments: { message: 'a' } });
      assert.equal(r.content[0].text, 'Echo: a');
    } finally {
      await client.close();
    }
  }

  test('unauthenticated: the backend gets no Authorization at all', guarded(async () => {
    const token = await idp.token('alice');
    await callAs(daemonPlain, token);
    const s = await seen(plain);
    assert.ok(s.some((e) => e.rpc === 'tools/call'), JSON.stringify(s));
    for (const e of s)
      assert.equal(e.authorization, null, `${e.method} ${e.rpc} forwarded ${e.authorization}`);
  }));

  test('header_injection of Authorization: the configured one, never the client\'s', guarded(async () => {
    const token = await idp.token('bob');
    await callAs(daemonInjected, token);
    const s = await seen(injected);
    assert.ok(s.some((e) => e.rpc === 'tools/call'), JSON.stringify(s));
    for (const e of s) {
      assert.equal(e.authorization, BEARER, `${e.method} ${e.rpc}`);
      assert.ok(!JSON.stringify(e).includes(token), 'the client token reached the backend');
    }
  }));
});

describe('https:// backends: certificates are verified', () => {
  let backend, ca, daemons = [];

  before(async () => {
    const dir = await tmpDir('vmcpd-tls-');
    const key = path.join(dir, 'key.pem');
    ca = path.join(dir, 'cert.pem');
    const r = await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1',
      '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
      '-keyout', key, '-out', ca]);
    assert.equal(r.code, 0, r.stderr);
    backend = await startTestBackend({ env: { TLS_CERT: ca, TLS_KEY: key } });
  });

  after(async () => {
    for (const d of daemons)
      await d.stop();
  });

  /* a daemon for the https backend, its caBundlePath given or not */
  async function daemonFor(caPath) {
    const dir = await tmpDir();
    const opts = { backendUrl: `https://127.0.0.1:${backend.port}/mcp`, backendName: 'b' };
    const d = new Daemon(dir, path.join(dir, 'vmcpd.yaml'), opts);
    let text = configText({ portFile: d.portFile, stateDir: d.stateDir, ...opts });
    if (caPath)
      text = text.replace('    transport: streamable-http\n',
        `    transport: streamable-http\n    caBundlePath: ${caPath}\n`);
    await d.writeConfig(text);
    await d.start();
    daemons.push(d);
    return d;
  }

  async function echo(d) {
    const { client } = await connectClient(d.url);
    try {
      return await client.callTool({ name: 'echo', arguments: { message: 'tls' } });
    } finally {
      await client.close();
    }
  }

  test('a self-signed certificate is refused without caBundlePath', guarded(async () => {
    const d = await daemonFor(null);
    let r;
    try {
      r = await echo(d);
    } catch (e) {
      return;	// refused: no such tool, or the call failed
    }
    assert.notEqual(r.content?.[0]?.text, 'Echo: tls', 'an unverified backend was used');
    assert.ok(r.isError, JSON.stringify(r));
  }));

  test('with caBundlePath naming its CA the backend is used', guarded(async () => {
    const d = await daemonFor(ca);
    const r = await echo(d);
    assert.equal(r.content[0].text, 'Echo: tls');
  }));
});
