// Helpers for the aggregation suites (several backends behind one vmcpd),
// on top of harness.mjs: a config with any number of streamable-http and
// stdio backends, the configurable SDK backend (spec-backend.mjs),
// tracked helper processes, live SSE readers for GET and POST streams,
// and /proc look-ups (the bridge's server process, a worker's children).
//
// Every process started here is in its own process group with a
// parent-death SIGKILL, and is SIGKILLed by the after() hook that
// useMulti() registers (and on exit).  Every wait is bounded.
import { spawn } from 'node:child_process';
import { after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';

import {
  Daemon, HOST, ROOT, LEGACY_VERSION, tmpDir, waitFor, withTimeout, useHarness,
  parseSSE, mcpHeaders, httpRequest, nextId, MCP_ACCEPT,
} from './harness.mjs';

export const NODE = process.execPath;
export const EVERYTHING = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
export const MEMORY = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-memory/dist/index.js');
export const FILESYSTEM = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const LOOPBACK = path.join(ROOT, 'tests/lib/loopback.cjs');
const SPEC_BACKEND = path.join(ROOT, 'tests/interop/lib/spec-backend.mjs');
const MODERN_BACKEND = path.join(ROOT, 'tests/interop/lib/modern-backend.mjs');
const FIXTURE = path.join(ROOT, 'tests/conformance/fixture.mjs');
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => fs.existsSync(p));

const procs = new Set();
const streams = new Set();
const servers = new Set();	// in-process test servers (serve())

export class Child {
  constructor(name, cmd, args, { env = {}, cwd = ROOT } = {}) {
    this.name = name;
    this.output = '';
    this.exited = false;
    if (SETPRIV) {
      args = ['--pdeathsig', 'KILL', '--', cmd, ...args];
      cmd = SETPRIV;
    }
    this.child = spawn(cmd, args, {
      cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true,
    });
    this.pid = this.child.pid;
    for (const s of [this.child.stdout, this.child.stderr]) {
      s.setEncoding('utf8');
      s.on('data', (d) => { this.output += d; });
    }
    this.exitPromise = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        this.exited = true;
        resolve({ code, signal });
      });
      this.child.on('error', (e) => {
        this.exited = true;
        this.output += `\n[spawn error: ${e.message}]\n`;
        resolve({ code: null, signal: null });
      });
    });
    procs.add(this);
  }

  kill(sig = 'SIGKILL') {
    try {
      process.kill(-this.pid, sig);
    } catch {
      /* gone */
    }
  }

  async waitExit(ms = 5000) {
    return withTimeout(this.exitPromise, ms, `${this.name} exit`);
  }
}

function killAllChildren() {
  for (const p of procs)
    p.kill();
  for (const s of streams)
    s.close();
}

process.on('exit', killAllChildren);

/* Register the harness's and our after() cleanups. */
export function useMulti() {
  useHarness();
  after(async () => {
    killAllChildren();
    await Promise.all([...procs].map((p) => p.waitExit(5000).catch(() => {})));
    procs.clear();
    for (const s of servers) {
      s.closeAllConnections?.();
      for (const c of s.sockets ?? [])
        c.destroy();
      await new Promise((r) => s.close(r));
    }
    servers.clear();
  });
}

export const MODERN = '2026-07-28';
/* the _meta of a 2026-07-28 request */
export const modernMeta = (caps = {}) => ({
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': caps,
});

/* A 2026-07-28 request over raw HTTP: {status, headers, text, json}. */
export async function modern(port, method, params = {}, headers = {}, id = 1) {
  const r = await httpRequest(port, {
    headers: {
      'Content-Type': 'application/json', Accept: MCP_ACCEPT,
      'MCP-Protocol-Version': MODERN, 'Mcp-Method': method, ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { _meta: modernMeta(), ...params } }),
  });
  let json = null;
  try {
    json = JSON.parse(r.text);
  } catch {
    // SSE or empty: the caller looks at r.text
  }
  return { ...r, json };
}

/* A request's JSON body, or undefined once answered 400 (not JSON). */
export function jsonBody(req, res) {
  return new Promise((resolve) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        res.writeHead(400).end();
        resolve(undefined);
      }
    });
  });
}

