// Interop test harness: starts real MCP backends and vmcpd on loopback,
// talks to them over raw HTTP and through the official SDK v1 client, and
// makes sure nothing it started outlives the test file.
//
// Every child is spawned in its own process group (detached), with a
// parent-death SIGKILL (setpriv), and tracked; cleanupAll() (registered
// by useHarness() as an after() hook; also run on 'exit' and on SIGTERM/
// SIGINT) SIGKILLs every group still alive.  Every wait is bounded.
// Daemon logs are dumped when a guarded() test fails, and a sanitizer
// report in them fails the test.
import { spawn, execFile } from 'node:child_process';
import { after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export const HOST = '127.0.0.1';
export const LEGACY_VERSION = '2025-11-25';
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const VMCPD_BIN = path.resolve(ROOT, process.env.VMCPD_BIN || 'build/vmcpd');
export const VMCPCTL_BIN = path.resolve(ROOT, process.env.VMCPCTL_BIN || 'build/vmcpctl');
const EVERYTHING = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const LOOPBACK = path.join(ROOT, 'tests/lib/loopback.cjs');
const BACKEND = path.join(ROOT, 'tests/interop/lib/backend.mjs');

// What a sanitizer build prints when it finds something, and vmcpd's own
// alerts of a broken invariant (a request released twice:
// worker_request_release() in worker/worker.c, request_finalize() in
// worker/process/request.c).
const SANITIZER_RE = /ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|request released with none in flight|request finalized with nothing held/;

const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => fs.existsSync(p));

const children = new Set();	// live Proc objects
const tmpdirs = new Set();
const daemons = new Set();	// every Daemon started, for log dumps

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/* Poll fn() until it returns a truthy value or ms elapse. */
export async function waitFor(what, fn, { timeout = 10000, interval = 50 } = {}) {
  const deadline = Date.now() + timeout;
  let lastErr;
  for (;;) {
    try {
      const v = await fn();
      if (v)
        return v;
    } catch (e) {
      lastErr = e;
    }
    if (Date.now() >= deadline)
      throw new Error(`timed out after ${timeout} ms waiting for ${what}` +
        (lastErr ? `: ${lastErr.message}` : ''));
    await sleep(interval);
  }
}

