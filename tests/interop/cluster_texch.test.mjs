// Exchanged tokens (outgoingAuth token_exchange, RFC 8693) shared through
// Redis (sessionStorage.provider redis; docs/ARCHITECTURE.md, Beyond one
// host): two nodes on one Redis with one sealKeyFile, a real OpenID
// provider (lib/oidc.mjs) that counts its exchanges.
// - a principal's calls through node A, then node B, cost one exchange:
//   B reads A's token from Redis (tok:<scope>:<backend>:...) and the
//   backend sees the same token from both;
// - first calls on both nodes at once cost one exchange too (the
//   fleet's lock: one node exchanges, the other waits for its token);
// - a node that finds another's lock waits for its token (sealed here
//   as a node would, with the key file) and uses it; a lock whose holder
//   died expires and the waiting node exchanges then;
// - no token in the clear in Redis (keys and values), in `vmcpctl dump
//   tokens` or in the logs; the Redis key expires;
// - Redis killed: a node exchanges on its own, counted in
//   vmcpd_redis_errors_total;
// - vmcpd -n refuses provider redis with a token_exchange backend and
//   no sealKeyFile, and a key file others may read or of a wrong size.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fsp from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';

import {
  useHarness, guarded, startTestBackend, httpRequest, withTimeout, vmcpctl, tmpDir, run,
  configText, VMCPD_BIN, HOST,
} from './lib/harness.mjs';
import { startIdp, exchangeConfig } from './lib/oidc.mjs';
import { modern } from './lib/multi.mjs';
import { startRedis, startNode, nodeMetrics } from './lib/cluster.mjs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

useHarness();
process.env.VMCPD_TEST_TX_SECRET = 'tx-secret-9c41e07b2d';
const bearer = (t) => ({ Authorization: `Bearer ${t}` });
const PREFIX = 'thv:vmcp:session:';

async function seen(backend) {
  const r = await httpRequest(backend.port, { method: 'GET', path: '/seen', timeout: 5000 });
  assert.equal(r.status, 200, r.text);
  return r.json;
}

async function v1Call(node, token, message) {
  const client = new Client({ name: 'v1', version: '1.0.0' });
  await withTimeout(client.connect(new StreamableHTTPClientTransport(new URL(node.url),
    { requestInit: { headers: bearer(token) } })), 15000, 'v1 connect');
  try {
    return await client.callTool({ name: 'echo', arguments: { message } });
  } finally {
    await client.close();
  }
}

/* a key file of 32 random bytes in base64, mode 0600 */
async function keyFile(dir, name = 'seal.key', mode = 0o600, text) {
  const f = path.join(dir, name);
  await fsp.writeFile(f, text ?? `${crypto.randomBytes(32).toString('base64')}\n`, { mode });
  await fsp.chmod(f, mode);
  return f;
}

/* one RESP command to the Redis on port (arguments may be binary): its
 * first line */
function respCommand(port, ...args) {
  const parts = [Buffer.from(`*${args.length}\r\n`)];
  for (const a of args) {
    const b = Buffer.isBuffer(a) ? a : Buffer.from(String(a));
    parts.push(Buffer.from(`$${b.length}\r\n`), b, Buffer.from('\r\n'));
  }
  return new Promise((resolve, reject) => {
    const c = net.connect(port, HOST, () => c.write(Buffer.concat(parts)));
    let got = '';
    c.setTimeout(5000, () => c.destroy(new Error('redis: no answer')));
    c.on('data', (d) => {
      got += d;
      if (got.includes('\r\n')) {
        c.end();
        resolve(got.split('\r\n')[0]);
      }
    });
    c.on('error', reject);
  });
}

/*
 * A token sealed as a node seals it (shared/seal.c): version 1, the key
 * id (SHA-256 of "vmcpd seal key id\0" and the key, 8 bytes), a nonce,
 * AES-256-GCM over the token with the header and the Redis key as
 * associated data, the tag.
 */
