// The bridge (master/bridge*.c) run standalone by build/bridge-test,
// driven through its Unix socket with raw HTTP and with the official SDK
// v1 client, in front of real stdio servers from npm (server-everything,
// server-memory), of server-everything in HTTP+SSE (2024-11-05) mode on
// 127.0.0.1, and of small scripted servers for the failure cases.
//
// Each bridge-test plays the master: it forks the bridge, prints
// "ready <bridge pid>", turns SIGTERM into IPC_STOP and reaps orphans.
// Every wait is bounded; after() stops every bridge and checks that no
// server process it ever saw is left alive or a zombie.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BUILD_DIR = path.dirname(path.resolve(ROOT, process.env.VMCPD_BIN || 'build/vmcpd'));
const BIN = path.resolve(ROOT, process.env.BRIDGE_TEST_BIN || path.join(BUILD_DIR, 'bridge-test'));
const EVERYTHING = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const MEMORY = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-memory/dist/index.js');
const LOOPBACK = path.join(ROOT, 'tests/lib/loopback.cjs');
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => fs.existsSync(p));
const SANITIZER_RE = /ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:/;
const BRIDGE_CAPS = { elicitation: {}, sampling: {}, roots: { listChanged: true } };

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what, fn, { timeout = 10000, interval = 50 } = {}) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const v = await fn();
    if (v)
      return v;
    if (Date.now() >= deadline)
      throw new Error(`timed out after ${timeout} ms waiting for ${what}`);
    await sleep(interval);
  }
}

