// Reloads lose no request (issue 10, item 2): keep-alive clients (a
// node:http Agent with keepAlive, the official SDK client on its default
// fetch) call tools in loops while vmcpd is sent SIGHUP every second for
// 10 s.  A draining worker serves the connections it has, says
// "Connection: close" on each reply and closes after it; an idle one is
// closed only at its idle time.  Zero socket errors, zero failed calls.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import {
  useHarness, guarded, startEverything, startDaemon, connectClient, openSession, mcpHeaders,
  sleep, HOST, nextId,
} from './lib/harness.mjs';

useHarness();

const RELOADS = 10;
const AGENT_LOOPS = 4;
const SDK_LOOPS = 2;

/* one tools/call echo on a pooled keep-alive socket: {status, text, connection} */
function agentEcho(agent, port, sid, message) {
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
    req.setTimeout(15000, () => req.destroy(new Error('no answer within 15 s')));
    req.on('error', reject);
    req.end(body);
  });
}

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
          const r = await agentEcho(agent, daemon.port, sid, msg);
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
