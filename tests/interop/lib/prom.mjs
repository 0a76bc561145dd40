// The Prometheus text exposition format (0.0.4) as the interop tests
// read /metrics: a strict parser (parseMetrics), sample look-ups, and
// Debian's promtool when it is installed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/* label pairs k="v" (with \\, \" and \n escapes) of a sample, as a map */
function parseLabels(s, where) {
  const labels = new Map();
  let i = 0;
  while (i < s.length) {
    const m = /^([a-zA-Z_][a-zA-Z0-9_]*)="/.exec(s.slice(i));
    assert.ok(m, `${where}: a label name at "${s.slice(i)}"`);
    i += m[0].length;
    let v = '';
    for (;;) {
      assert.ok(i < s.length, `${where}: an unterminated label value`);
      if (s[i] === '\\') {
        assert.ok('\\"n'.includes(s[i + 1]), `${where}: a bad escape`);
        v += s[i + 1] === 'n' ? '\n' : s[i + 1];
        i += 2;
      } else if (s[i] === '"') {
        i++;
        break;
      } else
        v += s[i++];
    }
    assert.ok(!labels.has(m[1]), `${where}: label ${m[1]} twice`);
    labels.set(m[1], v);
    if (s[i] === ',')
      i++;
    else
      assert.equal(i, s.length, `${where}: "," or "}" after a label`);
  }
  return labels;
}

/*
 * The Prometheus text exposition format 0.0.4: HELP and TYPE before a
 * family's samples, each family once and its samples together, names
 * and labels well formed, values numbers, no series twice.  Returns
 * {types: Map(name -> type), samples: [{name, labels, value}]}.
 */
export function parseMetrics(text) {
  assert.ok(text.endsWith('\n'), 'the text ends with a newline');
  const types = new Map();
  const helps = new Set();
  const seen = new Set();
  const samples = [];
  let family = null;
  const done = new Set();
  const lines = text.slice(0, -1).split('\n');
  lines.forEach((line, n) => {
    const where = `line ${n + 1} "${line}"`;
    let m;
    if ((m = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line))) {
      assert.match(m[2], NAME, where);
      if (m[2] !== family) {
        assert.ok(!done.has(m[2]), `${where}: family ${m[2]} split`);
        if (family)
          done.add(family);
        family = m[2];
      }
      if (m[1] === 'TYPE') {
        assert.ok(TYPES.has(m[3]), `${where}: a type`);
        assert.ok(!types.has(m[2]), `${where}: a second TYPE`);
        assert.ok(!samples.some((s) => s.name === m[2]), `${where}: TYPE after samples`);
        types.set(m[2], m[3]);
      } else {
        assert.ok(!helps.has(m[2]), `${where}: a second HELP`);
        helps.add(m[2]);
      }
      return;
    }
    assert.ok(!line.startsWith('#') || /^#( |$)/.test(line), `${where}: a comment`);
    if (line.startsWith('#') || line === '')
      return;
    m = /^([^{\s]+)(?:\{(.*)\})? (\S+)(?: (-?\d+))?$/.exec(line);
    assert.ok(m, `${where}: a sample`);
    assert.match(m[1], NAME, where);
    // a histogram's samples are its _bucket, _sum and _count series
    const base = types.get(family) === 'histogram' ?
      m[1].replace(/_(bucket|sum|count)$/, '') : m[1];
    assert.equal(base, family, `${where}: a sample of the family of its TYPE`);
    if (types.get(family) === 'histogram')
      assert.notEqual(base, m[1], `${where}: _bucket, _sum or _count`);
    const labels = parseLabels(m[2] ?? '', where);
    assert.ok(/^(NaN|[+-]Inf|[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)$/.test(m[3]),
      `${where}: a value`);
    const key = `${m[1]}{${[...labels].sort().map(([k, v]) => `${k}=${v}`).join(',')}}`;
    assert.ok(!seen.has(key), `${where}: series twice`);
    seen.add(key);
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  });
  for (const name of types.keys())
    assert.ok(helps.has(name), `HELP for ${name}`);
  return { types, samples };
}

export const value = (parsed, name, labels = {}) => {
  const s = parsed.samples.find((x) => x.name === name &&
    Object.entries(labels).every(([k, v]) => x.labels.get(k) === v));
  return s?.value;
};
export const sum = (parsed, name) => parsed.samples.filter((x) => x.name === name)
  .reduce((a, x) => a + x.value, 0);

export function promtool() {
  for (const dir of (process.env.PATH || '').split(':')) {
    const p = path.join(dir, 'promtool');
    if (dir && fs.existsSync(p))
      return p;
  }
  return null;
}