function withTimeout(p, ms, what) {
  let timer;
  return Promise.race([
    p,
    new Promise((_, rej) => {
      timer = setTimeout(() => rej(new Error(`${what}: nothing within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

// ---------------------------------------------------------------------------
// /proc

/* 'alive', 'zombie' or null (gone) */
function procState(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] === 'Z' ? 'zombie' : 'alive';
  } catch {
    return null;
  }
}

function childrenOf(ppid) {
  const out = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d))
      continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(f[1]) === ppid && f[0] !== 'Z')
        out.push(Number(d));
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// bridges

const bridges = new Set();
const serverPids = new Set();	// every server process seen, checked at the end
const tmpdirs = new Set();

async function tmpDir() {
  const d = await fsp.mkdtemp(path.join(os.tmpdir(), 'vmcpd-bridge-'));
  tmpdirs.add(d);
  return d;
}

class Bridge {
  /* argv: a stdio server's command; or url: an HTTP+SSE server's */
  static async start(name, argv, { env = [], timeout, url } = {}) {
    assert.ok(fs.existsSync(BIN), `${BIN} is missing: run make ${path.relative(ROOT, BIN)}`);
    const dir = await tmpDir();
    const b = new Bridge();
    b.name = name;
    b.sock = path.join(dir, `${name}.sock`);
    const args = ['-v', '-n', name, '-s', b.sock];
    if (timeout)
      args.push('-t', String(timeout));
    for (const e of env)
      args.push('-e', e);
    if (url)
      args.push('-u', url);
    else
      args.push('--', ...argv);
    // setpriv: if this test process dies, bridge-test goes too (and
    // takes the bridge and its server along)
    const [cmd, cargs] = SETPRIV ? [SETPRIV, ['--pdeathsig', 'KILL', '--', BIN, ...args]] : [BIN, args];
    b.output = '';
    b.proc = spawn(cmd, cargs, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    b.proc.stdout.setEncoding('utf8');
    b.proc.stderr.setEncoding('utf8');
    b.proc.stdout.on('data', (d) => { b.output += d; });
    b.proc.stderr.on('data', (d) => { b.output += d; });
    b.exited = new Promise((resolve) => {
      b.proc.on('exit', (code, signal) => { b.exit = { code, signal }; resolve(b.exit); });
      b.proc.on('error', (e) => { b.exit = { error: e }; resolve(b.exit); });
    });
    bridges.add(b);
    const m = await waitFor(`${name} ready`, () => b.exit ? 'exited' : /^ready (\d+)$/m.exec(b.output),
      { timeout: 15000 }).catch((e) => { throw new Error(`${e.message}\n${b.output}`); });
    assert.notEqual(m, 'exited', `bridge-test exited at start:\n${b.output}`);
    b.pid = Number(m[1]);
    return b;
  }

  /* the server process, once there is one */
  async serverPid(not) {
    const pid = await waitFor(`${this.name}: a server process`, () => {
      const c = childrenOf(this.pid).filter((p) => p !== not);
      return c.length === 1 ? c[0] : null;
    });
    serverPids.add(pid);
    return pid;
  }

  /* SIGTERM to bridge-test: IPC_STOP to the bridge; a clean exit 0 */
  async stop() {
    if (!this.exit) {
      try {
        process.kill(this.proc.pid, 'SIGTERM');
      } catch {
        /* gone */
      }
    }
    const r = await withTimeout(this.exited, 10000, `${this.name} stop`)
      .catch((e) => { this.kill(); throw e; });
    return r;
  }

  kill() {
    try {
      process.kill(-this.proc.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }

  assertClean() {
    assert.doesNotMatch(this.output, SANITIZER_RE, `sanitizer report:\n${this.output}`);
  }
}

after(async () => {
  for (const b of bridges) {
    if (!b.exit)
      await b.stop().catch(() => {});
    b.kill();
  }
  for (const pid of serverPids) {
    if (procState(pid) !== null) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  }
  for (const d of tmpdirs)
    await fsp.rm(d, { recursive: true, force: true }).catch(() => {});
});

// ---------------------------------------------------------------------------
// HTTP over the Unix socket

/* One HTTP exchange; the body read as it arrives, SSE events parsed live. */
class Exchange {
  constructor(res) {
    this.res = res;
    this.status = res.statusCode;
    this.headers = res.headers;
    this.raw = '';
    this.buf = '';
    this.events = [];
    this.comments = 0;
    this.ended = false;
    this.waiters = [];
    this.sse = /text\/event-stream/.test(res.headers['content-type'] || '');
    res.setEncoding('utf8');
    res.on('data', (d) => {
      this.raw += d;
      if (this.sse) {
        this.buf += d;
        this.parse();
      }
      this.wake();
    });
    const done = () => {
      if (this.ended)
        return;
      this.ended = true;
      if (!this.sse && this.raw.length > 0 && /json/.test(res.headers['content-type'] || ''))
        this.events.push(JSON.parse(this.raw));
      this.wake();
    };
    res.on('end', done);
    res.on('close', done);
    res.on('error', done);
  }

  parse() {
    let i;
    while ((i = this.buf.indexOf('\n\n')) !== -1) {
      const block = this.buf.slice(0, i);
      this.buf = this.buf.slice(i + 2);
      const lines = block.split('\n');
      const data = lines.filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, '')).join('\n');
      if (data.length > 0)
        this.events.push(JSON.parse(data));
      else if (lines.every((l) => l.startsWith(':')))
        this.comments++;
    }
  }

  wake() {
    for (const w of this.waiters.splice(0))
      w();
  }

  async until(pred, ms = 10000, what = 'an event') {
    const deadline = Date.now() + ms;
    for (;;) {
      const e = this.events.find(pred);
      if (e)
        return e;
      const left = deadline - Date.now();
      if (this.ended || left <= 0)
        throw new Error(`${what}: ${this.ended ? 'the stream ended' : `not within ${ms} ms`}; ` +
          `got ${JSON.stringify(this.events).slice(0, 2000)}`);
      await new Promise((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => { clearTimeout(t); r(); });
      });
    }
  }

  async done(ms = 10000) {
    await withTimeout(new Promise((r) => {
      if (this.ended)
        return r();
      this.waiters.push(function again() {
        if (this.ended)
          r();
        else
          this.waiters.push(again.bind(this));
      }.bind(this));
    }), ms, 'end of the response');
    return this;
  }

  close() {
    this.res.destroy();
  }
}

function open(sock, { method = 'POST', sid, body, headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const h = { Accept: 'application/json, text/event-stream', ...headers };
    let data;
    if (body !== undefined) {
      data = typeof body === 'string' ? body : JSON.stringify(body);
      h['Content-Type'] = 'application/json';
      h['Content-Length'] = Buffer.byteLength(data);
    }
    if (sid)
      h['Mcp-Session-Id'] = sid;
    const req = http.request({ socketPath: sock, path: '/mcp', method, headers: h, agent: false },
      (res) => resolve(new Exchange(res)));
    req.on('error', reject);
    req.end(data);
  });
}

async function post(sock, sid, body, ms = 15000) {
  const x = await open(sock, { sid, body });
  return x.done(ms);
}

async function initialize(sock) {
  const x = await post(sock, null, {
    jsonrpc: '2.0', id: 0, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  assert.equal(x.status, 200, x.raw);
  const sid = x.headers['mcp-session-id'];
  assert.match(sid, /^[A-Za-z0-9_-]{43}$/);
  return { sid, result: x.events[0].result };
}

function callTool(id, name, args = {}, meta) {
  const params = { name, arguments: args };
  if (meta)
    params._meta = meta;
  return { jsonrpc: '2.0', id, method: 'tools/call', params };
}

/* the final response of a request's SSE answer */
function final(x, id) {
  const r = x.events.filter((e) => e.id === id && !e.method);
  assert.equal(r.length, 1, `one response to ${id}: ${JSON.stringify(x.events)}`);
  return r[0];
}

/* fetch() for the SDK transport, through the Unix socket */
function unixFetch(sock) {
  return (url, init = {}) => new Promise((resolve, reject) => {
    const u = new URL(url);
    const headers = {};
    new Headers(init.headers || {}).forEach((v, k) => { headers[k] = v; });
    const req = http.request({
      socketPath: sock, path: u.pathname + u.search, method: init.method || 'GET', headers, agent: false,
    }, (res) => {
      const h = new Headers();
      for (const [k, v] of Object.entries(res.headers))
        for (const x of Array.isArray(v) ? v : [v])
          h.append(k, x);
      const empty = [101, 204, 205, 304].includes(res.statusCode);
      resolve(new Response(empty ? null : Readable.toWeb(res), { status: res.statusCode, headers: h }));
    });
    req.on('error', reject);
    if (init.signal) {
      if (init.signal.aborted) {
        req.destroy();
        reject(new DOMException('aborted', 'AbortError'));
        return;
      }
      init.signal.addEventListener('abort', () => req.destroy(new DOMException('aborted', 'AbortError')));
    }
    req.end(init.body ?? undefined);
  });
}

const clients = new Set();

async function sdkClient(sock, capabilities = {}) {
  const client = new Client({ name: 'bridge-interop', version: '1.0.0' }, { capabilities });
  const transport = new StreamableHTTPClientTransport(new URL('http://bridge/mcp'), { fetch: unixFetch(sock) });
  await withTimeout(client.connect(transport), 15000, 'SDK connect');
  clients.add(client);
  return client;
}

after(async () => {
  for (const c of clients)
    await c.close().catch(() => {});
});

// ---------------------------------------------------------------------------

describe('server-everything behind the bridge', () => {
  let br;

  before(async () => {
    br = await Bridge.start('everything', [process.execPath, EVERYTHING, 'stdio']);
  });

  test('initialize: the server\'s InitializeResult, a fresh session each time', async () => {
    const a = await initialize(br.sock);
    const b = await initialize(br.sock);
    assert.notEqual(a.sid, b.sid);
    assert.equal(a.result.serverInfo.name, 'mcp-servers/everything');
    assert.equal(a.result.protocolVersion, '2025-11-25');
    assert.equal(typeof a.result.capabilities.tools, 'object');
    assert.equal(typeof a.result.instructions, 'string');
    assert.deepEqual(a.result, b.result);
  });

  test('a request needs a known session (400 without, 404 unknown)', async () => {
    const msg = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const none = await post(br.sock, null, msg);
    assert.equal(none.status, 400);
    const unknown = await post(br.sock, 'A'.repeat(43), msg);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.events[0].error.code, -32001);
    const bad = await post(br.sock, 'x', '{"jsonrpc":"2.0","id":1,');
    assert.equal(bad.status, 400);
    assert.equal(bad.events[0].error.code, -32700);
  });

  test('ping is answered by the bridge', async () => {
    const { sid } = await initialize(br.sock);
    const x = await post(br.sock, sid, { jsonrpc: '2.0', id: 'p', method: 'ping' });
    assert.equal(x.status, 200);
    assert.deepEqual(x.events, [{ jsonrpc: '2.0', id: 'p', result: {} }]);
  });

  test('tools/list equals the server\'s own list (SDK client, same capabilities)', async () => {
    const via = await sdkClient(br.sock);
    const direct = new Client({ name: 'direct', version: '1.0.0' }, { capabilities: BRIDGE_CAPS });
    await withTimeout(direct.connect(new StdioClientTransport({
      command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'ignore',
    })), 15000, 'direct connect');
    clients.add(direct);
    try {
      const [a, b] = await Promise.all([via.listTools(), direct.listTools()]);
      assert.ok(a.tools.length >= 10, `only ${a.tools.length} tools`);
      assert.ok(a.tools.some((t) => t.name === 'trigger-elicitation-request'),
        'the elicitation tool (registered for clients that can elicit)');
      assert.deepEqual(a.tools, b.tools);
    } finally {
      await direct.close();
    }
  });

  test('tools/call echo: an SSE answer with the caller\'s id', async () => {
    const { sid } = await initialize(br.sock);
    const x = await post(br.sock, sid, callTool('e-1', 'echo', { message: 'hello bridge' }));
    assert.equal(x.status, 200);
    assert.match(x.headers['content-type'], /^text\/event-stream/);
    const r = final(x, 'e-1');
    assert.deepEqual(r.result.content, [{ type: 'text', text: 'Echo: hello bridge' }]);
  });

  test('two sessions, same ids, concurrently: each gets its own answers', async () => {
    const [a, b] = await Promise.all([initialize(br.sock), initialize(br.sock)]);
    const n = 20;
    const calls = [];
    for (let i = 0; i < n; i++) {
      calls.push(post(br.sock, a.sid, callTool(i, 'echo', { message: `A${i}` })));
      calls.push(post(br.sock, b.sid, callTool(i, 'echo', { message: `B${i}` })));
    }
    const xs = await Promise.all(calls);
    for (let i = 0; i < n; i++) {
      assert.equal(final(xs[2 * i], i).result.content[0].text, `Echo: A${i}`);
      assert.equal(final(xs[2 * i + 1], i).result.content[0].text, `Echo: B${i}`);
    }
  });

  test('progress reaches the right caller, with its own token', async () => {
    const [a, b] = await Promise.all([initialize(br.sock), initialize(br.sock)]);
    const meta = { progressToken: 'tok' };
    const [xa, xb] = await Promise.all([
      post(br.sock, a.sid, callTool(1, 'trigger-long-running-operation', { duration: 1.2, steps: 4 }, meta)),
      post(br.sock, b.sid, callTool(1, 'trigger-long-running-operation', { duration: 0.6, steps: 3 }, meta)),
    ]);
    const progress = (x) => x.events.filter((e) => e.method === 'notifications/progress').map((e) => e.params);
    assert.deepEqual(progress(xa).map((p) => [p.progressToken, p.progress, p.total]),
      [['tok', 1, 4], ['tok', 2, 4], ['tok', 3, 4], ['tok', 4, 4]]);
    assert.deepEqual(progress(xb).map((p) => [p.progressToken, p.progress, p.total]),
      [['tok', 1, 3], ['tok', 2, 3], ['tok', 3, 3]]);
    assert.match(final(xa, 1).result.content[0].text, /Duration: 1.2 seconds, Steps: 4/);
    assert.match(final(xb, 1).result.content[0].text, /Duration: 0.6 seconds, Steps: 3/);
    // the response comes last
    assert.equal(xa.events.at(-1).id, 1);
    assert.equal(xb.events.at(-1).id, 1);
  });

  test('progress with two SDK clients at once (same message ids and tokens)', async () => {
    const [c1, c2] = await Promise.all([sdkClient(br.sock), sdkClient(br.sock)]);
    const seen = [[], []];
    const [r1, r2] = await Promise.all([
      c1.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.8, steps: 2 } },
        undefined, { onprogress: (p) => seen[0].push(p), timeout: 15000 }),
      c2.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.6, steps: 3 } },
        undefined, { onprogress: (p) => seen[1].push(p), timeout: 15000 }),
    ]);
    assert.deepEqual(seen[0].map((p) => [p.progress, p.total]), [[1, 2], [2, 2]]);
    assert.deepEqual(seen[1].map((p) => [p.progress, p.total]), [[1, 3], [2, 3], [3, 3]]);
    assert.match(r1.content[0].text, /Steps: 2/);
    assert.match(r2.content[0].text, /Steps: 3/);
  });

  test('elicitation round trip: the request on the caller\'s stream, the answer POSTed', async () => {
    const { sid } = await initialize(br.sock);
    const x = await open(br.sock, { sid, body: callTool('el-1', 'trigger-elicitation-request') });
    try {
      const req = await x.until((e) => e.method === 'elicitation/create', 10000, 'elicitation/create');
      assert.match(String(req.id), /^bridge-\d+$/);
      assert.equal(req.params.requestedSchema.type, 'object');
      const ans = await post(br.sock, sid, {
        jsonrpc: '2.0', id: req.id, result: { action: 'accept', content: { name: 'Ada Lovelace', check: true } },
      });
      assert.equal(ans.status, 202);
      const r = await x.until((e) => e.id === 'el-1', 10000, 'the tool result');
      const text = r.result.content.map((c) => c.text).join('\n');
      assert.match(text, /Name: Ada Lovelace/);
      assert.match(text, /Agreed to terms: true/);
      await x.done(5000);
    } finally {
      x.close();
    }
  });

  test('elicitation through the SDK client', async () => {
    const c = await sdkClient(br.sock, { elicitation: {} });
    let asked = 0;
    c.setRequestHandler(ElicitRequestSchema, async () => {
      asked++;
      return { action: 'accept', content: { name: 'Grace Hopper' } };
    });
    const r = await c.callTool({ name: 'trigger-elicitation-request', arguments: {} }, undefined, { timeout: 15000 });
    assert.equal(asked, 1);
    assert.match(r.content.map((x) => x.text).join('\n'), /Name: Grace Hopper/);
  });

  test('GET stream: unrelated log messages are broadcast; related ones ride the call', async () => {
    const { sid } = await initialize(br.sock);
    const get = await open(br.sock, { method: 'GET', sid, headers: { Accept: 'text/event-stream' } });
    try {
      assert.equal(get.status, 200);
      assert.match(get.headers['content-type'], /^text\/event-stream/);
      const on = await post(br.sock, sid, callTool('log-on', 'toggle-simulated-logging'));
      final(on, 'log-on');
      // the first message is sent while the call is the only one in flight
      assert.ok(on.events.some((e) => e.method === 'notifications/message'),
        `the call's own log message: ${JSON.stringify(on.events)}`);
      const m = await get.until((e) => e.method === 'notifications/message', 9000, 'a broadcast log message');
      assert.equal(typeof m.params.level, 'string');
    } finally {
      const off = await post(br.sock, sid, callTool('log-off', 'toggle-simulated-logging'));
      final(off, 'log-off');
      get.close();
    }
  });

  test('DELETE ends a session; the id is then unknown', async () => {
    const { sid } = await initialize(br.sock);
    const get = await open(br.sock, { method: 'GET', sid });
    const del = await open(br.sock, { method: 'DELETE', sid });
    await del.done();
    assert.equal(del.status, 200);
    await get.done(5000);	// its GET stream ends with it
    const x = await post(br.sock, sid, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    assert.equal(x.status, 404);
  });

  test('notifications and unknown answers get 202; other methods 405; other paths 404', async () => {
    const { sid } = await initialize(br.sock);
    const n = await post(br.sock, sid, { jsonrpc: '2.0', method: 'notifications/initialized' });
    assert.equal(n.status, 202);
    const r = await post(br.sock, sid, { jsonrpc: '2.0', id: 'bridge-999999', result: {} });
    assert.equal(r.status, 202);
    const put = await open(br.sock, { method: 'PUT', sid, body: {} });
    await put.done();
    assert.equal(put.status, 405);
    const other = await new Promise((resolve, reject) => {
      http.get({ socketPath: br.sock, path: '/other', agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode);
      }).on('error', reject);
    });
    assert.equal(other, 404);
  });

  test('the socket is mode 0600', async () => {
    const st = await fsp.stat(br.sock);
    assert.ok(st.isSocket());
    assert.equal(st.mode & 0o777, 0o600);
  });

  test('SIGTERM stops the bridge and its server: exit 0, socket gone, no orphan', async () => {
    const server = await br.serverPid();
    const r = await br.stop();
    assert.deepEqual(r, { code: 0, signal: null }, br.output);
    await waitFor('the server to be gone', () => procState(server) === null, { timeout: 5000 });
    assert.equal(procState(br.pid), null);
    assert.equal(fs.existsSync(br.sock), false);
    br.assertClean();
  });
});

describe('server-memory behind the bridge', () => {
  let br, file;

  before(async () => {
    file = path.join(await tmpDir(), 'memory.jsonl');
    br = await Bridge.start('memory', [process.execPath, MEMORY], { env: [`MEMORY_FILE_PATH=${file}`] });
  });

  after(async () => {
    await br?.stop();
  });

  test('create_entities then read_graph (SDK client), stored in MEMORY_FILE_PATH', async () => {
    const c = await sdkClient(br.sock);
    const names = (await c.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes('create_entities') && names.includes('read_graph'), names.join(','));
    const created = await c.callTool({
      name: 'create_entities',
      arguments: { entities: [{ name: 'Ada', entityType: 'person', observations: ['wrote the first program'] }] },
    });
    assert.notEqual(created.isError, true, JSON.stringify(created));
    const graph = await c.callTool({ name: 'read_graph', arguments: {} });
    const text = graph.content.map((x) => x.text).join('\n');
    assert.match(text, /"name":\s*"Ada"/);
    assert.match(text, /wrote the first program/);
    assert.match(await fsp.readFile(file, 'utf8'), /"name":"Ada"/);
  });

  test('a second session sees the same server state', async () => {
    const { sid } = await initialize(br.sock);
    const x = await post(br.sock, sid, callTool(5, 'search_nodes', { query: 'Ada' }));
    assert.match(final(x, 5).result.content[0].text, /first program/);
  });

  test('stops cleanly', async () => {
    const server = await br.serverPid();
    const r = await br.stop();
    assert.equal(r.code, 0, br.output);
    await waitFor('the server to be gone', () => procState(server) === null, { timeout: 5000 });
    br.assertClean();
  });
});

describe('crashes: no orphans, no zombies', () => {
  test('kill -9 of the server: the call fails, the bridge restarts it and serves again', async () => {
    const br = await Bridge.start('crash', [process.execPath, EVERYTHING, 'stdio']);
    try {
      const { sid } = await initialize(br.sock);
      const old = await br.serverPid();
      const x = await open(br.sock, {
        sid, body: callTool('long', 'trigger-long-running-operation', { duration: 10, steps: 10 }, { progressToken: 1 }),
      });
      await x.until((e) => e.method === 'notifications/progress', 5000, 'first progress');
      process.kill(old, 'SIGKILL');
      const err = await x.until((e) => e.id === 'long', 5000, 'the error');
      assert.equal(err.error.code, -32603);
      assert.equal(err.error.message, 'backend process exited: signal 9');
      await x.done(5000);
      const fresh = await br.serverPid(old);
      assert.notEqual(fresh, old);
      await waitFor('the old server reaped', () => procState(old) === null, { timeout: 5000 });
      // the same session carries on (waiting for the new server if needed)
      const e = await post(br.sock, sid, callTool('after', 'echo', { message: 'again' }));
      assert.equal(final(e, 'after').result.content[0].text, 'Echo: again');
      assert.match(br.output, /restarting the server in 100 ms/);
    } finally {
      const r = await br.stop();
      assert.equal(r.code, 0, br.output);
      br.assertClean();
    }
  });

  test('kill -9 of the bridge: its server goes too', async () => {
    const br = await Bridge.start('orphan', [process.execPath, EVERYTHING, 'stdio']);
    const { sid } = await initialize(br.sock);
    const x = await post(br.sock, sid, callTool(1, 'echo', { message: 'x' }));
    final(x, 1);
    const server = await br.serverPid();
    assert.equal(procState(server), 'alive');
    process.kill(br.pid, 'SIGKILL');
    // PR_SET_PDEATHSIG: SIGKILL; bridge-test (a subreaper) reaps it
    await waitFor('the server to die and be reaped', () => procState(server) === null, { timeout: 5000 });
    const r = await withTimeout(br.exited, 10000, 'bridge-test exit');
    assert.equal(r.code, 128 + 9, br.output);
    assert.equal(procState(br.pid), null);
  });
});

// A scripted stdio server for what the real ones cannot be made to do.
const FAKE = String.raw`
import readline from 'node:readline';
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
const seen = { cancelled: [], answers: {} };
let pending = null;
process.stderr.write('fake server up\n');
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (!m.method) {			// an answer to one of our requests
    seen.answers[m.id] = m.error ? { error: m.error.message } : m.result;
    if (pending && pending.ask === m.id) {
      send({ jsonrpc: '2.0', id: pending.id, result: { content: [{ type: 'text', text: JSON.stringify(m.result) }] } });
      pending = null;
    }
    return;
  }
  if (m.method === 'notifications/cancelled')
    seen.cancelled.push(m.params.requestId);
  if (m.id === undefined)
    return;
  if (m.method === 'initialize')
    return send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-11-25',
      capabilities: { tools: {}, logging: {} }, serverInfo: { name: 'fake', version: '1' } } });
  if (m.method !== 'tools/call')
    return send({ jsonrpc: '2.0', id: m.id, result: {} });
  const reply = (text) => send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text }] } });
  switch (m.params.name) {
  case 'hang':
    return;
  case 'exit':
    process.exit(3);
  case 'flood':
    process.stdout.write('x'.repeat(17 * 1024 * 1024));
    return;
  case 'log':
    send({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'for the only caller' } });
    return reply('logged');
  case 'ask':				// a request of ours, answered by the caller
    pending = { id: m.id, ask: 'srv-' + m.id };
    return send({ jsonrpc: '2.0', id: pending.ask, method: 'elicitation/create',
      params: { message: 'name?', requestedSchema: { type: 'object', properties: {} } } });
  case 'later':				// a request when nobody is in flight
    setTimeout(() => send({ jsonrpc: '2.0', id: 'lonely', method: 'roots/list' }), 200);
    return reply('later');
  case 'ping-me':
    setTimeout(() => send({ jsonrpc: '2.0', id: 'sping', method: 'ping' }), 0);
    return setTimeout(() => reply('pinged'), 300);
  case 'slow':
    return setTimeout(() => reply('slow done'), 800);
  case 'report':
    return reply(JSON.stringify(seen));
  default:
    return reply('ok');
  }
});
`;

describe('a scripted server: timeouts, exits, bounds, routing', () => {
  let br, script;

  before(async () => {
    script = path.join(await tmpDir(), 'fake.mjs');
    await fsp.writeFile(script, FAKE);
    br = await Bridge.start('fake', [process.execPath, script], { timeout: 1500 });
  });

  after(async () => {
    await br?.stop();
  });

  const report = async (sid) => {
    const x = await post(br.sock, sid, callTool('rep', 'report'));
    return JSON.parse(final(x, 'rep').result.content[0].text);
  };

  test('the server\'s stderr is logged line by line', async () => {
    await waitFor('the stderr line in the log', () => /fake: fake server up/.test(br.output));
  });

  test('no response within the timeout: -32603, and the server is told to cancel', async () => {
    const { sid } = await initialize(br.sock);
    const t0 = Date.now();
    const x = await post(br.sock, sid, callTool('h', 'hang'));
    const took = Date.now() - t0;
    const r = final(x, 'h');
    assert.equal(r.error.code, -32603);
    assert.match(r.error.message, /timeout/);
    assert.ok(took >= 1400 && took < 5000, `took ${took} ms`);
    const seen = await report(sid);
    assert.equal(seen.cancelled.length, 1);
    assert.equal(typeof seen.cancelled[0], 'number');	// the bridge's id, not 'h'
  });

  test('a log message goes to the only call in flight', async () => {
    const { sid } = await initialize(br.sock);
    const x = await post(br.sock, sid, callTool('l', 'log'));
    assert.equal(x.events[0].method, 'notifications/message');
    assert.equal(x.events[0].params.data, 'for the only caller');
    assert.equal(final(x, 'l').result.content[0].text, 'logged');
  });

  test('a server request with nobody in flight gets -32601 "no client to ask"', async () => {
    const { sid } = await initialize(br.sock);
    final(await post(br.sock, sid, callTool('a', 'later')), 'a');
    await sleep(600);
    const seen = await report(sid);
    assert.deepEqual(seen.answers.lonely, { error: 'no client to ask' });
  });

  test('the server\'s ping is answered by the bridge', async () => {
    const { sid } = await initialize(br.sock);
    const x = await post(br.sock, sid, callTool('p', 'ping-me'));
    assert.equal(x.events.some((e) => e.method === 'ping'), false);
    final(x, 'p');
    assert.deepEqual((await report(sid)).answers.sping, {});
  });

  test('two calls in flight: a server request goes to the most recent tools/call; cancel ends the other', async () => {
    const [a, b] = await Promise.all([initialize(br.sock), initialize(br.sock)]);
    const xa = await open(br.sock, { sid: a.sid, body: callTool('wait', 'hang') });
    await sleep(100);
    const xb = await open(br.sock, { sid: b.sid, body: callTool('q', 'ask') });
    const req = await xb.until((e) => e.method === 'elicitation/create', 3000, 'the request on the newest call');
    assert.match(req.id, /^bridge-\d+$/);
    assert.equal(xa.events.length, 0);
    const ans = await post(br.sock, b.sid, { jsonrpc: '2.0', id: req.id, result: { action: 'accept', content: { n: 1 } } });
    assert.equal(ans.status, 202);
    const r = await xb.until((e) => e.id === 'q', 3000, 'the answer');
    assert.deepEqual(JSON.parse(r.result.content[0].text), { action: 'accept', content: { n: 1 } });
    // the caller cancels its hanging call: the stream ends with no response
    const c = await post(br.sock, a.sid, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'wait' } });
    assert.equal(c.status, 202);
    await xa.done(3000);
    assert.equal(xa.events.some((e) => e.id === 'wait'), false);
    const seen = await report(a.sid);
    assert.ok(seen.cancelled.length >= 2, JSON.stringify(seen));
  });

  test('the server exits: the call fails with its status, the next one is served by a new process', async () => {
    const { sid } = await initialize(br.sock);
    const old = await br.serverPid();
    const x = await post(br.sock, sid, callTool('x', 'exit'));
    assert.deepEqual(final(x, 'x').error, { code: -32603, message: 'backend process exited: status 3' });
    const y = await post(br.sock, sid, callTool('y', 'echo'));
    assert.equal(final(y, 'y').result.content[0].text, 'ok');
    assert.notEqual(await br.serverPid(old), old);
  });

  test('a line over 16 MiB: the server is killed and restarted', async () => {
    const { sid } = await initialize(br.sock);
    const old = await br.serverPid();
    const x = await post(br.sock, sid, callTool('f', 'flood'));
    assert.equal(final(x, 'f').error.code, -32603);
    assert.match(br.output, /a line of more than 16777216 bytes/);
    const y = await post(br.sock, sid, callTool('y2', 'echo'));
    assert.equal(final(y, 'y2').result.content[0].text, 'ok');
    await waitFor('the old server reaped', () => procState(old) === null, { timeout: 5000 });
  });

  test('stops cleanly', async () => {
    const r = await br.stop();
    assert.equal(r.code, 0, br.output);
    br.assertClean();
  });
});

describe('the master\'s orders', () => {
  let script;

  before(async () => {
    script = path.join(await tmpDir(), 'fake.mjs');
    await fsp.writeFile(script, FAKE);
  });

  test('IPC_DRAIN: no new connections, the call in flight finishes, then exit 0', async () => {
    const br = await Bridge.start('drain', [process.execPath, script]);
    const { sid } = await initialize(br.sock);
    const server = await br.serverPid();
    const x = await open(br.sock, { sid, body: callTool('s', 'slow') });
    await sleep(100);
    process.kill(br.proc.pid, 'SIGHUP');	// bridge-test: IPC_DRAIN
    await waitFor('the socket to go', () => !fs.existsSync(br.sock), { timeout: 3000 });
    await x.done(5000);
    assert.equal(final(x, 's').result.content[0].text, 'slow done');
    const r = await withTimeout(br.exited, 10000, 'exit after the drain');
    assert.equal(r.code, 0, br.output);
    assert.equal(procState(server), null);
    br.assertClean();
  });

  test('the master gone (channel EOF, death signal): the bridge stops its server', async () => {
    const br = await Bridge.start('lost', [process.execPath, script]);
    const server = await br.serverPid();
    process.kill(br.proc.pid, 'SIGKILL');	// bridge-test, the "master"
    await waitFor('the server to be gone', () => procState(server) === null, { timeout: 8000 });
    await waitFor('the bridge to be gone', () => procState(br.pid) !== 'alive', { timeout: 8000 });
    assert.equal(fs.existsSync(br.sock), false);
  });
});

// ---------------------------------------------------------------------------
// HTTP+SSE (2024-11-05) servers on 127.0.0.1: bridge-test -u URL

const httpServers = new Set();	// every one killed in after()
const esc = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/* a free loopback port (bind 0, read it, close) */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function tcpOpen(port) {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.setTimeout(1000);
    s.on('connect', () => { s.destroy(); resolve(true); });
    s.on('error', () => resolve(false));
    s.on('timeout', () => { s.destroy(); resolve(false); });
  });
}

