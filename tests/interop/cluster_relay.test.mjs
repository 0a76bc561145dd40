// Pending relayed requests shared through Redis (sessionStorage.provider
// redis; docs/ARCHITECTURE.md, Beyond one host): three vmcpd nodes
// behind HAProxy; an SDK v1 client's call to a backend that elicits is
// relayed by the session's node, and the client's answer is POSTed to
// another node (its port directly: HAProxy keeps a session on its
// node), which takes the pending record from Redis (pend:<sid>:<id>)
// and sends the answer on to the backend.  Redis down: the answer is a
// 503, never half delivered.  The same for MRTR (a 2026-07-28 backend's
// input request asked of a Legacy client): the node the answer reaches
// records it in Redis and publishes the id on the waiting worker's
// channel, which wakes the call on the first node.  And workflow
// handles: a composite suspended for a 2026-07-28 client on one node is
// resumed on another (its handle claimed in Redis, handle:<id>), and a
// replay is refused on every node, the first one's included.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { guarded, rpc, workerOf, withTimeout, waitFor, HOST, startTestBackend } from './lib/harness.mjs';
import { useMulti, startSpec, startModern, textOf, modern, modernMeta } from './lib/multi.mjs';
import { startCluster } from './lib/cluster.mjs';

useMulti();

const PREFIX = 'thv:vmcp:session:';

/* a cluster on one backend; the node index of each worker pid */
async function cluster3(backendUrl, name, extra = '') {
  const cluster = await startCluster({ n: 3, backendUrl, workers: 1, name, extra });
  cluster.owner = new Map();
  for (const [i, d] of cluster.nodes.entries())
    for (const pid of await d.workerPids())
      cluster.owner.set(pid, i);
  return cluster;
}

async function stopCluster(cluster) {
  for (const d of cluster?.nodes ?? [])
    if (!d.stopped)
      await d.stop();
}

/* the node (its index) serving a Legacy session */
async function homeOf(cluster, sid) {
  const r = await rpc(cluster.haproxy.port, sid, 'tools/list', {});
  assert.equal(r.status, 200, r.text);
  return cluster.owner.get(workerOf(r)?.pid);
}

/*
 * An SDK v1 client through HAProxy whose answers to vmcpd's requests
 * go to the node given by answerNode() (null: through HAProxy).
 * {client, transport, answered: [{port, status, id}]}
 */
async function connect(cluster, answerNode, elicit) {
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

describe('an elicitation relayed by one node answered through another', () => {
  let asker, cluster;

  before(async () => {
    asker = await startSpec({ label: 'asker', elicit: true });
    cluster = await cluster3(asker.url, 'relay');
  });

  after(() => stopCluster(cluster));

  test('the answer POSTed to another node reaches the backend; the record is taken once',
    guarded(async () => {
      let other = null, pendKey = null, pendTtl = null;
      const { client, transport, answered } = await connect(cluster, () => other,
        async (req, extra) => {
          // the record is in Redis while the client is asked
          pendKey = `${PREFIX}pend:${transport.sessionId}:${extra.requestId}`;
          pendTtl = Number(await cluster.redis.cli('PTTL', pendKey));
          return { action: 'accept', content: { answer: `asked ${req.params.message}` } };
        });
      try {
        const home = await homeOf(cluster, transport.sessionId);
        other = cluster.nodes[(home + 1) % cluster.nodes.length];
        const r = await withTimeout(client.callTool({ name: 'ask',
          arguments: { question: 'which node?' } }, undefined, { timeout: 20000 }),
        25000, 'the elicited call');
        assert.equal(textOf(r),
          'answer {"action":"accept","content":{"answer":"asked which node?"}}');
        // the result may reach the client before the answer's own reply
        await waitFor('the answer\'s reply', () => answered.length >= 1);
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
      const { client, transport, answered } = await connect(cluster, () => other, async () => {
        process.kill(cluster.redis.proc.pid, 'SIGSTOP');
        return { action: 'accept', content: { answer: 'lost' } };
      });
      try {
        const home = await homeOf(cluster, transport.sessionId);
        other = cluster.nodes[(home + 1) % cluster.nodes.length];
        // the call fails (the backend never gets its answer); how soon
        // does not matter here
        await withTimeout(client.callTool({ name: 'ask', arguments: { question: 'down?' } },
          undefined, { timeout: 8000 }).catch(() => null), 15000, 'the call');
        await waitFor('the answer\'s reply', () => answered.length >= 1);
        assert.equal(answered.length, 1);
        assert.equal(answered[0].status, 503);
      } finally {
        process.kill(cluster.redis.proc.pid, 'SIGCONT');
        await client.close().catch(() => {});
      }
    }));
});

describe('an MRTR input request asked by one node answered through another', () => {
  let mod, cluster;

  before(async () => {
    mod = await startModern({ label: 'M', modernOnly: true, tools: ['echo'], mrtr: true });
    cluster = await cluster3(mod.url, 'mrtr');
  });

  after(() => stopCluster(cluster));

  test('the answer recorded in Redis wakes the call on the first node', guarded(async () => {
    let other = null;
    const asked = [];
    const { client, transport, answered } = await connect(cluster, () => other,
      async (req, extra) => {
        asked.push(extra.requestId);
        return { action: 'accept', content: { name: `Lin${asked.length}`, answer: `a${asked.length}` } };
      });
    try {
      // each worker listens on its own channel
      const chans = (await cluster.redis.cli('PUBSUB', 'CHANNELS', `${PREFIX}wake:*`))
        .split('\n').filter(Boolean);
      assert.equal(chans.length, 3, chans.join(' '));
      const home = await homeOf(cluster, transport.sessionId);
      other = cluster.nodes[(home + 2) % cluster.nodes.length];
      const r = await withTimeout(client.callTool({ name: 'mrtr_ask', arguments: {} },
        undefined, { timeout: 20000 }), 25000, 'the MRTR call');
      assert.equal(textOf(r), 'M:hello Lin1');
      // the result may reach the client before the answer's own reply
      await waitFor('the answer\'s reply', () => answered.length >= 1);
      assert.equal(answered.length, 1, 'the answer went to the other node');
      assert.equal(answered[0].port, other.port);
      assert.equal(answered[0].status, 202);
      assert.match(String(answered[0].id), /^vmcpd-m-[0-9a-f]{32}$/);
      // taken by the waiting node: gone from Redis
      assert.equal(await cluster.redis.cli('EXISTS',
        `${PREFIX}pend:${transport.sessionId}:${asked[0]}`), '0');
      // a second answer to the same id (a replay) is refused, not sent
      const again = await fetch(`http://${HOST}:${other.port}/mcp`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
          'Mcp-Session-Id': transport.sessionId, 'Mcp-Protocol-Version': '2025-11-25' },
        body: JSON.stringify({ jsonrpc: '2.0', id: asked[0],
          result: { action: 'accept', content: { name: 'Eve' } } }),
      });
      assert.equal(again.status, 202);
      // two rounds, both answered elsewhere
      const r2 = await withTimeout(client.callTool({ name: 'mrtr_two', arguments: {} },
        undefined, { timeout: 20000 }), 25000, 'the two-round call');
      assert.equal(textOf(r2), 'M:first=a2 second=a3');
      await waitFor('the answers\' replies', () => answered.length >= 3);
      assert.equal(answered.length, 3);
      assert.ok(answered.every((a) => a.port === other.port && a.status === 202));
    } finally {
      await client.close().catch(() => {});
    }
  }));
});

