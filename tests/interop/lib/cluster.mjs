// A vmcpd cluster on loopback: redis-server (own port and dir, no
// persistence), N vmcpd nodes (own state dirs, ports and diagnostics
// ports) with sessionStorage.provider redis, and HAProxy in front on
// the shipped etc/haproxy/vmcpd.cfg (its bind and server lines
// rewritten to the ports here).  Everything is started through the
// harness, so it dies with the test (useHarness()).
import fsp from 'node:fs/promises';
import path from 'node:path';
import {
  HOST, ROOT, Daemon, configText, freePort, tmpDir, startProc, waitFor, run, httpRequest,
  groupPids,
} from './harness.mjs';

export const REDIS_SERVER = process.env.REDIS_SERVER || 'redis-server';
export const HAPROXY = process.env.HAPROXY || 'haproxy';
export const HAPROXY_CFG = path.join(ROOT, 'etc/haproxy/vmcpd.cfg');

/* redis-cli against the test's Redis: its stdout, trimmed */
export async function redisCli(port, ...args) {
  const r = await run('redis-cli', ['-h', HOST, '-p', String(port), ...args], { timeout: 5000 });
  return r.stdout.trim();
}

export class Redis {
  constructor(port, dir, password, appendonly = false) {
    this.port = port;
    this.dir = dir;
    this.password = password;
    this.appendonly = appendonly;
    this.proc = null;
  }

  async start({ timeout = 10000 } = {}) {
    this.proc = startProc('redis-server', REDIS_SERVER, [
      '--bind', HOST, '--port', String(this.port), '--dir', this.dir,
      '--save', '', '--appendonly', this.appendonly ? 'yes' : 'no', '--daemonize', 'no',
      '--protected-mode', 'yes', '--loglevel', 'warning',
      ...(this.password ? ['--requirepass', this.password] : []),
    ]);
    await waitFor(`redis-server on port ${this.port}`, async () => {
      if (this.proc.exited)
        throw new Error(`redis-server exited: ${this.proc.output.slice(-2000)}`);
      return (await this.cli('PING')) === 'PONG';
    }, { timeout, interval: 100 });
    return this;
  }

  /* kill -9, and wait for it to be gone */
  async kill() {
    this.proc.killGroup();
    await this.proc.waitExit(5000);
  }

  cli(...args) {
    return redisCli(this.port, ...(this.password ? ['--no-auth-warning', '-a',
      this.password] : []), ...args);
  }
}

/* password: the Redis's requirepass, if any; appendonly: persist (AOF) */
export async function startRedis({ password, appendonly } = {}) {
  const r = new Redis(await freePort(), await tmpDir('vmcpd-redis-'), password, appendonly);
  return r.start();
}

/* the shipped HAProxy configuration, on this test's ports */
export async function haproxyConfig(port, nodes) {
  const text = await fsp.readFile(HAPROXY_CFG, 'utf8');
  const lines = [];
  let servers = false;
  for (const l of text.split('\n')) {
    if (/^\tbind /.test(l)) {
      lines.push(`\tbind ${HOST}:${port}`);
    } else if (/^\tserver /.test(l)) {
      if (!servers)
        nodes.forEach((n, i) => lines.push(`\tserver node${i + 1} ${HOST}:${n.port} check`));
      servers = true;
    } else {
      lines.push(l);
    }
  }
  if (!servers || !lines.some((l) => l === `\tbind ${HOST}:${port}`))
    throw new Error(`${HAPROXY_CFG}: no bind or server lines to rewrite`);
  return lines.join('\n');
}

export class HAProxy {
  constructor(port, dir) {
    this.port = port;
    this.dir = dir;
  }

  async start(nodes, { timeout = 10000 } = {}) {
    const cfg = path.join(this.dir, 'haproxy.cfg');
    await fsp.writeFile(cfg, await haproxyConfig(this.port, nodes));
    // -db: foreground, no daemon; -W not needed
    this.proc = startProc('haproxy', HAPROXY, ['-db', '-f', cfg], { cwd: this.dir });
    await waitFor(`haproxy on port ${this.port}`, async () => {
      if (this.proc.exited)
        throw new Error(`haproxy exited: ${this.proc.output.slice(-2000)}`);
      const r = await httpRequest(this.port, { method: 'GET', path: '/healthz', timeout: 2000 })
        .catch(() => null);
      return r?.status === 200;
    }, { timeout, interval: 100 });
    return this;
  }
}

/*
 * A node: a Daemon with a diagnostics port and sessionStorage on redis
 * (opts.redis: the Redis, or null for provider lmdb).
 */
export async function startNode({ redis, backendUrl, backendName, workers = 1, name = 'cluster',
  extra = '', env, args }) {
  const dir = await tmpDir('vmcpd-node-');
  const d = new Daemon(dir, path.join(dir, 'vmcpd.yaml'), { workers, env });
  d.diagPort = await freePort();
  const storage = redis ? [
    'sessionStorage:',
    '  provider: redis',
    `  address: ${HOST}:${redis.port}`,
    '',
  ].join('\n') : '';
  d.configOpts = { name, portFile: d.portFile, stateDir: d.stateDir, backendUrl, backendName,
    workers, extra: storage + extra };
  await d.writeConfig(configText(d.configOpts).replace('daemon:\n',
    `daemon:\n  diagnostics: ${HOST}:${d.diagPort}\n`));
  await d.start(args ? { args } : undefined);
  return d;
}

/* a node's /metrics: {name: value} of the unlabelled samples */
export async function nodeMetrics(d) {
  const r = await httpRequest(d.diagPort, { method: 'GET', path: '/metrics', timeout: 5000 });
  const m = {};
  for (const l of r.text.split('\n')) {
    const x = /^([a-z_]+) (\d+(?:\.\d+)?)$/.exec(l);
    if (x)
      m[x[1]] = Number(x[2]);
  }
  return m;
}

/*
 * kill -9 a whole node (master, workers, keeper, builder), and wait
 * until every process of it is gone: a worker still dying could take a
 * connection and leave it unanswered (HAProxy's 502, not retried)
 */
export async function killNode(d) {
  d.stopped = true;
  d.proc.killGroup();
  await d.proc.waitExit(5000);
  await waitFor('no process left of the killed node', async () =>
    (await groupPids(d.pid)).length === 0, { timeout: 5000 });
}

/*
 * Redis, n nodes on it, HAProxy in front: {redis, nodes, haproxy}.
 * opts: backendUrl, workers (per node), extra (YAML after the config).
 */
export async function startCluster({ n = 3, ...opts }) {
  const redis = await startRedis();
  const nodes = [];
  for (let i = 0; i < n; i++)
    nodes.push(await startNode({ redis, ...opts }));
  const haproxy = await new HAProxy(await freePort(), await tmpDir('vmcpd-haproxy-'))
    .start(nodes);
  return { redis, nodes, haproxy };
}