/* node running args with PORT=port, kept on 127.0.0.1; up once it accepts */
class HttpServer {
  static async start(name, args, port) {
    const s = new HttpServer();
    s.name = name;
    s.port = port;
    s.output = '';
    const argv = ['--require', LOOPBACK, ...args];
    const [cmd, cargs] = SETPRIV ? [SETPRIV, ['--pdeathsig', 'KILL', '--', process.execPath, ...argv]]
      : [process.execPath, argv];
    s.proc = spawn(cmd, cargs, {
      cwd: ROOT, env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'], detached: true,
    });
    s.proc.stdout.setEncoding('utf8');
    s.proc.stderr.setEncoding('utf8');
    s.proc.stdout.on('data', (d) => { s.output += d; });
    s.proc.stderr.on('data', (d) => { s.output += d; });
    s.exited = new Promise((resolve) => {
      s.proc.on('exit', (code, signal) => { s.exit = { code, signal }; resolve(s.exit); });
      s.proc.on('error', (e) => { s.exit = { error: e }; resolve(s.exit); });
    });
    httpServers.add(s);
    await waitFor(`${name} on port ${port}`, async () => {
      if (s.exit)
        throw new Error(`${name} exited: ${s.output.slice(-2000)}`);
      return tcpOpen(port);
    }, { timeout: 20000 });
    return s;
  }

