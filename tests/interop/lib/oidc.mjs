// A real OpenID provider for the incomingAuth tests: oidc-provider (a
// certified implementation) on 127.0.0.1, issuing client_credentials
// access tokens as RFC 9068 JWTs for vmcpd's resource (RFC 8707), or
// opaque ones (for RFC 7662 introspection) for a second resource.  The
// signing key is generated here, so the tests hold the private key and
// can forge the tokens an attacker would.
import http from 'node:http';
import crypto from 'node:crypto';
import assert from 'node:assert/strict';
import Provider, { errors as oidcErrors } from 'oidc-provider';

import { HOST, LEGACY_VERSION, mcpPost, nextId } from './harness.mjs';

export const AUDIENCE = 'urn:vmcpd:test';
export const OPAQUE_RESOURCE = 'urn:vmcpd:opaque';
export const CLIENTS = {
  alice: 'alice-secret-0123456789',
  bob: 'bob-secret-0123456789',
  vmcpd: 'vmcpd-secret-0123456789',	// vmcpd's own, for introspection
};
// vmcpd's client for RFC 8693 token exchange (outgoingAuth token_exchange)
export const TX_CLIENT = 'vmcpd-tx';
export const TX_SECRET = 'tx-secret-9c41e07b2d';
export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';

const b64 = (o) => Buffer.from(typeof o === 'string' ? o : JSON.stringify(o)).toString('base64url');

export class Idp {
  /* webRedirect: vmcpd's callbackUrl; client "vmcpd" then also logs a
   * person in there (authorization_code, the dev login form: any login
   * is its sub, so "alice" and "bob" are the subjects of the client
   * tokens of CLIENTS alice and bob) */
  constructor({ webRedirect, accounts } = {}) {
    this.webRedirect = webRedirect;	// a URL, or a list of them
    this.accounts = accounts;	// login -> claims its ID tokens carry too (groups)
    const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    this.privateKey = privateKey;
    this.publicKey = publicKey;
    this.kid = 'k1';
    this.requests = [];	// paths asked for, in order
    this.server = null;
    this.jwksOverride = null;	// an object or a string served at /jwks
    this.introspectionOverride = null;	// an introspection answer
    this.jwksRedirect = null;	// /jwks answers 302 to this
    this.jwksHang = false;	// /jwks never answers
    this.introspectionHang = false;	// introspection never answers
    this.hung = [];
    this.tokenClaims = {};	// client id -> claims its tokens carry too
    this.exchanges = [];	// {sub, audience, scope, token} per exchange
    this.exchangeFail = null;	// an RFC 6749 5.2 error code to answer
  }

  get jwksPath() { return '/jwks'; }
  get jwksUrl() { return `${this.issuer}${this.jwksPath}`; }
  publicJwk() { return { ...this.publicKey.export({ format: 'jwk' }), kid: this.kid, use: 'sig', alg: 'RS256' }; }
  count(path) { return this.requests.filter((p) => p === path).length; }