/*
 * A bare 2025-11-25 backend (an http server, not listening yet) named
 * name with these tools ([name]): it initializes and lists properly
 * and hands each tools/call to onCall(m, res, json), where json(o)
 * answers o with its session header; other requests get -32601.
 */
/*
 * A raw backend's GET (an SSE stream, kept in streams while open) and
 * DELETE (200); true when req was one of them.
 */
export function rawGetOrDelete(req, res, streams) {
  if (req.method === 'GET') {
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    res.write(': open\n\n');
    streams.add(res);
    res.on('close', () => streams.delete(res));
    return true;
  }
  if (req.method === 'DELETE') {
    res.writeHead(200).end();
    return true;
  }
  return false;
}

export function rawBackend(name, toolNames, onCall) {
  const tools = toolNames.map((t) => ({ name: t, inputSchema: { type: 'object' } }));
  return http.createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    jsonBody(req, res).then((m) => {
      if (m === undefined)
        return undefined;
      const json = (o) => res.writeHead(200, { 'Content-Type': 'application/json',
        'Mcp-Session-Id': `${name}-session-1` }).end(JSON.stringify(o));
      if (m.id === undefined)
        return res.writeHead(202).end();
      switch (m.method) {
      case 'initialize':
        return json({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: LEGACY_VERSION,
          capabilities: { tools: {} }, serverInfo: { name, version: '1' } } });
      case 'tools/list':
        return json({ jsonrpc: '2.0', id: m.id, result: { tools } });
      case 'tools/call':
        return onCall(m, res, json);
      default:
        return json({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'no' } });
      }
    });
  });
}

/*
 * An in-process test server (http or net) on a free loopback port,
 * closed with its connections by useMulti()'s cleanup; the port.  A
 * net server's connections are tracked in srv.sockets.
 */
export function serve(srv) {
  servers.add(srv);
  if (!srv.closeAllConnections && !srv.sockets) {
    srv.sockets = new Set();
    srv.on('connection', (c) => {
      srv.sockets.add(c);
      c.on('close', () => srv.sockets.delete(c));
    });
  }
  return new Promise((resolve) => srv.listen(0, HOST, () => resolve(srv.address().port)));
}

/* An SDK backend script configured by SPEC, on the port it prints. */
async function startSpecScript(kind, script, spec, timeout) {
  const p = new Child(`${kind}-${spec.label ?? ''}`, NODE, [script],
    { env: { SPEC: JSON.stringify(spec) } });
  const port = await waitFor(`${kind} backend ${spec.label} to listen`, () => {
    if (p.exited)
      throw new Error(`exited: ${p.output.slice(-2000)}`);
    const m = /^listening (\d+)$/m.exec(p.output);
    return m ? Number(m[1]) : null;
  }, { timeout });
  p.port = port;
  p.url = `http://${HOST}:${port}/mcp`;
  p.stats = async () => (await httpRequest(port, { method: 'GET', path: '/stats', timeout: 5000 })).json;
  return p;
}

/* The configurable SDK backend (spec-backend.mjs) on a free port. */
export function startSpec(spec, { timeout = 20000 } = {}) {
  return startSpecScript('spec', SPEC_BACKEND, spec, timeout);
}

/* The Modern (2026-07-28, SDK v2) backend (modern-backend.mjs). */
export function startModern(spec, { timeout = 20000 } = {}) {
  return startSpecScript('modern', MODERN_BACKEND, spec, timeout);
}

/* The conformance fixture (tests/conformance/fixture.mjs), which serves
 * both revisions as the SDK's servers do, on a free port. */
export async function startFixture({ timeout = 20000 } = {}) {
  const p = new Child('fixture', NODE, [FIXTURE, '0']);
  p.port = await waitFor('the conformance fixture to listen', () => {
    if (p.exited)
      throw new Error(`exited: ${p.output.slice(-2000)}`);
    const m = /^PORT (\d+)$/m.exec(p.output);
    return m ? Number(m[1]) : null;
  }, { timeout });
  p.url = `http://${HOST}:${p.port}/mcp`;
  return p;
}

