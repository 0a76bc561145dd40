// Reloads lose no request (issue 10, item 2): keep-alive clients (a
// node:http Agent with keepAlive, the official SDK client on its default
// fetch) call tools in loops while vmcpd is sent SIGHUP every second for
// 10 s: zero socket errors, zero failed calls.  And on one raw
// connection: a draining worker serves a request sent after the drain
// began, says "Connection: close" and closes after it; an idle one is
// closed only at its idle time (http.timeout), then the worker exits.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import {
  useHarness, guarded, startEverything, startDaemon, connectClient, openSession,
  sleep, waitFor, HOST, agentEcho,
} from './lib/harness.mjs';
import { alive } from './lib/multi.mjs';

useHarness();

const RELOADS = 10;
const AGENT_LOOPS = 4;
const SDK_LOOPS = 2;

describe('SIGHUP every second under keep-alive load', () => {
  let everything, daemon, sid, agent, sdks = [];

  before(async () => {
    everything = await startEverything();
    // drainTimeout well past the run: only the drain logic may close
    daemon = await startDaemon({ backendUrl: everything.url, workers: 2, drainTimeout: '20s' });
    ({ sid } = await openSession(daemon.port));
    agent = new http.Agent({ keepAlive: true, maxSockets: AGENT_LOOPS });
    for (let i = 0; i < SDK_LOOPS; i++)
      sdks.push(await connectClient(daemon.url, { name: `reload-sdk-${i}` }));
  });

  after(async () => {
    agent?.destroy();
    for (const s of sdks)
      await s.client.close().catch(() => {});
  });

  test('keep-alive clients: zero socket errors, zero failed requests', guarded(async () => {
    const first = await daemon.workerPids();
    const stats = { agent: 0, sdk: 0, closes: 0, failures: [] };
    let running = true;

    const agentLoop = async (n) => {
      for (let i = 0; running; i++) {
        const msg = `agent ${n} ${i}`;
        try {
          const r = await agentEcho(agent, daemon.port, sid, msg, 15000);
          if (r.status !== 200 || !r.text.includes(`Echo: ${msg}`))
            stats.failures.push(`${msg}: HTTP ${r.status} ${r.text.slice(0, 200)}`);
          else
            stats.agent++;
          if (r.connection === 'close')
            stats.closes++;
        } catch (e) {
          stats.failures.push(`${msg}: ${e.code ?? ''} ${e.message}`);
        }
      }
    };
    const sdkLoop = async (s, n) => {
      for (let i = 0; running; i++) {
        const msg = `sdk ${n} ${i}`;
        try {
          const r = await s.client.callTool({ name: 'echo', arguments: { message: msg } },
            undefined, { timeout: 15000 });
          if (r.content?.[0]?.text !== `Echo: ${msg}`)
            stats.failures.push(`${msg}: ${JSON.stringify(r).slice(0, 200)}`);
          else
            stats.sdk++;
        } catch (e) {
          stats.failures.push(`${msg}: ${e.code ?? ''} ${e.message}`);
        }
      }
    };

    const loops = [
      ...Array.from({ length: AGENT_LOOPS }, (_, n) => agentLoop(n)),
      ...sdks.map((s, n) => sdkLoop(s, n)),
    ];
    for (let k = 0; k < RELOADS; k++) {
      await sleep(1000);
      process.kill(daemon.pid, 'SIGHUP');
    }
    await sleep(1000);
    running = false;
    await Promise.all(loops);

    assert.deepEqual(stats.failures, [], `${stats.failures.length} failed requests`);
    // the loops really ran, on connections the reloads closed
    assert.ok(stats.agent >= 20 && stats.sdk >= 10,
      `calls done: agent ${stats.agent}, sdk ${stats.sdk}`);
    assert.ok(stats.closes > 0, 'some replies said Connection: close (draining workers)');
    const now = await daemon.workerPids();
    assert.ok(now.length >= 2 && first.every((p) => !now.includes(p)),
      `the first workers are gone: ${first} -> ${now}`);
    assert.doesNotMatch(daemon.stderr, /killed by signal|exited with status [^0]/);
  }));
});

/* a raw keep-alive connection: what it read, whether it closed */
function rawConnect(port) {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: HOST, port });
    const c = { s, data: '', closed: false, error: null };
    s.on('data', (d) => { c.data += d.toString('latin1'); });
    s.on('error', (e) => { c.error = e; });
    s.on('close', () => { c.closed = true; });
    s.once('connect', () => resolve(c));
    s.once('error', reject);
  });
}