/* Reject if p does not settle within ms. */
export function withTimeout(p, ms, what) {
  let timer;
  return Promise.race([
    p,
    new Promise((_, rej) => {
      timer = setTimeout(() => rej(new Error(`${what}: no result within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

// ---------------------------------------------------------------------------
// processes

class Proc {
  constructor(name, cmd, args, opts = {}) {
    this.name = name;
    this.output = '';	// stdout + stderr, interleaved
    this.stderr = '';
    this.exited = false;
    this.code = null;
    this.signal = null;
    // setpriv(1) execs cmd with a parent-death signal: even if this test
    // process is SIGKILLed, what it started dies with it
    if (SETPRIV) {
      args = ['--pdeathsig', 'KILL', '--', cmd, ...args];
      cmd = SETPRIV;
    }
    this.child = spawn(cmd, args, {
      cwd: opts.cwd || ROOT,
      env: { ...process.env, ...(opts.env || {}) },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,		// own process group: killable as a whole
    });
    this.pid = this.child.pid;
    this.child.stdout.setEncoding('utf8');
    this.child.stderr.setEncoding('utf8');
    this.child.stdout.on('data', (d) => { this.output += d; });
    this.child.stderr.on('data', (d) => { this.output += d; this.stderr += d; });
    this.exitPromise = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        this.exited = true;
        this.code = code;
        this.signal = signal;
        resolve({ code, signal });
      });
      this.child.on('error', (e) => {
        this.output += `\n[spawn error: ${e.message}]\n`;
        this.exited = true;
        resolve({ code: null, signal: null, error: e });
      });
    });
    // stdio streams close after exit; wait for both to have all output
    this.closed = new Promise((resolve) => this.child.on('close', resolve));
    children.add(this);
  }

  /* SIGKILL the whole process group, leader or not. */
  killGroup() {
    try {
      process.kill(-this.pid, 'SIGKILL');
    } catch {
      /* ESRCH: nothing left */
    }
  }

  async waitExit(ms) {
    return withTimeout(this.exitPromise, ms, `${this.name} (pid ${this.pid}) exit`);
  }
}

/* Start cmd as a process the harness kills at the end (own group). */
export function startProc(name, cmd, args, opts = {}) {
  return new Proc(name, cmd, args, opts);
}

/* Kill everything this harness started; synchronous, safe to repeat. */
export function killAll() {
  for (const p of children)
    p.killGroup();
}

export async function cleanupAll() {
  killAll();
  await Promise.all([...children].map((p) =>
    withTimeout(p.exitPromise, 5000, p.name).catch(() => {})));
  children.clear();
  for (const d of tmpdirs)
    await fsp.rm(d, { recursive: true, force: true }).catch(() => {});
  tmpdirs.clear();
}

process.on('exit', killAll);
// the test runner stops a file's process with a signal: take ours along
for (const [sig, code] of [['SIGTERM', 143], ['SIGINT', 130], ['SIGHUP', 129]])
  process.once(sig, () => { killAll(); process.exit(code); });

/* Register the after() cleanup of the calling test file. */
export function useHarness() {
  after(cleanupAll);
}

/* pids of the live processes in process group pgid */
export async function groupPids(pgid) {
  const out = await run('ps', ['-e', '-o', 'pid=,pgid=']);
  return out.stdout.split('\n').map((l) => l.trim().split(/\s+/).map(Number))
    .filter(([pid, g]) => g === pgid && pid > 0).map(([pid]) => pid);
}

/* Run a command to completion (bounded). */
export function run(cmd, args, { timeout = 15000, env, cwd } = {}) {
  return new Promise((resolve) => {
    execFile(cmd, args, {
      timeout, killSignal: 'SIGKILL', cwd: cwd || ROOT,
      env: { ...process.env, ...(env || {}) }, maxBuffer: 64 * 1024 * 1024,
    }, (err, stdout, stderr) => {
      let code = 0;
      if (err)
        code = typeof err.code === 'number' ? err.code : (err.killed ? 'timeout' : -1);
      resolve({ code, signal: err?.signal ?? null, stdout, stderr });
    });
  });
}

export async function tmpDir(prefix = 'vmcpd-interop-') {
  const d = await fsp.mkdtemp(path.join(os.tmpdir(), prefix));
  tmpdirs.add(d);
  return d;
}

// ---------------------------------------------------------------------------
// ports and backends

/* A free loopback port (bind 0, read it, close). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, HOST, () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/* Resolves once a TCP connect to port succeeds. */
function tcpProbe(port) {
  return new Promise((resolve) => {
    const s = net.connect({ host: HOST, port });
    s.setTimeout(1000);
    s.on('connect', () => { s.destroy(); resolve(true); });
    s.on('error', () => resolve(false));
    s.on('timeout', () => { s.destroy(); resolve(false); });
  });
}

/* server-everything in Streamable HTTP mode on a free loopback port. */
export async function startEverything({ timeout = 20000 } = {}) {
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const p = new Proc('server-everything', process.execPath,
      ['--require', LOOPBACK, EVERYTHING, 'streamableHttp'], { env: { PORT: String(port) } });
    p.port = port;
    p.url = `http://${HOST}:${port}/mcp`;
    try {
      await waitFor(`server-everything on port ${port}`, async () => {
        if (p.exited)
          throw new Error(`exited: ${p.output.slice(-2000)}`);
        return tcpProbe(port);
      }, { timeout });
      return p;
    } catch (e) {
      p.killGroup();
      if (attempt === 2 || !/EADDRINUSE/.test(p.output))
        throw e;
    }
  }
}

/* The SDK v1 test backend (lib/backend.mjs) on a free loopback port;
 * args: its mode ([] or ['sse']), env: e.g. TOOL_PREFIX */
export const TEST_BACKEND = BACKEND;
export async function startTestBackend({ timeout = 15000, args = [], env } = {}) {
  const p = new Proc('test-backend', process.execPath, [BACKEND, ...args], { env });
  const port = await waitFor('test backend to print its port', () => {
    if (p.exited)
      throw new Error(`exited: ${p.output.slice(-2000)}`);
    const m = /^listening (\d+)$/m.exec(p.output);
    return m ? Number(m[1]) : null;
  }, { timeout });
  p.port = port;
  p.url = `http://${HOST}:${port}/mcp`;
  return p;
}

// ---------------------------------------------------------------------------
// vmcpd

/* A config file's text; overrides are merged into the defaults below. */
/*
 * aggregation: the YAML lines of the aggregation block.  By default the
 * one backend's names are kept as they are (prefix only on a conflict,
 * and one backend has none), so results compare 1:1 with the backend's.
 */
export const KEEP_NAMES = [
  'aggregation:',
  '  conflictResolution: prefix',
  '  conflictResolutionConfig:',
  '    prefixMode: onConflict',
];

export function configText({ name, portFile, stateDir, backendUrl, backendName = 'everything',
  workers = 2,
  workerHeader = true, logFile, drainTimeout = '2s', ttl, maxBodySize, timeout,
  aggregation = KEEP_NAMES, extra = '' } = {}) {
  const lines = [];
  if (name !== undefined)
    lines.push(`name: ${name}`);
  lines.push('daemon:');
  lines.push(`  listen: ${HOST}:0`);
  lines.push(`  portFile: ${portFile}`);
  lines.push(`  workers: ${workers}`);
  lines.push(`  stateDir: ${stateDir}`);
  lines.push(`  workerHeader: ${workerHeader}`);
  lines.push(`  drainTimeout: ${drainTimeout}`);
  if (logFile)
    lines.push(`  logFile: ${logFile}`);
  if (maxBodySize) {
    lines.push('http:');
    lines.push(`  maxBodySize: ${maxBodySize}`);
  }
  if (ttl) {
    lines.push('sessions:');
    lines.push(`  ttl: ${ttl}`);
  }
  lines.push('backends:');
  lines.push(`  - name: ${backendName}`);
  lines.push(`    url: ${backendUrl}`);
  lines.push('    transport: streamable-http');
  if (aggregation)
    lines.push(...aggregation);
  if (timeout) {
    lines.push('operational:');
    lines.push('  timeouts:');
    lines.push(`    default: ${timeout}`);
  }
  return lines.join('\n') + '\n' + extra;
}

export class Daemon {
  constructor(dir, cfgPath, opts) {
    this.dir = dir;
    this.cfg = cfgPath;
    this.opts = opts;
    this.portFile = path.join(dir, 'port');
    this.stateDir = path.join(dir, 'state');
    this.proc = null;
    this.port = null;
  }

  get pid() { return this.proc.pid; }
  get stderr() { return this.proc.stderr; }
  get base() { return `http://${HOST}:${this.port}`; }
  get url() { return `${this.base}/mcp`; }

  async writeConfig(text) {
    await fsp.writeFile(this.cfg, text);
  }

  /* opts.wrap: a command vmcpd runs under, e.g. ['prlimit', '--nofile=64', '--'];
   * opts.bin: another vmcpd than VMCPD_BIN (an installed one) */
  async start({ timeout = 15000, args = ['-d'] } = {}) {
    await fsp.rm(this.portFile, { force: true });
    const wrap = this.opts.wrap || [];
    const [cmd, ...pre] = [...wrap, this.opts.bin || VMCPD_BIN];
    this.proc = new Proc('vmcpd', cmd, [...pre, ...args, '-f', this.cfg], {
      env: { ...(this.opts.env || {}),
        ASAN_OPTIONS: process.env.ASAN_OPTIONS || 'detect_leaks=1:abort_on_error=0' },
    });
    daemons.add(this);
    const port = await waitFor('vmcpd portFile', async () => {
      if (this.proc.exited)
        throw new Error(`vmcpd exited (${this.proc.code ?? this.proc.signal}) before listening`);
      const t = await fsp.readFile(this.portFile, 'utf8').catch(() => '');
      // a string: port 0 (a Unix socket listen) is an answer too
      return /^\d+\n$/.test(t) ? t.trim() : null;
    }, { timeout }).catch((e) => {
      this.dump('start failed');
      throw e;
    });
    this.port = Number(port);
    // every worker up (portFile is written before the workers fork)
    await waitFor('vmcpd workers', async () =>
      (await this.workerPids()).length === this.workers(), { timeout });
    await waitFor('vmcpd /healthz', async () => (await this.health()).status === 200,
      { timeout });
    return this;
  }

  workers() { return this.opts.workers ?? 2; }

  health() {
    return httpRequest(this.port, { method: 'GET', path: '/healthz', timeout: 3000 });
  }

  /* {pid, comm} of the master's children */
  async childProcs() {
    const out = await run('ps', ['--ppid', String(this.pid), '-o', 'pid=,comm=']);
    return out.stdout.split('\n').map((l) => l.trim()).filter(Boolean).map((l) => {
      const [pid, comm] = l.split(/\s+/);
      return { pid: Number(pid), comm };
    });
  }

  async workerPids() {
    return (await this.childProcs()).filter((c) => c.comm === 'vmcpd-worker')
      .map((c) => c.pid).sort((a, b) => a - b);
  }

  /* SIGTERM; the master must exit 0 within ms and leave no group member. */
  async stop(ms = 10000) {
    if (this.proc.exited)
      assert.fail(`vmcpd already exited (${this.proc.code ?? this.proc.signal})\n${this.stderr}`);
    process.kill(this.pid, 'SIGTERM');
    this.stopped = true;
    let res;
    try {
      res = await this.proc.waitExit(ms);
    } catch (e) {
      this.dump('stop timed out');
      throw e;
    }
    await withTimeout(this.proc.closed, 5000, 'vmcpd stdio close').catch(() => {});
    assert.equal(res.code, 0, `vmcpd exit status (signal ${res.signal})\n${this.stderr}`);
    await waitFor('no process left in the vmcpd group', async () =>
      (await groupPids(this.pid)).length === 0, { timeout: 5000 });
    this.checkSanitizer();
    return res;
  }

  /* Fail (once per daemon) if a sanitizer reported anything. */
  checkSanitizer() {
    if (this.sanitizerReported || !SANITIZER_RE.test(this.proc.output))
      return;
    this.sanitizerReported = true;
    this.dump('sanitizer report');
    assert.fail(`sanitizer report in the stderr of vmcpd pid ${this.pid}`);
  }

  dump(why) {
    process.stderr.write(`\n----- vmcpd stderr (${why}; pid ${this.proc?.pid}) -----\n` +
      (this.proc?.output ?? '') + '\n----- end vmcpd stderr -----\n');
  }
}

/*
 * Write a config under a fresh temp dir and start vmcpd on it.
 * opts: everything configText() takes, plus backendUrl (required).
 */
export async function startDaemon(opts) {
  const dir = await tmpDir();
  const cfg = path.join(dir, 'vmcpd.yaml');
  const d = new Daemon(dir, cfg, opts);
  d.configOpts = { portFile: d.portFile, stateDir: d.stateDir, ...opts };
  await d.writeConfig(configText(d.configOpts));
  await d.start();
  return d;
}

/*
 * Wrap a test body: on failure dump the logs of every daemon started so
 * far; on success still fail if a sanitizer reported anything.
 */
export function guarded(fn) {
  return async (t) => {
    const known = new Set(daemons);
    const live = new Set([...daemons].filter((d) => d.proc && !d.stopped));
    try {
      await fn(t);
    } catch (e) {
      // the daemons this test could have used: live at its start, or new
      for (const d of daemons)
        if (d.proc && (live.has(d) || !known.has(d)))
          d.dump(`test "${t.name}" failed`);
      throw e;
    }
    for (const d of daemons)
      if (d.proc)
        d.checkSanitizer();
  };
}

// ---------------------------------------------------------------------------
// raw HTTP

export const MCP_ACCEPT = 'application/json, text/event-stream';

/*
 * One HTTP request on a NEW connection (agent: false, Connection: close),
 * so that every request may land on any worker.  Resolves
 * {status, headers, text, json, messages}.
 */
export function httpRequest(port, { method = 'POST', path: p = '/mcp', headers = {}, body,
  timeout = 15000, keepAlive = false, localAddress } = {}) {
  return new Promise((resolve, reject) => {
    const h = { ...headers };
    let data = body;
    if (data !== undefined && typeof data !== 'string' && !Buffer.isBuffer(data))
      data = JSON.stringify(data);
    if (data !== undefined)
      h['Content-Length'] = Buffer.byteLength(data);
    const req = http.request({
      host: HOST, port, method, path: p, headers: h, localAddress,
      agent: keepAlive ? undefined : false,
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString('utf8');
        resolve(decodeResponse(res.statusCode, res.headers, text));
      });
      res.on('error', (e) => { clearTimeout(timer); reject(e); });
    });
    const timer = setTimeout(() => {
      req.destroy(new Error(`${method} ${p}: no answer within ${timeout} ms`));
    }, timeout);
    req.on('error', (e) => { clearTimeout(timer); reject(e); });
    if (data !== undefined)
      req.write(data);
    req.end();
  });
}

/* Parse SSE text into events {id, event, data}. */
export function parseSSE(text) {
  const events = [];
  for (const block of text.replace(/\r\n?/g, '\n').split('\n\n')) {
    if (block.trim() === '')
      continue;
    const ev = { id: undefined, event: 'message', data: [] };
    let any = false;
    for (const line of block.split('\n')) {
      if (line.startsWith(':'))
        continue;
      const i = line.indexOf(':');
      const field = i === -1 ? line : line.slice(0, i);
      let value = i === -1 ? '' : line.slice(i + 1);
      if (value.startsWith(' '))
        value = value.slice(1);
      any = true;
      if (field === 'data')
        ev.data.push(value);
      else if (field === 'id')
        ev.id = value;
      else if (field === 'event')
        ev.event = value;
    }
    if (any)
      events.push({ ...ev, data: ev.data.join('\n') });
  }
  return events;
}

function decodeResponse(status, headers, text) {
  const ct = headers['content-type'] || '';
  const r = { status, headers, text, json: undefined, messages: [] };
  if (ct.startsWith('text/event-stream')) {
    for (const ev of parseSSE(text))
      if (ev.data !== '')	// skip priming events
        r.messages.push(JSON.parse(ev.data));
    // the JSON-RPC response is the message with an id and no method
    r.json = r.messages.find((m) => m.method === undefined && 'id' in m);
  } else if (ct.startsWith('application/json') && text !== '') {
    r.json = JSON.parse(text);
    r.messages = [r.json];
  }
  return r;
}

export function mcpHeaders({ session, version = LEGACY_VERSION, extra = {} } = {}) {
  const h = { Accept: MCP_ACCEPT, 'Content-Type': 'application/json' };
  if (session)
    h['Mcp-Session-Id'] = session;
  if (version)
    h['MCP-Protocol-Version'] = version;
  return { ...h, ...extra };
}

let rpcId = 1;
export const nextId = () => rpcId++;

/* POST one JSON-RPC message to /mcp. */
export function mcpPost(port, msg, { session, version, headers, timeout, localAddress } = {}) {
  return httpRequest(port, {
    body: msg, timeout, localAddress,
    headers: mcpHeaders({ session, version, extra: headers }),
  });
}

/* A request (with a fresh id) on session; the decoded answer. */
export function rpc(port, session, method, params, opts = {}) {
  const msg = { jsonrpc: '2.0', id: nextId(), method };
  if (params !== undefined)
    msg.params = params;
  return mcpPost(port, msg, { session, ...opts });
}

/*
 * One tools/call echo on a pooled keep-alive socket of agent (an
 * http.Agent with keepAlive): {status, text, connection}.
 */
export function agentEcho(agent, port, sid, message, timeout = 15000) {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: nextId(), method: 'tools/call',
      params: { name: 'echo', arguments: { message } } });
    const req = http.request({
      host: HOST, port, method: 'POST', path: '/mcp', agent,
      headers: { ...mcpHeaders({ session: sid }), 'Content-Length': Buffer.byteLength(body) },
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode,
        text: Buffer.concat(chunks).toString('utf8'), connection: res.headers.connection }));
      res.on('error', reject);
    });
    req.setTimeout(timeout, () => req.destroy(new Error(`no answer within ${timeout} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/* initialize + notifications/initialized over raw HTTP; the session id. */
export async function openSession(port, { clientName = 'interop-raw' } = {}) {
  const init = await mcpPost(port, {
    jsonrpc: '2.0', id: nextId(), method: 'initialize',
    params: {
      protocolVersion: LEGACY_VERSION, capabilities: {},
      clientInfo: { name: clientName, version: '1.0.0' },
    },
  }, { version: null });
  assert.equal(init.status, 200, `initialize: ${init.text}`);
  const sid = init.headers['mcp-session-id'];
  assert.ok(sid, 'initialize answer carries Mcp-Session-Id');
  assert.equal(init.json.result.protocolVersion, LEGACY_VERSION);
  const n = await mcpPost(port, { jsonrpc: '2.0', method: 'notifications/initialized' },
    { session: sid });
  assert.equal(n.status, 202, `notifications/initialized: ${n.text}`);
  return { sid, init };
}

/* Vmcpd-Worker: "<slot> <pid>" of a response */
export function workerOf(res) {
  const h = res.headers['vmcpd-worker'];
  if (!h)
    return null;
  const [slot, pid] = h.split(' ').map(Number);
  return { slot, pid };
}

// ---------------------------------------------------------------------------
// SDK v1 client

/*
 * A fetch for the SDK transport that opens a new connection per request
 * (node:http, agent: false): no pooled socket to a worker that was
 * killed, and every request may land on any worker.
 */
export function freshFetch(url, init = {}) {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const headers = {};
    new Headers(init.headers).forEach((v, k) => { headers[k] = v; });
    const method = init.method || 'GET';
    const req = http.request({
      host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers,
      agent: false,
    }, (res) => {
      const h = new Headers();
      for (const [k, v] of Object.entries(res.headers))
        h.set(k, Array.isArray(v) ? v.join(', ') : v);
      const nobody = [204, 205, 304].includes(res.statusCode) || method === 'HEAD';
      if (nobody)
        res.resume();
      resolve(new Response(nobody ? null : Readable.toWeb(res), {
        status: res.statusCode, statusText: res.statusMessage, headers: h,
      }));
    });
    const onAbort = () => req.destroy(init.signal.reason ?? new Error('aborted'));
    if (init.signal) {
      if (init.signal.aborted)
        return onAbort();
      init.signal.addEventListener('abort', onAbort, { once: true });
    }
    req.on('error', reject);
    if (init.body !== undefined && init.body !== null)
      req.write(init.body);
    req.end();
  });
}

/*
 * Connect the official SDK v1 client to url.  With sessionId, the
 * transport resumes that session (the SDK then skips initialize).
 */
export async function connectClient(url, { sessionId, name = 'interop-sdk', timeout = 15000,
  capabilities = {}, fresh = false } = {}) {
  const client = new Client({ name, version: '1.0.0' }, { capabilities });
  const topts = {};
  if (sessionId)
    topts.sessionId = sessionId;
  if (fresh)
    topts.fetch = freshFetch;
  const transport = new StreamableHTTPClientTransport(new URL(url), topts);
  const errors = [];
  client.onerror = (e) => errors.push(e);
  await withTimeout(client.connect(transport, { timeout }), timeout + 1000, 'SDK connect');
  return { client, transport, errors };
}

// ---------------------------------------------------------------------------
// vmcpctl

export async function vmcpctl(args, { stateDir, timeout = 15000 } = {}) {
  if (!fs.existsSync(VMCPCTL_BIN))
    return { code: 'ENOENT', signal: null, stdout: '', stderr: `${VMCPCTL_BIN} is not built` };
  const a = stateDir ? ['-d', stateDir, ...args] : args;
  return run(VMCPCTL_BIN, a, {
    timeout,
    env: { ASAN_OPTIONS: process.env.ASAN_OPTIONS || 'detect_leaks=1:abort_on_error=0' },
  });
}

export function exists(p) {
  return fs.existsSync(p);
}