  kill() {
    try {
      process.kill(-this.proc.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }

  async killed() {
    this.kill();
    await withTimeout(this.exited, 5000, `${this.name} exit`);
  }
}

after(async () => {
  for (const s of httpServers) {
    s.kill();
    await withTimeout(s.exited, 5000, s.name).catch(() => {});
  }
});

const everythingSse = (port) => HttpServer.start('everything-sse', [EVERYTHING, 'sse'], port);

describe('server-everything over HTTP+SSE (2024-11-05) behind the bridge', () => {
  let srv, br, url;

  before(async () => {
    srv = await everythingSse(await freePort());
    url = `http://127.0.0.1:${srv.port}/sse`;
    br = await Bridge.start('everything-sse', null, { url });
  });

  after(async () => {
    await br?.stop();
    await srv?.killed();
  });

  test('initialize: the server\'s InitializeResult, initialized once per connection', async () => {
    const a = await initialize(br.sock);
    const b = await initialize(br.sock);
    assert.notEqual(a.sid, b.sid);
    assert.equal(a.result.serverInfo.name, 'mcp-servers/everything');
    assert.equal(a.result.protocolVersion, '2025-11-25');
    assert.equal(typeof a.result.capabilities.tools, 'object');
    assert.deepEqual(a.result, b.result);
    assert.match(br.output, new RegExp(`server ready \\(${esc(url)}, protocol 2025-11-25\\)`));
    assert.equal((srv.output.match(/Client Connected/g) || []).length, 1, srv.output);
  });

  test('tools/list equals the server\'s own list over the SDK\'s SSEClientTransport', async () => {
    const via = await sdkClient(br.sock);
    const direct = new Client({ name: 'direct', version: '1.0.0' }, { capabilities: BRIDGE_CAPS });
    await withTimeout(direct.connect(new SSEClientTransport(new URL(url))), 15000, 'direct connect');
    clients.add(direct);
    try {
      const [a, b] = await Promise.all([via.listTools(), direct.listTools()]);
      assert.ok(a.tools.length >= 10, `only ${a.tools.length} tools`);
      assert.ok(a.tools.some((t) => t.name === 'trigger-elicitation-request'));
      assert.deepEqual(a.tools, b.tools);
    } finally {
      await direct.close();
    }
  });

  test('tools/call echo: an SSE answer with the caller\'s id', async () => {
    const { sid } = await initialize(br.sock);
    const x = await post(br.sock, sid, callTool('e-1', 'echo', { message: 'hello over SSE' }));
    assert.equal(x.status, 200);
    assert.match(x.headers['content-type'], /^text\/event-stream/);
    assert.deepEqual(final(x, 'e-1').result.content, [{ type: 'text', text: 'Echo: hello over SSE' }]);
  });

  test('two callers, same ids, 40 calls at once: each gets its own answers', async () => {
    const [a, b] = await Promise.all([initialize(br.sock), initialize(br.sock)]);
    const n = 20;
    const calls = [];
    for (let i = 0; i < n; i++) {
      calls.push(post(br.sock, a.sid, callTool(i, 'echo', { message: `A${i}` })));
      calls.push(post(br.sock, b.sid, callTool(i, 'echo', { message: `B${i}` })));
    }
    const xs = await Promise.all(calls);
    for (let i = 0; i < n; i++) {
      assert.equal(final(xs[2 * i], i).result.content[0].text, `Echo: A${i}`);
      assert.equal(final(xs[2 * i + 1], i).result.content[0].text, `Echo: B${i}`);
    }
  });

  test('progress reaches the right caller, with its own token', async () => {
    const [a, b] = await Promise.all([initialize(br.sock), initialize(br.sock)]);
    const meta = { progressToken: 'tok' };
    const [xa, xb] = await Promise.all([
      post(br.sock, a.sid, callTool(1, 'trigger-long-running-operation', { duration: 1.2, steps: 4 }, meta)),
      post(br.sock, b.sid, callTool(1, 'trigger-long-running-operation', { duration: 0.6, steps: 3 }, meta)),
    ]);
    const progress = (x) => x.events.filter((e) => e.method === 'notifications/progress').map((e) => e.params);
    assert.deepEqual(progress(xa).map((p) => [p.progressToken, p.progress, p.total]),
      [['tok', 1, 4], ['tok', 2, 4], ['tok', 3, 4], ['tok', 4, 4]]);
    assert.deepEqual(progress(xb).map((p) => [p.progressToken, p.progress, p.total]),
      [['tok', 1, 3], ['tok', 2, 3], ['tok', 3, 3]]);
    assert.equal(xa.events.at(-1).id, 1);
    assert.equal(xb.events.at(-1).id, 1);
  });

  test('two SDK clients at once: progress and answers kept apart', async () => {
    const [c1, c2] = await Promise.all([sdkClient(br.sock), sdkClient(br.sock)]);
    const seen = [[], []];
    const [r1, r2, e1, e2] = await Promise.all([
      c1.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.8, steps: 2 } },
        undefined, { onprogress: (p) => seen[0].push(p), timeout: 15000 }),
      c2.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.6, steps: 3 } },
        undefined, { onprogress: (p) => seen[1].push(p), timeout: 15000 }),
      c1.callTool({ name: 'echo', arguments: { message: 'one' } }),
      c2.callTool({ name: 'echo', arguments: { message: 'two' } }),
    ]);
    assert.deepEqual(seen[0].map((p) => [p.progress, p.total]), [[1, 2], [2, 2]]);
    assert.deepEqual(seen[1].map((p) => [p.progress, p.total]), [[1, 3], [2, 3], [3, 3]]);
    assert.match(r1.content[0].text, /Steps: 2/);
    assert.match(r2.content[0].text, /Steps: 3/);
    assert.equal(e1.content[0].text, 'Echo: one');
    assert.equal(e2.content[0].text, 'Echo: two');
  });

  test('elicitation round trip: the server\'s request on the caller\'s stream, the answer POSTed back', async () => {
    const { sid } = await initialize(br.sock);
    const x = await open(br.sock, { sid, body: callTool('el-1', 'trigger-elicitation-request') });
    try {
      const req = await x.until((e) => e.method === 'elicitation/create', 10000, 'elicitation/create');
      assert.match(String(req.id), /^bridge-\d+$/);
      assert.equal(req.params.requestedSchema.type, 'object');
      const ans = await post(br.sock, sid, {
        jsonrpc: '2.0', id: req.id, result: { action: 'accept', content: { name: 'Ada Lovelace', check: true } },
      });
      assert.equal(ans.status, 202);
      const r = await x.until((e) => e.id === 'el-1', 10000, 'the tool result');
      const text = r.result.content.map((c) => c.text).join('\n');
      assert.match(text, /Name: Ada Lovelace/);
      await x.done(5000);
    } finally {
      x.close();
    }
  });

  test('elicitation through the SDK client', async () => {
    const c = await sdkClient(br.sock, { elicitation: {} });
    let asked = 0;
    c.setRequestHandler(ElicitRequestSchema, async () => {
      asked++;
      return { action: 'accept', content: { name: 'Grace Hopper' } };
    });
    const r = await c.callTool({ name: 'trigger-elicitation-request', arguments: {} }, undefined, { timeout: 15000 });
    assert.equal(asked, 1);
    assert.match(r.content.map((x) => x.text).join('\n'), /Name: Grace Hopper/);
  });

  test('SIGTERM: exit 0, the socket gone, the server sees its client go', async () => {
    const r = await br.stop();
    assert.deepEqual(r, { code: 0, signal: null }, br.output);
    assert.equal(fs.existsSync(br.sock), false);
    await waitFor('the server to see the client go', () => /Client Disconnected/.test(srv.output), { timeout: 5000 });
    br.assertClean();
  });
});

