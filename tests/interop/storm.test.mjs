// A hostile backend, two ways (docs/ARCHITECTURE.md, "Notifications"
// and "The backend edge"; issue 26, items 2 and 3):
//
// - a storm of notifications/tools/list_changed: vmcpd lists the
//   backend again a bounded number of times (counted at the backend),
//   the views db keeps a bounded number of records, /metrics and the
//   log (once) say so, and once the storm is over the view has the
//   backend's last list (coalescing loses no change); stopped during a
//   storm, nothing leaks (the sanitizer build's leak report);
// - several large answers at once: past operational.answerBuffer each
//   call refused gets a JSON-RPC error naming the backend and the
//   limit, the workers live on with their memory bounded, and /metrics
//   counts the refusals.
//
// One daemon (two workers) in front of three raw backends of
// lib/storm-backend.mjs (the storm), the first of them answering big.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';

import {
  guarded, waitFor, sleep, openSession, rpc, httpRequest, vmcpctl,
} from './lib/harness.mjs';
import { useMulti } from './lib/multi.mjs';
import { startStorm, startStormDaemon } from './lib/storm-backend.mjs';

useMulti();

const MiB = 1024 * 1024;
const BIG = 10 * 1000 * 1000;	/* an answer's text */

/* /metrics samples of the backend: name -> value (a budget label kept) */
async function metrics(d) {
  const r = await httpRequest(d.diag, { method: 'GET', path: '/metrics' });
  assert.equal(r.status, 200, r.text);
  const m = {};
  for (const l of r.text.split('\n')) {
    const x = /^(vmcpd_backend_[a-z_]+)\{backend="storm"(?:,budget="(\w+)")?\} (\S+)$/.exec(l);
    if (x)
      m[x[2] ? `${x[1]}:${x[2]}` : x[1]] = Number(x[3]);
  }
  return m;
}

async function viewRecords(d) {
  const r = await vmcpctl(['stat', '-j'], { stateDir: d.stateDir });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout).dbs.views.entries;
}

const toolNames = async (d, sid) =>
  ((await rpc(d.port, sid, 'tools/list', {})).json?.result?.tools ?? []).map((t) => t.name);

