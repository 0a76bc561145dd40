// vmcpctl links (users' linked upstream accounts, outgoingAuth type
// authorization_code) on what vmcpd's store writes: tests/unit/
// drive_links.c stores two users' links as the workers do
// (worker/state/link.c); vmcpctl lists them (text and -j), dumps them,
// revokes one by its subject and one by its scope, and never shows a
// token, sealed or not.  No daemon: the store alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { vmcpctl } from './lib/harness.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BUILD = path.dirname(path.resolve(ROOT, process.env.VMCPD_BIN || 'build/vmcpd'));
const DRIVER = path.join(BUILD, 'tests', 'drive_links');
const ALICE = '0123456789abcdef0123456789abcdef';
const BOB = 'fedcba9876543210fedcba9876543210';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'links-ctl-'));
const drive = spawnSync(DRIVER, [dir], { encoding: 'utf8' });
const tokens = drive.stdout.trim().split('\n');

function noToken(out) {
  for (const t of tokens)
    assert.ok(!out.includes(t), `a token in vmcpctl's output: ${out}`);
  // nor a part of one
  assert.ok(!/S3cr3t/.test(out), out);
}

test('drive_links stored the links', () => {
  assert.equal(drive.status, 0, drive.stderr);
  assert.equal(tokens.length, 4);
});

test('vmcpctl links lists who, which backend and when, never a token', async () => {
  const j = await vmcpctl(['links', '-j'], { stateDir: dir });
  assert.equal(j.code, 0, j.stderr);
  noToken(j.stdout);
  const list = JSON.parse(j.stdout);
  assert.deepEqual(list.map((l) => [l.scope, l.iss, l.sub, l.backend]), [
    [ALICE, 'https://idp.example', 'alice', 'github'],
    [BOB, 'https://idp.example', 'bob', 'linear'],
  ]);
  for (const l of list) {
    assert.match(l.linked, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.match(l.expires, /Z$/);
    assert.equal(l.refreshed, null);
    assert.ok(Date.parse(l.expires) - Date.parse(l.linked) === 3600 * 1000);
  }
  const t = await vmcpctl(['links'], { stateDir: dir });
  assert.equal(t.code, 0, t.stderr);
  noToken(t.stdout);
  assert.match(t.stdout, /^github https:\/\/idp\.example alice\n  scope 0123/m);
  const d = await vmcpctl(['dump', 'links'], { stateDir: dir });
  assert.equal(d.code, 0, d.stderr);
  noToken(d.stdout);
  const recs = d.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(recs.map((r) => [r.key, r.value.sub]),
    [[`${ALICE}|github`, 'alice'], [`${BOB}|linear`, 'bob']]);
  const all = await vmcpctl(['dump', '-a'], { stateDir: dir });
  assert.equal(all.code, 0, all.stderr);
  noToken(all.stdout);
});

test('vmcpctl links revoke drops one link, by subject or by scope', async () => {
  let r = await vmcpctl(['links', 'revoke', 'alice', 'linear'], { stateDir: dir });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /no link of alice for backend linear/);
  r = await vmcpctl(['links', 'revoke', 'alice', 'github'], { stateDir: dir });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /link of alice for backend github revoked/);
  r = await vmcpctl(['links', 'revoke', BOB, 'linear'], { stateDir: dir });
  assert.equal(r.code, 0, r.stderr);
  r = await vmcpctl(['links', '-j'], { stateDir: dir });
  assert.deepEqual(JSON.parse(r.stdout), []);
  r = await vmcpctl(['links', 'revoke', 'alice'], { stateDir: dir });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /usage:/);
});

test.after(() => fs.rmSync(dir, { recursive: true, force: true }));
