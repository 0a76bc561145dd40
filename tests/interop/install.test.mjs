// Installed as a service: `make install` into a DESTDIR lays out the
// binaries, the man pages, the systemd unit (an unprivileged dynamic
// user, the state directory for the LMDB environment) and a
// /etc/vmcpd/vmcpd.yaml that starts cleanly with no backends.  The
// installed vmcpd runs on the installed config (its paths pointed into
// the temp dir), answers /healthz with an empty view, and logs to a
// journal stream with "<N>" priority prefixes.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

import {
  useHarness, guarded, Daemon, tmpDir, run, openSession, rpc, waitFor, ROOT, VMCPD_BIN,
} from './lib/harness.mjs';

useHarness();

/* the build directory of the vmcpd under test: make install takes it from there */
function makeArgs(destdir) {
  const build = path.relative(ROOT, path.dirname(VMCPD_BIN));
  const args = ['-s', 'install', `DESTDIR=${destdir}`, 'PREFIX=/usr', `BUILD=${build}`];
  if (path.basename(build) === 'build-san')
    args.push('SAN=1');
  return args;
}

const which = (name) => (process.env.PATH || '').split(':')
  .map((d) => path.join(d, name)).find((p) => p !== name && fs.existsSync(p));

describe('make install', () => {
  let dest, dir, daemon, unit, conf;

  before(guarded(async () => {
    dir = await tmpDir('vmcpd-install-');
    dest = path.join(dir, 'root');
    // a make of its own, not a part of make check's (its jobserver)
    const r = await run('make', makeArgs(dest), { timeout: 120000,
      env: { MAKEFLAGS: '', MFLAGS: '', MAKELEVEL: '' } });
    assert.equal(r.code, 0, `make install: ${r.stdout}${r.stderr}`);
    unit = await fsp.readFile(path.join(dest, 'lib/systemd/system/vmcpd.service'), 'utf8');
    conf = await fsp.readFile(path.join(dest, 'etc/vmcpd/vmcpd.yaml'), 'utf8');
  }));

  after(async () => {
    if (daemon && !daemon.stopped && !daemon.proc.exited)
      await daemon.stop();
  });

  test('lays out the binaries, pages, unit and config', () => {
    for (const f of ['usr/sbin/vmcpd', 'usr/sbin/vmcpctl'])
      assert.ok(fs.statSync(path.join(dest, f)).mode & 0o111, `${f} executable`);
    for (const f of ['usr/share/man/man8/vmcpd.8', 'usr/share/man/man8/vmcpctl.8',
      'usr/share/man/man5/vmcpd.yaml.5'])
      assert.ok(fs.existsSync(path.join(dest, f)), f);
  });

  test('the unit runs vmcpd in the foreground as a dynamic user with a state directory', () => {
    assert.match(unit, /^ExecStart=\/usr\/sbin\/vmcpd -d -f \/etc\/vmcpd\/vmcpd\.yaml$/m);
    assert.match(unit, /^ExecStartPre=\/usr\/sbin\/vmcpd -n -f \/etc\/vmcpd\/vmcpd\.yaml$/m);
    assert.match(unit, /^DynamicUser=yes$/m);
    assert.match(unit, /^StateDirectory=vmcpd$/m);
    assert.doesNotMatch(unit, /@[A-Z]+@/, 'every placeholder replaced');
    // the config's stateDir is the unit's state directory
    assert.match(conf, /^ {2}stateDir: \/var\/lib\/vmcpd\b/m);
    // and no daemon.user: a dynamic user cannot switch users
    assert.doesNotMatch(conf, /^ {2}user:/m);
  });

  test('systemd-analyze verify finds nothing in the unit', { skip: !which('systemd-analyze') }, async () => {
    // verify resolves ExecStart: point it at the DESTDIR's binaries
    const copy = path.join(dir, 'vmcpd.service');
    await fsp.writeFile(copy, unit.replaceAll('/usr/sbin/', `${dest}/usr/sbin/`)
      .replaceAll('/etc/vmcpd/', `${dest}/etc/vmcpd/`));
    const r = await run('systemd-analyze', ['verify', '--man=no', copy], { timeout: 30000 });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr.trim(), '', 'no warning');
  });

  test('the installed config names no backend and checks clean', async () => {
    assert.match(conf, /^backends: \[\]$/m);
    assert.doesNotMatch(conf, /node_modules/);
    const r = await run(path.join(dest, 'usr/sbin/vmcpd'),
      ['-n', '-f', path.join(dest, 'etc/vmcpd/vmcpd.yaml')]);
    assert.equal(r.code, 0, r.stderr);
  });

  test('the installed vmcpd serves on the installed config, logging to the journal', async () => {
    const cfg = path.join(dir, 'vmcpd.yaml');
    const log = path.join(dir, 'journal');
    daemon = new Daemon(dir, cfg, {
      workers: 2,
      bin: path.join(dest, 'usr/sbin/vmcpd'),
      // stderr is "the journal": a file JOURNAL_STREAM names, as systemd
      // names the stream it connects (systemd.exec(5))
      wrap: ['sh', '-c', 'exec 2>"$0"; JOURNAL_STREAM=$(stat -c %d:%i "$0") ' +
        'exec "$@"', log],
    });
    await daemon.writeConfig(conf
      .replace(/^ {2}listen: .*$/m, `  listen: 127.0.0.1:0\n  portFile: ${daemon.portFile}`)
      .replace(/^ {2}workers: .*$/m, '  workers: 2')
      .replace(/^ {2}stateDir: .*$/m, `  stateDir: ${daemon.stateDir}`));
    await daemon.start();
    const h = await daemon.health();
    assert.equal(h.status, 200);
    assert.equal(h.json.status, 'ok');
    // an empty view, not an error
    const { sid } = await openSession(daemon.port);
    const list = await rpc(daemon.port, sid, 'tools/list');
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.json.result.tools, []);
    await daemon.stop();
    const lines = (await fsp.readFile(log, 'utf8')).split('\n').filter(Boolean);
    assert.ok(lines.length >= 3, lines.join('\n'));
    for (const l of lines)
      assert.match(l, /^<[0-7]>vmcpd[-a-z]*\[\d+\]: /, 'a priority prefix, no timestamp');
    assert.ok(lines.some((l) => /^<6>.*no backends configured/.test(l)), lines.join('\n'));
    assert.ok(lines.some((l) => /^<6>.*listening on 127\.0\.0\.1:/.test(l)));
  });
});
