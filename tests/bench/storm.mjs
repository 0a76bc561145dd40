// Figures for a backend's list_changed storm and for large answers
// buffered at once (issue 26, items 2 and 3); not a test.
//
//   node tests/bench/storm.mjs [storm|answers|all] [vmcpd [vmcpctl]]
//
// storm: one raw backend (100 tools) sends notifications/tools/list_changed
// on its GET stream as fast as it can for 15 s (its list changing every
// second); printed each second: the backend's tools/list count, the
// views db's records and the map's use; then the relists a second, the
// records and map growth, the builder's RSS after, and whether the view
// has the backend's last list.
// answers: eight concurrent tools/call whose answers are 60 MB each
// (one worker); printed: the worker's peak RSS, the answers and errors.
import fs from 'node:fs';
import path from 'node:path';

import {
  waitFor, sleep, openSession, rpc, httpRequest, cleanupAll, run, ROOT,
} from '../interop/lib/harness.mjs';
import { startStorm, startStormDaemon } from '../interop/lib/storm-backend.mjs';

const what = process.argv[2] || 'all';
const bin = path.resolve(process.argv[3] || path.join(ROOT, 'build/vmcpd'));
const ctl = path.resolve(process.argv[4] || path.join(path.dirname(bin), 'vmcpctl'));

const daemon = (url, opts = {}) => startStormDaemon(url, { ...opts, bin });

async function stat(d) {
  const r = await run(ctl, ['-d', d.stateDir, 'stat', '-j']);
  const o = JSON.parse(r.stdout);
  return { views: o.dbs.views.entries, used: o.usedBytes, inUse: o.inUseBytes };
}

function rssKb(pid, field = 'VmRSS') {
  const m = new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

const mb = (b) => (b / 1048576).toFixed(1);

async function storm() {
  const b = await startStorm({ ntools: Number(process.env.NTOOLS || 100), descLen: Number(process.env.DESCLEN || 300) });
  const d = await daemon(b.url);
  const { sid } = await openSession(d.port);
  await rpc(d.port, sid, 'tools/list', {});
  await waitFor('the GET stream', () => b.streams.size > 0, { timeout: 15000 });
  const builder = (await d.childProcs()).find((c) => c.comm === 'vmcpd-builder').pid;
  const l0 = b.lists();
  const s0 = await stat(d);
  console.log(`before: views records ${s0.views}, map used ${mb(s0.used)} MB, ` +
    `in use ${mb(s0.inUse)} MB, builder RSS ${rssKb(builder)} kB`);
  const t0 = Date.now();
  let sent = 0;
  let stop = false;
  const pump = (async () => {
    while (!stop) {
      b.notify();
      sent++;
      if (sent % 20 === 0)
        await sleep(1);
    }
  })();
  let peakViews = 0;
  for (let s = 1; s <= 15; s++) {
    b.setGeneration(s);
    await sleep(t0 + s * 1000 - Date.now());
    const st = await stat(d);
    peakViews = Math.max(peakViews, st.views);
    console.log(`t=${s}s notes ${sent} lists ${b.lists() - l0} views records ${st.views} ` +
      `map used ${mb(st.used)} MB in use ${mb(st.inUse)} MB`);
  }
  stop = true;
  await pump;
  const secs = (Date.now() - t0) / 1000;
  const l1 = b.lists();
  const s1 = await stat(d);
  b.setGeneration(1000);
  b.notify();
  let current = false;
  const t1 = Date.now();
  try {
    await waitFor('the last list in the view', async () => {
      const r = await rpc(d.port, sid, 'tools/list', {});
      return (r.json?.result?.tools ?? []).some((t) => t.name === 'gen1000');
    }, { timeout: 60000, interval: 200 });
    current = true;
  } catch { /* reported below */ }
  await sleep(3000);
  const s2 = await stat(d);
  const metrics = (await httpRequest(d.diag, { method: 'GET', path: '/metrics' })).text
    .split('\n').filter((l) => /storm|list_changed|relist/.test(l) && !l.startsWith('#'));
  console.log(`storm: ${sent} notifications in ${secs.toFixed(1)} s; ` +
    `${l1 - l0} relists (${((l1 - l0) / secs).toFixed(1)}/s)`);
  console.log(`views records: ${s0.views} before, ${peakViews} at most, ${s1.views} at the end, ` +
    `${s2.views} 3 s after`);
  console.log(`map used: ${mb(s0.used)} -> ${mb(s1.used)} MB ` +
    `(${((s1.used - s0.used) / secs / 1048576).toFixed(3)} MB/s); in use ${mb(s0.inUse)} -> ` +
    `${mb(s1.inUse)} MB`);
  console.log(`builder RSS after: ${rssKb(builder)} kB (peak ${rssKb(builder, 'VmHWM')} kB)`);
  console.log(`the last change in the view: ${current ? `yes, after ${Date.now() - t1 - 3000} ms`
    : 'NO (60 s)'}`);
  for (const l of metrics)
    console.log(`  ${l}`);
  await d.stop(20000).catch((e) => console.log(`stop: ${e.message}`));
}

async function answers() {
  const b = await startStorm({ ntools: 1 });
  const d = await daemon(b.url, { workers: 1 });
  const worker = (await d.workerPids())[0];
  const { sid } = await openSession(d.port);
  const r0 = rssKb(worker);
  let peak = r0;
  let on = true;
  const sampler = (async () => {
    while (on) {
      peak = Math.max(peak, rssKb(worker));
      await sleep(20);
    }
  })();
  const t0 = Date.now();
  const res = await Promise.all(Array.from({ length: 8 }, () =>
    rpc(d.port, sid, 'tools/call', { name: 'big', arguments: { bytes: 60 * 1000 * 1000 } },
      { timeout: 120000 }).catch((e) => ({ error: e.message }))));
  on = false;
  await sampler;
  const ok = res.filter((r) => r.json?.result?.content?.[0]?.text?.length === 60 * 1000 * 1000).length;
  const errs = res.filter((r) => r.json?.error).map((r) => r.json.error.message);
  console.log(`answers: 8 x 60 MB in ${Date.now() - t0} ms: ${ok} whole, ${errs.length} errors`);
  for (const e of new Set(errs))
    console.log(`  error: ${e}`);
  console.log(`worker RSS: ${r0} kB before, ${peak} kB at most (sampled), VmHWM ` +
    `${rssKb(worker, 'VmHWM')} kB, ${rssKb(worker)} kB after; alive ${fs.existsSync(`/proc/${worker}`)}`);
  const metrics = (await httpRequest(d.diag, { method: 'GET', path: '/metrics' })).text
    .split('\n').filter((l) => /refus|budget|buffer/.test(l) && !l.startsWith('#'));
  for (const l of metrics)
    console.log(`  ${l}`);
  await d.stop(20000).catch((e) => console.log(`stop: ${e.message}`));
}

try {
  console.log(`vmcpd: ${bin}`);
  if (what === 'storm' || what === 'all')
    await storm();
  if (what === 'answers' || what === 'all')
    await answers();
} finally {
  await cleanupAll();
}
process.exit(0);