function sealAsNode(key, redisKey, token) {
  const id = crypto.createHash('sha256').update(Buffer.concat([
    Buffer.from('vmcpd seal key id\0'), key])).digest().subarray(0, 8);
  const hdr = Buffer.concat([Buffer.from([1]), id]);
  const nonce = crypto.randomBytes(12);
  const c = crypto.createCipheriv('aes-256-gcm', key, nonce);
  c.setAAD(Buffer.concat([hdr, Buffer.from(redisKey)]));
  const ct = Buffer.concat([c.update(token), c.final()]);
  return Buffer.concat([hdr, nonce, ct, c.getAuthTag()]);
}

describe('exchanged tokens shared through Redis', () => {
  let idp, backend, redis, key, a, b;
  const exchangesOf = (sub) => idp.exchanges.filter((x) => x.sub === sub);
  /* the Redis key of sub's token for backend b (audience backend-b,
   * scopes [mcp]): texch_key() and the principal scope of auth.c */
  const tokKey = (sub) => {
    const h = (s) => crypto.createHash('sha256').update(s).digest('hex');
    return `${PREFIX}tok:${h(`${idp.issuer}\0${sub}`).slice(0, 32)}:b:backend-b:` +
      `${h('mcp').slice(0, 16)}`;
  };

  before(async () => {
    idp = await startIdp();
    backend = await startTestBackend();
    redis = await startRedis();
    key = await keyFile(await tmpDir('vmcpd-sealkey-'));
    const opts = { redis, backendUrl: backend.url, backendName: 'b', workers: 2,
      args: ['-d', '-v'], extra: `  sealKeyFile: ${key}\n${exchangeConfig(idp, 'b')}` };
    a = await startNode(opts);
    b = await startNode(opts);
  });

  after(async () => {
    for (const n of [a, b])
      if (n && !n.stopped)
        await n.stop();
    await idp?.stop();
  });

  test('a principal\'s calls through node A, then node B, cost one exchange', guarded(async () => {
    const token = await idp.token('alice');
    const r1 = await v1Call(a, token, 'via-a');
    assert.deepEqual(r1.content, [{ type: 'text', text: 'Echo: via-a' }]);
    assert.equal(exchangesOf('alice').length, 1);
    const r2 = await v1Call(b, token, 'via-b');
    assert.deepEqual(r2.content, [{ type: 'text', text: 'Echo: via-b' }]);
    // and a 2026-07-28 (stateless) call through node B
    const c = await modern(b.port, 'tools/call', { name: 'echo', arguments: { message: 'm' } },
      { ...bearer(token), 'Mcp-Name': 'echo' });
    assert.equal(c.status, 200, c.text);
    assert.match(c.text, /Echo: m/);
    assert.equal(exchangesOf('alice').length, 1, JSON.stringify(idp.exchanges.map((x) => x.sub)));
    // both nodes called the backend with the one exchanged token
    const x = exchangesOf('alice')[0].token;
    const calls = (await seen(backend)).filter((e) => e.rpc === 'tools/call');
    assert.ok(calls.length >= 3, JSON.stringify(calls));
    for (const e of calls)
      assert.equal(e.authorization, `Bearer ${x}`);
    // node B holds its read-through copy: its next calls read no Redis
    const d = await vmcpctl(['dump', 'tokens'], { stateDir: b.stateDir });
    assert.equal(d.code, 0, d.stderr);
    assert.ok(d.stdout.split('\n').some((l) => l.includes('|b|backend-b|')), d.stdout);
  }));

  test('first calls of a principal on both nodes at once cost one exchange', guarded(async () => {
    const token = idp.forge(idp.claims({ sub: 'carol', client_id: 'carol' }));
    const rs = await Promise.all([0, 1, 2, 3].map((i) => v1Call(i % 2 ? b : a, token, `c${i}`)));
    rs.forEach((r, i) => assert.deepEqual(r.content, [{ type: 'text', text: `Echo: c${i}` }]));
    assert.equal(exchangesOf('carol').length, 1, JSON.stringify(idp.exchanges.map((x) => x.sub)));
  }));

  test('a node waits for the exchange another node holds, and takes its token', guarded(async () => {
    const k = tokKey('frank');
    assert.equal(await redis.cli('SET', `${k}:lock`, 'another-node', 'PX', '8000'), 'OK');
    const token = idp.forge(idp.claims({ sub: 'frank', client_id: 'frank' }));
    const call = modern(a.port, 'tools/call', { name: 'echo', arguments: { message: 'f' } },
      { ...bearer(token), 'Mcp-Name': 'echo' });
    // "the other node" is done a second later: its token in Redis
    await new Promise((r) => setTimeout(r, 1000));
    const sealKey = Buffer.from((await fsp.readFile(key, 'utf8')).trim(), 'base64');
    assert.equal(await respCommand(redis.port, 'SET', k,
      sealAsNode(sealKey, k, 'xt.frank.from-another-node'), 'PX', '60000'), '+OK');
    await redis.cli('DEL', `${k}:lock`);
    const c = await call;
    assert.equal(c.status, 200, c.text);
    assert.match(c.text, /Echo: f/);
    assert.equal(exchangesOf('frank').length, 0, 'exchanged rather than waited');
    assert.ok((await seen(backend)).some((e) => e.rpc === 'tools/call' &&
      e.authorization === 'Bearer xt.frank.from-another-node'));
  }));

  test('a lock whose holder died expires, and the waiting node exchanges then', guarded(async () => {
    assert.equal(await redis.cli('SET', `${tokKey('erin')}:lock`, 'a-dead-node', 'PX', '2500'), 'OK');
    const token = idp.forge(idp.claims({ sub: 'erin', client_id: 'erin' }));
    const t0 = Date.now();
    const c = await modern(b.port, 'tools/call', { name: 'echo', arguments: { message: 'e' } },
      { ...bearer(token), 'Mcp-Name': 'echo' });
    assert.equal(c.status, 200, c.text);
    assert.match(c.text, /Echo: e/);
    assert.equal(exchangesOf('erin').length, 1);
    // it waited for the lock to go, rather than exchange at once
    assert.ok(Date.now() - t0 >= 2000, `answered after ${Date.now() - t0} ms`);
    assert.equal(await redis.cli('EXISTS', `${tokKey('erin')}:lock`), '0');
  }));

  test('no token in the clear in Redis, in vmcpctl dump tokens or in the logs', guarded(async () => {
    const secrets = idp.exchanges.flatMap((x) => [x.token, x.token.split('.')[2]]);
    assert.ok(secrets.length >= 4);
    const keys = (await redis.cli('--scan')).split('\n').filter(Boolean);
    const tok = keys.filter((k) => k.startsWith(`${PREFIX}tok:`));
    assert.ok(tok.length >= 2, keys.join(' '));
    for (const k of tok) {
      assert.match(k, /^thv:vmcp:session:tok:[0-9a-f]{32}:b:backend-b:[0-9a-f]{16}$/);
      // expires at the end of the token's useful life (an hour at most here)
      const ttl = Number(await redis.cli('PTTL', k));
      assert.ok(ttl > 0 && ttl <= 3600 * 1000, `${k}: PTTL ${ttl}`);
    }
    // no lock left behind
    assert.deepEqual(keys.filter((k) => k.endsWith(':lock')), []);
    for (const k of keys) {
      const type = await redis.cli('TYPE', k);
      const v = await redis.cli('--raw', ...({ string: ['GET', k], hash: ['HGETALL', k],
        list: ['LRANGE', k, '0', '-1'] }[type] ?? ['TYPE', k]));
      for (const s of secrets) {
        assert.ok(!k.includes(s), `a token in the Redis key ${k}`);
        assert.ok(!v.includes(s), `a token in the Redis value of ${k}`);
      }
    }
    for (const n of [a, b]) {
      const d = await vmcpctl(['dump', 'tokens'], { stateDir: n.stateDir });
      assert.equal(d.code, 0, d.stderr);
      for (const s of secrets) {
        assert.ok(!d.stdout.includes(s), 'a token in the dump');
        assert.ok(!n.proc.output.includes(s), 'a token in the log');
      }
    }
    // the -v log says which node had it from Redis
    assert.match(b.proc.output, /token another node exchanged/);
  }));

  test('Redis down: a node exchanges on its own, and counts the error', guarded(async () => {
    const before_ = (await nodeMetrics(b)).vmcpd_redis_errors_total ?? 0;
    await redis.kill();
    const token = idp.forge(idp.claims({ sub: 'dave', client_id: 'dave' }));
    const c = await modern(b.port, 'tools/call', { name: 'echo', arguments: { message: 'alone' } },
      { ...bearer(token), 'Mcp-Name': 'echo' });
    assert.equal(c.status, 200, c.text);
    assert.match(c.text, /Echo: alone/);
    assert.equal(exchangesOf('dave').length, 1);
    const after_ = (await nodeMetrics(b)).vmcpd_redis_errors_total;
    assert.ok(after_ > before_, `vmcpd_redis_errors_total ${before_} -> ${after_}`);
  }));
});

