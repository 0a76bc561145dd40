#!/usr/bin/env node
// compare.mjs DIRECT_DIR THROUGH_DIR [--expected-failures FILE]
//     [--expected-check-losses FILE]
//   Compares two conformance runs (tests/conformance/run.sh output folders)
//   of the same requirements set: the suite run against the fixture
//   directly and through vmcpd.  A scenario passes when none of the checks
//   in its checks.json has status FAILURE.  Every scenario that passes
//   directly but fails (or is missing) through the gateway is a mismatch;
//   it is expected when FILE lists it (one scenario name per line, `#`
//   starts a comment, conventionally the reason).  A listed scenario that
//   no longer mismatches is stale: the file must stay true.
//   With --expected-check-losses, the checks too: every check that is
//   SUCCESS directly must be SUCCESS through the gateway (a check id that
//   repeats within a scenario is compared occurrence by occurrence, in
//   order).  A lost check is expected when that FILE lists it
//   ("scenario check-id  # why", one a line; the entry covers every
//   occurrence of the id) or its scenario is an expected failure; a
//   listed check that is not lost is stale.
//   Prints a table and ends with "N passed, N failed": passed = scenarios
//   whose through result matches (or beats) the direct one; failed =
//   unexpected mismatches, unexpected lost checks and stale entries.
//   Expected mismatches and the checks' figures are counted on lines of
//   their own.  Exit 1 if failed > 0.
//
// compare.mjs --show DIR
//   Prints one run's per-scenario table, marking the scenarios its
//   requirements set does not score; ends with "N passed, N failed" over
//   the scored scenarios.  Exit 1 if a scored scenario failed or has no
//   result.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const REQ_DIR = path.join(ROOT,
  'node_modules/@modelcontextprotocol/conformance/requirements');

function usage() {
  console.error('usage: compare.mjs DIRECT_DIR THROUGH_DIR ' +
    '[--expected-failures FILE] [--expected-check-losses FILE]\n' +
    '       compare.mjs --show DIR');
  process.exit(2);
}

// The suite names each folder "server-<scenario>-<ISO timestamp>".
const FOLDER_RE = /^server-(.+)-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$/;

/* Map scenario -> { pass, total, failed, messages } for one run folder. */
function loadRun(dir) {
  let names;
  try {
    names = fs.readdirSync(dir).sort();
  } catch (e) {
    console.error(`compare.mjs: cannot read ${dir}: ${e.message}`);
    process.exit(2);
  }
  const runs = new Map();
  for (const name of names) {
    const m = FOLDER_RE.exec(name);
    const file = path.join(dir, name, 'checks.json');
    if (!m || !fs.existsSync(file))
      continue;
    let checks;
    try {
      checks = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (e) {
      checks = [{ id: 'checks.json', status: 'FAILURE',
        errorMessage: `unreadable: ${e.message}` }];
    }
    if (!Array.isArray(checks))
      checks = [{ id: 'checks.json', status: 'FAILURE',
        errorMessage: 'not an array' }];
    const failures = checks.filter((c) => c.status === 'FAILURE');
    const count = (st) => checks.filter((c) => c.status === st).length;
    // Sorted names: a later run of the same scenario wins.
    runs.set(m[1], {
      pass: failures.length === 0,
      total: checks.length,
      failed: failures.length,
      succeeded: count('SUCCESS'),
      warned: count('WARNING'),
      messages: failures.map((c) => `${c.id}: ${c.errorMessage ?? ''}`),
      checks,
    });
  }
  return runs;
}

/* {scored:Set, unscored:Set} of server scenarios of a requirements file. */
function loadRequirements(rev) {
  const scored = new Set();
  const unscored = new Set();
  let text;
  try {
    text = fs.readFileSync(path.join(REQ_DIR, `${rev}.yaml`), 'utf8');
  } catch {
    return null;
  }
  let section = null;
  let pending = null;	// a not_scored entry waiting for its leg
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*/, '').trimEnd();
    if (line === '')
      continue;
    const top = /^(\w+):/.exec(line);
    if (top) {
      section = top[1];
      continue;
    }
    if (section === 'server') {
      const m = /^\s*-\s*(\S+)$/.exec(line);
      if (m)
        scored.add(m[1]);
    } else if (section === 'not_scored') {
      const s = /^\s*-\s*scenario:\s*(\S+)$/.exec(line);
      const l = /^\s*leg:\s*(\S+)$/.exec(line);
      if (s)
        pending = s[1];
      else if (l && pending !== null) {
        if (l[1] === 'server')
          unscored.add(pending);
        pending = null;
      }
    }
  }
  return { scored, unscored };
}