const COMPOSITE = `
compositeTools:
  - name: ask
    description: Ask the user, echo the choice
    steps:
      - id: confirm
        type: elicitation
        message: "Which channel?"
        schema:
          type: object
          properties:
            channel: {type: string}
          required: [channel]
      - id: last
        tool: everything.echo
        dependsOn: [confirm]
        arguments: {message: "{{.steps.confirm.output.content.channel}}"}
    output:
      properties:
        last: {type: string, value: "{{.steps.last.output.text}}"}
`;

describe('a composite suspended on one node resumed on another', () => {
  let backend, cluster;

  before(async () => {
    backend = await startTestBackend();
    cluster = await cluster3(backend.url, 'handles', COMPOSITE);
  });

  after(() => stopCluster(cluster));

  /* a raw 2026-07-28 tools/call of ask, by a client that can be asked */
  const ask = (port, params = {}) => modern(port, 'tools/call',
    { _meta: modernMeta({ elicitation: {} }), name: 'ask', arguments: {}, ...params },
    { 'Mcp-Name': 'ask' });
  const refused = (r) => assert.deepEqual(r.json?.error,
    { code: -32602, message: 'invalid or expired requestState' }, r.text);
  const answer = (channel) => ({ confirm: { action: 'accept', content: { channel } } });

  test('resumed on another node; a replay refused on every node', guarded(async () => {
    const [a, b, c] = cluster.nodes;
    const s = await ask(a.port);
    assert.equal(s.json?.result?.resultType, 'input_required', s.text);
    const state = s.json.result.requestState;
    const key = `${PREFIX}handle:${state}`;
    assert.equal(await cluster.redis.cli('EXISTS', key), '1');
    const pttl = Number(await cluster.redis.cli('PTTL', key));
    assert.ok(pttl > 0, `PTTL ${pttl}`);
    const r = await ask(b.port, { requestState: state, inputResponses: answer('#eng') });
    assert.equal(r.json?.result?.resultType, 'complete', r.text);
    assert.deepEqual(r.json.result.structuredContent, { last: 'Echo: #eng' });
    // used: a replay is refused everywhere, where it was minted too
    for (const d of [c, a, b])
      refused(await ask(d.port, { requestState: state, inputResponses: answer('#x') }));
    assert.equal(await cluster.redis.cli('HGET', key, 'u'), '1');
    assert.equal(await cluster.redis.cli('HEXISTS', key, 's'), '0', 'the state is gone');
    // a forged one, and through HAProxy (which spreads 2026-07-28 calls)
    refused(await ask(c.port, { requestState: `vmcpd-h-${'A'.repeat(32)}`,
      inputResponses: answer('#x') }));
    const s2 = await ask(cluster.haproxy.port);
    const r2 = await ask(cluster.haproxy.port, { requestState: s2.json.result.requestState,
      inputResponses: answer('#ops') });
    assert.deepEqual(r2.json?.result?.structuredContent, { last: 'Echo: #ops' }, r2.text);
  }));

  test('Redis hung: the retry fails with the session store named, never a node\'s copy',
    guarded(async () => {
      const s = await ask(cluster.nodes[0].port);
      const state = s.json.result.requestState;
      process.kill(cluster.redis.proc.pid, 'SIGSTOP');
      let r;
      try {
        r = await ask(cluster.nodes[0].port, { requestState: state,
          inputResponses: answer('#down') });
      } finally {
        process.kill(cluster.redis.proc.pid, 'SIGCONT');
      }
      assert.equal(r.json?.error?.code, -32000, r.text);
      assert.match(r.json.error.message, /session store \(Redis\) is unavailable/);
    }));
});
