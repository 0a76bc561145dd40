// The front against hostile clients (issue 10, items 4, 5 and 7):
// slowloris clients dribbling a head or a body are cut at
// http.headerTimeout / http.requestTimeout with a 408 while others are
// served and an SSE stream lives on; the connection caps answer 503
// with a JSON-RPC error and close; DNS rebinding is refused on a
// non-loopback listen (0.0.0.0, traffic only to 127.0.0.1) for every
// variant of Host, Origin and absolute-form target; `vmcpd -n` warns
// about such a listen with no http.allowedHosts; a Last-Event-ID that
// is not an id vmcpd issues is a 400.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import path from 'node:path';
import {
  useHarness, guarded, startEverything, startDaemon, openSession, httpRequest, configText,
  tmpDir, run, sleep, waitFor, Daemon, HOST, MCP_ACCEPT, LEGACY_VERSION, VMCPD_BIN, nextId,
} from './lib/harness.mjs';

useHarness();

/* A raw connection that keeps what it reads and when it closed. */
function connect(port, { localAddress } = {}) {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: HOST, port, localAddress });
    const c = { s, data: Buffer.alloc(0), closed: false, closedAt: 0, error: null };
    s.setNoDelay(true);
    s.on('data', (d) => { c.data = Buffer.concat([c.data, d]); });
    s.on('error', (e) => { c.error = e; });
    s.on('close', () => { c.closed = true; c.closedAt = Date.now(); });
    s.once('connect', () => resolve(c));
    s.once('error', reject);
  });
}

/* the first response in c.data once it is whole: {status, headers, body} */
function response(c) {
  const end = c.data.indexOf('\r\n\r\n');
  if (end === -1)
    return null;
  const lines = c.data.subarray(0, end).toString('latin1').split('\r\n');
  const r = { status: Number(lines[0].split(' ')[1]), headers: {}, body: '' };
  for (const l of lines.slice(1)) {
    const i = l.indexOf(':');
    r.headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
  }
  if (r.headers['content-length'] !== undefined) {
    const n = Number(r.headers['content-length']);
    if (c.data.length < end + 4 + n)
      return null;
    r.body = c.data.subarray(end + 4, end + 4 + n).toString('utf8');
  }
  return r;
}

async function answer(c, what, timeout = 10000) {
  return waitFor(what, () => response(c), { timeout });
}

const initBody = () => JSON.stringify({ jsonrpc: '2.0', id: nextId(), method: 'initialize',
  params: { protocolVersion: LEGACY_VERSION, capabilities: {},
    clientInfo: { name: 'frontguard', version: '1.0.0' } } });

/* one raw request on its own connection; the response */
async function raw(port, text) {
  const c = await connect(port);
  c.s.write(text);
  const r = await answer(c, 'a response');
  c.s.destroy();
  return r;
}

