// The shape of the code (docs/ARCHITECTURE.md, "Layout"): the folders of
// the daemon (master/, each room of worker/, worker/'s top files,
// shared/, proto/) call and include one another in one direction only,
// with no circle; method names are compared only in the method table's
// parser; a client request's message is released in one place.  Read
// off the sources and the objects of the build under test (nm).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';

import { ROOT, VMCPD_BIN } from './lib/harness.mjs';

const OBJ = path.join(path.dirname(VMCPD_BIN), 'obj');
const TOPS = ['master', 'worker', 'shared', 'proto'];

function walk(dir, out = []) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory())
      walk(p, out);
    else if (/\.[ch]$/.test(e.name))
      out.push(path.relative(ROOT, p));
  }
  return out;
}

/* worker/<room>/x.c: worker/<room>; worker/x.c: worker; else its top folder */
function folder(file) {
  const parts = file.split('/');
  if (parts[0] === 'worker')
    return parts.length === 3 ? `worker/${parts[1]}` : 'worker';
  return parts[0];
}

/* the folders in a circle (Tarjan's strongly connected components of more than one) */
function circles(edges) {
  const g = new Map();
  for (const k of edges.keys()) {
    const [a, b] = k.split(' ');
    if (!g.has(a)) g.set(a, new Set());
    if (!g.has(b)) g.set(b, new Set());
    g.get(a).add(b);
  }
  let n = 0;
  const idx = new Map(), low = new Map(), stack = [], on = new Set(), out = [];
  const visit = (v) => {
    idx.set(v, n); low.set(v, n); n++;
    stack.push(v); on.add(v);
    for (const w of g.get(v)) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w))
        low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const comp = [];
      let w;
      do {
        w = stack.pop(); on.delete(w); comp.push(w);
      } while (w !== v);
      if (comp.length > 1)
        out.push(comp.sort());
    }
  };
  for (const v of g.keys())
    if (!idx.has(v))
      visit(v);
  return out;
}

function explain(comps, edges) {
  return comps.map((c) => `circle ${c.join(' ')}:\n` + [...edges].filter(([k]) => {
    const [a, b] = k.split(' ');
    return c.includes(a) && c.includes(b);
  }).map(([k, v]) => `  ${k.replace(' ', ' -> ')}: ${[...v].slice(0, 6).join(', ')}`).join('\n')).join('\n');
}

const sources = TOPS.flatMap((t) => walk(path.join(ROOT, t)));

describe('the shape of the code', () => {
  test('no two folders include each other in a circle', () => {
    const edges = new Map();
    for (const f of sources) {
      const text = fs.readFileSync(path.join(ROOT, f), 'utf8');
      for (const m of text.matchAll(/^#include "([^"]+)"/gm)) {
        let h = m[1];
        if (!fs.existsSync(path.join(ROOT, h)))
          h = path.join(path.dirname(f), h);
        if (!fs.existsSync(path.join(ROOT, h)) || folder(h) === folder(f))
          continue;
        const k = `${folder(f)} ${folder(h)}`;
        if (!edges.has(k)) edges.set(k, new Set());
        edges.get(k).add(`${path.basename(f)} includes ${path.basename(h)}`);
      }
    }
    assert.ok(edges.size > 20, `the includes were read (${edges.size} folder pairs)`);
    const c = circles(edges);
    assert.equal(c.length, 0, explain(c, edges));
  });

  test('no two folders call each other in a circle', () => {
    const defs = new Map(), undefs = new Map();
    for (const f of sources.filter((s) => s.endsWith('.c'))) {
      const o = path.join(OBJ, f.replace(/\.c$/, '.o'));
      if (!fs.existsSync(o))
        continue;
      const u = new Set();
      for (const line of execFileSync('nm', [o], { encoding: 'utf8' }).split('\n')) {
        const p = line.trim().split(/\s+/);
        if (p.length === 3 && 'TDBR'.includes(p[1]))
          defs.set(p[2], f);
        else if (p.length === 2 && p[0] === 'U')
          u.add(p[1]);
      }
      undefs.set(f, u);
    }
    assert.ok(undefs.size > 100, `the objects were read (${undefs.size} of ${OBJ})`);
    const edges = new Map();
    for (const [f, us] of undefs)
      for (const s of us) {
        const d = defs.get(s);
        if (d === undefined || folder(d) === folder(f))
          continue;
        const k = `${folder(f)} ${folder(d)}`;
        if (!edges.has(k)) edges.set(k, new Set());
        edges.get(k).add(`${path.basename(f)} calls ${s}`);
      }
    const c = circles(edges);
    assert.equal(c.length, 0, explain(c, edges));
  });

  test('method names compared only by the method table and the parsers', () => {
    const methods = /\bstrn?cmp\s*\([^;]*"(initialize|ping|(tools|prompts|resources|completion|logging|notifications|server|subscriptions|tasks)\/[a-zA-Z_/]*)"/;
    const hits = sources.filter((f) => f.endsWith('.c') && f !== 'proto/method.c')
      .flatMap((f) => fs.readFileSync(path.join(ROOT, f), 'utf8').split('\n')
        .map((l, i) => [f, i + 1, l]).filter(([, , l]) => methods.test(l)))
      .map(([f, i, l]) => `${f}:${i}: ${l.trim()}`);
    assert.ok(hits.length <= 3, `strcmp on method names:\n${hits.join('\n')}`);
  });

  test("a client request's message released in one place", () => {
    const hits = sources.filter((f) => f.startsWith('worker/') && f.endsWith('.c'))
      .filter((f) => /\bjsonrpc_msg_clear\s*\(/.test(fs.readFileSync(path.join(ROOT, f), 'utf8')));
    // request.c releases a client's; backend.c a backend's answer's,
    // bstream.c those of a backend's notification streams
    assert.deepEqual(hits.sort(), ['worker/events/bstream.c', 'worker/process/request.c',
      'worker/upstream/backend.c']);
  });
});
