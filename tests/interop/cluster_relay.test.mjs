// Pending relayed requests shared through Redis (sessionStorage.provider
// redis; docs/ARCHITECTURE.md, Beyond one host): three vmcpd nodes
// behind HAProxy; an SDK v1 client's call to a backend that elicits is
// relayed by the session's node, and the client's answer is POSTed to
// another node (its port directly: HAProxy keeps a session on its
// node), which takes the pending record from Redis (pend:<sid>:<id>)
// and sends the answer on to the backend.  Redis down: the answer is a
// 503, never half delivered.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { guarded, rpc, workerOf, withTimeout, HOST } from './lib/harness.mjs';
import { useMulti, startSpec, textOf } from './lib/multi.mjs';
import { startCluster } from './lib/cluster.mjs';

useMulti();

const PREFIX = 'thv:vmcp:session:';

describe('an elicitation relayed by one node answered through another', () => {
  let asker, cluster, owner;

  before(async () => {
    asker = await startSpec({ label: 'asker', elicit: true });
    cluster = await startCluster({ n: 3, backendUrl: asker.url, workers: 1, name: 'relay' });
    owner = new Map();
    for (const [i, d] of cluster.nodes.entries())
      for (const pid of await d.workerPids())
        owner.set(pid, i);
  });

  after(async () => {
    for (const d of cluster?.nodes ?? [])
      if (!d.stopped)
        await d.stop();
  });

  /*
   * An SDK v1 client through HAProxy whose answers to vmcpd's requests
   * go to the node given by answerNode() (null: through HAProxy).
   * {client, transport, answered: [{port, status, id}]}
   */
  async function connect(answerNode, elicit) {
    const answered = [];
    const base = `http://${HOST}:${cluster.haproxy.port}/mcp`;
    const fetchVia = async (url, init) => {
      let body = null;
      try {
        body = init?.method === 'POST' ? JSON.parse(init.body) : null;
      } catch { /* not JSON: as is */ }
      const node = body && !body.method && ('result' in body || 'error' in body) ?
        answerNode() : null;
      if (node === null)
        return fetch(url, init);
      const r = await fetch(`http://${HOST}:${node.port}/mcp`, init);
      answered.push({ port: node.port, status: r.status, id: body.id });
      return r;
    };
    const client = new Client({ name: 'cluster-relay', version: '1.0.0' },
      { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, elicit);
    const transport = new StreamableHTTPClientTransport(new URL(base), { fetch: fetchVia });
    await withTimeout(client.connect(transport), 20000, 'SDK connect');
    return { client, transport, answered };
  }

  const homeOf = async (sid) => {
    const r = await rpc(cluster.haproxy.port, sid, 'tools/list', {});
    assert.equal(r.status, 200, r.text);
    return owner.get(workerOf(r)?.pid);
  };

  test('the answer POSTed to another node reaches the backend; the record is taken once',
    guarded(async () => {
      let other = null, pendKey = null, pendTtl = null;
      const { client, transport, answered } = await connect(() => other,
        async (req, extra) => {
          // the record is in Redis while the client is asked
          pendKey = `${PREFIX}pend:${transport.sessionId}:${extra.requestId}`;
          pendTtl = Number(await cluster.redis.cli('PTTL', pendKey));
          return { action: 'accept', content: { answer: `asked ${req.params.message}` } };
        });
      try {
        const home = await homeOf(transport.sessionId);
        other = cluster.nodes[(home + 1) % cluster.nodes.length];
        const r = await withTimeout(client.callTool({ name: 'ask',
          arguments: { question: 'which node?' } }, undefined, { timeout: 20000 }),
        25000, 'the elicited call');
        assert.equal(textOf(r),
          'answer {"action":"accept","content":{"answer":"asked which node?"}}');
        assert.equal(answered.length, 1, 'the answer went to the other node');
        assert.equal(answered[0].port, other.port);
        assert.equal(answered[0].status, 202);
        assert.match(String(answered[0].id), /^vmcpd-r-[0-9a-f]{32}$/);
        assert.ok(pendTtl > 0, `the record expires (PTTL ${pendTtl})`);
        // taken: gone from Redis
        assert.equal(await cluster.redis.cli('EXISTS', pendKey), '0');
        // the same node takes its own answer as before
        other = cluster.nodes[home];
        const r2 = await withTimeout(client.callTool({ name: 'ask',
          arguments: { question: 'home?' } }, undefined, { timeout: 20000 }),
        25000, 'the elicited call at home');
        assert.equal(textOf(r2), 'answer {"action":"accept","content":{"answer":"asked home?"}}');
        assert.equal(await cluster.redis.cli('EXISTS', pendKey), '0', 'deleted in Redis too');
      } finally {
        await client.close().catch(() => {});
      }
    }));

  test('Redis hung when the answer comes: 503, and the session store is named',
    guarded(async () => {
      let other = null;
      const { client, transport, answered } = await connect(() => other, async () => {
        process.kill(cluster.redis.proc.pid, 'SIGSTOP');
        return { action: 'accept', content: { answer: 'lost' } };
      });
      try {
        const home = await homeOf(transport.sessionId);
        other = cluster.nodes[(home + 1) % cluster.nodes.length];
        // the call fails (the backend never gets its answer); how soon
        // does not matter here
        await withTimeout(client.callTool({ name: 'ask', arguments: { question: 'down?' } },
          undefined, { timeout: 8000 }).catch(() => null), 15000, 'the call');
        assert.equal(answered.length, 1);
        assert.equal(answered[0].status, 503);
      } finally {
        process.kill(cluster.redis.proc.pid, 'SIGCONT');
        await client.close().catch(() => {});
      }
    }));
});