describe('slow clients: whole-head and whole-request deadlines', () => {
  const HEAD_MS = 2000, REQUEST_MS = 3000;
  let everything, daemon, port;

  before(async () => {
    everything = await startEverything();
    // http.timeout (between reads) far above the dribble interval: only
    // the deadlines can cut these clients
    daemon = await startDaemon({ backendUrl: everything.url, workers: 1,
      extra: `http:\n  timeout: 20s\n  headerTimeout: ${HEAD_MS}ms\n` +
        `  requestTimeout: ${REQUEST_MS}ms\n  keepAlive: 500ms\n` });
    port = daemon.port;
  });

  test('a head or a body a byte at a time is cut at its deadline (408); others are served; ' +
    'an SSE stream lives past both', guarded(async () => {
    const { sid } = await openSession(port);
    // a GET stream, open from before the dribblers until after their deadlines
    const sse = await connect(port);
    sse.s.write(`GET /mcp HTTP/1.1\r\nHost: ${HOST}:${port}\r\nAccept: text/event-stream\r\n` +
      `Mcp-Session-Id: ${sid}\r\nMCP-Protocol-Version: ${LEGACY_VERSION}\r\n\r\n`);
    await waitFor('the stream primed', () => /id: \d+/.test(sse.data.toString()));

    const head = `POST /mcp HTTP/1.1\r\nHost: ${HOST}:${port}\r\nAccept: ${MCP_ACCEPT}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n';
    const dribblers = [];
    const t0 = Date.now();
    for (const kind of ['head', 'head', 'body', 'body']) {
      const c = await connect(port);
      c.kind = kind;
      if (kind === 'body')
        c.s.write(head);
      const text = kind === 'head' ? head : 'x'.repeat(100000);
      let i = 0;
      c.timer = setInterval(() => {
        if (!c.closed && i < text.length)
          c.s.write(text[i++]);
      }, 250);
      dribblers.push(c);
    }
    try {
      // others are served meanwhile
      for (let i = 0; i < 5; i++) {
        const r = await httpRequest(port, { method: 'GET', path: '/healthz' });
        assert.equal(r.status, 200);
        await sleep(300);
      }
      await waitFor('every dribbler cut', () => dribblers.every((c) => c.closed),
        { timeout: REQUEST_MS + 5000 });
    } finally {
      dribblers.forEach((c) => { clearInterval(c.timer); c.s.destroy(); });
    }
    for (const c of dribblers) {
      const limit = c.kind === 'head' ? HEAD_MS : REQUEST_MS;
      const took = c.closedAt - t0;
      assert.ok(took >= limit - 250, `${c.kind} dribbler cut after ${took} ms, not before ${limit}`);
      assert.ok(took < limit + 4000, `${c.kind} dribbler cut after ${took} ms (deadline ${limit})`);
      const r = response(c);
      assert.equal(r?.status, 408, `${c.kind} dribbler: ${c.data.toString().slice(0, 300)}`);
      assert.equal(JSON.parse(r.body).error.code, -32600);
      assert.match(r.body, c.kind === 'head' ? /http\.headerTimeout/ : /http\.requestTimeout/);
    }
    // the stream was not cut: still open and still getting keep-alive comments
    assert.equal(sse.closed, false, 'the SSE stream is still open');
    const before = sse.data.length;
    await waitFor('a keep-alive comment on the stream', () => sse.data.length > before,
      { timeout: 5000 });
    sse.s.destroy();
  }));
});

describe('connection caps: http.maxConnections, http.maxConnectionsPerClient', () => {
  let everything, daemon, port;

  before(async () => {
    everything = await startEverything();
    daemon = await startDaemon({ backendUrl: everything.url, workers: 1,
      extra: 'http:\n  maxConnections: 6\n  maxConnectionsPerClient: 4\n' });
    port = daemon.port;
  });

  /* a connection from addr that has been answered once (so it is counted) */
  async function held(addr) {
    const c = await connect(port, { localAddress: addr });
    c.s.write(`GET /healthz HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`);
    const r = await answer(c, 'healthz');
    assert.equal(r.status, 200);
    c.data = Buffer.alloc(0);
    return c;
  }

  async function refused(addr, key) {
    const c = await connect(port, { localAddress: addr });
    c.s.write(`GET /healthz HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`);
    const r = await answer(c, 'a refusal');
    assert.equal(r.status, 503, r.body);
    assert.equal(r.headers.connection, 'close');
    const j = JSON.parse(r.body);
    assert.equal(j.jsonrpc, '2.0');
    assert.equal(j.id, null);
    assert.match(j.error.message, new RegExp(key.replace('.', '\\.')));
    await waitFor('the refused connection closed', () => c.closed);
    assert.equal(c.error, null, `refused connection: ${c.error?.code}`);
  }

  test('past a cap: 503 with a JSON-RPC error, then close; under it: served', guarded(async () => {
    const mine = [];
    for (let i = 0; i < 4; i++)
      mine.push(await held('127.0.0.1'));
    await refused('127.0.0.1', 'http.maxConnectionsPerClient');
    // another loopback address is another client
    const other = [await held('127.0.0.2'), await held('127.0.0.2')];
    await refused('127.0.0.2', 'http.maxConnections');
    // those held are still served
    mine[0].s.write(`GET /healthz HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`);
    assert.equal((await answer(mine[0], 'healthz again')).status, 200);
    // one closed: room again
    mine[1].s.destroy();
    await waitFor('a connection from 127.0.0.1 served again', async () => {
      const c = await connect(port);
      c.s.write(`GET /healthz HTTP/1.1\r\nHost: ${HOST}\r\nConnection: close\r\n\r\n`);
      const r = await answer(c, 'healthz');
      c.s.destroy();
      return r.status === 200;
    }, { timeout: 5000, interval: 200 });
    [...mine, ...other].forEach((c) => c.s.destroy());
  }));
});

// Idle connections hold slots: one that has sent nothing has
// http.headerTimeout to begin a request, and so has an idle keep-alive
// one once the worker holds more than half of http.maxConnections;
// otherwise a keep-alive one keeps http.timeout.  The figures are far
// apart (1 s against 30 s), the bounds generous.
describe('idle connections: http.headerTimeout to begin a request', () => {
  let daemon, port;

  before(async () => {
    daemon = await startDaemon({ backendUrl: `http://${HOST}:9/mcp`, workers: 1,
      extra: 'http:\n  timeout: 30s\n  headerTimeout: 1s\n  maxConnections: 8\n' });
    port = daemon.port;
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
  });

  /* a connection answered once, kept alive */
  async function served() {
    const c = await connect(port);
    c.s.write(`GET /healthz HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`);
    assert.equal((await answer(c, 'healthz')).status, 200);
    return c;
  }

  test('a connection that sends nothing is closed at http.headerTimeout, not http.timeout',
    guarded(async () => {
      const t0 = Date.now();
      const c = await connect(port);
      await waitFor('the silent connection closed', () => c.closed, { timeout: 10000 });
      assert.ok(c.closedAt - t0 >= 800, `closed after ${c.closedAt - t0} ms`);
      assert.equal(c.data.length, 0, 'closed without a word');
    }));

  test('idle keep-alive connections keep http.timeout until connections are scarce', guarded(async () => {
    const held = [await served(), await served(), await served()];
    await sleep(2500);		// past headerTimeout: 3 of 8 is not scarce
    assert.ok(held.every((c) => !c.closed), 'an idle keep-alive connection closed early');
    // two more (5 of 8, over half): the idle ones have headerTimeout,
    // from their last answer, long past
    const t0 = Date.now();
    const silent = [await connect(port), await connect(port)];
    await waitFor('the idle keep-alive connections closed', () => held.every((c) => c.closed),
      { timeout: 10000 });
    assert.ok(held.every((c) => c.closedAt - t0 < 10000));
    await waitFor('the silent ones closed', () => silent.every((c) => c.closed), { timeout: 10000 });
    // not scarce any more: served again, and kept
    const c = await served();
    await sleep(2000);
    assert.ok(!c.closed, 'kept alive again once connections are not scarce');
    c.s.destroy();
  }));
});

