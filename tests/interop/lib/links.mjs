// Per-user upstream accounts (outgoingAuth type authorization_code,
// docs/ARCHITECTURE.md "Linking users' accounts"): the real parts a
// consent walks through.
//
//   startLinks({ workers, redis })  everything below, and a vmcpd in
//                             front of the upstream backend "up" (one
//                             daemon per test file: reuse it; daemon.diag
//                             is its diagnostics port).  Returns
//                             { idp, as, upstream, daemon, callbackUrl,
//                               tokens: { alice, bob }, node(), stop() }
//                             (stop(): every node stopped and checked).
//                             With redis (lib/cluster.mjs startRedis()),
//                             sessionStorage on it with a sealKeyFile, and
//                             L.node() starts another node of the same
//                             config (callbackUrl stays the first's).
//                             issuerOnly: the upstream server named by
//                             its issuer alone (its metadata fetched).
//                             sealKey: a sealKeyFile without Redis too
//                             (L.sealKeyFile), for a driver that writes
//                             sealed records into a node's state.
//   idp        the clients' OpenID provider (lib/oidc.mjs Idp), whose
//              client "vmcpd" also logs the person in at vmcpd's
//              /oauth/start (authorization_code, redirect URI =
//              callbackUrl).  Its login form takes any name: "alice"
//              and "bob" are the subjects of tokens.alice / tokens.bob,
//              the client tokens the MCP calls carry.
//   as         a SECOND oidc-provider: the upstream service's
//              authorization server, on 127.0.0.2 so that its cookies
//              are not the IdP's.  Client UP_CLIENT (authorization_code
//              + refresh_token, client_secret_basic).  Knobs:
//                as.accessTtl = seconds      access tokens' lifetime
//                as.refuseRefresh = true     refresh -> invalid_grant
//                as.denyConsent = true       /authorize -> the callback
//                                            with error=access_denied
//              Record: as.grants = [{ grant_type, status }] per
//              token endpoint call; as.issued = access tokens issued;
//              as.paths = every path asked for.
//   upstream   an MCP backend (official SDK v1, stateless) whose tool
//              whoami answers "user <sub>" for the bearer token, checked
//              by introspection at `as`; it lists without a token, a
//              tools/call without a valid one is 401; upstream.seen =
//              [{ method, authorization }] of every request.
//   consent(url, { as: 'alice' })  a real browser (Debian chromium,
//              headless, via playwright-core: one per test file, its
//              cookies cleared first unless { keepCookies: true }; call
//              closeBrowsers() in after()) opens url (an elicitation's),
//              logs in as that name at both providers and consents;
//              resolves { status, url, text, headers, screenshot } of
//              the final page (vmcpd's), the screenshot kept under
//              build/interop-artefacts/ (build-san/ for that build).
//   walk(url, { as })         the same with an HTTP client and a cookie
//              jar (for cases a browser adds nothing to); also
//              { stopAt: 'upstream-callback' } returns the callback URL
//              the upstream server redirected to instead of following
//              it (to replay it); 'login-callback' the IdP's.
//   linkConfig(...)           the incomingAuth and outgoingAuth YAML.
//
// A consent's URL comes from an elicitation (-32042's
// data.elicitations[0].url, or the tool error's text); the call side
// (phase) obtains it, these helpers complete it.
import http from 'node:http';
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import Provider, { errors as oidcErrors } from 'oidc-provider';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

import {
  HOST, Daemon, configText, freePort, tmpDir,
} from './harness.mjs';
import { startIdp, oidcConfig, CLIENTS } from './oidc.mjs';
import { browser, closeBrowsers, screenshot, ARTEFACTS } from './browser.mjs';

export const AS_HOST = '127.0.0.2';
export const UP_CLIENT = 'vmcpd-up';
export const UP_SECRET = 'up-secret-5d1f0a9e3c';
const RS_CLIENT = 'upstream-rs';	// the backend's, for introspection
const RS_SECRET = 'rs-secret-77a1c2e0';

process.env.VMCPD_TEST_INTROSPECTION_SECRET = CLIENTS.vmcpd;
process.env.VMCPD_TEST_UP_SECRET = UP_SECRET;