function vmRss(pid, field = 'VmRSS') {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`,
    'utf8'));
  return Number(m[1]) * 1024;
}

describe('a backend that storms and answers big', () => {
  let b, others, d, sid;

  before(async () => {
    // two more that storm with it: their relists publish in turn
    [b, ...others] = await Promise.all([startStorm({ ntools: 5 }),
      startStorm({ ntools: 5, name: 'storm2', prefix: 'b2_' }),
      startStorm({ ntools: 5, name: 'storm3', prefix: 'b3_' })]);
    d = await startStormDaemon([b.url, ...others.map((o) => o.url)], {
      extra: ['operational:', '  answerBuffer:', '    perWorker: 32MiB', '    perBackend: 24MiB'],
    });
    ({ sid } = await openSession(d.port));
    assert.ok((await toolNames(d, sid)).includes('gen0'));
    await waitFor('worker 0 listening to the backends', () =>
      [b, ...others].every((x) => x.streams.size > 0), { timeout: 15000 });
  });

  after(async () => {
    if (d && !d.stopped)
      await d.stop();
  });

  test('a list_changed storm: relists and records bounded, counted, said once; the last change kept',
    guarded(async () => {
      const all = [b, ...others];
      const lists0 = all.map((x) => x.lists());
      const records0 = await viewRecords(d);
      let records = records0;
      let sent = 0;
      let stop = false;
      // as fast as the backends can write, their lists changing as it goes
      const pump = (async () => {
        for (let g = 1; !stop; g++) {
          for (const x of all)
            x.setGeneration(g);
          for (let i = 0; i < 20; i++, sent++)
            for (const x of all)
              x.notify();
          await sleep(1);
        }
      })();
      const t0 = Date.now();
      while (Date.now() - t0 < 2500) {
        records = Math.max(records, await viewRecords(d));
        await sleep(100);
      }
      stop = true;
      await pump;
      const during = all.map((x, i) => x.lists() - lists0[i]);
      // before: a relist for each (hundreds a second); now one under
      // way and one pending, half a second apart at least, then further
      assert.ok(during.every((n) => n <= 5), `${during} relists for ${sent} list_changed ` +
        'each in 2.5 s');
      // a new layout is stored before the one it replaces goes; before,
      // a layout replaced within the millisecond of its own was kept
      assert.ok(records <= records0 + 6, `views records: ${records0} before, ${records} at most`);
      // the last change: listed after the storm, folded or not
      b.setGeneration(999999);
      b.notify();
      sent++;
      await waitFor('the last list in the view', async () => (await toolNames(d, sid))
        .includes('gen999999'), { timeout: 30000, interval: 200 });
      assert.ok(await viewRecords(d) <= records0 + 1);
      let m;
      await waitFor('worker 0 to count every list_changed', async () => {
        m = await metrics(d);
        return m.vmcpd_backend_list_changed_total === sent;
      }, { timeout: 10000 });
      assert.ok(m.vmcpd_backend_list_changed_storms_total >= 1, JSON.stringify(m));
      assert.ok(m.vmcpd_backend_relists_total >= 2 && m.vmcpd_backend_relists_total <= 8,
        JSON.stringify(m));
      assert.ok(m.vmcpd_backend_relist_interval_seconds > 1, JSON.stringify(m));
      const said = d.proc.output.match(/backend storm sends list_changed in a storm/g) ?? [];
      assert.equal(said.length, 1, 'the storm is logged once');
    }));

  test('large answers at once: past the budget refused with the limit named, workers bounded',
    guarded(async () => {
      const workers = await d.workerPids();
      const rss0 = Object.fromEntries(workers.map((p) => [p, vmRss(p)]));
      const m0 = await metrics(d);
      b.holdBig = true;
      // each a connection of its own: any worker; 24 MiB of one
      // backend's answers a worker: two of 10 MB fit, a third not
      const calls = Array.from({ length: 8 }, () => rpc(d.port, sid, 'tools/call',
        { name: 'big', arguments: { bytes: BIG } }, { timeout: 60000 }));
      const done = [];
      calls.forEach((p, i) => p.then((r) => { done[i] = r; }, (e) => { done[i] = { error: e }; }));
      // two a worker held at most: four refused at least, at once
      await waitFor('the refusals', () => done.filter(Boolean).length >= 4 && b.bigStarted === 8,
        { timeout: 30000 }).catch((e) => {
        throw new Error(`${e.message}: ${b.bigStarted} answers started, ${done.filter(Boolean)
          .map((r) => r.text?.slice(0, 300) ?? r.error?.message).join('; ')}`);
      });
      await sleep(300);
      const held = await metrics(d);
      assert.ok(held.vmcpd_backend_buffered_answer_bytes <= 2 * 24 * MiB, JSON.stringify(held));
      for (const p of workers)
        assert.ok(vmRss(p) - rss0[p] < 24 * MiB + 96 * MiB,
          `worker ${p}: RSS ${vmRss(p)} (was ${rss0[p]}) while answers are held`);
      b.releaseBig();
      const res = await Promise.all(calls);
      const ok = res.filter((r) => r.json?.result?.content?.[0]?.text?.length === BIG);
      const refused = res.filter((r) => r.json?.error);
      assert.equal(ok.length + refused.length, 8, res.map((r) => r.text?.slice(0, 200)).join('\n'));
      assert.ok(ok.length >= 1 && refused.length >= 4, `${ok.length} whole, ${refused.length} refused`);
      for (const r of refused) {
        assert.equal(r.json.error.code, -32603);
        assert.match(r.json.error.message,
          /backend storm: its answer was refused: .*operational\.answerBuffer\.per(Worker|Backend) \((32|24) MiB\)/);
      }
      const m = await metrics(d);
      assert.equal(m['vmcpd_backend_answers_refused_total:worker'] +
        m['vmcpd_backend_answers_refused_total:backend'] -
        (m0['vmcpd_backend_answers_refused_total:worker'] +
         m0['vmcpd_backend_answers_refused_total:backend']), refused.length, JSON.stringify(m));
      assert.equal(m.vmcpd_backend_buffered_answer_bytes, 0);
      // the workers lived through it, and still answer
      assert.deepEqual(await d.workerPids(), workers);
      assert.ok((await toolNames(d, sid)).includes('big'));
    }));

  test('stopped during a storm: a clean exit, nothing leaked', guarded(async () => {
    let stop = false;
    const pump = (async () => {
      while (!stop) {
        for (let i = 0; i < 20; i++)
          b.notify();
        await sleep(1);
      }
    })();
    await sleep(1500);
    try {
      await d.stop();		// exit 0, and no sanitizer report
    } finally {
      stop = true;
      await pump;
    }
  }));
});