/* an anonymous daemon beyond loopback must be asked for (incomingAuth) */
const ANON_REMOTE = 'incomingAuth: {type: anonymous, allowAnonymousRemote: true}\n';

describe('DNS rebinding on a non-loopback listen (0.0.0.0; traffic to 127.0.0.1 only)', () => {
  let everything, daemon, port, dir;

  /* vmcpd on 0.0.0.0:0 with http extra */
  async function start(http = '') {
    dir = await tmpDir();
    const cfg = path.join(dir, 'vmcpd.yaml');
    const d = new Daemon(dir, cfg, { workers: 1 });
    const text = configText({ portFile: d.portFile, stateDir: d.stateDir,
      backendUrl: everything.url, workers: 1, extra: ANON_REMOTE + http });
    assert.match(text, /listen: 127\.0\.0\.1:0/);
    await d.writeConfig(text.replace('listen: 127.0.0.1:0', 'listen: 0.0.0.0:0'));
    await d.start();
    return d;
  }

  /* POST initialize with these Host / Origin / target; the status */
  async function status({ host, origin, target = '/mcp' }) {
    const b = initBody();
    const r = await raw(port, `POST ${target} HTTP/1.1\r\n` +
      (host !== undefined ? `Host: ${host}\r\n` : '') +
      (origin !== undefined ? `Origin: ${origin}\r\n` : '') +
      `Accept: ${MCP_ACCEPT}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(b)}\r\nConnection: close\r\n\r\n${b}`);
    if (r.status === 403)
      assert.match(r.body, /DNS rebinding/);
    return r.status;
  }

  before(async () => {
    everything = await startEverything();
  });

  after(async () => {
    if (daemon && !daemon.stopped)
      await daemon.stop();
  });

  test('default (no http.allowedHosts): only loopback names are served', guarded(async () => {
    daemon = await start();
    port = daemon.port;
    const P = port;
    const cases = [
      // the rebinding page: its own name in Host, its own origin
      [{ host: `evil.example:${P}`, origin: `http://evil.example:${P}` }, 403],
      [{ host: `evil.example:${P}` }, 403],
      [{ host: 'evil.example' }, 403],
      [{ host: `127.0.0.1.evil.example:${P}` }, 403],
      [{ host: `localhost.evil.example:${P}` }, 403],
      [{ host: `localhost.:${P}` }, 403],
      [{ host: `evil.example:${P}`, origin: `http://127.0.0.1:${P}` }, 403],
      // IPv6 literals
      [{ host: `[::1]:${P}` }, 200],
      [{ host: '[::1]' }, 200],
      [{ host: `[fe80::1]:${P}` }, 403],
      [{ host: `[::ffff:127.0.0.1]:${P}` }, 403],
      // loopback names, any port or none
      [{ host: `127.0.0.1:${P}` }, 200],
      [{ host: `127.0.0.1:${P}`, origin: `http://127.0.0.1:${P}` }, 200],
      [{ host: 'LOCALHOST' }, 200],
      [{ host: `localhost:${P + 1}`, origin: `https://localhost:${P + 1}` }, 200],
      // a good Host with a foreign Origin, or an opaque one
      [{ host: `127.0.0.1:${P}`, origin: `http://evil.example:${P}` }, 403],
      [{ host: `127.0.0.1:${P}`, origin: 'null' }, 403],
      [{ host: `127.0.0.1:${P}`, origin: `http://127.0.0.1:${P}/path` }, 403],
      // absolute form: the target's authority is the one checked
      [{ host: `127.0.0.1:${P}`, target: `http://evil.example:${P}/mcp` }, 403],
      [{ host: `evil.example:${P}`, target: `http://127.0.0.1:${P}/mcp` }, 200],
      [{ host: `127.0.0.1:${P}`, target: `http://[::1]:${P}/mcp` }, 200],
    ];
    for (const [req, want] of cases)
      assert.equal(await status(req), want, JSON.stringify(req));
    // HTTP/1.1 without Host, or with two
    let r = await raw(port, 'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n');
    assert.equal(r.status, 400, r.body);
    assert.match(r.body, /no Host/);
    r = await raw(port, `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n\r\n`);
    assert.equal(r.status, 400, r.body);
    await daemon.stop();
  }));

  test('http.allowedHosts / http.allowedOrigins admit exactly what they list', guarded(async () => {
    daemon = await start('http:\n  allowedHosts: [mcp.example.test, "[fd00::5]"]\n' +
      '  allowedOrigins: ["https://app.example.test"]\n');
    port = daemon.port;
    const P = port;
    const cases = [
      [{ host: `mcp.example.test:${P}` }, 200],
      [{ host: 'MCP.example.test' }, 200],
      [{ host: `[fd00::5]:${P}` }, 200],
      [{ host: `127.0.0.1:${P}` }, 200],
      [{ host: `mcp.example.test:${P}`, origin: 'https://app.example.test' }, 200],
      [{ host: `mcp.example.test:${P}`, origin: `http://mcp.example.test:${P}` }, 200],
      [{ host: `mcp.example.test:${P}`, origin: 'https://app.example.test:444' }, 403],
      [{ host: `mcp.example.test:${P}`, origin: 'https://evil.example' }, 403],
      [{ host: `evil.example:${P}`, origin: `http://evil.example:${P}` }, 403],
      [{ host: `sub.mcp.example.test:${P}` }, 403],
      [{ host: `127.0.0.1:${P}`, target: `http://evil.example:${P}/mcp` }, 403],
      [{ host: `evil.example:${P}`, target: `http://mcp.example.test:${P}/mcp` }, 200],
    ];
    for (const [req, want] of cases)
      assert.equal(await status(req), want, JSON.stringify(req));
    await daemon.stop();
  }));

  test('vmcpd -n refuses an anonymous non-loopback listen unless allowAnonymousRemote',
    guarded(async () => {
      const d = await tmpDir();
      const base = configText({ portFile: path.join(d, 'port'), stateDir: path.join(d, 'state'),
        backendUrl: everything.url });
      const cfg = path.join(d, 'vmcpd.yaml');
      const fsp = await import('node:fs/promises');
      await fsp.writeFile(cfg, base.replace('listen: 127.0.0.1:0', 'listen: 0.0.0.0:0'));
      const r = await run(VMCPD_BIN, ['-n', '-f', cfg]);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /daemon\.listen: 0\.0\.0\.0 is not a loopback address and incomingAuth is anonymous/);
      assert.match(r.stderr, /incomingAuth\.allowAnonymousRemote: true/);
    }));

  test('vmcpd -n warns about a non-loopback listen with no http.allowedHosts', guarded(async () => {
    const d = await tmpDir();
    const base = configText({ portFile: path.join(d, 'port'), stateDir: path.join(d, 'state'),
      backendUrl: everything.url, extra: ANON_REMOTE });
    const cfg = path.join(d, 'vmcpd.yaml');
    const fsp = await import('node:fs/promises');
    await fsp.writeFile(cfg, base.replace('listen: 127.0.0.1:0', 'listen: 0.0.0.0:0'));
    let r = await run(VMCPD_BIN, ['-n', '-f', cfg]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /warning: listening on 0\.0\.0\.0 with no http\.allowedHosts/);
    await fsp.writeFile(cfg, base.replace('listen: 127.0.0.1:0', 'listen: 0.0.0.0:0') +
      'http:\n  allowedHosts: [mcp.example.test]\n');
    r = await run(VMCPD_BIN, ['-n', '-f', cfg]);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /warning/);
    await fsp.writeFile(cfg, base);
    r = await run(VMCPD_BIN, ['-n', '-f', cfg]);
    assert.doesNotMatch(r.stderr, /warning/);
  }));
});

