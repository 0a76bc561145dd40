// incomingAuth.authz type cedar end to end: the policies of
// etc/examples/authz.yaml (its aggregation and authz blocks, as shipped)
// over two SDK backends, with principals from a real OpenID provider
// (lib/oidc.mjs): alice in group engineering, bob in contractors, and
// tokens signed by the provider's key for carol (engineering, role
// admin) and dave.  The authorization attack cases of the security
// checklist, each its own test: lists filtered in both revisions
// (templates too) with cursors that stay right, the 403 gate before
// session validation and the rate limit, one message for forbidden,
// hidden and nonexistent, forbid over permit, a policy error denying,
// annotations from vmcpd's view only, names as advertised (override,
// priority), a template read checked on the expanded URI, completions
// and unsubscribes gated as the prompt or read they name, server/discover
// cut to the principal, the SDK v1 and v2 clients, and the audit lines
// (a denial's, and the backend a call went to).  tools/call keeps the
// hot paths (the params unparsed but for the arguments a policy reads):
// the example's policies read arg_env, the second suite's none.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';

import {
  guarded, rpc, nextId, waitFor, withTimeout, run, ROOT, VMCPD_BIN, LEGACY_VERSION,
} from './lib/harness.mjs';
import {
  useMulti, startMulti, startSpec, modern, modernMeta, multiConfig,
} from './lib/multi.mjs';
import { startIdp, oidcConfig, sessionAs } from './lib/oidc.mjs';

useMulti();

const EXAMPLE = path.join(ROOT, 'etc/examples/authz.yaml');

/* a top-level block of the example, without its key line, unindented */
function exampleBlock(key) {
  const lines = fs.readFileSync(EXAMPLE, 'utf8').split('\n');
  const at = lines.indexOf(`${key}:`);
  assert.ok(at >= 0, `${key} in ${EXAMPLE}`);
  const out = [];
  for (const l of lines.slice(at + 1)) {
    if (l !== '' && !l.startsWith(' '))
      break;
    out.push(l.slice(2));
  }
  return out.join('\n').trim();
}

/* the example's incomingAuth.authz block, indented under incomingAuth */
function exampleAuthz() {
  const inauth = exampleBlock('incomingAuth').split('\n');
  const at = inauth.indexOf('authz:');
  assert.ok(at >= 0, 'incomingAuth.authz in the example');
  return inauth.slice(at).map((l) => `  ${l}`).join('\n') + '\n';
}

const SPECS = {
  code: {
    label: 'code',
    tools: [
      { name: 'search', annotations: { readOnlyHint: true } },
      { name: 'delete_repo', annotations: { destructiveHint: true } },
      'deploy',
      { name: 'dup', annotations: { destructiveHint: true, readOnlyHint: false } },
    ],
    prompts: ['greet', 'ops_runbook'],
    resources: [{ uri: 'docs://readme', text: 'readme' }, { uri: 'vault://root', text: 'root secret' },
      { uri: 'vault://public', text: 'public entry' }],
    templates: [{ name: 'docs-t', uriTemplate: 'docs://{id}' }, { name: 'vault-t', uriTemplate: 'vault://{key}' }],
  },
  // the loser of dup (read-only here), and raw_search advertised as search_code
  search: {
    label: 'search',
    tools: [{ name: 'dup', annotations: { readOnlyHint: true } }, 'raw_search'],
  },
};

const SEEN = {
  // bob: read-only tools, search_code by name; deploy only with env staging
  bob: {
    tools: ['search', 'search_code'], prompts: ['greet'],
    resources: ['docs://readme', 'vault://public'], resourceTemplates: ['docs://{id}'],
  },
  // alice: everything but destructive tools and no admin role
  alice: {
    tools: ['deploy', 'search', 'search_code'], prompts: ['greet', 'ops_runbook'],
    resources: ['docs://readme', 'vault://public', 'vault://root'],
    resourceTemplates: ['docs://{id}', 'vault://{key}'],
  },
};

const LISTS = [['tools/list', 'tools', 'name'], ['prompts/list', 'prompts', 'name'],
  ['resources/list', 'resources', 'uri'], ['resources/templates/list', 'resourceTemplates', 'uriTemplate']];