describe('an HTTP+SSE server that dies and comes back', () => {
  test('kill -9: the call in flight fails naming the URL; restarted on the same port, the bridge reconnects', async () => {
    const port = await freePort();
    let srv = await everythingSse(port);
    const url = `http://127.0.0.1:${port}/sse`;
    const br = await Bridge.start('sse-crash', null, { url });
    try {
      const { sid } = await initialize(br.sock);
      const x = await open(br.sock, {
        sid, body: callTool('long', 'trigger-long-running-operation', { duration: 10, steps: 10 }, { progressToken: 1 }),
      });
      await x.until((e) => e.method === 'notifications/progress', 5000, 'first progress');
      await srv.killed();
      const err = await x.until((e) => e.id === 'long', 5000, 'the error');
      assert.equal(err.error.code, -32603);
      assert.match(err.error.message, new RegExp(`^backend connection lost: the SSE stream from ${esc(url)} `));
      await x.done(5000);
      await waitFor('a refused reconnection', () => /backend unreachable: GET .*Connection refused/.test(br.output));
      assert.match(br.output, new RegExp(`reconnecting to ${esc(url)} in 100 ms`));
      srv = await everythingSse(port);
      // the same session carries on; the call waits for the connection
      const e = await post(br.sock, sid, callTool('after', 'echo', { message: 'again' }), 25000);
      assert.equal(final(e, 'after').result.content[0].text, 'Echo: again');
      assert.equal((br.output.match(/server ready/g) || []).length, 2, br.output);
    } finally {
      const r = await br.stop();
      assert.equal(r.code, 0, br.output);
      br.assertClean();
      await srv.killed();
    }
  });
});

