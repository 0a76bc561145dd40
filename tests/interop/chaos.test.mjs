// Proof under faults (the short form runs in make check; make chaos runs
// the long form: CHAOS_SECONDS=60 and wrk beside the node clients, and
// prints the figures).  Under steady load from SDK clients (Legacy
// sessions, on the SDK's own keep-alive fetch) and raw keep-alive clients:
//   - kill -9 of a random worker every 2 s: no Legacy session is lost,
//     and every failed request is accounted for: a socket error of a
//     request in flight on the killed worker (sent before the kill, or
//     on that worker's keep-alive connection before the client saw it
//     close); never an HTTP error or a wrong answer;
//   - SIGHUP every 5 s: no failed request at all;
//   - a backend killed, hung, slowed and restarted (circuit breaker on):
//     the breaker opens and closes, its tools leave the list and come
//     back, the other backend's calls never fail.
// Figures go to stdout as "chaos: ..." lines.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';
import {
  useHarness, guarded, startTestBackend, configText, Daemon, tmpDir, freePort, connectClient,
  openSession, rpc, httpRequest, sleep, run, waitFor, agentEcho, ROOT, HOST,
} from './lib/harness.mjs';
import { startSpec, openSessionCaps, multiConfig } from './lib/multi.mjs';

useHarness();

const SECONDS = Number(process.env.CHAOS_SECONDS || 10);
const WRK = process.env.CHAOS_WRK === '1';
const SDK_CLIENTS = 3;
const AGENT_LOOPS = 3;
const WRK_CONNS = 8;
/* a request sent on a dead worker's keep-alive connection before the
 * client saw it close: its failure is that kill's */
const SLACK_MS = 500;

function figure(line) {
  process.stdout.write(`chaos: ${line}\n`);
}

/*
 * Load until stop(): every request {start, end, ok, socket, what}.
 * A socket error is a failure the fault may explain; an HTTP error or a
 * wrong answer never is.
 */
