// The front's own HTTP/1.1 server (worker/http/httpd.c) on raw sockets:
// pipelining, chunked request bodies, Expect: 100-continue, HTTP/1.0,
// HEAD, every framing refusal (its status, a JSON-RPC error body,
// Connection: close, then a clean close), lingering close, a request
// sent byte by byte, a vanishing SSE client, idle connections timed
// out; and no worker died on the way.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import net from 'node:net';
import {
  useHarness, guarded, startEverything, startDaemon, openSession, httpRequest, parseSSE,
  sleep, waitFor, HOST, MCP_ACCEPT, LEGACY_VERSION, nextId,
} from './lib/harness.mjs';

useHarness();

const TIMEOUT_MS = 2000;	// http.timeout below

/* A raw connection that keeps every byte read and how it ended. */
function connect(port) {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: HOST, port });
    const c = { s, data: Buffer.alloc(0), ended: false, error: null, closed: false };
    s.setNoDelay(true);
    s.on('data', (d) => { c.data = Buffer.concat([c.data, d]); });
    s.on('end', () => { c.ended = true; });
    s.on('error', (e) => { c.error = e; });
    s.on('close', () => { c.closed = true; });
    s.once('connect', () => resolve(c));
    s.once('error', reject);
  });
}

/*
 * The whole responses in buf: {status, headers, body}; heads[i] says the
 * i-th final answer is to a HEAD (no body).  A body without length ends
 * at close (done is then false until closed).
 */
function responses(buf, { heads = [], closed = false } = {}) {
  const out = [];
  let off = 0;
  for (;;) {
    const end = buf.indexOf('\r\n\r\n', off);
    if (end === -1)
      return out;
    const lines = buf.subarray(off, end).toString('latin1').split('\r\n');
    const m = /^HTTP\/1\.1 (\d{3}) /.exec(lines[0]);
    assert.ok(m, `status line: ${lines[0]}`);
    const r = { status: Number(m[1]), headers: {}, body: '' };
    for (const l of lines.slice(1)) {
      const i = l.indexOf(':');
      r.headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
    }
    let p = end + 4;
    const te = r.headers['transfer-encoding'], cl = r.headers['content-length'];
    if (r.status >= 200 && !heads[out.filter((x) => x.status >= 200).length]) {
      if (te === 'chunked') {
        const parts = [];
        for (;;) {
          const lf = buf.indexOf('\r\n', p);
          if (lf === -1)
            return out;
          const n = parseInt(buf.subarray(p, lf).toString('latin1'), 16);
          if (buf.length < lf + 2 + n + 2)
            return out;
          parts.push(buf.subarray(lf + 2, lf + 2 + n));
          p = lf + 2 + n + 2;
          if (n === 0)
            break;
        }
        r.body = Buffer.concat(parts).toString('utf8');
      } else if (cl !== undefined) {
        if (buf.length < p + Number(cl))
          return out;
        r.body = buf.subarray(p, p + Number(cl)).toString('utf8');
        p += Number(cl);
      } else {
        if (!closed)
          return out;
        r.body = buf.subarray(p).toString('utf8');
        p = buf.length;
      }
    }
    out.push(r);
    off = p;
  }
}

/* Wait until c holds n final answers (and, with end, the server's FIN). */
async function answers(c, n, { heads, end = false, timeout = 10000 } = {}) {
  let got;
  await waitFor(`${n} answer(s)${end ? ' and a close' : ''}`, () => {
    got = responses(c.data, { heads, closed: c.ended }).filter((r) => r.status >= 200);
    if (c.error)
      throw new Error(`socket error ${c.error.code}: read ${c.data.toString('latin1')}`);
    return got.length >= n && (!end || c.ended);
  }, { timeout, interval: 10 });
  return got;
}

/* The JSON-RPC message a POST /mcp answer carries (JSON or SSE). */
function message(r) {
  if ((r.headers['content-type'] || '').startsWith('text/event-stream'))
    return parseSSE(r.body).map((e) => e.data).filter(Boolean).map((d) => JSON.parse(d))
      .find((m) => 'id' in m && m.method === undefined);
  return JSON.parse(r.body);
}