function readRevision(dir) {
  try {
    return fs.readFileSync(path.join(dir, 'requirements'), 'utf8').trim();
  } catch {
    return null;
  }
}

/* Entries, one a line (a scenario name, or "scenario check-id" with
 * words = 2); '#' comments and blank lines ignored.  Map entry -> why. */
function loadExpected(file, words = 1) {
  const names = new Map();	// name -> reason
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    console.error(`compare.mjs: cannot read ${file}: ${e.message}`);
    process.exit(2);
  }
  for (const raw of text.split('\n')) {
    const hash = raw.indexOf('#');
    const name = (hash >= 0 ? raw.slice(0, hash) : raw).trim();
    if (name === '')
      continue;
    const parts = name.split(/\s+/);
    if (parts.length !== words) {
      console.error(`compare.mjs: ${file}: "${name}": expected ` +
        (words === 1 ? 'a scenario name' : '"scenario check-id"'));
      process.exit(2);
    }
    names.set(parts.join(' '), hash >= 0 ? raw.slice(hash + 1).trim() : '');
  }
  return names;
}

/*
 * The checks of one scenario that are SUCCESS directly and not through:
 * [{ id, status }] (status: the through run's, or "missing").  The k-th
 * occurrence of an id directly is compared with its k-th through.
 */
function lostChecks(d, t) {
  const seen = new Map();	// id -> occurrences so far
  const through = new Map();	// id -> [status...] in order
  for (const c of t?.checks ?? []) {
    if (!through.has(c.id))
      through.set(c.id, []);
    through.get(c.id).push(c.status);
  }
  const lost = [];
  for (const c of d.checks) {
    const k = seen.get(c.id) ?? 0;
    seen.set(c.id, k + 1);
    if (c.status !== 'SUCCESS')
      continue;
    const st = through.get(c.id)?.[k] ?? 'missing';
    if (st !== 'SUCCESS')
      lost.push({ id: c.id, status: st });
  }
  return lost;
}

/*
 * The check-level comparison: figures, problems (pushed), and the
 * number of failures (unexpected losses and stale entries).
 */
function compareChecks(direct, through, expectedScenarios, losses, file,
    problems) {
  let succeeded = 0;
  let expectedLost = 0;
  let unexpected = 0;
  const lostKeys = new Set();
  const lines = [];
  for (const name of [...direct.keys()].sort()) {
    const d = direct.get(name);
    succeeded += d.checks.filter((c) => c.status === 'SUCCESS').length;
    for (const l of lostChecks(d, through.get(name))) {
      const key = `${name} ${l.id}`;
      lostKeys.add(key);
      if (losses.has(key) || expectedScenarios.has(name)) {
        expectedLost++;
        lines.push(`lost ${key}: ${l.status} through (expected: ` +
          `${losses.has(key) ? 'listed' : 'scenario listed'})`);
      } else {
        unexpected++;
        problems.push(`${key}: SUCCESS directly, ${l.status} through`);
      }
    }
  }
  let stale = 0;
  for (const key of losses.keys()) {
    if (!lostKeys.has(key)) {
      stale++;
      problems.push(`${key}: listed in ${file} but not lost (STALE)`);
    }
  }
  const lost = expectedLost + unexpected;
  for (const l of lines)
    console.log(l);
  console.log(`checks: ${succeeded} SUCCESS directly, ` +
    `${succeeded - lost} kept through, ${lost} lost ` +
    `(${expectedLost} expected, ${unexpected} unexpected)` +
    (stale > 0 ? `, ${stale} stale entr${stale === 1 ? 'y' : 'ies'}` : ''));
  return unexpected + stale;
}

/* "pass 3/10": 3 of the 10 checks succeeded, none failed (the rest are
 * INFO, WARNING or SKIPPED); "FAIL 2/10": 2 of the 10 checks failed. */
function describe(r) {
  if (r === undefined)
    return 'missing';
  const warn = r.warned > 0 ? ` (${r.warned} warn)` : '';
  return (r.pass ? `pass ${r.succeeded}/${r.total}` :
    `FAIL ${r.failed}/${r.total}`) + warn;
}

