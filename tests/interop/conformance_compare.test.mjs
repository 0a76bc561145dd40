// tests/conformance/compare.mjs itself, on tiny made-up run folders (no
// daemon, no suite): the check-level comparison fails on a check lost
// through the gateway unless it is listed, fails on a listed check that
// is no longer lost, compares a repeated check id occurrence by
// occurrence, and is not made without --expected-check-losses (the
// era-pinned cells of through.sh).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { ROOT, tmpDir } from './lib/harness.mjs';

const COMPARE = path.join(ROOT, 'tests/conformance/compare.mjs');

/* a run folder: scenario -> [[id, status]...] */
function run(dir, scenarios) {
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, checks] of Object.entries(scenarios)) {
    const d = path.join(dir, `server-${name}-2026-01-02T03-04-05-678Z`);
    fs.mkdirSync(d);
    fs.writeFileSync(path.join(d, 'checks.json'), JSON.stringify(
      checks.map(([id, status]) => ({ id, status }))));
  }
  return dir;
}

function compare(base, direct, through, { scenarios = '', checks } = {}) {
  const d = run(path.join(base, 'direct'), direct);
  const t = run(path.join(base, 'through'), through);
  fs.writeFileSync(path.join(base, 'scenarios.txt'), scenarios);
  const args = [COMPARE, d, t, '--expected-failures', path.join(base, 'scenarios.txt')];
  if (checks !== undefined) {
    fs.writeFileSync(path.join(base, 'checks.txt'), checks);
    args.push('--expected-check-losses', path.join(base, 'checks.txt'));
  }
  const r = spawnSync(process.execPath, args, { encoding: 'utf8' });
  return { code: r.status, out: r.stdout + r.stderr };
}

describe('compare.mjs, check by check', () => {
  const direct = {
    alpha: [['a-one', 'SUCCESS'], ['a-two', 'SUCCESS']],
    beta: [['b-rep', 'SUCCESS'], ['b-rep', 'INFO'], ['b-other', 'WARNING']],
  };
  // every scenario passes through; one check of each is not SUCCESS
  const through = {
    alpha: [['a-one', 'SUCCESS'], ['a-two', 'WARNING']],
    beta: [['b-rep', 'INFO'], ['b-rep', 'SUCCESS'], ['b-other', 'SUCCESS']],
  };

  test('a lost check fails the comparison; a repeated id is compared in order', async () => {
    const r = compare(await tmpDir('compare-'), direct, through, { checks: '' });
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /FAILED alpha a-two: SUCCESS directly, WARNING through/);
    // b-rep's first occurrence is lost, though both runs have one SUCCESS
    assert.match(r.out, /FAILED beta b-rep: SUCCESS directly, INFO through/);
    assert.match(r.out, /checks: 3 SUCCESS directly, 1 kept through, 2 lost \(0 expected, 2 unexpected\)/);
    assert.match(r.out, /^2 passed, 2 failed$/m);
  });

  test('listed losses are expected; a check missing through is lost', async () => {
    const r = compare(await tmpDir('compare-'), direct, through, {
      checks: '# why\nalpha a-two\t# JSON, not SSE\nbeta   b-rep # in order\n' });
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /lost alpha a-two: WARNING through \(expected: listed\)/);
    assert.match(r.out, /2 lost \(2 expected, 0 unexpected\)/);
    const gone = compare(await tmpDir('compare-'), direct,
      { ...through, alpha: [['a-one', 'SUCCESS']] }, { checks: 'beta b-rep\n' });
    assert.equal(gone.code, 1, gone.out);
    assert.match(gone.out, /FAILED alpha a-two: SUCCESS directly, missing through/);
  });

  test('a listed check that is not lost is stale and fails', async () => {
    const r = compare(await tmpDir('compare-'), direct, through, {
      checks: 'alpha a-two\nbeta b-rep\nalpha a-one # kept now\ngamma g # not run\n' });
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /FAILED alpha a-one: listed in .* but not lost \(STALE\)/);
    assert.match(r.out, /FAILED gamma g: listed in .* but not lost \(STALE\)/);
    assert.match(r.out, /2 stale entries/);
  });

  test('a malformed entry is refused', async () => {
    const r = compare(await tmpDir('compare-'), direct, through, { checks: 'alpha\n' });
    assert.equal(r.code, 2, r.out);
    assert.match(r.out, /expected "scenario check-id"/);
  });

  test('an expected-failure scenario covers its checks; without the list, no check comparison',
    async () => {
      const failing = { ...through, alpha: [['a-one', 'FAILURE'], ['a-two', 'SUCCESS']] };
      const r = compare(await tmpDir('compare-'), direct, failing, {
        scenarios: 'alpha # known\n', checks: 'beta b-rep\n' });
      assert.equal(r.code, 0, r.out);
      assert.match(r.out, /lost alpha a-one: FAILURE through \(expected: scenario listed\)/);
      const pinned = compare(await tmpDir('compare-'), direct, through);
      assert.equal(pinned.code, 0, pinned.out);
      assert.doesNotMatch(pinned.out, /^checks:/m);
    });
});