const DENIED_CALL = 'Forbidden: call denied by authorization policy';
const DENIED_PROMPT = 'Forbidden: prompt denied by authorization policy';
const DENIED_READ = 'Forbidden: read denied by authorization policy';

/* completion/complete's params: the prompt or the resource (template) */
const completing = (type, key, argument) => ({
  ref: { type, [type === 'ref/prompt' ? 'name' : 'uri']: key },
  argument: { name: argument, value: 'al' },
});

const bearer = (t) => ({ Authorization: `Bearer ${t}` });

/* a 403 denial with JSON-RPC code 403 and message */
function assertDenied(r, message = DENIED_CALL) {
  assert.equal(r.status, 403, r.text);
  assert.equal(r.json.error.code, 403, r.text);
  assert.equal(r.json.error.message, message);
  assert.equal(r.json.error.data, undefined);
}

describe('authz type cedar (etc/examples/authz.yaml)', () => {
  let idp, be, d, auditFile;
  const tok = {};

  before(async () => {
    idp = await startIdp();
    idp.tokenClaims = { alice: { groups: ['engineering'] }, bob: { groups: ['contractors'] } };
    const started = await Promise.all(Object.values(SPECS).map((s) => startSpec(s)));
    be = Object.fromEntries(Object.keys(SPECS).map((k, i) => [k, started[i]]));
    auditFile = path.join(await fsp.mkdtemp(path.join(os.tmpdir(), 'vmcpd-authz-')), 'audit.jsonl');
    d = await startMulti({
      workers: 2,
      backends: Object.keys(SPECS).map((name) => ({ name, url: be[name].url })),
      // one item a page: every cursor is exercised
      aggregation: `${exampleBlock('aggregation')}\npageSize: 1`,
      extra: oidcConfig(idp) + exampleAuthz() + [
        'rateLimiting:',
        '  tools:',
        '    - name: deploy',
        '      perUser: {maxTokens: 2, refillPeriod: 1h}',
        'audit:',
        '  enabled: true',
        `  logFile: ${auditFile}`,
        '',
      ].join('\n'),
    });
    tok.alice = await idp.token('alice');
    tok.bob = await idp.token('bob');
    tok.carol = idp.forge(idp.claims({ sub: 'carol', groups: ['engineering'], roles: ['admin'] }));
    tok.dave = idp.forge(idp.claims({ sub: 'dave', groups: ['contractors'] }));
    // the view has both backends (carol may see every tool)
    await waitFor('the view', async () => (await listAll((m, p) => mod('carol', m, p),
      'tools/list', 'tools', 'name')).keys.length === 5, { timeout: 20000 });
  });

  after(async () => {
    if (d && !d.stopped)
      await d.stop();
    await idp?.stop();
  });

  /* a Legacy session of who: its id */
  const session = (who) => sessionAs(d.port, tok[who], who);


  const legacy = (who, sid, method, params) =>
    rpc(d.port, sid, method, params, { headers: bearer(tok[who]), timeout: 20000 });
  const hname = (params) => params.name ?? params.uri;
  const mod = (who, method, params = {}) => modern(d.port, method, params,
    { ...bearer(tok[who]), ...(hname(params) ? { 'Mcp-Name': hname(params) } : {}) });

  /* every item of a list, page by page: keys in order, and the pages */
  async function listAll(send, method, field, key) {
    const keys = [];
    let cursor, pages = 0;
    do {
      const r = await send(method, cursor ? { cursor } : {});
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.error, undefined, r.text);
      keys.push(...r.json.result[field].map((i) => i[key]));
      cursor = r.json.result.nextCursor;
      assert.ok(++pages <= 20, 'a cursor that never ends');
    } while (cursor);
    return { keys, pages };
  }

  test('lists are filtered per principal in 2025-11-25, templates too, and cursors stay right',
    guarded(async () => {
      for (const who of ['bob', 'alice']) {
        const sid = await session(who);
        for (const [method, field, key] of LISTS) {
          const { keys, pages } = await listAll((m, p) => legacy(who, sid, m, p), method, field, key);
          assert.deepEqual(keys, SEEN[who][field], `${who} ${method}`);
          // a page per item shown, and one past the last at most
          assert.ok(pages <= keys.length + 1, `${who} ${method}: ${pages} pages`);
        }
      }
    }));

  test('lists are filtered per principal in 2026-07-28, templates too, and cursors stay right',
    guarded(async () => {
      for (const who of ['bob', 'alice']) {
        for (const [method, field, key] of LISTS) {
          const { keys, pages } = await listAll((m, p) => mod(who, m, p), method, field, key);
          assert.deepEqual(keys, SEEN[who][field], `${who} ${method}`);
          assert.ok(pages <= keys.length + 1, `${who} ${method}: ${pages} pages`);
        }
        // a filtered list is no page another principal may be served
        const r = await mod(who, 'tools/list');
        assert.equal(r.json.result.cacheScope, 'private');
      }
    }));

  test('the 403 message is the same for a forbidden, a hidden and a nonexistent tool', guarded(async () => {
    const sid = await session('bob');
    // deploy exists (not for bob without env staging), raw_search is the
    // backend's name of search_code, no_such_tool is nowhere
    const answers = [];
    for (const name of ['deploy', 'raw_search', 'no_such_tool']) {
      const l = await legacy('bob', sid, 'tools/call', { name, arguments: {} });
      assertDenied(l);
      const m = await mod('bob', 'tools/call', { name, arguments: {} });
      assertDenied(m);
      answers.push([l.status, l.json.error, m.status, m.json.error]);
    }
    assert.deepEqual(answers[1], answers[0]);
    assert.deepEqual(answers[2], answers[0]);
    // the prompt and the read say their kind, nothing more
    assertDenied(await legacy('bob', sid, 'prompts/get', { name: 'ops_runbook', arguments: { who: 'x' } }),
      'Forbidden: prompt denied by authorization policy');
    assertDenied(await legacy('bob', sid, 'resources/read', { uri: 'vault://root' }),
      'Forbidden: read denied by authorization policy');
    assertDenied(await legacy('bob', sid, 'resources/subscribe', { uri: 'vault://root' }),
      'Forbidden: read denied by authorization policy');
    // and what bob may do works
    const ok = await legacy('bob', sid, 'tools/call', { name: 'search', arguments: { x: '1' } });
    assert.equal(ok.json.result.content[0].text, 'code:search:{"x":"1"}', ok.text);
    const p = await legacy('bob', sid, 'prompts/get', { name: 'greet', arguments: { who: 'bob' } });
    assert.equal(p.json.result.messages[0].content.text, 'code:greet:bob', p.text);
    const s = await legacy('bob', sid, 'resources/subscribe', { uri: 'vault://public' });
    assert.deepEqual(s.json.result, {}, s.text);
  }));

  test('the gate comes before Legacy session validation (403 before 404)', guarded(async () => {
    const bogus = 'no-such-session-0123456789';
    assertDenied(await legacy('bob', bogus, 'tools/call', { name: 'deploy', arguments: {} }));
    // an allowed call on that session is the usual 404
    const r = await legacy('bob', bogus, 'tools/call', { name: 'search', arguments: {} });
    assert.equal(r.status, 404, r.text);
  }));

  test('forbid beats permit', guarded(async () => {
    // alice's group permits everything, the forbid on destructive tools wins
    const sid = await session('alice');
    assertDenied(await legacy('alice', sid, 'tools/call', { name: 'delete_repo', arguments: {} }));
    assertDenied(await mod('alice', 'tools/call', { name: 'delete_repo', arguments: {} }));
    // the forbid's unless: carol has the admin role
    const r = await mod('carol', 'tools/call', { name: 'delete_repo', arguments: {} });
    assert.equal(r.json.result.content[0].text, 'code:delete_repo:{}', r.text);
    // ops_runbook: permitted to all, forbidden unless engineering
    const p = await legacy('alice', sid, 'prompts/get', { name: 'ops_runbook', arguments: { who: 'a' } });
    assert.equal(p.json.result.messages[0].content.text, 'code:ops_runbook:a', p.text);
  }));

  test('annotations in the request body are ignored', guarded(async () => {
    // deploy has no hints in the view: a client claiming readOnlyHint
    // anywhere in its call is still denied
    const sid = await session('bob');
    const params = (meta) => ({
      name: 'deploy', annotations: { readOnlyHint: true, destructiveHint: false },
      arguments: { readOnlyHint: true, annotations: { readOnlyHint: true } },
      _meta: { ...meta, annotations: { readOnlyHint: true }, readOnlyHint: true },
    });
    assertDenied(await legacy('bob', sid, 'tools/call', params({})));
    assertDenied(await mod('bob', 'tools/call', params(modernMeta())));
  }));

  test('a tool renamed by override is authorized by its advertised name', guarded(async () => {
    // the policy names Tool::"search_code"; the backend calls it raw_search
    const sid = await session('bob');
    const r = await legacy('bob', sid, 'tools/call', { name: 'search_code', arguments: { x: 'q' } });
    assert.equal(r.json.result.content[0].text, 'search:raw_search:{"x":"q"}', r.text);
    const m = await mod('bob', 'tools/call', { name: 'search_code', arguments: { x: 'q' } });
    assert.equal(m.json.result.content[0].text, 'search:raw_search:{"x":"q"}', m.text);
    // the backend's own name is no way around it
    assertDenied(await legacy('bob', sid, 'tools/call', { name: 'raw_search', arguments: {} }));
  }));

  test('priority conflict resolution cannot redirect a permit to another backend\'s tool', guarded(async () => {
    // dup is code's (destructive); search's dup is read-only, which bob's
    // read-only permit would allow: decided on the dup that is routed
    const sid = await session('bob');
    assertDenied(await legacy('bob', sid, 'tools/call', { name: 'dup', arguments: {} }));
    assertDenied(await mod('bob', 'tools/call', { name: 'dup', arguments: {} }));
    assertDenied(await mod('bob', 'tools/call', { name: 'search_dup', arguments: {} }));
    // who may call it reaches code's
    const r = await mod('carol', 'tools/call', { name: 'dup', arguments: {} });
    assert.equal(r.json.result.content[0].text, 'code:dup:{}', r.text);
  }));

  test('a template read is checked on the expanded URI', guarded(async () => {
    const sid = await session('bob');
    // vault://{key} is not bob's; vault://public, one expansion, is
    const pub = await legacy('bob', sid, 'resources/read', { uri: 'vault://public' });
    assert.equal(pub.json.result.contents[0].text, 'public entry', pub.text);
    assertDenied(await legacy('bob', sid, 'resources/read', { uri: 'vault://other' }),
      'Forbidden: read denied by authorization policy');
    assertDenied(await mod('bob', 'resources/read', { uri: 'vault://other' }),
      'Forbidden: read denied by authorization policy');
    // docs://{id}: each expansion is like "docs://*"
    const doc = await legacy('bob', sid, 'resources/read', { uri: 'docs://intro' });
    assert.equal(doc.json.result.contents[0].text, 'code:docs://intro', doc.text);
    const m = await mod('bob', 'resources/read', { uri: 'docs://intro' });
    assert.equal(m.json.result.contents[0].text, 'code:docs://intro', m.text);
  }));

  /* the completion/complete POSTs code's backend has seen */
  const completions = async () => Object.entries((await be.code.stats()).methods)
    .filter(([k]) => k.endsWith(' completion/complete')).reduce((n, [, v]) => n + v, 0);

  test('completion/complete is gated as its ref\'s prompts/get or resources/read, in both revisions',
    guarded(async () => {
      const sid = await session('bob');
      const seen = await completions();
      // what bob may not get or read (so not see listed): the 403 of
      // its prompts/get or resources/read, and the backend never asked
      for (const [params, message] of [
        [completing('ref/prompt', 'ops_runbook', 'who'), DENIED_PROMPT],
        [completing('ref/resource', 'vault://{key}', 'key'), DENIED_READ],
        [completing('ref/resource', 'vault://root', 'key'), DENIED_READ],
      ]) {
        assertDenied(await legacy('bob', sid, 'completion/complete', params), message);
        assertDenied(await mod('bob', 'completion/complete', params), message);
      }
      // 403 before 404, as for the calls
      assertDenied(await legacy('bob', 'no-such-session-0123456789', 'completion/complete',
        completing('ref/prompt', 'ops_runbook', 'who')), DENIED_PROMPT);
      assert.equal(await completions(), seen, 'a forbidden completion reached the backend');
      // what bob sees listed, bob completes
      for (const send of [(p) => legacy('bob', sid, 'completion/complete', p),
        (p) => mod('bob', 'completion/complete', p)]) {
        const p = await send(completing('ref/prompt', 'greet', 'who'));
        assert.deepEqual(p.json.result?.completion?.values, ['alice', 'albert'], p.text);
        const t = await send(completing('ref/resource', 'docs://{id}', 'id'));
        assert.deepEqual(t.json.result?.completion?.values, ['alpha', 'alpine'], t.text);
      }
      assert.equal(await completions(), seen + 4);
      // and alice, in engineering, what bob may not
      const a = await mod('alice', 'completion/complete', completing('ref/prompt', 'ops_runbook', 'who'));
      assert.deepEqual(a.json.result?.completion?.values, ['alice', 'albert'], a.text);
    }));

  test('resources/unsubscribe is gated as a read of its URI', guarded(async () => {
    const sid = await session('bob');
    assertDenied(await legacy('bob', sid, 'resources/unsubscribe', { uri: 'vault://root' }), DENIED_READ);
    assertDenied(await legacy('bob', 'no-such-session-0123456789', 'resources/unsubscribe',
      { uri: 'vault://root' }), DENIED_READ);
    const s = await legacy('bob', sid, 'resources/subscribe', { uri: 'vault://public' });
    assert.deepEqual(s.json.result, {}, s.text);
    const u = await legacy('bob', sid, 'resources/unsubscribe', { uri: 'vault://public' });
    assert.deepEqual(u.json.result, {}, u.text);
  }));

  test('server/discover is private and offers what the principal may list', guarded(async () => {
    // bob sees a prompt, resources and templates: all offered
    const r = await mod('bob', 'server/discover');
    assert.equal(r.json.result?.cacheScope, 'private', r.text);
    assert.deepEqual(Object.keys(r.json.result.capabilities).sort(),
      ['completions', 'prompts', 'resources', 'tools'], r.text);
  }));

  test('an argument-gated tool is hidden from the list but callable with the argument', guarded(async () => {
    const sid = await session('bob');
    assert.ok(!SEEN.bob.tools.includes('deploy'));
    assertDenied(await legacy('bob', sid, 'tools/call', { name: 'deploy', arguments: { env: 'prod' } }));
    const r = await legacy('bob', sid, 'tools/call', { name: 'deploy', arguments: { env: 'staging' } });
    assert.equal(r.json.result.content[0].text, 'code:deploy:{}', r.text);
    // 2026-07-28 too; what the policies do not read is not looked at
    assertDenied(await mod('bob', 'tools/call', { name: 'deploy', arguments: { env: 'prod', n: [1] } }));
    const m = await mod('bob', 'tools/call', { name: 'deploy', arguments: { x: 'y', env: 'staging' } });
    assert.equal(m.json.result.content[0].text, 'code:deploy:{"x":"y"}', m.text);
  }));

  test('a denied call consumes no rate-limit token', guarded(async () => {
    // deploy: 2 tokens per user; dave's denied calls take none of them
    const sid = await session('dave');
    for (let i = 0; i < 5; i++) {
      assertDenied(await legacy('dave', sid, 'tools/call', { name: 'deploy', arguments: { env: 'prod' } }));
      assertDenied(await mod('dave', 'tools/call', { name: 'deploy', arguments: { env: 'prod' } }));
    }
    for (let i = 0; i < 2; i++) {
      const r = await mod('dave', 'tools/call', { name: 'deploy', arguments: { env: 'staging' } });
      assert.equal(r.json.error, undefined, r.text);
    }
    const limited = await mod('dave', 'tools/call', { name: 'deploy', arguments: { env: 'staging' } });
    assert.equal(limited.json.error.code, 429, limited.text);
    // still a 403, not a 429, for what is denied
    assertDenied(await mod('dave', 'tools/call', { name: 'deploy', arguments: { env: 'prod' } }));
  }));

  /* an SDK client's tools, page by page */
  async function sdkToolNames(client) {
    const names = [];
    let cursor;
    do {
      const r = await client.listTools(cursor ? { cursor } : {});
      names.push(...r.tools.map((t) => t.name));
      cursor = r.nextCursor;
    } while (cursor);
    return names;
  }

  test('the official SDK v1 and v2 clients see filtered lists and get the 403', guarded(async () => {
    const v1 = new Client({ name: 'v1', version: '1.0.0' });
    await withTimeout(v1.connect(new StreamableHTTPClientTransport(new URL(d.url),
      { requestInit: { headers: bearer(tok.bob) } })), 15000, 'v1 connect');
    assert.deepEqual(await sdkToolNames(v1), SEEN.bob.tools);
    const t = await v1.listResourceTemplates();
    assert.ok(t.resourceTemplates.every((x) => SEEN.bob.resourceTemplates.includes(x.uriTemplate)));
    await assert.rejects(v1.callTool({ name: 'deploy', arguments: {} }), /403/);
    const ok = await v1.callTool({ name: 'search', arguments: { x: 'v1' } });
    assert.equal(ok.content[0].text, 'code:search:{"x":"v1"}');
    await v1.close();

    const v2 = new V2Client({ name: 'v2', version: '1.0.0' });
    await withTimeout(v2.connect(new V2Transport(new URL(d.url),
      { requestInit: { headers: bearer(tok.alice) } })), 15000, 'v2 connect');
    assert.deepEqual(await sdkToolNames(v2), SEEN.alice.tools);
    await assert.rejects(v2.callTool({ name: 'delete_repo', arguments: {} }), /403|denied/);
    const ok2 = await v2.callTool({ name: 'search_code', arguments: { x: 'v2' } });
    assert.equal(ok2.content[0].text, 'search:raw_search:{"x":"v2"}');
    await v2.close();
  }));

  test('a denial is audited with outcome denied', guarded(async () => {
    const sid = await session('bob');
    assertDenied(await legacy('bob', sid, 'tools/call', { name: 'delete_repo', arguments: {} }));
    const ev = await waitFor('the denial\'s audit line', async () => {
      const t = await fsp.readFile(auditFile, 'utf8').catch(() => '');
      const l = t.split('\n').filter(Boolean).map((x) => JSON.parse(x));
      return l.find((e) => e.type === 'mcp_tool_call' && e.target?.name === 'delete_repo' &&
        e.subjects?.user_id === 'bob') ?? null;
    });
    assert.equal(ev.outcome, 'denied');
    assert.equal(ev.metadata.extra.status_code, 403);
    assert.equal(ev.metadata.extra.backend_name, undefined, 'a denied call went to no backend');
  }));

  test('an audit line names the backend the request went to', guarded(async () => {
    const sid = await session('bob');
    const tag = `audit-${nextId()}`;
    const l = await legacy('bob', sid, 'tools/call', { name: 'search_code', arguments: { x: tag } });
    assert.equal(l.json.result?.content[0].text, `search:raw_search:{"x":"${tag}"}`, l.text);
    const m = await mod('bob', 'prompts/get', { name: 'greet', arguments: { who: tag } });
    assert.equal(m.json.result?.messages[0].content.text, `code:greet:${tag}`, m.text);
    const lines = async () => (await fsp.readFile(auditFile, 'utf8').catch(() => '')).split('\n')
      .filter(Boolean).map((x) => JSON.parse(x)).filter((e) => e.subjects?.user_id === 'bob');
    const [call, prompt] = await waitFor('the calls\' audit lines', async () => {
      const all = await lines();
      const c = all.find((e) => e.type === 'mcp_tool_call' && e.target?.name === 'search_code' &&
        e.outcome === 'success');
      const p = all.find((e) => e.type === 'mcp_prompt_get' && e.target?.name === 'greet');
      return c && p ? [c, p] : null;
    });
    assert.equal(call.metadata.extra.backend_name, 'search', JSON.stringify(call));
    assert.equal(prompt.metadata.extra.backend_name, 'code', JSON.stringify(prompt));
    // a denied completion: audited as denied, no backend
    assertDenied(await mod('bob', 'completion/complete', completing('ref/prompt', 'ops_runbook', 'who')),
      DENIED_PROMPT);
    const denied = await waitFor('the completion\'s audit line', async () =>
      (await lines()).find((e) => e.type === 'mcp_completion' && e.outcome === 'denied') ?? null);
    assert.equal(denied.metadata.extra.status_code, 403);
    assert.equal(denied.metadata.extra.backend_name, undefined);
  }));
});