describe('sessionStorage.sealKeyFile at vmcpd -n', () => {
  let dir, redisCfg;

  before(async () => {
    dir = await tmpDir('vmcpd-sealkey-n-');
    const idp = { issuer: 'http://127.0.0.1:9' };
    const base = configText({ portFile: path.join(dir, 'port'), stateDir: path.join(dir, 'state'),
      backendUrl: `http://${HOST}:9/mcp`, backendName: 'b' });
    redisCfg = async (name, sealLine) => {
      const f = path.join(dir, name);
      await fsp.writeFile(f, `${base}sessionStorage:\n  provider: redis\n  address: ${HOST}:6379\n` +
        `${sealLine}${exchangeConfig(idp, 'b')}`);
      return f;
    };
  });

  test('refused without it, with one others may read, or of a wrong size', guarded(async () => {
    let r = await run(VMCPD_BIN, ['-n', '-f', await redisCfg('none.yaml', '')]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /none\.yaml:\d+:\d+: sessionStorage: backend b uses token_exchange.*set sessionStorage\.sealKeyFile/);

    const open = await keyFile(dir, 'open.key', 0o644);
    r = await run(VMCPD_BIN, ['-n', '-f', await redisCfg('open.yaml', `  sealKeyFile: ${open}\n`)]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /open\.yaml:\d+:\d+: sessionStorage\.sealKeyFile: .* may be read or written by group or others \(mode 0644\)/);

    const short = await keyFile(dir, 'short.key', 0o600, 'c2hvcnQ=\n');
    r = await run(VMCPD_BIN, ['-n', '-f', await redisCfg('short.yaml', `  sealKeyFile: ${short}\n`)]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /short\.yaml:\d+:\d+: sessionStorage\.sealKeyFile: .* does not hold a 32-byte key/);
    assert.ok(!r.stderr.includes('c2hvcnQ'), 'the key file\'s content in a message');

    r = await run(VMCPD_BIN, ['-n', '-f', await redisCfg('gone.yaml',
      `  sealKeyFile: ${path.join(dir, 'gone.key')}\n`)]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /gone\.yaml:\d+:\d+: sessionStorage\.sealKeyFile: cannot read .*gone\.key: No such file/);

    const good = await keyFile(dir, 'good.key');
    r = await run(VMCPD_BIN, ['-n', '-f', await redisCfg('good.yaml', `  sealKeyFile: ${good}\n`)]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /configuration OK/);
  }));
});
