// Process-level resilience: workers killed with SIGKILL, reloads with a
// broken and then a fixed configuration, a graceful stop, the state seen
// by vmcpctl, and the configuration test (-n).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import {
  useHarness, guarded, startEverything, startDaemon, connectClient, rpc, openSession, waitFor,
  configText, vmcpctl, run, tmpDir, groupPids, VMCPD_BIN, LEGACY_VERSION, nextId,
  mcpPost,
} from './lib/harness.mjs';

useHarness();

async function echo(port, sid, message) {
  const r = await rpc(port, sid, 'tools/call', { name: 'echo', arguments: { message } });
  assert.equal(r.status, 200, `tools/call on ${sid.slice(0, 8)}...: ${r.text}`);
  assert.equal(r.json.result.content[0].text, `Echo: ${message}`, r.text);
  return r;
}

async function keeperPid(daemon) {
  const k = (await daemon.childProcs()).filter((c) => c.comm === 'vmcpd-keeper');
  return k.length === 1 ? k[0].pid : null;
}

describe('vmcpd under SIGKILL, SIGHUP and SIGTERM', () => {
  let everything, daemon, sessions = [], sdk;

  before(async () => {
    everything = await startEverything();
    daemon = await startDaemon({ backendUrl: everything.url, workers: 2, drainTimeout: '3s' });
    const { sid } = await openSession(daemon.port);
    sessions.push(sid);
    await echo(daemon.port, sid, 'before anything');
    sdk = await connectClient(daemon.url, { fresh: true });
    sessions.push(sdk.transport.sessionId);
    const r = await sdk.client.callTool({ name: 'echo', arguments: { message: 'sdk before' } });
    assert.equal(r.content[0].text, 'Echo: sdk before');
  });

  after(async () => {
    await sdk?.client.close().catch(() => {});
  });

  test('kill -9 every worker: respawned, the same sessions keep working', guarded(async () => {
    const old = await daemon.workerPids();
    assert.equal(old.length, 2);
    for (const pid of old)
      process.kill(pid, 'SIGKILL');
    const fresh = await waitFor('two new workers', async () => {
      const now = await daemon.workerPids();
      return now.length === 2 && now.every((p) => !old.includes(p)) ? now : null;
    }, { timeout: 10000 });
    assert.equal(fresh.length, 2);
    assert.match(daemon.stderr, /killed by signal 9/);
    // the raw session, several times so that both new workers serve it
    for (let i = 0; i < 6; i++)
      await echo(daemon.port, sessions[0], `after kill ${i}`);
    // the SDK session, through its existing transport and a new one
    const r = await sdk.client.callTool({ name: 'get-sum', arguments: { a: 40, b: 2 } });
    assert.equal(r.content[0].text, 'The sum of 40 and 2 is 42.');
    const again = await connectClient(daemon.url, { sessionId: sessions[1], fresh: true });
    assert.equal(again.transport.sessionId, sessions[1]);
    const r2 = await again.client.callTool({ name: 'echo', arguments: { message: 'resumed' } });
    assert.equal(r2.content[0].text, 'Echo: resumed');
    // the SDK would close (DELETE) the session on terminateSession only; close() does not
    await again.client.close();
    await echo(daemon.port, sessions[1], 'still there');
    assert.equal(daemon.proc.exited, false);
  }));

  test('kill -9 the keeper: respawned, service unaffected', guarded(async () => {
    const k = await keeperPid(daemon);
    assert.ok(k, 'a vmcpd-keeper child');
    const workers = await daemon.workerPids();
    process.kill(k, 'SIGKILL');
    await waitFor('a new keeper', async () => {
      const n = await keeperPid(daemon);
      return n && n !== k;
    }, { timeout: 10000 });
    await echo(daemon.port, sessions[0], 'after keeper kill');
    assert.deepEqual(await daemon.workerPids(), workers);
  }));

  test('SIGHUP with a broken config: logged with the file name, still serving', guarded(async () => {
    const good = await fsp.readFile(daemon.cfg, 'utf8');
    const pids = await daemon.workerPids();
    const broken = [
      'name: [unclosed\n  daemon: {{{\n\t:::garbage\n',	// not YAML
      good + 'noSuchKey: 1\n',				// unknown key: the loader is strict
      good.replace(/workers: \d+/, 'workers: lots'),		// bad value
    ];
    for (const text of broken) {
      await fsp.writeFile(daemon.cfg, text);
      const mark = daemon.stderr.length;
      process.kill(daemon.pid, 'SIGHUP');
      const log = await waitFor('the reload error in the log', () => {
        const s = daemon.stderr.slice(mark);
        return /reload failed/.test(s) && s.includes(daemon.cfg) ? s : null;
      }, { timeout: 10000 });
      assert.match(log, new RegExp(`${daemon.cfg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+:\\d+:`),
        'the error names file:line:col');
      await echo(daemon.port, sessions[0], 'during broken config');
      assert.deepEqual(await daemon.workerPids(), pids, 'no new generation');
    }
    const init = await openSession(daemon.port);
    assert.equal(init.init.json.result.serverInfo.name, 'vmcpd');
    await fsp.writeFile(daemon.cfg, good);
  }));

  test('SIGHUP with a fixed config: new workers, old sessions work, new name', guarded(async () => {
    const old = await daemon.workerPids();
    const portBefore = await fsp.readFile(daemon.portFile, 'utf8');
    await fsp.writeFile(daemon.cfg, configText({ ...daemon.configOpts, name: 'vmcpd-reloaded' }));
    process.kill(daemon.pid, 'SIGHUP');
    await waitFor('a new generation of workers', async () => {
      const now = await daemon.workerPids();
      return now.length === 2 && now.every((p) => !old.includes(p));
    }, { timeout: 15000 });
    assert.equal(await fsp.readFile(daemon.portFile, 'utf8'), portBefore, 'same port');
    for (let i = 0; i < 4; i++)
      await echo(daemon.port, sessions[0], `after reload ${i}`);
    await echo(daemon.port, sessions[1], 'sdk session after reload');
    const { init } = await openSession(daemon.port);
    assert.equal(init.json.result.serverInfo.name, 'vmcpd-reloaded');
    const c = await connectClient(daemon.url, { fresh: true });
    assert.equal(c.client.getServerVersion().name, 'vmcpd-reloaded');
    sessions.push(c.transport.sessionId);
    await c.client.close();
  }));

  test('SIGHUP during a call: the call completes on the draining worker', guarded(async () => {
    const old = await daemon.workerPids();
    const progress = [];
    const pending = sdk.client.callTool(
      { name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 2 } },
      undefined, { onprogress: (p) => progress.push(p.progress), timeout: 6000 });
    await new Promise((r) => setTimeout(r, 300));
    process.kill(daemon.pid, 'SIGHUP');
    const r = await pending;
    assert.equal(r.content[0].text,
      'Long running operation completed. Duration: 1 seconds, Steps: 2.');
    assert.deepEqual(progress, [1, 2]);
    await waitFor('a new generation of workers', async () => {
      const now = await daemon.workerPids();
      return now.length === 2 && now.every((p) => !old.includes(p));
    }, { timeout: 15000 });
    await echo(daemon.port, sessions[0], 'after the second reload');
  }));

  test('vmcpctl dump sessions lists the sessions; vmcpctl stat runs', guarded(async () => {
    const dump = await vmcpctl(['dump', 'sessions'], { stateDir: daemon.stateDir });
    assert.equal(dump.code, 0, `vmcpctl dump: ${dump.stderr}`);
    const recs = dump.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const byKey = new Map(recs.map((r) => [r.key, r]));
    for (const sid of sessions) {
      const rec = byKey.get(sid);
      assert.ok(rec, `session ${sid} in the dump`);
      assert.equal(rec.db, 'sessions');
      assert.equal(typeof rec.value, 'object', 'value is decoded JSON');
      assert.equal(rec.value.pv, LEGACY_VERSION);
      assert.equal(rec.value.init, true, 'notifications/initialized recorded');
    }
    // the backend session opened for the calls is recorded in the session
    for (const sid of sessions.slice(0, 2))
      assert.equal(typeof byKey.get(sid).value.backends?.everything?.sid, 'string',
        JSON.stringify(byKey.get(sid).value));
    for (const r of recs)
      assert.equal(r.db, 'sessions');
    const stat = await vmcpctl(['stat'], { stateDir: daemon.stateDir });
    assert.equal(stat.code, 0, `vmcpctl stat: ${stat.stderr}`);
    const m = /^sessions\s+(\d+)\s/m.exec(stat.stdout);
    assert.ok(m, `a sessions line in ${stat.stdout}`);
    assert.equal(Number(m[1]), recs.length, 'stat counts what dump lists');
  }));

  let inflight;	// the call that was in flight when SIGTERM came

  test('SIGTERM: exit 0 in time, nothing of the group left', guarded(async () => {
    const pending = mcpPost(daemon.port, {
      jsonrpc: '2.0', id: nextId(), method: 'tools/call',
      params: { name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 2 } },
    }, { session: sessions[0], timeout: 15000 });
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    const [call, stop] = await Promise.allSettled([pending, daemon.stop(10000)]);
    inflight = call;
    if (stop.status === 'rejected')
      throw stop.reason;
    assert.ok(Date.now() - t0 < 10000);
    assert.deepEqual(await groupPids(daemon.pid), []);
    await assert.rejects(fsp.access(daemon.portFile), 'portFile removed on exit');
  }));

  test('SIGTERM: the call in flight completed (graceful drain)', guarded(async () => {
    assert.ok(inflight, 'the SIGTERM test ran');
    if (inflight.status === 'rejected')
      assert.fail(`the call in flight during SIGTERM was cut: ${inflight.reason.message}`);
    const r = inflight.value;
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.result.content[0].text,
      'Long running operation completed. Duration: 1 seconds, Steps: 2.');
  }));
});

