// The circuit breaker on real requests (operational.failureHandling.
// circuitBreaker), shared by the workers through the store: a backend
// killed, then restarted on its port; a backend that hangs (timeouts
// count); a backend whose JSON-RPC errors must not open the breaker.
// Other backends answer throughout.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { guarded, rpc, sleep, waitFor, HOST } from './lib/harness.mjs';
import { useMulti, startMulti, startSpec, openSessionCaps, serve as listen, rawBackend } from './lib/multi.mjs';

useMulti();

const THRESHOLD = 3;
const OPEN_S = 3;

/* tools/call e_err answers a JSON-RPC error; e_hang never answers */
const errServer = () => rawBackend('errs', ['e_err', 'e_hang'], (m, res, json) => {
  if (m.params?.name === 'e_hang')
    return undefined;	// the socket stays open, unanswered
  return json({ jsonrpc: '2.0', id: m.id, error: { code: -32042, message: 'errs says no' } });
});

describe('circuit breaker on real requests', () => {
  let victim, steady, daemon, sid, victimPort, errPort;

  before(async () => {
    [victim, steady] = await Promise.all([
      startSpec({ label: 'victim', tools: ['v'] }),
      startSpec({ label: 'steady', tools: ['ok'] }),
    ]);
    victimPort = victim.port;
    errPort = await listen(errServer());
    daemon = await startMulti({
      backends: [
        { name: 'victim', url: victim.url },
        { name: 'steady', url: steady.url },
        { name: 'errs', url: `http://${HOST}:${errPort}/mcp` },
      ],
      aggregation: 'conflictResolutionConfig:\n  prefixMode: onConflict',
      operational: 'timeouts:\n  default: 20s\n  perWorkload:\n    errs: 2s\n' +
        'failureHandling:\n  partialFailureMode: best_effort\n' +
        `  circuitBreaker: {enabled: true, failureThreshold: ${THRESHOLD}, timeout: ${OPEN_S}s}`,
    });
    ({ sid } = await openSessionCaps(daemon.port));
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
  });

  const call = (name, args = {}, timeout = 30000) =>
    rpc(daemon.port, sid, 'tools/call', { name, arguments: args }, { timeout });
  async function works() {
    const r = await call('ok', { x: 'still' });
    assert.equal(r.json.result?.content[0].text, 'steady:ok:{"x":"still"}', r.text);
  }
  const unavailable = (b) => new RegExp(`backend ${b} is unavailable \\(circuit open after \\d+ failures; retry in \\d+ s\\)`);

  test('JSON-RPC errors from a live backend do not open the breaker', guarded(async () => {
    for (let i = 0; i < THRESHOLD * 2; i++) {
      const r = await call('e_err');
      assert.equal(r.json.error?.message, 'errs says no', r.text);
    }
    assert.doesNotMatch(daemon.proc.output, /backend errs: circuit open/);
  }));

  test('a hung backend: timeouts count, then calls fail at once; a live answer closes it',
    guarded(async () => {
      const hung = await Promise.all(Array.from({ length: THRESHOLD }, () => call('e_hang')));
      for (const r of hung)
        assert.match(r.json.error?.message ?? '', /errs/, r.text);
      await waitFor('the breaker to open', () => /backend errs: circuit open after/.test(daemon.proc.output),
        { timeout: 10000 });
      const t = Date.now();
      const r = await call('e_err');
      assert.ok(Date.now() - t < 1500, `refused after ${Date.now() - t} ms (timeout 2s)`);
      assert.match(r.json.error?.message ?? '', unavailable('errs'), r.text);
      await works();
      // past the open time one trial goes through: the backend's own
      // error is an answer, so the breaker closes
      await sleep(OPEN_S * 1000 + 500);
      const trial = await call('e_err');
      assert.equal(trial.json.error?.message, 'errs says no', trial.text);
      const again = await call('e_err');
      assert.equal(again.json.error?.message, 'errs says no', again.text);
      assert.match(daemon.proc.output, /backend errs: circuit closed/);
    }));

  test('a backend killed: fail fast once open; restarted on its port: closes again',
    guarded(async () => {
      assert.equal((await call('v')).json.result?.content[0].text, 'victim:v:{}');
      victim.kill();
      await victim.waitExit();
      let r, took = 0;
      for (let i = 0; i < THRESHOLD * 4; i++) {
        const t = Date.now();
        r = await call('v');
        took = Date.now() - t;
        assert.ok(r.json.error, r.text);
        assert.match(r.json.error.message, /victim/, r.text);
        if (unavailable('victim').test(r.json.error.message))
          break;
      }
      assert.match(r.json.error.message, unavailable('victim'), r.text);
      assert.ok(took < 5000, `refused after ${took} ms (timeout 20s)`);
      await works();
      victim = await startSpec({ label: 'victim', tools: ['v'], port: victimPort });
      await waitFor('victim back through the breaker', async () => {
        const a = await call('v');
        return a.json.result?.content[0].text === 'victim:v:{}';
      }, { timeout: (OPEN_S + 15) * 1000, interval: 500 });
      assert.equal((await call('v')).json.result?.content[0].text, 'victim:v:{}');
      await works();
    }));
});