  async start() {
    let handler = null;
    this.server = http.createServer((req, res) => {
      const p = req.url.split('?')[0];
      this.requests.push(p);
      // a JWKS the test decides (rotation, a huge one), else the provider's
      if (p === '/token/introspection' && this.introspectionHang) {
        this.hung.push(res);	// never answered; closed at stop
        return;
      }
      if (p === '/token/introspection' && this.introspectionOverride) {
        req.resume();
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(this.introspectionOverride));
        return;
      }
      if (p === this.jwksPath && this.jwksRedirect) {
        res.writeHead(302, { Location: this.jwksRedirect });
        res.end();
        return;
      }
      if (p === this.jwksPath && this.jwksHang) {
        this.hung.push(res);	// never answered; closed at stop
        return;
      }
      if (p === this.jwksPath && this.jwksOverride) {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(typeof this.jwksOverride === 'string' ? this.jwksOverride
          : JSON.stringify(this.jwksOverride));
        return;
      }
      handler(req, res);
    });
    await new Promise((resolve) => this.server.listen(0, HOST, resolve));
    this.port = this.server.address().port;
    this.issuer = `http://${HOST}:${this.port}`;
    const jwk = { ...this.privateKey.export({ format: 'jwk' }), kid: this.kid, use: 'sig', alg: 'RS256' };
    const clients = Object.entries(CLIENTS).map(([id, secret]) => ({
      client_id: id, client_secret: secret, grant_types: ['client_credentials'],
      redirect_uris: [], response_types: [], token_endpoint_auth_method: 'client_secret_basic',
    }));
    if (this.webRedirect)
      Object.assign(clients.find((c) => c.client_id === 'vmcpd'), {
        grant_types: ['client_credentials', 'authorization_code'],
        redirect_uris: [].concat(this.webRedirect), response_types: ['code'],
      });
    clients.push({ client_id: TX_CLIENT, client_secret: TX_SECRET, grant_types: [TOKEN_EXCHANGE],
      redirect_uris: [], response_types: [], token_endpoint_auth_method: 'client_secret_post' });
    this.provider = new Provider(this.issuer, {
      clients,
      jwks: { keys: [jwk] },
      scopes: ['openid', 'mcp'],
      ttl: { ClientCredentials: 600 },
      // claims such as groups, per client (tokenClaims)
      extraTokenClaims: (ctx, token) => this.tokenClaims[token.clientId],
      // a person's claims (accounts) in the ID token of a login
      ...(this.accounts ? {
        findAccount: (ctx, id) => ({ accountId: id,
          claims: () => ({ sub: id, ...(this.accounts[id] ?? {}) }) }),
        claims: { openid: ['sub', 'groups', 'preferred_username'] },
        conformIdTokenClaims: false,
      } : {}),
      features: {
        devInteractions: { enabled: !!this.webRedirect },
        clientCredentials: { enabled: true },
        introspection: { enabled: true, allowedPolicy: () => true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => AUDIENCE,
          useGrantedResource: () => true,
          getResourceServerInfo: (ctx, resource) => ({
            scope: 'mcp', audience: AUDIENCE, accessTokenTTL: 600,
            accessTokenFormat: resource === OPAQUE_RESOURCE ? 'opaque' : 'jwt',
          }),
        },
      },
    });
    this.registerTokenExchange();
    this.provider.on('server_error', (ctx, err) => process.stderr.write(`oidc-provider: ${err.stack}\n`));
    handler = this.provider.callback();
    return this;
  }

  /*
   * RFC 8693 token exchange as a grant type of the provider: the
   * subject token must be one of this provider's JWT access tokens
   * (signature, iss, exp checked); the answer is a new opaque token
   * naming its subject, recorded in this.exchanges.
   */
  registerTokenExchange() {
    const idp = this;
    const { InvalidGrant, InvalidRequest } = oidcErrors;
    this.provider.registerGrantType(TOKEN_EXCHANGE, async (ctx) => {
      const p = ctx.oidc.params;
      if (idp.exchangeFail)
        throw new InvalidGrant(idp.exchangeFail);
      if (p.subject_token_type !== 'urn:ietf:params:oauth:token-type:access_token')
        throw new InvalidRequest('unsupported subject_token_type');
      const [h, c, sig] = String(p.subject_token).split('.');
      const ok = sig && crypto.verify('sha256', Buffer.from(`${h}.${c}`), idp.publicKey,
        Buffer.from(sig, 'base64url'));
      const claims = ok ? JSON.parse(Buffer.from(c, 'base64url').toString()) : null;
      if (!claims || claims.iss !== idp.issuer || claims.exp * 1000 < Date.now())
        throw new InvalidGrant('subject_token is not valid');
      const token = `xt.${claims.sub}.${crypto.randomBytes(12).toString('base64url')}`;
      idp.exchanges.push({ sub: claims.sub, audience: p.audience, scope: p.scope, token });
      ctx.body = {
        access_token: token, token_type: 'Bearer', expires_in: 300,
        issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      };
    }, ['subject_token', 'subject_token_type', 'requested_token_type', 'audience', 'scope', 'resource']);
  }

  /* a client_credentials access token of client id for resource */
  async token(id = 'alice', { resource = AUDIENCE } = {}) {
    const body = new URLSearchParams({ grant_type: 'client_credentials', scope: 'mcp', resource });
    const r = await fetch(`${this.issuer}/token`, {
      method: 'POST', body,
      headers: { Authorization: `Basic ${Buffer.from(`${id}:${CLIENTS[id]}`).toString('base64')}` },
    });
    const j = await r.json();
    if (!r.ok)
      throw new Error(`token endpoint: ${r.status} ${JSON.stringify(j)}`);
    return j.access_token;
  }

  /* a token signed with the provider's key, claims and header as given */
  forge(claims, { header = {}, key = this.privateKey, alg = 'RS256' } = {}) {
    const h = b64({ alg, kid: this.kid, typ: 'at+jwt', ...header });
    const p = b64(claims);
    const sig = crypto.sign(alg === 'RS256' ? 'sha256' : null, Buffer.from(`${h}.${p}`), key);
    return `${h}.${p}.${sig.toString('base64url')}`;
  }

  /* claims a good token for sub would carry */
  claims(extra = {}) {
    const now = Math.floor(Date.now() / 1000);
    return { iss: this.issuer, sub: 'mallory', aud: AUDIENCE, iat: now, exp: now + 600,
      client_id: 'mallory', scope: 'mcp', jti: crypto.randomUUID(), ...extra };
  }

  async stop() {
    if (!this.server)
      return;
    for (const r of this.hung)
      r.destroy();
    this.server.closeAllConnections?.();
    await new Promise((resolve) => this.server.close(resolve));
    this.server = null;
  }
}