describe('a draining worker and one keep-alive connection', () => {
  const IDLE_MS = 3000;
  let everything, daemon;

  before(async () => {
    everything = await startEverything();
    daemon = await startDaemon({ backendUrl: everything.url, workers: 1, drainTimeout: '20s',
      extra: `http:\n  timeout: ${IDLE_MS}ms\n` });
  });

  /* a keep-alive connection answered once by the only worker; its pid */
  async function served() {
    const c = await rawConnect(daemon.port);
    c.s.write(`GET /healthz HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`);
    await waitFor('healthz', () => /\r\n\r\n\{.*\}$/s.test(c.data));
    assert.match(c.data, /^HTTP\/1\.1 200 /);
    assert.match(c.data, new RegExp(`\r\nKeep-Alive: timeout=${IDLE_MS / 1000}\r\n`, 'i'));
    const pid = JSON.parse(c.data.slice(c.data.indexOf('\r\n\r\n') + 4)).pid;
    c.data = '';
    return { c, pid };
  }

  async function reload(pid) {
    process.kill(daemon.pid, 'SIGHUP');
    await waitFor('a new generation', async () =>
      (await daemon.workerPids()).some((p) => p !== pid), { timeout: 15000 });
  }

  test('a request sent after the drain began is served, with Connection: close', guarded(async () => {
    const { c, pid } = await served();
    await reload(pid);
    await sleep(500);
    assert.equal(c.closed, false, 'the idle connection is not closed at the drain');
    c.s.write(`GET /healthz HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`);
    await waitFor('the answer and the close', () => c.closed);
    assert.equal(c.error, null, `${c.error?.code}`);
    assert.match(c.data, /^HTTP\/1\.1 200 /);
    assert.match(c.data, /\r\nConnection: close\r\n/i);
    assert.equal(JSON.parse(c.data.slice(c.data.indexOf('\r\n\r\n') + 4)).pid, pid,
      'answered by the draining worker');
    await waitFor('the draining worker gone', () => !alive(pid), { timeout: 5000 });
  }));

  test('requests pipelined after the drain began: all served, the last reply closes',
    guarded(async () => {
      const { c, pid } = await served();
      await reload(pid);
      // the new generation's pids show before the old worker has read
      // its drain order from the master: give it that time (well under
      // the connection's idle time)
      await sleep(1000);
      const get = `GET /healthz HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`;
      c.s.write(get + get + get);
      await waitFor('the answers and the close', () => c.closed);
      assert.equal(c.error, null, `${c.error?.code}`);
      const heads = c.data.split(/(?=HTTP\/1\.1 \d{3} )/).map((r) => r.slice(0, r.indexOf('\r\n\r\n')));
      assert.equal(heads.length, 3, c.data);
      heads.forEach((h, i) => {
        assert.match(h, /^HTTP\/1\.1 200 /);
        assert.equal(/\r\nConnection: close/i.test(h), i === 2, `reply ${i}: ${h}`);
      });
      await waitFor('the draining worker gone', () => !alive(pid), { timeout: 5000 });
    }));

  test('an idle connection is closed at its idle time, not before; then the worker exits',
    guarded(async () => {
      const { c, pid } = await served();
      const t0 = Date.now();
      await reload(pid);
      await waitFor('the idle connection closed', () => c.closed, { timeout: IDLE_MS + 5000 });
      const took = Date.now() - t0;
      assert.ok(took >= IDLE_MS - 300, `closed after ${took} ms idle, not before ${IDLE_MS}`);
      assert.equal(c.data, '', 'nothing sent on the idle connection');
      await waitFor('the draining worker gone', () => !alive(pid), { timeout: 5000 });
    }));
});

describe('a stop does not wait on idle keep-alive connections', () => {
  test('SIGTERM with idle keep-alive connections, on a draining generation too: ' +
    'exit at once, not at http.timeout', guarded(async () => {
      const everything = await startEverything();
      const daemon = await startDaemon({ backendUrl: everything.url, workers: 2,
        drainTimeout: '20s', extra: 'http:\n  timeout: 20s\n' });
      const idle = [];
      const open = async () => {
        for (let i = 0; i < 4; i++) {
          const c = await rawConnect(daemon.port);
          c.s.write(`GET /healthz HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`);
          await waitFor('healthz', () => /\r\n\r\n\{.*\}$/s.test(c.data));
          idle.push(c);
        }
      };
      await open();
      // a reload: the first generation drains, keeping these (idle) ones
      const first = await daemon.workerPids();
      process.kill(daemon.pid, 'SIGHUP');
      await waitFor('a new generation', async () =>
        (await daemon.workerPids()).filter((p) => !first.includes(p)).length === 2,
      { timeout: 15000 });
      assert.ok(idle.every((c) => !c.closed), 'kept by the draining generation');
      await open();
      const t0 = Date.now();
      await daemon.stop(8000);
      assert.ok(Date.now() - t0 < 8000);
      assert.ok(idle.every((c) => c.closed), 'the idle connections closed');
    }));
});