/* server-everything over Streamable HTTP, on a free port. */
export async function startEverythingHttp({ timeout = 30000, env = {} } = {}) {
  for (let attempt = 0; ; attempt++) {
    const port = await freeLoopbackPort();
    const p = new Child('everything-http', NODE, ['--require', LOOPBACK, EVERYTHING, 'streamableHttp'],
      { env: { ...env, PORT: String(port) } });
    p.port = port;
    p.url = `http://${HOST}:${port}/mcp`;
    try {
      await waitFor('server-everything to listen', async () => {
        if (p.exited)
          throw new Error(`exited: ${p.output.slice(-2000)}`);
        return (await httpRequest(port, { method: 'GET', path: '/', timeout: 1000 })
          .then(() => true, () => false));
      }, { timeout, interval: 100 });
      return p;
    } catch (e) {
      p.kill();
      if (attempt === 2 || !/EADDRINUSE/.test(p.output))
        throw e;
    }
  }
}

function freeLoopbackPort() {
  return new Promise((resolve, reject) => {
    const srv = http.createServer();
    srv.on('error', reject);
    srv.listen(0, HOST, () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

// ---------------------------------------------------------------------------
// config

const q = (s) => JSON.stringify(String(s));	// a YAML double-quoted scalar

/* The YAML lines of one backend entry. */
export function backendYaml(b) {
  const l = [`  - name: ${q(b.name)}`];
  if (b.era)
    l.push(`    era: ${b.era}`);
  if (b.url) {
    l.push(`    transport: ${b.transport ?? 'streamable-http'}`, `    url: ${q(b.url)}`);
    return l;
  }
  l.push('    transport: stdio', `    command: ${q(b.command ?? NODE)}`);
  l.push(`    args: [${(b.args ?? []).map(q).join(', ')}]`);
  if (b.env && Object.keys(b.env).length) {
    l.push('    env:');
    for (const [k, v] of Object.entries(b.env))
      l.push(`      ${k}: ${q(v)}`);
  }
  if (b.cwd)
    l.push(`    cwd: ${q(b.cwd)}`);
  return l;
}

/*
 * A whole config.  backends: [{name, url} | {name, command, args, env,
 * cwd}], each with an optional era (auto, legacy, modern); aggregation, operational, http, sessions: YAML text of those
 * blocks (without the key line), indented by two.
 */
export function multiConfig({ portFile, stateDir, workers = 2, workerHeader = true,
  drainTimeout = '2s', backends, aggregation, operational, http: h, sessions, extra = '' }) {
  const l = ['daemon:', `  listen: ${HOST}:0`, `  portFile: ${q(portFile)}`,
    `  workers: ${workers}`, `  stateDir: ${q(stateDir)}`, `  workerHeader: ${workerHeader}`,
    `  drainTimeout: ${drainTimeout}`];
  const block = (key, text) => {
    if (text)
      l.push(`${key}:`, ...text.trim().split('\n').map((s) => `  ${s}`));
  };
  block('http', h);
  block('sessions', sessions);
  l.push('backends:');
  for (const b of backends)
    l.push(...backendYaml(b));
  block('aggregation', aggregation);
  block('operational', operational);
  return l.join('\n') + '\n' + extra;
}

/* Write the config under a fresh temp dir and start vmcpd on it. */
export async function startMulti(opts, { timeout = 30000 } = {}) {
  const dir = await tmpDir('vmcpd-multi-');
  const d = new Daemon(dir, path.join(dir, 'vmcpd.yaml'), { workers: opts.workers ?? 2, env: opts.env });
  d.multiOpts = opts;
  await d.writeConfig(multiConfig({ portFile: d.portFile, stateDir: d.stateDir, ...opts }));
  await d.start({ timeout });
  return d;
}

/* Every item of a paged SDK list: listAll(client, 'listTools', 'tools'). */
export async function listAll(client, fn, field, { maxPages = 20 } = {}) {
  const items = [];
  let cursor;
  for (let i = 0; i < maxPages; i++) {
    const r = await client[fn](cursor === undefined ? undefined : { cursor });
    items.push(...r[field]);
    if (r.nextCursor === undefined)
      return items;
    assert.equal(typeof r.nextCursor, 'string', 'nextCursor is a string');
    cursor = r.nextCursor;
  }
  assert.fail(`${fn}: more than ${maxPages} pages`);
}

/* The text of a tool result's first content item. */
export function textOf(result) {
  assert.ok(Array.isArray(result?.content), `a tool result: ${JSON.stringify(result)}`);
  return result.content[0]?.text;
}

/* The McpError a promise rejects with (fails if it resolves). */
export async function rpcError(p) {
  try {
    const r = await p;
    assert.fail(`expected a JSON-RPC error, got ${JSON.stringify(r).slice(0, 500)}`);
  } catch (e) {
    if (e instanceof assert.AssertionError)
      throw e;
    assert.equal(typeof e.code, 'number', `expected a JSON-RPC error, got ${e}`);
    return e;
  }
}

/* The lines the daemon logged with priority error. */
export function errorLines(daemon) {
  return daemon.proc.output.split('\n').filter((s) => /\]: error: /.test(s));
}

// ---------------------------------------------------------------------------
// live HTTP streams

/*
 * An HTTP request on a new connection whose answer is read as it
 * arrives.  Resolves once the status line is in: {status, headers,
 * events (parsed SSE events so far), comments (SSE comment lines),
 * text, ended, next(pred, ms), close()}.
 */
export function openStream(port, { method = 'GET', path: p = '/mcp', headers = {}, body,
  timeout = 15000 } = {}) {
  return new Promise((resolve, reject) => {
    const h = { ...headers };
    let data = body;
    if (data !== undefined && typeof data !== 'string')
      data = JSON.stringify(data);
    if (data !== undefined)
      h['Content-Length'] = Buffer.byteLength(data);
    const s = {
      status: 0, headers: {}, events: [], comments: [], text: '', ended: false,
      waiters: new Set(),
    };
    let pending = '';
    const wake = () => { for (const w of s.waiters) w(); };
    const req = http.request({ host: HOST, port, method, path: p, headers: h, agent: false },
      (res) => {
        clearTimeout(timer);
        s.status = res.statusCode;
        s.headers = res.headers;
        s.res = res;
        res.setEncoding('utf8');
        res.on('data', (d) => {
          s.text += d;
          pending += d.replace(/\r\n?/g, '\n');
          let i;
          while ((i = pending.indexOf('\n\n')) !== -1) {
            const block = pending.slice(0, i);
            pending = pending.slice(i + 2);
            for (const line of block.split('\n'))
              if (line.startsWith(':'))
                s.comments.push({ at: Date.now(), text: line });
            for (const ev of parseSSE(block + '\n\n')) {
              ev.at = Date.now();
              if (ev.data !== '') {
                try {
                  ev.msg = JSON.parse(ev.data);
                } catch {
                  ev.msg = undefined;
                }
              }
              s.events.push(ev);
            }
          }
          wake();
        });
        const done = () => {
          s.ended = true;
          streams.delete(s);
          wake();
        };
        res.on('end', done);
        res.on('close', done);
        res.on('error', done);
        resolve(s);
      });
    const timer = setTimeout(() => req.destroy(new Error(`${method} ${p}: no status within ${timeout} ms`)),
      timeout);
    req.on('error', (e) => {
      clearTimeout(timer);
      s.ended = true;
      streams.delete(s);
      wake();
      if (!s.status)
        reject(e);
    });
    s.close = () => {
      req.destroy();
      s.ended = true;
      streams.delete(s);
    };
    /* Wait until pred(s) is truthy (checked on every chunk). */
    s.until = (what, pred, ms = 10000) => new Promise((res2, rej2) => {
      const check = () => {
        let v;
        try {
          v = pred(s);
        } catch (e) {
          fin();
          rej2(e);
          return;
        }
        if (v) {
          fin();
          res2(v);
        } else if (s.ended) {
          fin();
          rej2(new Error(`${what}: stream ended first; got ${s.text.slice(-1500)}`));
        }
      };
      const t = setTimeout(() => {
        fin();
        rej2(new Error(`${what}: not within ${ms} ms; got ${s.text.slice(-1500)}`));
      }, ms);
      const fin = () => {
        clearTimeout(t);
        s.waiters.delete(check);
      };
      s.waiters.add(check);
      check();
    });
    /* the messages (parsed data) so far, optionally of one method */
    s.messages = (method2) => s.events.filter((e) => e.msg !== undefined &&
      (method2 === undefined || e.msg.method === method2)).map((e) => e.msg);
    streams.add(s);
    if (data !== undefined)
      req.write(data);
    req.end();
  });
}

/* The session's standalone GET stream. */
export function openGet(port, sid, { lastEventId, headers = {}, timeout } = {}) {
  const h = { Accept: 'text/event-stream', 'Mcp-Session-Id': sid,
    'MCP-Protocol-Version': LEGACY_VERSION, ...headers };
  if (lastEventId !== undefined)
    h['Last-Event-ID'] = String(lastEventId);
  return openStream(port, { method: 'GET', headers: h, timeout });
}

/* A POST of one request read live (its answer may be an SSE stream). */
export function postStream(port, sid, method, params, { id = nextId(), timeout } = {}) {
  const msg = { jsonrpc: '2.0', id, method };
  if (params !== undefined)
    msg.params = params;
  return openStream(port, { method: 'POST', headers: mcpHeaders({ session: sid }), body: msg, timeout });
}

/* initialize with capabilities + initialized, raw; the session id. */
export async function openSessionCaps(port, capabilities = {}, { clientName = 'interop-multi' } = {}) {
  const init = await httpRequest(port, {
    headers: mcpHeaders({ version: null }),
    body: {
      jsonrpc: '2.0', id: nextId(), method: 'initialize',
      params: { protocolVersion: LEGACY_VERSION, capabilities, clientInfo: { name: clientName, version: '1.0.0' } },
    },
    timeout: 30000,
  });
  assert.equal(init.status, 200, `initialize: ${init.text}`);
  const sid = init.headers['mcp-session-id'];
  assert.ok(sid, 'Mcp-Session-Id');
  const n = await httpRequest(port, {
    headers: mcpHeaders({ session: sid }),
    body: { jsonrpc: '2.0', method: 'notifications/initialized' },
  });
  assert.equal(n.status, 202, n.text);
  return { sid, init };
}

// ---------------------------------------------------------------------------
// /proc

export function procChildren(ppid) {
  const out = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d))
      continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const r = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, r);
      const f = stat.slice(r + 2).split(' ');
      if (Number(f[1]) === ppid && f[0] !== 'Z')
        out.push({ pid: Number(d), comm });
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

export function cmdline(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

export function alive(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/*
 * A raw request whose connection the worker stops watching once it is
 * in: the request and what follows it fill the connection's first
 * buffer (worker/http/httpd.c, HTTPD_IN_MIN) and one byte more waits behind,
 * so the worker pauses its reads until the reply is out.  A close()
 * then goes unnoticed until a write finds the connection reset: the
 * way to close a stream between two writes of one loop turn.  Resolves
 * once `until` is in what came back, or without one once it is sent
 * (the worker pauses before it sees a close: the byte is ahead of it).
 */
const HTTPD_IN_MIN = 8192;

export function openUnwatched(port, { method = 'GET', headers = {}, body = '', until,
  timeout = 15000 }) {
  return new Promise((resolve, reject) => {
    const head = `${method} /mcp HTTP/1.1\r\nHost: ${HOST}:${port}\r\n` +
      Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('') +
      (body !== '' ? `Content-Length: ${Buffer.byteLength(body)}\r\n` : '') + '\r\n';
    const req = Buffer.from(head + body);
    const fill = Math.max(0, HTTPD_IN_MIN - req.length) + 1;
    const s = { text: '', close: () => sock.destroy() };
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`openUnwatched: no ${until} within ${timeout} ms: ${s.text}`));
    }, timeout);
    const sock = net.connect(port, HOST, () =>
      sock.write(Buffer.concat([req, Buffer.alloc(fill, 'x')]), () => {
        if (until === undefined) {
          clearTimeout(timer);
          resolve(s);
        }
      }));
    sock.setEncoding('utf8');
    sock.on('data', (d) => {
      s.text += d;
      if (until !== undefined && s.text.includes(until)) {
        clearTimeout(timer);
        resolve(s);
      }
    });
    sock.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}