describe('httpd: the front HTTP/1.1 server on raw sockets', () => {
  let everything, daemon, port, sid, pids;

  const host = () => `Host: ${HOST}:${port}\r\n`;
  const post = (body, extra = '') => {
    const b = Buffer.from(JSON.stringify(body));
    return `POST /mcp HTTP/1.1\r\n${host()}Accept: ${MCP_ACCEPT}\r\n` +
      `Content-Type: application/json\r\nMcp-Session-Id: ${sid}\r\n` +
      `MCP-Protocol-Version: ${LEGACY_VERSION}\r\nContent-Length: ${b.length}\r\n${extra}\r\n${b}`;
  };
  const echo = (text) => ({ jsonrpc: '2.0', id: nextId(), method: 'tools/call',
    params: { name: 'echo', arguments: { message: text } } });
  const echoed = (r, text) => {
    assert.equal(r.status, 200, r.body);
    assert.equal(message(r).result.content[0].text, `Echo: ${text}`);
  };

  before(async () => {
    everything = await startEverything();
    daemon = await startDaemon({ backendUrl: everything.url,
      extra: `http:\n  maxHeaderSize: 4KiB\n  maxBodySize: 8KiB\n  timeout: ${TIMEOUT_MS}ms\n` });
    port = daemon.port;
    pids = await daemon.workerPids();
    ({ sid } = await openSession(port));
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
  });

  test('requests pipelined in one write: answers in order', guarded(async () => {
    const c = await connect(port);
    c.s.write(post(echo('first')) + post(echo('second')) +
      `GET /healthz HTTP/1.1\r\n${host()}\r\n` + post(echo('third')));
    const [a, b, h, d] = await answers(c, 4);
    echoed(a, 'first');
    echoed(b, 'second');
    assert.equal(h.status, 200);
    assert.equal(JSON.parse(h.body).status, 'ok');
    echoed(d, 'third');
    assert.equal(c.ended, false, 'kept alive');
    c.s.destroy();
  }));

  test('a chunked request body: several chunks, an extension, a trailer, a request behind', guarded(async () => {
    const c = await connect(port);
    const body = JSON.stringify(echo('in chunks'));
    const parts = [body.slice(0, 7), body.slice(7, 30), body.slice(30)];
    c.s.write(`POST /mcp HTTP/1.1\r\n${host()}Accept: ${MCP_ACCEPT}\r\n` +
      `Content-Type: application/json\r\nMcp-Session-Id: ${sid}\r\n` +
      `MCP-Protocol-Version: ${LEGACY_VERSION}\r\nTransfer-Encoding: chunked\r\n\r\n`);
    for (const [i, p] of parts.entries()) {
      c.s.write(`${Buffer.byteLength(p).toString(16)}${i === 1 ? ';ext=1' : ''}\r\n${p}\r\n`);
      await sleep(20);
    }
    // the last chunk, the trailer and a pipelined request in one write
    c.s.write(`0\r\nX-Trailer: done\r\n\r\nGET /healthz HTTP/1.1\r\n${host()}\r\n`);
    const [r, h] = await answers(c, 2);
    echoed(r, 'in chunks');
    assert.equal(JSON.parse(h.body).status, 'ok');
    c.s.destroy();
  }));

  test('Expect: 100-continue gets 100 Continue before the answer', guarded(async () => {
    const c = await connect(port);
    const req = post(echo('continued'), 'Expect: 100-continue\r\n');
    const cut = req.indexOf('\r\n\r\n') + 4;
    c.s.write(req.slice(0, cut));
    await waitFor('100 Continue', () => c.data.length > 0);
    assert.equal(c.data.toString('latin1'), 'HTTP/1.1 100 Continue\r\n\r\n');
    c.s.write(req.slice(cut));
    echoed((await answers(c, 1))[0], 'continued');
    c.s.destroy();
  }));

  test('HTTP/1.0: closed after the answer unless keep-alive', guarded(async () => {
    const c = await connect(port);
    c.s.write(`GET /healthz HTTP/1.0\r\n${host()}\r\n`);
    const [r] = await answers(c, 1, { end: true });
    assert.equal(r.status, 200);
    assert.equal(r.headers.connection, 'close');
    const k = await connect(port);
    for (let i = 0; i < 2; i++) {
      k.s.write(`GET /healthz HTTP/1.0\r\n${host()}Connection: keep-alive\r\n\r\n`);
      const got = await answers(k, i + 1);
      assert.equal(got[i].status, 200);
      assert.equal(got[i].headers.connection, 'keep-alive');
      await sleep(100);
      assert.equal(k.ended, false, 'still open');
    }
    k.s.destroy();
  }));

  test('HEAD /healthz: a Content-Length and no body', guarded(async () => {
    const c = await connect(port);
    c.s.write(`HEAD /healthz HTTP/1.1\r\n${host()}\r\n`);
    const [r] = await answers(c, 1, { heads: [true] });
    assert.equal(r.status, 200);
    assert.ok(Number(r.headers['content-length']) > 0);
    // the next answer starts right after the head: no body bytes came
    c.s.write(`GET /healthz HTTP/1.1\r\n${host()}\r\n`);
    const got = await answers(c, 2, { heads: [true] });
    assert.equal(got[1].body.length, Number(r.headers['content-length']));
    c.s.destroy();
  }));

  const refusals = [
    ['CL and TE', 400, 'POST /mcp HTTP/1.1\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}'],
    ['differing CLs', 400, 'POST /mcp HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}'],
    ['TE gzip', 501, 'POST /mcp HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n'],
    ['TE on HTTP/1.0', 400, 'POST /mcp HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
    ['space before colon', 400, 'GET /healthz HTTP/1.1\r\nHost : x\r\n\r\n'],
    ['obs-fold', 400, 'GET /healthz HTTP/1.1\r\nX-A: a\r\n b\r\n\r\n'],
    ['bare CR', 400, 'GET /healthz HTTP/1.1\r\nX-A: a\rb\r\n\r\n'],
    ['control character', 400, 'GET /healthz HTTP/1.1\r\nX-A: a\x01b\r\n\r\n'],
    ['65 headers', 431, 'GET /healthz HTTP/1.1\r\n' +
      Array.from({ length: 65 }, (_, i) => `X-${i}: v\r\n`).join('') + '\r\n'],
    ['head over maxHeaderSize', 431, `GET /healthz HTTP/1.1\r\nX-Big: ${'z'.repeat(5000)}\r\n\r\n`],
    ['CL over maxBodySize', 413, 'POST /mcp HTTP/1.1\r\nContent-Length: 9000\r\n\r\n{}'],
    ['Expect other than 100-continue', 417, 'POST /mcp HTTP/1.1\r\nExpect: 200-ok\r\n\r\n'],
    ['HTTP/2.0', 505, 'GET /healthz HTTP/2.0\r\n\r\n'],
    ['a target not in origin-form', 400, 'GET healthz HTTP/1.1\r\n\r\n'],
    ['bare LF in chunk framing', 400, 'POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\n{}\r\n0\r\n\r\n'],
    ['chunk over maxBodySize', 413, 'POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2329\r\n'],
    ['HTTP/1.1 without Host', 400, 'GET /healthz HTTP/1.1\r\n\r\n'],
    ['two Host headers', 400, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: 127.0.0.1\r\n\r\n'],
  ];

  test('framing refusals: status, JSON-RPC error, Connection: close, clean close', guarded(async () => {
    for (const [what, status, raw] of refusals) {
      const c = await connect(port);
      c.s.write(Buffer.from(raw, 'latin1'));
      const [r] = await answers(c, 1, { end: true }).catch((e) => assert.fail(`${what}: ${e.message}`));
      assert.equal(r.status, status, `${what}: ${r.body}`);
      assert.equal(r.headers.connection, 'close', what);
      assert.match(r.headers['content-type'], /^application\/json/, what);
      const j = JSON.parse(r.body);
      assert.equal(j.jsonrpc, '2.0');
      assert.equal(j.id, null);
      assert.equal(j.error.code, -32600, what);
      assert.ok(j.error.message.length > 0);
      await waitFor(`${what}: closed`, () => c.closed);
      assert.equal(c.error, null, `${what}: ${c.error?.code}`);
    }
  }));

  test('413 for a large body sent in full is read (lingering close)', guarded(async () => {
    for (const size of [64 * 1024, 1024 * 1024]) {
      const c = await connect(port);
      c.s.write(`POST /mcp HTTP/1.1\r\n${host()}Content-Type: application/json\r\n` +
        `Content-Length: ${size}\r\n\r\n`);
      c.s.write(Buffer.alloc(size, 'x'));
      const [r] = await answers(c, 1, { end: true });
      assert.equal(r.status, 413, r.body);
      assert.equal(JSON.parse(r.body).error.code, -32600);
      await waitFor('closed', () => c.closed);
      assert.equal(c.error, null, `socket error ${c.error?.code}`);
    }
  }));

  test('a request written byte by byte', guarded(async () => {
    const c = await connect(port);
    const req = Buffer.from(post(echo('slowly')));
    for (let i = 0; i < req.length; i++) {
      c.s.write(req.subarray(i, i + 1));
      await sleep(1);
    }
    echoed((await answers(c, 1))[0], 'slowly');
    c.s.destroy();
  }));

  const getStream = (minor) => `GET /mcp HTTP/1.${minor}\r\n${host()}Accept: text/event-stream\r\n` +
    `Mcp-Session-Id: ${sid}\r\nMCP-Protocol-Version: ${LEGACY_VERSION}\r\n\r\n`;

  test('SSE GET streams whose client vanishes; HTTP/1.0 streams end by close', guarded(async () => {
    for (const [minor, vanish] of [[1, 'destroy'], [1, 'resetAndDestroy'], [0, 'destroy']]) {
      // the session's one GET stream: opened once the last one is noticed gone
      const c = await waitFor('a GET stream', async () => {
        const g = await connect(port);
        g.s.write(getStream(minor));
        await waitFor('its head', () => c2head(g));
        if (c2head(g).startsWith('HTTP/1.1 200 '))
          return g;
        g.s.destroy();
        return null;
      });
      const head = c2head(c);
      assert.match(head, /\r\ncontent-type: text\/event-stream/i);
      if (minor === 0) {
        assert.doesNotMatch(head, /\r\n(content-length|transfer-encoding):/i);
        assert.match(head, /\r\nconnection: close/i);
        await waitFor('the priming event', () => /\nid: \d+\ndata: \n\n/.test(c.data.toString()));
      } else {
        assert.match(head, /\r\ntransfer-encoding: chunked/i);
        await waitFor('the priming event', () => /id: \d+/.test(c.data.toString()));
      }
      c.s[vanish]();
    }
    assert.equal((await httpRequest(port, { method: 'GET', path: '/healthz' })).status, 200);
  }));

  test('idle and slow keep-alive connections are closed after http.timeout (slow: 408)', guarded(async () => {
    const conns = await Promise.all(Array.from({ length: 30 }, () => connect(port)));
    conns.forEach((c, i) => {
      if (i % 3 === 1)
        c.s.write(`GET /healthz HTTP/1.1\r\n${host()}\r\n`);
      else if (i % 3 === 2)
        c.s.write('GET /healthz HTTP/1.1\r\nX-Slow:');
    });
    await sleep(TIMEOUT_MS / 2);
    assert.ok(conns.every((c) => !c.ended), 'none closed early');
    await waitFor('every connection closed', () => conns.every((c) => c.closed),
      { timeout: TIMEOUT_MS * 3 });
    conns.forEach((c, i) => {
      assert.equal(c.error, null, `connection ${i}: ${c.error?.code}`);
      const rs = responses(c.data);
      assert.equal(rs.length, i % 3 === 0 ? 0 : 1, `connection ${i}`);
      // a request that stalled half-way is told so
      if (i % 3 === 2)
        assert.equal(rs[0].status, 408, `connection ${i}`);
    });
  }));

  test('after all that, no worker died', guarded(async () => {
    assert.deepEqual(await daemon.workerPids(), pids);
    const c = await connect(port);
    c.s.write(post(echo('still here')));
    echoed((await answers(c, 1))[0], 'still here');
    c.s.destroy();
    assert.doesNotMatch(daemon.stderr, /killed by signal|exited with status/);
  }));
});

/* the response head c holds so far, or '' */
function c2head(c) {
  const end = c.data.indexOf('\r\n\r\n');
  return end === -1 ? '' : c.data.subarray(0, end + 4).toString('latin1');
}

/* CPU ticks (user + system) a process has used so far */
async function cpuTicks(pid) {
  const st = await fsp.readFile(`/proc/${pid}/stat`, 'utf8');
  const f = st.slice(st.lastIndexOf(') ') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
}

describe('httpd: out of file descriptors', () => {
  let everything, daemon;

  before(async () => {
    everything = await startEverything();
    // one worker with few descriptors: a handful of clients exhaust them
    daemon = await startDaemon({ backendUrl: everything.url, workers: 1,
      wrap: ['prlimit', '--nofile=64', '--'] });
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
  });

  test('accepting pauses instead of spinning, and resumes', guarded(async () => {
    const [worker] = await daemon.workerPids();
    const conns = [];
    for (let i = 0; i < 100; i++)
      conns.push(await connect(daemon.port));
    await waitFor('accept failing', () => /accept: Too many open files/.test(daemon.stderr));
    const t0 = await cpuTicks(worker);
    await sleep(1000);
    const used = await cpuTicks(worker) - t0;
    // a listener watched while accept(2) fails would burn the whole second
    assert.ok(used < 30, `worker used ${used} ticks in 1 s with no descriptors`);
    conns.forEach((c) => c.s.destroy());
    await waitFor('serving again', async () =>
      (await httpRequest(daemon.port, { method: 'GET', path: '/healthz', timeout: 2000 })
        .catch(() => ({ status: 0 }))).status === 200);
    assert.deepEqual(await daemon.workerPids(), [worker]);
  }));
});
