// incomingAuth type local: vmcpd on a Unix socket (daemon.listen:
// unix:/path), the principal the peer's user (SO_PEERCRED).  A session
// opened by one user is unknown to another (404); the second user is
// played by setpriv(1) running curl as nobody.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';

import {
  useHarness, guarded, startTestBackend, Daemon, configText, tmpDir, run, nextId,
  MCP_ACCEPT, LEGACY_VERSION, VMCPD_BIN,
} from './lib/harness.mjs';

useHarness();

/* one request over the Unix socket; {status, headers, json} */
function unixRequest(sock, { method = 'POST', path: p = '/mcp', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const h = { Host: 'localhost', ...headers };
    if (data !== undefined)
      Object.assign(h, { 'Content-Type': 'application/json', Accept: MCP_ACCEPT,
        'Content-Length': Buffer.byteLength(data) });
    const req = http.request({ socketPath: sock, method, path: p, headers: h, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { text += c; });
      res.on('end', () => {
        let json = null;
        try { json = JSON.parse(text); } catch { /* not JSON */ }
        resolve({ status: res.statusCode, headers: res.headers, text, json });
      });
    });
    req.setTimeout(15000, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    if (data !== undefined)
      req.write(data);
    req.end();
  });
}

class UnixDaemon extends Daemon {
  health() {
    return unixRequest(this.sock, { method: 'GET', path: '/healthz' }).catch(() => ({ status: 0 }));
  }
}

const initialize = () => ({
  jsonrpc: '2.0', id: nextId(), method: 'initialize',
  params: { protocolVersion: LEGACY_VERSION, capabilities: {}, clientInfo: { name: 'local', version: '1' } },
});
const call = () => ({
  jsonrpc: '2.0', id: nextId(), method: 'tools/call', params: { name: 'echo', arguments: { message: 'hi' } },
});

describe('incomingAuth local on a Unix socket', () => {
  let backend, daemon, sock;

  before(async () => {
    backend = await startTestBackend();
    const dir = await tmpDir();
    await fsp.chmod(dir, 0o755);	// nobody reaches the socket
    sock = path.join(dir, 'vmcpd.sock');
    const cfg = path.join(dir, 'vmcpd.yaml');
    daemon = new UnixDaemon(dir, cfg, { workers: 2 });
    daemon.sock = sock;
    const text = configText({ portFile: daemon.portFile, stateDir: daemon.stateDir,
      backendUrl: backend.url, backendName: 'b', extra: 'incomingAuth: {type: local}\n' });
    await daemon.writeConfig(text.replace(/listen: .*/, `listen: "unix:${sock}"`));
    await daemon.start();
    await fsp.chmod(sock, 0o666);
  });

  after(async () => {
    if (daemon)
      await daemon.stop();
  });

  test('vmcpd -n: local needs a Unix socket listen', guarded(async () => {
    const dir = await tmpDir();
    const cfg = path.join(dir, 'vmcpd.yaml');
    await fsp.writeFile(cfg, configText({ portFile: path.join(dir, 'port'),
      stateDir: path.join(dir, 'state'), backendUrl: backend.url, extra: 'incomingAuth: {type: local}\n' }));
    const r = await run(VMCPD_BIN, ['-n', '-f', cfg]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /type local needs daemon\.listen: unix:\/path/);
  }));

  test('served over the socket, the caller\'s user the principal', guarded(async () => {
    const init = await unixRequest(sock, { body: initialize() });
    assert.equal(init.status, 200, init.text);
    const sid = init.headers['mcp-session-id'];
    const r = await unixRequest(sock, { body: call(),
      headers: { 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': LEGACY_VERSION } });
    assert.equal(r.status, 200, r.text);
    assert.match(r.text, /Echo: hi/);
    const m = await unixRequest(sock, { method: 'GET', path: '/.well-known/oauth-protected-resource' });
    assert.equal(m.status, 404);
  }));

  test('attack: another user\'s session is answered as an unknown one (404)', guarded(async () => {
    const init = await unixRequest(sock, { body: initialize() });
    assert.equal(init.status, 200, init.text);
    const sid = init.headers['mcp-session-id'];
    const asNobody = (session) => run('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups',
      'curl', '-s', '-o', '-', '-w', '\n%{http_code}', '--unix-socket', sock,
      '-H', 'Content-Type: application/json', '-H', `Accept: ${MCP_ACCEPT}`,
      '-H', `Mcp-Session-Id: ${session}`, '-H', `MCP-Protocol-Version: ${LEGACY_VERSION}`,
      '--data', JSON.stringify(call()), 'http://localhost/mcp']);
    const theirs = await asNobody(sid);
    const unknown = await asNobody('A'.repeat(43));
    const status = (r) => Number(r.stdout.trim().split('\n').pop());
    const body = (r) => JSON.parse(r.stdout.trim().split('\n').slice(0, -1).join('\n'));
    assert.equal(status(theirs), 404, theirs.stdout + theirs.stderr);
    assert.equal(status(unknown), 404);
    assert.deepEqual(body(theirs).error, body(unknown).error);
    // the owner still has it
    const mine = await unixRequest(sock, { body: call(),
      headers: { 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': LEGACY_VERSION } });
    assert.equal(mine.status, 200, mine.text);
  }));
});