// A scripted HTTP+SSE server: GET /sse/<mode>, POST /message?s=<n>.
const FAKE_SSE = String.raw`
import http from 'node:http';
const port = Number(process.env.PORT);
const sessions = new Map();
const seen = [];
let n = 0;
const send = (s, m) => s.res.write('event: message\ndata: ' + JSON.stringify(m) + '\n\n');
function handle(s, m) {
  if (m.method === 'initialize')
    return send(s, { jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2024-11-05',
      capabilities: { tools: {} }, serverInfo: { name: 'fake-sse', version: '1' } } });
  if (m.id === undefined || !m.method)
    return;
  if (m.method !== 'tools/call')
    return send(s, { jsonrpc: '2.0', id: m.id, result: {} });
  const reply = (text) => send(s, { jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text }] } });
  switch (m.params.name) {
  case 'hang':
    return;
  case 'end':
    return s.res.end();
  case 'big':
    return s.res.write('event: message\ndata: ' + 'x'.repeat(17 * 1024 * 1024) + '\n\n');
  case 'split': {		// two data: lines, CRLF, written in pieces
    const t = JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'split' }] } });
    const half = t.indexOf(',"result"');
    s.res.write('event: message\r\ndata: ' + t.slice(0, half));
    return setTimeout(() => s.res.write('\r\ndata: ' + t.slice(half) + '\r\n\r\n'), 50);
  }
  case 'report':
    return reply(JSON.stringify(seen));
  default:
    return reply('ok');
  }
}
http.createServer((req, res) => {
  const u = new URL(req.url, 'http://fake');
  if (req.method === 'GET' && u.pathname.startsWith('/sse/')) {
    const mode = u.pathname.slice(5);
    seen.push({ get: mode, accept: req.headers.accept ?? null, auth: req.headers.authorization ?? null });
    if (mode === 'missing') {
      res.writeHead(404);
      return res.end('no such stream');
    }
    if (mode === 'html') {
      res.writeHead(200, { 'content-type': 'text/html' });
      return res.end('<p>hello</p>');
    }
    if (mode === 'moved') {
      res.writeHead(302, { location: '/sse/ok' });
      return res.end();
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const id = String(++n);
    const s = { res, mode };
    sessions.set(id, s);
    res.on('close', () => sessions.delete(id));
    if (mode === 'silent')
      return res.write(': no endpoint for you\n\n');
    const ep = mode === 'elsewhere' ? 'http://localhost:' + port + '/message?s=' + id
      : mode === 'absolute' ? 'http://127.0.0.1:' + port + '/message?s=' + id
      : '/message?s=' + id;
    return res.write(': welcome\n\nevent: endpoint\ndata: ' + ep + '\n\n');
  }
  if (req.method === 'POST' && u.pathname === '/message') {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      const s = sessions.get(u.searchParams.get('s'));
      let m;
      try {
        m = JSON.parse(body);
      } catch {
        res.writeHead(400);
        return res.end('bad JSON');
      }
      seen.push({ post: m.method ?? 'answer', mode: s?.mode ?? null, type: req.headers['content-type'] ?? null,
        version: req.headers['mcp-protocol-version'] ?? null });
      if (!s) {
        res.writeHead(404);
        return res.end('no such session');
      }
      if (m.params?.name === 'refuse') {
        res.writeHead(500);
        return res.end('refused on purpose');
      }
      res.writeHead(202);
      res.end('Accepted');
      handle(s, m);
    });
    return;
  }
  res.writeHead(404);
  res.end();
}).listen(port, '127.0.0.1');
`;