describe('authz: a policy error denies; a reload swaps the policies', () => {
  let idp, be, d, auditFile;

  before(async () => {
    idp = await startIdp();
    be = await startSpec(SPECS.code);
    auditFile = path.join(await fsp.mkdtemp(path.join(os.tmpdir(), 'vmcpd-authz-')), 'audit.jsonl');
    d = await startMulti({
      workers: 1,
      backends: [{ name: 'code', url: be.url }],
      aggregation: 'conflictResolutionConfig:\n  prefixMode: onConflict',
      extra: oidcConfig(idp) + [
        '  authz:',
        '    type: cedar',
        '    policies:',
        '      - permit(principal, action == Action::"call_tool", resource == Tool::"search");',
        // errors for a principal without claim_dept: vmcpd denies, as
        // the reference does (Cedar itself would skip it and allow)
        '      - |',
        '        forbid(principal, action, resource)',
        '        when { principal.claim_dept == "contractors" };',
        'rateLimiting:',
        '  tools:',
        '    - name: search',
        '      perUser: {maxTokens: 3, refillPeriod: 1h}',
        'audit:',
        '  enabled: true',
        `  logFile: ${auditFile}`,
        '',
      ].join('\n'),
    });
  });

  after(async () => {
    if (d && !d.stopped)
      await d.stop();
    await idp?.stop();
  });

  test('an erroring forbid denies a permitted call and hides the item', guarded(async () => {
    const none = bearer(idp.forge(idp.claims({ sub: 'erin' })));
    const eng = bearer(idp.forge(idp.claims({ sub: 'frank', dept: 'engineering' })));
    const call = (h) => modern(d.port, 'tools/call', { name: 'search', arguments: {} },
      { ...h, 'Mcp-Name': 'search' });
    // the view has the backend's tools
    await waitFor('search listed', async () =>
      (await modern(d.port, 'tools/list', {}, eng)).json?.result?.tools?.length === 1);
    assertDenied(await call(none));
    let l = await modern(d.port, 'tools/list', {}, none);
    assert.deepEqual(l.json.result.tools, [], l.text);
    // with the claim, nothing errors: the permit stands
    const r = await call(eng);
    assert.equal(r.json.result?.content[0].text, 'code:search:{}', r.text);
    l = await modern(d.port, 'tools/list', {}, eng);
    assert.deepEqual(l.json.result.tools.map((t) => t.name), ['search']);
  }));

  test('server/discover offers no prompt or resource to whom the policies give none', guarded(async () => {
    const eng = bearer(idp.forge(idp.claims({ sub: 'frank', dept: 'engineering' })));
    await waitFor('search listed', async () =>
      (await modern(d.port, 'tools/list', {}, eng)).json?.result?.tools?.length === 1);
    const r = await modern(d.port, 'server/discover', {}, eng);
    assert.equal(r.json.result?.cacheScope, 'private', r.text);
    // the backend offers prompts, resources and completions; frank may
    // list only the tool search
    assert.deepEqual(Object.keys(r.json.result.capabilities), ['tools'], r.text);
  }));

  test('policies that read no argument: calls, 403s, the rate limit and the audit in both revisions',
    guarded(async () => {
      // tools/call stays on the hot paths (decided off the params' text);
      // gina has the claim, so the forbid does not error
      const token = idp.forge(idp.claims({ sub: 'gina', dept: 'engineering' }));
      const h = bearer(token);
      const sid = await sessionAs(d.port, token, 'g');
      const leg = (name, args) => rpc(d.port, sid, 'tools/call', { name, arguments: args }, { headers: h });
      const mod = (name, args) => modern(d.port, 'tools/call', { name, arguments: args },
        { ...h, 'Mcp-Name': name });
      await waitFor('search listed', async () =>
        (await modern(d.port, 'tools/list', {}, h)).json?.result?.tools?.length === 1);
      // denied twice each (the second from the cached decision), no token taken
      for (let i = 0; i < 2; i++) {
        assertDenied(await leg('delete_repo', { i }));
        assertDenied(await mod('delete_repo', { i }));
        assertDenied(await leg('no_such_tool', {}));
      }
      // search: three tokens for gina, whatever the revision
      const a = await leg('search', { x: 'q1' });
      assert.equal(a.json.result.content[0].text, 'code:search:{"x":"q1"}', a.text);
      const b = await mod('search', { x: 'q2' });
      assert.equal(b.json.result.content[0].text, 'code:search:{"x":"q2"}', b.text);
      const c = await leg('search', { x: 'q3' });
      assert.equal(c.json.result.content[0].text, 'code:search:{"x":"q3"}', c.text);
      const limited = await mod('search', { x: 'q4' });
      assert.equal(limited.json.error.code, 429, limited.text);
      // audited: gina's denials denied with 403, her calls ok
      const lines = await waitFor('gina\'s audit lines', async () => {
        const t = await fsp.readFile(auditFile, 'utf8').catch(() => '');
        const l = t.split('\n').filter(Boolean).map((x) => JSON.parse(x))
          .filter((e) => e.type === 'mcp_tool_call' && e.subjects?.user_id === 'gina');
        return l.length >= 10 ? l : null;
      });
      const denied = lines.filter((e) => e.target?.name === 'delete_repo');
      assert.equal(denied.length, 4);
      for (const e of denied) {
        assert.equal(e.outcome, 'denied');
        assert.equal(e.metadata.extra.status_code, 403);
      }
      const calls = lines.filter((e) => e.target?.name === 'search');
      assert.deepEqual(calls.map((e) => e.outcome), ['success', 'success', 'success', 'denied']);
    }));

  test('a reload swaps the policies whole', guarded(async () => {
    const erin = bearer(idp.forge(idp.claims({ sub: 'erin' })));
    const names = async () => (await modern(d.port, 'tools/list', {}, erin)).json.result.tools
      .map((t) => t.name);
    assert.deepEqual(await names(), []);
    await d.writeConfig(multiConfig({ portFile: d.portFile, stateDir: d.stateDir, ...d.multiOpts,
      extra: oidcConfig(idp) + [
        '  authz:',
        '    type: cedar',
        '    policies:',
        '      - permit(principal, action == Action::"call_tool", resource == Tool::"delete_repo");',
        '',
      ].join('\n') }));
    process.kill(d.pid, 'SIGHUP');
    // each answer is the old policies' or the new ones', never a mix
    const seen = [];
    await waitFor('the new policies', async () => {
      seen.push(await names());
      return seen.at(-1).length === 1;
    }, { timeout: 20000 });
    for (const n of seen)
      assert.ok(n.length === 0 || (n.length === 1 && n[0] === 'delete_repo'), JSON.stringify(seen));
    const r = await modern(d.port, 'tools/call', { name: 'delete_repo', arguments: {} },
      { ...erin, 'Mcp-Name': 'delete_repo' });
    assert.equal(r.json.result.content[0].text, 'code:delete_repo:{}', r.text);
    assertDenied(await modern(d.port, 'tools/call', { name: 'search', arguments: {} },
      { ...erin, 'Mcp-Name': 'search' }));
  }));
});

test('vmcpd -n loads etc/examples/authz.yaml', async () => {
  const r = await run(VMCPD_BIN, ['-n', '-f', EXAMPLE]);
  assert.equal(r.code, 0, r.stderr);
});