/* the upstream service's authorization server */
export class UpstreamAs {
  constructor({ redirectUri }) {
    this.redirectUri = redirectUri;
    this.accessTtl = 600;
    this.refuseRefresh = false;
    this.denyConsent = false;
    this.grants = [];
    this.issued = [];
    this.paths = [];	// every path asked for, in order
  }

  async start() {
    let handler = null;
    this.server = http.createServer((req, res) => {
      const u = new URL(req.url, 'http://x');
      this.paths.push(u.pathname);
      if (u.pathname === '/auth' && this.denyConsent) {
        const loc = new URL(u.searchParams.get('redirect_uri'));
        loc.searchParams.set('error', 'access_denied');
        loc.searchParams.set('state', u.searchParams.get('state'));
        res.writeHead(302, { Location: loc.href }).end();
        return;
      }
      if (u.pathname === '/token' && req.method === 'POST') {
        const chunks = [];
        req.on('data', (c) => chunks.push(c));
        req.on('end', () => {
          const body = Buffer.concat(chunks);
          const form = new URLSearchParams(body.toString());
          const g = { grant_type: form.get('grant_type'), status: 0 };
          this.grants.push(g);
          if (g.grant_type === 'refresh_token' && this.refuseRefresh) {
            g.status = 400;
            res.writeHead(400, { 'Content-Type': 'application/json' });
            res.end(JSON.stringify({ error: 'invalid_grant', error_description: 'refresh refused by the test' }));
            return;
          }
          const end = res.end.bind(res);
          res.end = (b, ...rest) => {
            g.status = res.statusCode;
            try {
              const j = JSON.parse(String(b));
              if (j.access_token)
                this.issued.push(j.access_token);
            } catch { /* not JSON */ }
            return end(b, ...rest);
          };
          // read already: oidc-provider takes req.body then
          req.body = body.toString();
          handler(req, res);
        });
        return;
      }
      handler(req, res);
    });
    await new Promise((resolve) => this.server.listen(0, AS_HOST, resolve));
    this.port = this.server.address().port;
    this.issuer = `http://${AS_HOST}:${this.port}`;
    const as = this;
    this.provider = new Provider(this.issuer, {
      clients: [{
        client_id: UP_CLIENT, client_secret: UP_SECRET,
        grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
        redirect_uris: [this.redirectUri], token_endpoint_auth_method: 'client_secret_basic',
      }, {
        client_id: RS_CLIENT, client_secret: RS_SECRET, grant_types: [], response_types: [],
        redirect_uris: [],
      }],
      scopes: ['openid', 'api'],
      cookies: { names: { session: '_up_session', interaction: '_up_interaction',
        resume: '_up_interaction_resume' } },
      ttl: { AccessToken: () => as.accessTtl, RefreshToken: 3600, Grant: 3600, Session: 3600 },
      issueRefreshToken: (ctx, client) => client.grantTypeAllowed('refresh_token'),
      features: {
        devInteractions: { enabled: true },
        introspection: { enabled: true, allowedPolicy: () => true },
      },
    });
    this.provider.on('server_error', (ctx, err) => process.stderr.write(`upstream AS: ${err.stack}\n`));
    handler = this.provider.callback();
    return this;
  }

  count(grantType) { return this.grants.filter((g) => g.grant_type === grantType).length; }

  /* RFC 7662 for the backend: the token's subject, or null */
  async introspect(token) {
    const r = await fetch(`${this.issuer}/token/introspection`, {
      method: 'POST', body: new URLSearchParams({ token }),
      headers: { Authorization: `Basic ${Buffer.from(`${RS_CLIENT}:${RS_SECRET}`).toString('base64')}` },
    });
    const j = await r.json();
    return j.active ? j.sub : null;
  }

  async stop() {
    this.server.closeAllConnections?.();
    await new Promise((resolve) => this.server.close(resolve));
  }
}


/* the upstream MCP backend: whoami names the bearer token's subject;
 * it lists without a token (as many servers do), a tools/call without a
 * valid one is 401 */