describe('a scripted HTTP+SSE server: the wire, and every way to lose it', () => {
  let srv, base;

  before(async () => {
    const script = path.join(await tmpDir(), 'fake-sse.mjs');
    await fsp.writeFile(script, FAKE_SSE);
    srv = await HttpServer.start('fake-sse', [script], await freePort());
    base = `http://127.0.0.1:${srv.port}`;
  });

  after(async () => {
    await srv?.killed();
  });

  /* a bridge on mode; fn(bridge) runs, then the bridge must stop cleanly */
  async function withBridge(mode, fn, { timeout, url } = {}) {
    const br = await Bridge.start(`sse-${mode}`, null, { url: url ?? `${base}/sse/${mode}`, timeout });
    try {
      await fn(br);
    } finally {
      const r = await br.stop();
      assert.equal(r.code, 0, br.output);
      br.assertClean();
    }
  }

  const report = async (sock, sid) =>
    JSON.parse(final(await post(sock, sid, callTool('rep', 'report')), 'rep').result.content[0].text);

  test('the wire: Accept on the GET, JSON POSTs to a relative endpoint, the version header once negotiated', async () => {
    await withBridge('ok', async (br) => {
      const { sid, result } = await initialize(br.sock);
      assert.equal(result.protocolVersion, '2024-11-05');
      assert.equal(result.serverInfo.name, 'fake-sse');
      // one message over two data: lines with CRLF, arriving in pieces
      const x = await post(br.sock, sid, callTool('s', 'split'));
      assert.equal(final(x, 's').result.content[0].text, 'split');
      const seen = (await report(br.sock, sid)).filter((e) => e.get === 'ok' || e.mode === 'ok');
      assert.deepEqual(seen[0], { get: 'ok', accept: 'text/event-stream', auth: null });
      const posts = seen.filter((e) => e.post);
      assert.deepEqual(posts.slice(0, 2).map((e) => [e.post, e.version]),
        [['initialize', null], ['notifications/initialized', '2024-11-05']]);
      assert.ok(posts.every((e) => e.type === 'application/json'), JSON.stringify(posts));
      assert.ok(posts.slice(1).every((e) => e.version === '2024-11-05'), JSON.stringify(posts));
    });
  });

  test('an absolute endpoint on the same origin is used', async () => {
    await withBridge('absolute', async (br) => {
      const { sid } = await initialize(br.sock);
      assert.equal(final(await post(br.sock, sid, callTool(1, 'echo')), 1).result.content[0].text, 'ok');
    });
  });

  test('an endpoint on another origin is refused: nothing is POSTed there', async () => {
    await withBridge('elsewhere', async (br) => {
      await waitFor('the refusal', () => /bad endpoint on .*\/sse\/elsewhere: another origin/.test(br.output));
      await waitFor('a second try', () => /reconnecting to .* in 500 ms/.test(br.output));
    });
    await withBridge('ok', async (br) => {
      const { sid } = await initialize(br.sock);
      const seen = await report(br.sock, sid);
      assert.ok(seen.some((e) => e.get === 'elsewhere'));
      assert.equal(seen.some((e) => e.post && e.mode === 'elsewhere'), false, JSON.stringify(seen));
    });
  });

  test('a GET refused (404), not an SSE stream, a redirect: the server is down, retried with backoff', async () => {
    await withBridge('missing', async (br) => {
      await waitFor('404', () => new RegExp(`refused the SSE stream: GET ${esc(base)}/sse/missing: HTTP 404`)
        .test(br.output));
      await waitFor('the backoff', () => /in 500 ms/.test(br.output));
    });
    await withBridge('html', async (br) => {
      await waitFor('not SSE', () => /\/sse\/html with no SSE stream/.test(br.output));
    });
    await withBridge('moved', async (br) => {
      await waitFor('302', () => /GET .*\/sse\/moved: HTTP 302 \(redirects are not followed\)/.test(br.output));
    });
  });

  test('initialize while the server is down waits for it, then fails', async () => {
    await withBridge('missing', async (br) => {
      const t0 = Date.now();
      const x = await post(br.sock, null, {
        jsonrpc: '2.0', id: 0, method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      });
      const took = Date.now() - t0;
      assert.ok(took >= 900 && took < 5000, `took ${took} ms`);
      assert.equal(x.events[0].error.code, -32603);
      assert.match(x.events[0].error.message, /HTTP 404|not ready within 1000 ms/);
      assert.equal(x.headers['mcp-session-id'], undefined);
    }, { timeout: 1000 });
  });

  test('the stream ends: the call in flight fails naming the URL; the bridge reconnects and serves again', async () => {
    await withBridge('ok', async (br) => {
      const { sid } = await initialize(br.sock);
      const x = await post(br.sock, sid, callTool('e', 'end'));
      assert.deepEqual(final(x, 'e').error, {
        code: -32603, message: `backend connection lost: the SSE stream from ${base}/sse/ok ended`,
      });
      const y = await post(br.sock, sid, callTool('y', 'echo'));
      assert.equal(final(y, 'y').result.content[0].text, 'ok');
      assert.match(br.output, /reconnecting to .* in 100 ms/);
    });
  });

  test('a POST refused (500): the call fails, the refusal is logged, the bridge reconnects', async () => {
    await withBridge('ok', async (br) => {
      const { sid } = await initialize(br.sock);
      const x = await post(br.sock, sid, callTool('r', 'refuse'));
      assert.deepEqual(final(x, 'r').error, {
        code: -32603, message: `backend refused a message: POST to the endpoint of ${base}/sse/ok: HTTP 500`,
      });
      // the log line may trail the answer (a slow, sanitizer build)
      await waitFor('the refusal logged',
        () => /the server refused a message: refused on purpose/.test(br.output), { timeout: 5000 });
      const y = await post(br.sock, sid, callTool('y', 'echo'));
      assert.equal(final(y, 'y').result.content[0].text, 'ok');
    });
  });

  test('an event over 16 MiB: the connection is dropped and made again', async () => {
    await withBridge('ok', async (br) => {
      const { sid } = await initialize(br.sock);
      const x = await post(br.sock, sid, callTool('b', 'big'));
      assert.equal(final(x, 'b').error.code, -32603);
      assert.match(final(x, 'b').error.message, /an SSE event of more than 16777216 bytes/);
      const y = await post(br.sock, sid, callTool('y', 'echo'));
      assert.equal(final(y, 'y').result.content[0].text, 'ok');
    });
  });

  test('no response in time: -32603, and notifications/cancelled is POSTed', async () => {
    await withBridge('ok', async (br) => {
      const { sid } = await initialize(br.sock);
      const x = await post(br.sock, sid, callTool('h', 'hang'));
      assert.match(final(x, 'h').error.message, /^backend timeout: no response within 1500 ms/);
      const seen = await report(br.sock, sid);
      assert.ok(seen.some((e) => e.post === 'notifications/cancelled'), JSON.stringify(seen));
    }, { timeout: 1500 });
  });

  test('no endpoint event in time: the connection is closed and made again', async () => {
    await withBridge('silent', async (br) => {
      await waitFor('the deadline', () => /no endpoint event within 1000 ms/.test(br.output), { timeout: 5000 });
      // the close is logged just after the deadline: wait for it too
      await waitFor('the close', () => /closed: no endpoint event in time/.test(br.output), { timeout: 5000 });
      await waitFor('a new connection', () => (br.output.match(/: connecting to /g) || []).length >= 2);
    }, { timeout: 1000 });
  });

  test('credentials and the query in the URL are never shown', async () => {
    const url = `http://user:s3cret@127.0.0.1:${srv.port}/sse/ok?token=hush`;
    await withBridge('creds', async (br) => {
      const { sid } = await initialize(br.sock);
      const seen = await report(br.sock, sid);
      const get = seen.filter((e) => e.get === 'ok').at(-1);
      assert.equal(get.auth, `Basic ${Buffer.from('user:s3cret').toString('base64')}`);
      const x = await post(br.sock, sid, callTool('e', 'end'));
      // shown as every backend URL is (http_url_redact())
      assert.match(final(x, 'e').error.message,
        new RegExp(`${esc(`http://***@127.0.0.1:${srv.port}/sse/ok?token=***`)} ended$`));
      assert.doesNotMatch(br.output, /s3cret|hush/);
    }, { url });
  });
});

test('no server process outlives its bridge', async () => {
  for (const b of bridges)
    if (!b.exit)
      await b.stop();
  for (const pid of serverPids)
    await waitFor(`server ${pid} to be gone`, () => procState(pid) === null, { timeout: 5000 });
});