function load(daemon, sdks, sid, agent) {
  const log = [];
  let running = true;
  const one = async (what, fn) => {
    const start = Date.now();
    try {
      const bad = await fn();
      log.push({ start, end: Date.now(), ok: !bad, socket: false, what: bad ? `${what}: ${bad}` : what });
    } catch (e) {
      // the SDK wraps fetch's error; both say the connection broke
      const msg = `${e.code ?? ''} ${e.message} ${e.cause?.code ?? ''} ${e.cause?.message ?? ''}`;
      const socket = /ECONNRESET|socket hang up|fetch failed|EPIPE|terminated|other side closed|ECONNREFUSED/i
        .test(msg);
      log.push({ start, end: Date.now(), ok: false, socket, what: `${what}: ${msg}` });
    }
  };
  const sdkLoop = async (s, n) => {
    for (let i = 0; running; i++) {
      const msg = `sdk ${n} ${i}`;
      await one(msg, async () => {
        const r = await s.client.callTool({ name: 'echo', arguments: { message: msg } },
          undefined, { timeout: 20000 });
        return r.content?.[0]?.text === `Echo: ${msg}` ? null : JSON.stringify(r).slice(0, 200);
      });
    }
  };
  const agentLoop = async (n) => {
    for (let i = 0; running; i++) {
      const msg = `agent ${n} ${i}`;
      await one(msg, async () => {
        const r = await agentEcho(agent, daemon.port, sid, msg, 20000);
        return r.status === 200 && r.text.includes(`Echo: ${msg}`) ? null :
          `HTTP ${r.status} ${r.text.slice(0, 200)}`;
      });
    }
  };
  const loops = [...sdks.map((s, n) => sdkLoop(s, n)),
    ...Array.from({ length: AGENT_LOOPS }, (_, n) => agentLoop(n))];
  return {
    log,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

/* wrk on the raw session's tools/call for secs (long form only) */
function wrk(daemon, sid, secs) {
  if (!WRK)
    return Promise.resolve(null);
  return run('wrk', ['-t1', `-c${WRK_CONNS}`, `-d${secs}s`, '--timeout', '10s',
    '-s', path.join(ROOT, 'tests/bench/call.lua'), daemon.url],
  { timeout: (secs + 60) * 1000, env: { MCP_SESSION_ID: sid } }).then((r) => {
    const m = /^BENCH requests=(\d+) .* bad_status=(\d+) bad_body=(\d+) socket_errors=(\d+)$/m
      .exec(r.stdout);
    assert.ok(m, `wrk: ${r.stdout}${r.stderr}`);
    return { requests: +m[1], badStatus: +m[2], badBody: +m[3], socket: +m[4], out: r.stdout };
  });
}

describe('under faults, with steady load', () => {
  let backend, daemon, diag, sdks = [], sid, agent;

  before(async () => {
    backend = await startTestBackend();
    diag = await freePort();
    const dir = await tmpDir('vmcpd-chaos-');
    daemon = new Daemon(dir, path.join(dir, 'vmcpd.yaml'), { workers: 2 });
    await daemon.writeConfig(configText({
      portFile: daemon.portFile, stateDir: daemon.stateDir, backendUrl: backend.url,
      backendName: 'b', drainTimeout: '20s',
    }).replace('daemon:\n', `daemon:\n  diagnostics: ${HOST}:${diag}\n`));
    await daemon.start();
    for (let i = 0; i < SDK_CLIENTS; i++)
      sdks.push(await connectClient(daemon.url, { name: `chaos-${i}` }));
    ({ sid } = await openSession(daemon.port));
    agent = new http.Agent({ keepAlive: true, maxSockets: AGENT_LOOPS });
  });

  after(async () => {
    agent?.destroy();
    for (const s of sdks)
      await s.client.close().catch(() => {});
    if (daemon && !daemon.proc.exited)
      await daemon.stop(30000);
  });

  /* every session still served: the SDK clients' and the raw one */
  async function sessionsKept() {
    let kept = 0;
    for (const s of sdks) {
      const before = s.transport.sessionId;
      const r = await s.client.callTool({ name: 'echo', arguments: { message: 'after' } });
      assert.equal(r.content?.[0]?.text, 'Echo: after');
      assert.equal(s.transport.sessionId, before, 'the same session');
      kept++;
    }
    const p = await rpc(daemon.port, sid, 'ping');
    assert.equal(p.status, 200, `the raw session: ${p.text}`);
    return kept + 1;
  }

  const restarts = async () => {
    const t = (await httpRequest(diag, { method: 'GET', path: '/metrics' })).text;
    return [...t.matchAll(/^vmcpd_worker_restarts_total\{[^}]*\} (\d+)$/gm)]
      .reduce((a, m) => a + Number(m[1]), 0);
  };

  test(`kill -9 of a random worker every 2 s for ${SECONDS} s: no session lost, ` +
    'every failure in flight on a killed worker', guarded(async () => {
    const l = load(daemon, sdks, sid, agent);
    const w = wrk(daemon, sid, SECONDS);
    const kills = [];
    const t0 = Date.now();
    while (Date.now() - t0 < SECONDS * 1000) {
      await sleep(2000);
      const pids = await daemon.workerPids();
      if (pids.length === 0)
        continue;
      const pid = pids[Math.floor(Math.random() * pids.length)];
      kills.push({ pid, at: Date.now() });
      process.kill(pid, 'SIGKILL');
    }
    await sleep(1000);
    await l.stop();
    const wr = await w;
    const failed = l.log.filter((r) => !r.ok);
    const unaccounted = failed.filter((r) => !r.socket ||
      !kills.some((k) => r.start <= k.at + SLACK_MS && r.end >= k.at - 50));
    const ok = l.log.length - failed.length;
    const kept = await sessionsKept();
    // every kill seen by the master and the worker respawned
    await waitFor('both workers back', async () => (await daemon.workerPids()).length === 2,
      { timeout: 15000 });
    const r = await restarts();
    figure(`kill -9: ${SECONDS} s, ${kills.length} workers killed, ${r} restarts counted; ` +
      `node clients ${l.log.length} requests, ${ok} ok, ${failed.length} failed ` +
      `(${failed.length - unaccounted.length} in flight on a killed worker, ` +
      `${unaccounted.length} unaccounted); Legacy sessions kept ${kept}/${kept}`);
    if (wr)
      figure(`kill -9: wrk c=${WRK_CONNS} ${wr.requests} requests, ${wr.badStatus} non-200, ` +
        `${wr.badBody} wrong answers, ${wr.socket} socket errors ` +
        `(at most ${WRK_CONNS} per kill: ${WRK_CONNS * kills.length})`);
    assert.deepEqual(unaccounted.map((x) => x.what), [], 'failures not explained by a kill');
    assert.ok(kills.length >= Math.floor(SECONDS / 2) - 1, `${kills.length} kills`);
    assert.equal(r, kills.length, 'vmcpd_worker_restarts_total');
    assert.ok(ok >= SECONDS * 3, `the load ran: ${ok} requests ok`);
    if (wr) {
      assert.equal(wr.badStatus + wr.badBody, 0, wr.out);
      assert.ok(wr.socket <= WRK_CONNS * kills.length, wr.out);
    }
  }));

  test(`SIGHUP every 5 s for ${SECONDS} s: no failed request`, guarded(async () => {
    const l = load(daemon, sdks, sid, agent);
    const w = wrk(daemon, sid, SECONDS);
    let reloads = 0;
    const t0 = Date.now();
    while (Date.now() - t0 < SECONDS * 1000) {
      await sleep(Math.min(5000, Math.max(0, SECONDS * 1000 - (Date.now() - t0))));
      process.kill(daemon.pid, 'SIGHUP');
      reloads++;
    }
    await sleep(1000);
    await l.stop();
    const wr = await w;
    const failed = l.log.filter((r) => !r.ok);
    const kept = await sessionsKept();
    figure(`SIGHUP: ${SECONDS} s, ${reloads} reloads; node clients ${l.log.length} requests, ` +
      `${failed.length} failed; Legacy sessions kept ${kept}/${kept}`);
    if (wr)
      figure(`SIGHUP: wrk c=${WRK_CONNS} ${wr.requests} requests, ${wr.badStatus} non-200, ` +
        `${wr.badBody} wrong answers, ${wr.socket} socket errors`);
    assert.deepEqual(failed.map((x) => x.what), [], 'failed requests');
    assert.ok(reloads >= 1);
    assert.ok(l.log.length >= SECONDS * 3, `the load ran: ${l.log.length}`);
    if (wr)
      assert.equal(wr.badStatus + wr.badBody + wr.socket, 0, wr.out);
    assert.doesNotMatch(daemon.stderr, /killed by signal (?!9\b)/);
  }));
});

/*
 * A backend killed, hung (SIGSTOP: it accepts, never answers), slowed
 * (stopped for less than its timeout) and restarted under load, with
 * the circuit breaker on: calls to it fail cleanly and, once the breaker
 * is open, at once; its tools leave tools/list and come back; the other
 * backend's calls never fail.
 */
describe('a backend killed, hung, slowed and restarted under load', () => {
  let victim, steady, daemon, sid, vport;
  const OPEN_S = 2;

  before(async () => {
    [victim, steady] = await Promise.all([
      startSpec({ label: 'victim', tools: ['v'] }),
      startSpec({ label: 'steady', tools: ['ok'] }),
    ]);
    vport = victim.port;
    const dir = await tmpDir('vmcpd-chaos-backend-');
    daemon = new Daemon(dir, path.join(dir, 'vmcpd.yaml'), { workers: 2 });
    await daemon.writeConfig(multiConfig({
      portFile: daemon.portFile, stateDir: daemon.stateDir,
      backends: [{ name: 'victim', url: victim.url }, { name: 'steady', url: steady.url }],
      aggregation: 'conflictResolutionConfig:\n  prefixMode: onConflict\ncacheTtl: 2s',
      operational: 'timeouts:\n  default: 10s\n  perWorkload:\n    victim: 1500ms\n' +
        'failureHandling:\n  partialFailureMode: best_effort\n' +
        `  circuitBreaker: {enabled: true, failureThreshold: 3, timeout: ${OPEN_S}s}`,
    }));
    await daemon.start({ timeout: 30000 });
    ({ sid } = await openSessionCaps(daemon.port));
  });

  after(async () => {
    victim?.kill('SIGCONT');
    victim?.kill();
    steady?.kill();
    if (daemon)
      await daemon.stop();
  });

  test('the breaker opens and closes, lists change and change back, steady unaffected',
    guarded(async () => {
      const call = (name) => rpc(daemon.port, sid, 'tools/call', { name, arguments: {} }, { timeout: 20000 });
      const listed = async () => (await rpc(daemon.port, sid, 'tools/list', {})).json.result.tools
        .map((t) => t.name).includes('v');
      const stats = { steady: 0, steadyBad: [], victimOk: 0, victimErr: 0, fast: 0, unclean: [] };
      let running = true;
      const steadyLoop = async () => {
        while (running) {
          const r = await call('ok');
          stats.steady++;
          if (r.json?.result?.content?.[0]?.text !== 'steady:ok:{}')
            stats.steadyBad.push(r.text);
        }
      };
      const victimLoop = async () => {
        while (running) {
          const t = Date.now();
          const r = await call('v');
          if (r.json?.result?.content?.[0]?.text === 'victim:v:{}') {
            stats.victimOk++;
          } else {
            stats.victimErr++;
            const msg = r.json?.error?.message ?? '';
            if (/backend victim is unavailable/.test(msg) && Date.now() - t < 1000)
              stats.fast++;
            if (!/victim|Unknown tool: v/.test(msg))
              stats.unclean.push(r.text);
            await sleep(50);
          }
        }
      };
      assert.ok(await listed(), 'v listed at the start');
      const loops = [steadyLoop(), steadyLoop(), victimLoop(), victimLoop()];
      const until = (what, fn) => waitFor(what, fn, { timeout: 30000, interval: 300 });
      const phase = async (name, fault, heal) => {
        await fault();
        await until(`${name}: v leaves tools/list`, async () => !(await listed()));
        await heal();
        await until(`${name}: v back in tools/list`, listed);
      };
      await phase('killed', async () => {
        victim.kill();
        await victim.waitExit();
      }, async () => {
        victim = await startSpec({ label: 'victim', tools: ['v'], port: vport });
      });
      await phase('hung', () => victim.kill('SIGSTOP'), () => victim.kill('SIGCONT'));
      // slowed: stopped for less than its timeout, calls only wait
      victim.kill('SIGSTOP');
      await sleep(700);
      victim.kill('SIGCONT');
      await sleep(1000);
      running = false;
      await Promise.all(loops);
      figure(`backend faults: steady calls ${stats.steady}, victim answered ${stats.victimOk}, ` +
        `failed ${stats.victimErr} (${stats.fast} at once by the breaker)`);
      assert.deepEqual(stats.steadyBad, [], 'steady never failed');
      assert.deepEqual(stats.unclean, [], 'victim failures were clean and named it');
      const opened = daemon.proc.output.match(/backend victim: circuit open after/g) ?? [];
      const closed = daemon.proc.output.match(/backend victim: circuit closed/g) ?? [];
      assert.ok(opened.length >= 2 && closed.length >= 2, `opened ${opened.length}, closed ${closed.length}`);
      assert.ok(await listed());
      assert.equal((await call('v')).json.result?.content[0].text, 'victim:v:{}');
    }));
});