export async function startUpstream(as) {
  const seen = [];
  const server = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req)
      chunks.push(c);
    let body;
    try {
      body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
    } catch { body = undefined; }
    const authz = req.headers.authorization ?? null;
    seen.push({ method: body?.method ?? req.method, authorization: authz });
    const tok = authz && /^Bearer (\S+)$/.exec(authz)?.[1];
    const sub = tok ? await as.introspect(tok).catch(() => null) : null;
    if (!sub && body?.method === 'tools/call') {
      res.writeHead(401, { 'WWW-Authenticate': 'Bearer error="invalid_token"',
        'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: 'invalid_token' }));
      return;
    }
    const mcp = new McpServer({ name: 'upstream', version: '1.0.0' });
    mcp.tool('whoami', 'the upstream account this call acts as', async () => ({
      content: [{ type: 'text', text: `user ${sub}` }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined,
      enableJsonResponse: true });
    res.on('close', () => { transport.close(); mcp.close(); });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  await new Promise((resolve) => server.listen(0, HOST, resolve));
  const port = server.address().port;
  return {
    seen, port, url: `http://${HOST}:${port}/mcp`,
    stop: () => { server.closeAllConnections?.(); return new Promise((r) => server.close(r)); },
  };
}

/* incomingAuth on idp (with its client for the person's login) and
 * authorization_code for backend name at as */
export function linkConfig(idp, as, name, callbackUrl, { scopes = ['api'], issuerOnly = false } = {}) {
  return oidcConfig(idp, { extra: ['    clientId: vmcpd',
    '    clientSecretEnv: VMCPD_TEST_INTROSPECTION_SECRET'] }) + [
    'outgoingAuth:',
    '  source: inline',
    '  backends:',
    `    ${name}:`,
    '      type: authorization_code',
    '      authorizationCode:',
    ...(issuerOnly ? [`        issuer: ${as.issuer}`] : [
      `        authorizationUrl: ${as.issuer}/auth`,
      `        tokenUrl: ${as.issuer}/token`]),
    `        clientId: ${UP_CLIENT}`,
    '        clientSecretEnv: VMCPD_TEST_UP_SECRET',
    `        scopes: [${scopes.join(', ')}]`,
    `        callbackUrl: ${callbackUrl}`,
  ].join('\n') + '\n';
}

/*
 * The whole set, one vmcpd listening on a port chosen first (the
 * callbackUrl is its own, and both providers must know it).
 */
export async function startLinks({ workers = 2, extra = '', daemonOpts = {}, redis,
  issuerOnly = false, sealKey = false } = {}) {
  const port = await freePort();
  const callbackUrl = `http://${HOST}:${port}/oauth/callback`;
  const idp = await startIdp({ webRedirect: callbackUrl });
  const as = await new UpstreamAs({ redirectUri: callbackUrl }).start();
  const upstream = await startUpstream(as);
  let storage = '';
  let key = null;
  if (redis || sealKey) {
    key = path.join(await tmpDir(), 'seal.key');
    await fsp.writeFile(key, `${crypto.randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
    storage = ['sessionStorage:', ...(redis ? ['  provider: redis',
      `  address: ${HOST}:${redis.port}`] : ['  provider: lmdb']), `  sealKeyFile: ${key}`,
    ''].join('\n');
  }
  const L = { idp, as, upstream, callbackUrl, nodes: [], sealKeyFile: key };
  L.node = async (listen = 0) => {
    const dir = await tmpDir();
    const opts = { backendUrl: upstream.url, backendName: 'up', workers,
      extra: storage + linkConfig(idp, as, 'up', callbackUrl, { issuerOnly }) + extra,
      ...daemonOpts };
    const d = new Daemon(dir, path.join(dir, 'vmcpd.yaml'), opts);
    d.configOpts = { portFile: d.portFile, stateDir: d.stateDir, ...opts };
    d.diag = await freePort();
    await d.writeConfig(configText(d.configOpts)
      .replace(`listen: ${HOST}:0`, `listen: ${HOST}:${listen}\n  diagnostics: ${HOST}:${d.diag}`));
    await d.start();
    L.nodes.push(d);
    return d;
  };
  L.daemon = await L.node(port);
  L.tokens = { alice: await idp.token('alice'), bob: await idp.token('bob') };
  /* every node stopped (exit 0, no sanitizer report), then the rest */
  L.stop = async () => {
    for (const d of L.nodes)
      if (!d.stopped)
        await d.stop();
    await upstream.stop();
    await as.stop();
    await idp.stop();
  };
  return L;
}


/*
 * A person opens url and does what each page asks: logs in as `as` at
 * an oidc-provider login form, consents at its consent form, until a
 * page of neither (vmcpd's own).
 */
export async function consent(url, { as = 'alice', keepCookies = false, name } = {}) {
  const ctx = await browser();
  if (!keepCookies)
    await ctx.clearCookies();
  const page = await ctx.newPage();
  let last = null;
  page.on('response', (r) => {
    if (r.request().isNavigationRequest() && r.frame() === page.mainFrame())
      last = r;
  });
  try {
    await page.goto(url, { waitUntil: 'load', timeout: 15000 });
    for (let step = 0; step < 8; step++) {
      if (await page.locator('input[name="login"]').count() > 0) {
        await page.fill('input[name="login"]', as);
        await page.fill('input[name="password"]', 'any');
        await Promise.all([page.waitForNavigation({ timeout: 15000 }),
          page.click('button[type="submit"]')]);
      } else if (await page.locator('input[name="prompt"][value="consent"]').count() > 0) {
        await Promise.all([page.waitForNavigation({ timeout: 15000 }),
          page.click('button[type="submit"]')]);
      } else
        break;
    }
    const shot = await screenshot(page, `links-${name ?? as}`);
    return { status: last?.status() ?? 0, url: page.url(), text: await page.innerText('body'),
      headers: last ? await last.allHeaders() : {}, screenshot: shot };
  } finally {
    await page.close();
  }
}

/*
 * The same walk with an HTTP client and a cookie jar (no browser).
 */
export class Jar {
  constructor() { this.c = new Map(); }	// "host|name" -> value
  header(u) {
    const h = new URL(u).hostname;
    return [...this.c].filter(([k]) => k.startsWith(`${h}|`))
      .map(([k, v]) => `${k.slice(h.length + 1)}=${v}`).join('; ');
  }
  take(u, res) {
    const h = new URL(u).hostname;
    for (const sc of res.headers.getSetCookie?.() ?? []) {
      const [nv] = sc.split(';');
      const i = nv.indexOf('=');
      const n = nv.slice(0, i).trim();
      const v = nv.slice(i + 1).trim();
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(sc))
        this.c.delete(`${h}|${n}`);
      else
        this.c.set(`${h}|${n}`, v);
    }
  }
}

export async function get(jar, url, init = {}) {
  const res = await fetch(url, { redirect: 'manual', ...init,
    headers: { ...(init.headers ?? {}), Cookie: jar.header(url) } });
  jar.take(url, res);
  return { status: res.status, location: res.headers.get('location'), headers: res.headers,
    text: await res.text(), url };
}

/* an oidc-provider form on the page: its action and fields */
function form(text, base) {
  const m = /<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(text);
  if (!m)
    return null;
  const fields = {};
  for (const i of m[2].matchAll(/<input[^>]*name="([^"]+)"(?:[^>]*value="([^"]*)")?/g))
    fields[i[1]] = i[2] ?? '';
  return { action: new URL(m[1].replace(/&amp;/g, '&'), base).href, fields };
}

export async function walk(url, { as = 'alice', jar = new Jar(), stopAt } = {}) {
  let r = await get(jar, url);
  for (let step = 0; step < 20; step++) {
    if (r.status >= 300 && r.status < 400 && r.location) {
      const next = new URL(r.location, r.url).href;
      if (new URL(next).pathname === '/oauth/callback' &&
          ((stopAt === 'upstream-callback' && new URL(r.url).hostname === AS_HOST) ||
           (stopAt === 'login-callback' && new URL(r.url).hostname !== AS_HOST)))
        return { ...r, callback: next, jar };
      r = await get(jar, next);
      continue;
    }
    const f = r.status === 200 ? form(r.text, r.url) : null;
    if (!f || !('prompt' in f.fields))
      break;
    if (f.fields.prompt === 'login')
      Object.assign(f.fields, { login: as, password: 'any' });
    r = await get(jar, f.action, { method: 'POST', body: new URLSearchParams(f.fields),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
  }
  return { ...r, jar };
}

export { oidcErrors, crypto, fs, browser, closeBrowsers, ARTEFACTS };