describe('vmcpd -n (configuration test)', () => {
  test('a good file: exit 0; a bad one: exit 1 with file:line:col:', guarded(async () => {
    const dir = await tmpDir();
    const good = path.join(dir, 'good.yaml');
    await fsp.writeFile(good, configText({ portFile: path.join(dir, 'port'),
      stateDir: path.join(dir, 'state'), backendUrl: 'http://127.0.0.1:9/mcp' }));
    const ok = await run(VMCPD_BIN, ['-n', '-f', good]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stderr, /configuration OK/);

    const cases = [
      ['syntax.yaml', 'name: vmcpd\ndaemon:\n  listen: [oops\n', 3],
      ['unknown.yaml', 'name: vmcpd\ndaemon:\n  workers: 1\n  bogus: true\n', 4],
      ['type.yaml', 'name: vmcpd\ndaemon:\n  workers: many\n', 3],
    ];
    for (const [file, text, line] of cases) {
      const p = path.join(dir, file);
      await fsp.writeFile(p, text);
      const bad = await run(VMCPD_BIN, ['-n', '-f', p]);
      assert.equal(bad.code, 1, `${file}: exit ${bad.code}; ${bad.stderr}`);
      assert.ok(bad.stderr.startsWith(`${p}:`), `${file}: stderr ${JSON.stringify(bad.stderr)}`);
      const m = /^[^:]+:(\d+):(\d+): \S/.exec(bad.stderr);
      assert.ok(m, `file:line:col: in ${JSON.stringify(bad.stderr)}`);
      if (file !== 'syntax.yaml')
        assert.equal(Number(m[1]), line, `${file}: line of ${JSON.stringify(bad.stderr)}`);
    }
    const missing = await run(VMCPD_BIN, ['-n', '-f', path.join(dir, 'absent.yaml')]);
    assert.equal(missing.code, 1);
    assert.ok(missing.stderr.includes('absent.yaml'));
    // nothing was started: no state dir created by -n
    await assert.rejects(fsp.access(path.join(dir, 'state')));
  }));
});