describe('Last-Event-ID must be an id vmcpd issues', () => {
  let everything, daemon;

  before(async () => {
    everything = await startEverything();
    daemon = await startDaemon({ backendUrl: everything.url, workers: 1 });
  });

  test('-1, signs, spaces, leading zeros, past 2^64: 400; a good id: a stream', guarded(async () => {
    const { sid } = await openSession(daemon.port);
    const get = async (lei) => {
      const c = await connect(daemon.port);
      c.s.write(`GET /mcp HTTP/1.1\r\nHost: ${HOST}\r\nAccept: text/event-stream\r\n` +
        `Mcp-Session-Id: ${sid}\r\nMCP-Protocol-Version: ${LEGACY_VERSION}\r\n` +
        `Last-Event-ID: ${lei}\r\n\r\n`);
      const r = await answer(c, `GET with Last-Event-ID ${lei}`);
      c.s.destroy();
      if (r.status === 200)	// let the stream go before the next one
        await waitFor('the stream released', async () => {
          const s = await httpRequest(daemon.port, { method: 'GET', timeout: 2000,
            headers: { Accept: 'application/json', 'Mcp-Session-Id': sid,
              'MCP-Protocol-Version': LEGACY_VERSION } });
          return s.status !== 409;
        }).catch(() => {});
      return r;
    };
    for (const bad of ['-1', '+1', '01', '1 2', '0x10', '18446744073709551616', '1.5']) {
      const r = await get(bad);
      assert.equal(r.status, 400, `Last-Event-ID ${bad}: ${r.body}`);
      assert.match(r.body, /Last-Event-ID/);
    }
    const r = await get('0');
    assert.equal(r.status, 200);
  }));
});