export async function startIdp(opts) {
  return new Idp(opts).start();
}

/* incomingAuth YAML for vmcpd against idp (extra: more oidc lines) */
/* a 2025-11-25 session opened with a bearer token: its id */
export async function sessionAs(port, token, clientName) {
  const auth = { Authorization: `Bearer ${token}` };
  const init = await mcpPost(port, {
    jsonrpc: '2.0', id: nextId(), method: 'initialize',
    params: { protocolVersion: LEGACY_VERSION, capabilities: {}, clientInfo: { name: clientName, version: '1' } },
  }, { version: null, headers: auth });
  assert.equal(init.status, 200, init.text);
  const sid = init.headers['mcp-session-id'];
  const n = await mcpPost(port, { jsonrpc: '2.0', method: 'notifications/initialized' },
    { session: sid, headers: auth });
  assert.equal(n.status, 202, n.text);
  return sid;
}

export function oidcConfig(idp, { extra = [], jwksUrl, introspection = false } = {}) {
  const l = [
    'incomingAuth:',
    '  type: oidc',
    '  oidc:',
    `    issuer: ${idp.issuer}`,
    `    audience: ${AUDIENCE}`,
    '    scopes: [mcp]',
    '    insecureAllowHttp: true',
    '    jwksAllowPrivateIp: true',
  ];
  if (jwksUrl)
    l.push(`    jwksUrl: ${jwksUrl}`);
  if (introspection) {
    l.push(`    introspectionUrl: ${idp.issuer}/token/introspection`);
    l.push('    clientId: vmcpd');
    l.push('    clientSecretEnv: VMCPD_TEST_INTROSPECTION_SECRET');
  }
  return [...l, ...extra].join('\n') + '\n';
}

/* incomingAuth on idp, and token_exchange for backendName (its secret
 * in VMCPD_TEST_TX_SECRET) */
export function exchangeConfig(idp, backendName, tokenUrl = `${idp.issuer}/token`) {
  return oidcConfig(idp) + [
    'outgoingAuth:',
    '  source: inline',
    '  backends:',
    `    ${backendName}:`,
    '      type: token_exchange',
    '      tokenExchange:',
    `        tokenUrl: ${tokenUrl}`,
    `        clientId: ${TX_CLIENT}`,
    '        clientSecretEnv: VMCPD_TEST_TX_SECRET',
    '        audience: backend-b',
    '        scopes: [mcp]',
  ].join('\n') + '\n';
}