function table(rows, header) {
  const widths = header.map((h, i) =>
    Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const fmt = (r) => r.map((c, i) =>
    String(c).padEnd(widths[i])).join('  ').trimEnd();
  console.log(fmt(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows)
    console.log(fmt(r));
}

function show(dir) {
  const run = loadRun(dir);
  const rev = readRevision(dir);
  const req = rev ? loadRequirements(rev) : null;
  const names = new Set([...run.keys(), ...(req ? req.scored : [])]);
  const rows = [];
  let passed = 0;
  let failed = 0;
  const unscored = [0, 0];	// passed, failed
  const problems = [];
  for (const name of [...names].sort()) {
    const r = run.get(name);
    const scored = req ? req.scored.has(name) : true;
    rows.push([name, describe(r), scored ? '' : 'not scored']);
    if (!scored) {
      unscored[r?.pass ? 0 : 1]++;
      continue;
    }
    if (r?.pass)
      passed++;
    else {
      failed++;
      problems.push(`${name}: ${r ? r.messages.join('; ') : 'no result'}`);
    }
  }
  console.log(`conformance run ${dir}` + (rev ? ` (requirements ${rev})` : ''));
  table(rows, ['scenario', 'result', '']);
  for (const p of problems)
    console.log(`FAILED ${p}`);
  if (unscored[0] + unscored[1] > 0)
    console.log(`not scored: ${unscored[0]} passed, ${unscored[1]} failed`);
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

function compare(directDir, throughDir, expectedFile, lossesFile) {
  const direct = loadRun(directDir);
  const through = loadRun(throughDir);
  const expected = expectedFile ? loadExpected(expectedFile) : new Map();
  const losses = lossesFile ? loadExpected(lossesFile, 2) : null;
  if (direct.size === 0) {
    console.error(`compare.mjs: no scenario results in ${directDir}`);
    return 2;
  }
  const rows = [];
  const problems = [];
  let passed = 0;
  let failed = 0;
  let expectedCount = 0;
  for (const name of [...direct.keys()].sort()) {
    const d = direct.get(name);
    const t = through.get(name);
    const listed = expected.has(name);
    const mismatch = d.pass && !t?.pass;
    let verdict;
    if (mismatch && listed) {
      verdict = 'expected failure';
      expectedCount++;
    } else if (mismatch) {
      verdict = 'FAILED';
      failed++;
      problems.push(`${name}: passes directly, fails through: ` +
        (t ? t.messages.join('; ') : 'no result'));
    } else if (listed) {
      verdict = 'STALE (listed, but no mismatch)';
      failed++;
      problems.push(`${name}: listed in ${expectedFile} but ` +
        (d.pass ? 'passes through the gateway' : 'fails directly too'));
    } else {
      verdict = d.pass ? 'ok' : (t?.pass ? 'ok (fails only directly)' :
        'ok (fails both)');
      // Both pass, but fewer checks succeeded through the gateway: the
      // scenario found less to test there (e.g. JSON instead of SSE).
      if (d.pass && t.succeeded < d.succeeded)
        verdict += ` (${t.succeeded} of ${d.succeeded} successes)`;
      passed++;
    }
    rows.push([name, describe(d), describe(t), verdict]);
  }
  for (const name of expected.keys()) {
    if (!direct.has(name)) {
      failed++;
      problems.push(`${name}: listed in ${expectedFile} but not run directly`);
    }
  }
  for (const name of through.keys()) {
    if (!direct.has(name))
      rows.push([name, 'missing', describe(through.get(name)),
        'ignored (no direct result)']);
  }
  table(rows, ['scenario', 'direct', 'through', 'verdict']);
  if (losses !== null)
    failed += compareChecks(direct, through, expected, losses, lossesFile,
      problems);
  for (const p of problems)
    console.log(`FAILED ${p}`);
  if (expectedFile)
    console.log(`${expectedCount} expected failure(s) listed in ` +
      `${expectedFile}`);
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

const args = process.argv.slice(2);
if (args[0] === '--show') {
  if (args.length !== 2)
    usage();
  process.exit(show(args[1]));
}
let expectedFile = null;
let lossesFile = null;
const dirs = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--expected-failures') {
    if (i + 1 >= args.length)
      usage();
    expectedFile = args[++i];
  } else if (args[i] === '--expected-check-losses') {
    if (i + 1 >= args.length)
      usage();
    lossesFile = args[++i];
  } else if (args[i].startsWith('-'))
    usage();
  else
    dirs.push(args[i]);
}
if (dirs.length !== 2)
  usage();
process.exit(compare(dirs[0], dirs[1], expectedFile, lossesFile));
