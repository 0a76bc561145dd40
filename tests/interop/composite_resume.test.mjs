// Composite tools suspended and resumed on handles (worker/composite/composite_run.c,
// docs/ARCHITECTURE.md "Workflow handles"): a 2026-07-28 client reaching
// an elicitation step gets input_required whose requestState is a handle
// vmcpd minted; the retry with inputResponses resumes the run on whichever
// worker it lands, even after the worker that suspended it was killed.  A
// 2026-07-28 backend step answering input_required (the SDK v2 backend's
// mrtr_ask) suspends the workflow the same way, its own state kept in
// vmcpd's record, several waits (a forEach's iterations, an elicitation)
// in one input_required; for a 2025-11-25 client the backend's requests
// are relayed over its session.  Every misuse of a handle (replayed,
// forged, expired, another composite, another principal) gets the same
// -32602.  And each step is authorized under the caller's principal
// against the Cedar policies (an advertised tool by its advertised name, a
// hidden one by its own name under MCP::"<backend>").
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { guarded, waitFor, withTimeout, sleep, workerOf, vmcpctl, connectClient } from './lib/harness.mjs';
import { useMulti, startMulti, startSpec, startModern, modern, modernMeta, textOf, MODERN } from './lib/multi.mjs';
import { startIdp, oidcConfig } from './lib/oidc.mjs';

useMulti();

const HANDLE_MESSAGE = 'invalid or expired requestState';

const COMPOSITES = `
compositeTools:
  - name: ask
    description: Echo, ask the user, echo the choice
    parameters:
      type: object
      properties:
        x: {type: string}
      required: [x]
    steps:
      - id: first
        tool: spec.echo
        arguments: {x: "{{.params.x}}"}
      - id: confirm
        type: elicitation
        dependsOn: [first]
        message: "Which channel for {{.params.x}}?"
        schema:
          type: object
          properties:
            channel: {type: string}
          required: [channel]
        onDecline: {action: continue}
        onCancel: {action: abort}
        defaultResults: {action: skipped, content: {channel: ""}}
      - id: last
        tool: spec.echo
        dependsOn: [confirm]
        condition: '{{eq .steps.confirm.output.action "accept"}}'
        arguments: {x: "{{.steps.confirm.output.content.channel}}"}
        defaultResults: {text: ""}
    output:
      properties:
        first: {type: string, value: "{{.steps.first.output.text}}"}
        action: {type: string, value: "{{.steps.confirm.output.action}}"}
        last: {type: string, value: "{{.steps.last.output.text}}", default: ""}
      required: [first, action]
  - name: quick
    description: An elicitation under a short workflow timeout
    timeout: 2s
    steps:
      - id: confirm
        type: elicitation
        message: "Quick?"
        schema: {type: object, properties: {ok: {type: boolean}}}
  - name: backend_ask
    description: A 2026-07-28 backend's step asks the user
    parameters:
      type: object
      properties:
        x: {type: string}
    steps:
      - id: hi
        tool: mod.mrtr_ask
        arguments: {x: "{{.params.x}}"}
      - id: after
        tool: spec.echo
        dependsOn: [hi]
        arguments: {x: "{{.steps.hi.output.text}}"}
    output:
      properties:
        hello: {type: string, value: "{{.steps.hi.output.text}}"}
        after: {type: string, value: "{{.steps.after.output.text}}"}
  - name: many_ask
    description: Two backend asks in a forEach beside an elicitation step
    steps:
      - id: each
        type: forEach
        collection: '["p", "q"]'
        itemVar: it
        step:
          type: tool
          tool: mod.mrtr_ask
          arguments: {x: "{{.forEach.it}}"}
      - id: sure
        type: elicitation
        message: "Sure?"
        schema: {type: object, properties: {ok: {type: boolean}}}
        onDecline: {action: continue}
        defaultResults: {action: skipped}
      - id: slow
        tool: spec.echo
        arguments: {x: "s"}
    output:
      properties:
        names: {type: array, value: "{{json .steps.each.output.iterations}}"}
        sure: {type: string, value: "{{.steps.sure.output.action}}"}
`;

/* a raw 2026-07-28 tools/call of a client that can be asked */
const call = (port, name, params, headers = {}) =>
  modern(port, 'tools/call', { _meta: modernMeta({ elicitation: {} }), name, ...params },
    { 'Mcp-Name': name, ...headers });

/* the input_required answer of a first call: {res, ir, state} */
async function suspend(port, name, args, headers) {
  const res = await call(port, name, { arguments: args }, headers);
  assert.equal(res.json?.result?.resultType, 'input_required', res.text);
  assert.equal(typeof res.json.result.requestState, 'string');
  return { res, ir: res.json.result.inputRequests, state: res.json.result.requestState };
}

describe('composite suspend and resume (2026-07-28)', () => {
  let d, spec, mod;

  before(async () => {
    spec = await startSpec({ label: 'S', tools: ['echo'] });
    mod = await startModern({ label: 'M', mrtr: true, modernOnly: true });
    d = await startMulti({
      workers: 2,
      backends: [{ name: 'spec', url: spec.url }, { name: 'mod', url: mod.url }],
      aggregation: 'conflictResolutionConfig:\n  prefixMode: onConflict',
      extra: COMPOSITES,
    });
    await waitFor('the composites', async () => {
      const r = await modern(d.port, 'tools/list', {});
      const names = (r.json?.result?.tools ?? []).map((t) => t.name);
      return ['ask', 'quick', 'backend_ask'].every((n) => names.includes(n));
    }, { timeout: 20000, interval: 200 });
  });

  after(async () => {
    if (d && !d.stopped)
      await d.stop();
  });

  test('an elicitation step: input_required on a handle; accept, decline and cancel resume it', guarded(async () => {
    const { ir, state } = await suspend(d.port, 'ask', { x: 'a1' });
    assert.deepEqual(Object.keys(ir), ['confirm']);
    assert.equal(ir.confirm.method, 'elicitation/create');
    assert.equal(ir.confirm.params.message, 'Which channel for a1?');
    assert.deepEqual(ir.confirm.params.requestedSchema.required, ['channel']);
    // at least 128 random bits in a token, not the run's state written
    // out (no JSON: its quotes and braces are not in the alphabet; a
    // two-letter argument may well turn up in random base64url)
    assert.ok(state.length >= 22 && /^[A-Za-z0-9_-]+$/.test(state), state);
    let r = await call(d.port, 'ask', { arguments: { x: 'a1' }, requestState: state,
      inputResponses: { confirm: { action: 'accept', content: { channel: '#eng' } } } });
    assert.equal(r.json?.result?.resultType, 'complete', r.text);
    assert.deepEqual(r.json.result.structuredContent,
      { first: 'S:echo:{"x":"a1"}', action: 'accept', last: 'S:echo:{"x":"#eng"}' });

    // decline: onDecline continue, last's condition false
    let s = await suspend(d.port, 'ask', { x: 'a2' });
    r = await call(d.port, 'ask', { arguments: { x: 'a2' }, requestState: s.state,
      inputResponses: { confirm: { action: 'decline' } } });
    assert.equal(r.json?.result?.resultType, 'complete', r.text);
    assert.deepEqual(r.json.result.structuredContent, { first: 'S:echo:{"x":"a2"}', action: 'decline', last: '' });

    // cancel: onCancel abort, the tool's failure
    s = await suspend(d.port, 'ask', { x: 'a3' });
    r = await call(d.port, 'ask', { arguments: { x: 'a3' }, requestState: s.state,
      inputResponses: { confirm: { action: 'cancel' } } });
    assert.equal(r.json?.result?.isError, true, r.text);
    assert.match(textOf(r.json.result), /step confirm/);

    // no answer for the step: asked again, on a new handle
    s = await suspend(d.port, 'ask', { x: 'a4' });
    r = await call(d.port, 'ask', { arguments: { x: 'a4' }, requestState: s.state, inputResponses: {} });
    assert.equal(r.json?.result?.resultType, 'input_required', r.text);
    assert.notEqual(r.json.result.requestState, s.state);
    assert.deepEqual(r.json.result.inputRequests, s.ir);
    r = await call(d.port, 'ask', { arguments: { x: 'a4' }, requestState: r.json.result.requestState,
      inputResponses: { confirm: { action: 'accept', content: { channel: 'c4' } } } });
    assert.equal(r.json?.result?.structuredContent?.last, 'S:echo:{"x":"c4"}', r.text);

    // a client that did not declare elicitation is not asked
    r = await modern(d.port, 'tools/call', { name: 'ask', arguments: { x: 'a5' } }, { 'Mcp-Name': 'ask' });
    assert.equal(r.json?.error?.code, -32603, r.text);
    assert.match(r.json.error.message, /step confirm asks the user \(elicitation\): the client did not declare/);
  }));

  test('the SDK v2 client fulfils the input_required itself', guarded(async () => {
    const asked = [];
    const c = new V2Client({ name: 'resume-v2', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: MODERN } }, capabilities: { elicitation: {} } });
    c.setRequestHandler('elicitation/create', async (req) => {
      asked.push(req.params.message);
      return { action: 'accept', content: { channel: '#v2', name: 'Lin' } };
    });
    await withTimeout(c.connect(new V2Transport(new URL(d.url))), 20000, 'v2 connect');
    try {
      const r = await c.callTool({ name: 'ask', arguments: { x: 'v2' } });
      assert.deepEqual(r.structuredContent, { first: 'S:echo:{"x":"v2"}', action: 'accept', last: 'S:echo:{"x":"#v2"}' });
      assert.deepEqual(asked, ['Which channel for v2?']);
      const b = await c.callTool({ name: 'backend_ask', arguments: { x: 'y' } });
      assert.equal(b.structuredContent.hello, 'M:hello Lin');
      assert.deepEqual(asked, ['Which channel for v2?', 'What is your name?']);
    } finally {
      await c.close().catch(() => {});
    }
  }));

  test('resumed on the other worker', guarded(async () => {
    // the same handle cannot be tried twice: whole rounds until one
    // resumes on another worker than the one that suspended it
    let crossed = 0;
    for (let i = 0; i < 30 && crossed < 2; i++) {
      const { res, state } = await suspend(d.port, 'ask', { x: `w${i}` });
      const r = await call(d.port, 'ask', { arguments: { x: `w${i}` }, requestState: state,
        inputResponses: { confirm: { action: 'accept', content: { channel: `c${i}` } } } });
      assert.equal(r.json?.result?.structuredContent?.last, `S:echo:{"x":"c${i}"}`, r.text);
      if (workerOf(res).pid !== workerOf(r).pid)
        crossed++;
    }
    assert.equal(crossed, 2, 'resumes on the other worker');
  }));

  test('resumed after kill -9 of the worker that suspended it', guarded(async () => {
    const { res, state } = await suspend(d.port, 'ask', { x: 'k' });
    const { pid } = workerOf(res);
    process.kill(pid, 'SIGKILL');
    await waitFor('a new worker', async () => {
      const pids = await d.workerPids();
      return pids.length === 2 && !pids.includes(pid);
    }, { timeout: 20000, interval: 200 });
    const r = await call(d.port, 'ask', { arguments: { x: 'k' }, requestState: state,
      inputResponses: { confirm: { action: 'accept', content: { channel: 'after-kill' } } } });
    assert.equal(r.json?.result?.resultType, 'complete', r.text);
    assert.equal(r.json.result.structuredContent.last, 'S:echo:{"x":"after-kill"}');
    assert.notEqual(workerOf(r).pid, pid);
  }));

  test('a backend step answering input_required suspends the workflow; its state stays in vmcpd', guarded(async () => {
    const { ir, state } = await suspend(d.port, 'backend_ask', { x: 'b' });
    assert.deepEqual(Object.keys(ir), ['hi/user_name']);
    assert.equal(ir['hi/user_name'].params.message, 'What is your name?');
    const st = await mod.stats();
    // the backend's own requestState is not the client's
    assert.ok(!st.issuedStates.includes(state));
    assert.ok(!JSON.stringify(ir).includes(st.issuedStates.at(-1)));
    const r = await call(d.port, 'backend_ask', { arguments: { x: 'b' }, requestState: state,
      inputResponses: { 'hi/user_name': { action: 'accept', content: { name: 'Ada' } } } });
    assert.equal(r.json?.result?.resultType, 'complete', r.text);
    assert.deepEqual(r.json.result.structuredContent, { hello: 'M:hello Ada', after: 'S:echo:{"x":"M:hello Ada"}' });
    // the backend got its own state back, with its own keys
    const after = await mod.stats();
    assert.deepEqual(after.retries.at(-1), { tool: 'mrtr_ask', inputResponses: ['user_name'],
      requestState: st.issuedStates.at(-1) });
  }));

  test('a 2025-11-25 client: a backend step\'s input requests are relayed over its session', guarded(async () => {
    const asker = await connectClient(d.url, { name: 'resume-v1', capabilities: { elicitation: {} } });
    const asked = [];
    asker.client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params);
      return { action: 'accept', content: { name: 'Grace' } };
    });
    try {
      const before = await mod.stats();
      const r = await asker.client.callTool({ name: 'backend_ask', arguments: { x: 'v1' } }, undefined,
        { timeout: 30000 });
      assert.ok(!r.isError, JSON.stringify(r));
      assert.deepEqual(r.structuredContent, { hello: 'M:hello Grace', after: 'S:echo:{"x":"M:hello Grace"}' });
      assert.equal(asked.length, 1);
      assert.equal(asked[0].message, 'What is your name?');
      const after = await mod.stats();
      assert.deepEqual(after.retries.at(-1), { tool: 'mrtr_ask', inputResponses: ['user_name'],
        requestState: after.issuedStates.at(-1) });
      assert.equal(after.retries.length, before.retries.length + 1);
    } finally {
      await asker.client.close().catch(() => {});
    }
  }));

  test('several waits at once: a forEach\'s backend asks and an elicitation, answered in one retry', guarded(async () => {
    const s = await suspend(d.port, 'many_ask', {});
    assert.deepEqual(Object.keys(s.ir).sort(), ['each[0]/user_name', 'each[1]/user_name', 'sure']);
    // one answer missing: all asked again, on a new handle
    let r = await call(d.port, 'many_ask', { requestState: s.state, inputResponses: {
      'each[0]/user_name': { action: 'accept', content: { name: 'P' } }, sure: { action: 'accept', content: {} } } });
    assert.equal(r.json?.result?.resultType, 'input_required', r.text);
    assert.deepEqual(Object.keys(r.json.result.inputRequests).sort(), Object.keys(s.ir).sort());
    r = await call(d.port, 'many_ask', { requestState: r.json.result.requestState, inputResponses: {
      'each[0]/user_name': { action: 'accept', content: { name: 'P' } },
      'each[1]/user_name': { action: 'accept', content: { name: 'Q' } },
      sure: { action: 'decline' } } });
    assert.equal(r.json?.result?.resultType, 'complete', r.text);
    assert.equal(r.json.result.isError, undefined, r.text);
    assert.equal(r.json.result.structuredContent.sure, 'decline');
    assert.deepEqual(r.json.result.structuredContent.names.map((o) => o.output?.text), ['M:hello P', 'M:hello Q']);
  }));

  test('every misuse of a handle gets the same -32602, with no oracle', guarded(async () => {
    const refused = (r) => {
      assert.deepEqual(r.json?.error, { code: -32602, message: HANDLE_MESSAGE }, r.text);
    };
    const answer = { confirm: { action: 'accept', content: { channel: 'x' } } };
    // replayed after completion
    const s = await suspend(d.port, 'ask', { x: 'r' });
    let r = await call(d.port, 'ask', { arguments: { x: 'r' }, requestState: s.state, inputResponses: answer });
    assert.equal(r.json?.result?.resultType, 'complete', r.text);
    refused(await call(d.port, 'ask', { arguments: { x: 'r' }, requestState: s.state, inputResponses: answer }));
    // forged: one of the form, one not, one not a string
    refused(await call(d.port, 'ask', { arguments: { x: 'r' }, requestState: 'A'.repeat(s.state.length),
      inputResponses: answer }));
    refused(await call(d.port, 'ask', { arguments: { x: 'r' }, requestState: 'nope', inputResponses: answer }));
    refused(await call(d.port, 'ask', { arguments: { x: 'r' }, requestState: { id: 1 }, inputResponses: answer }));
    // another composite's
    const a = await suspend(d.port, 'ask', { x: 'o' });
    refused(await call(d.port, 'quick', { requestState: a.state,
      inputResponses: { confirm: { action: 'accept', content: { ok: true } } } }));
    // ... which took nothing: the handle still resumes its own
    r = await call(d.port, 'ask', { arguments: { x: 'o' }, requestState: a.state, inputResponses: answer });
    assert.equal(r.json?.result?.resultType, 'complete', r.text);
    // expired: the workflow's 2 s timeout
    const e = await suspend(d.port, 'quick', {});
    await sleep(3000);
    refused(await call(d.port, 'quick', { requestState: e.state,
      inputResponses: { confirm: { action: 'accept', content: { ok: true } } } }));
    // the log says which
    // the log says which (an expired handle the keeper swept is unknown)
    const said = () => d.proc.output.split('\n').filter((l) => l.includes('requestState refused')).join('\n');
    await waitFor('the reasons logged', () => ['ask: requestState refused: replayed',
      'ask: requestState refused: unknown_or_forged', 'ask: requestState refused: not_a_string',
      'quick: requestState refused: wrong_composite'].every((w) => said().includes(w)) &&
      /quick: requestState refused: (expired|unknown_or_forged)/.test(said()), { timeout: 5000 })
      .catch(() => assert.fail(said()));
  }));

  test('vmcpctl dump handles shows a handle without its step data', guarded(async () => {
    const s = await suspend(d.port, 'ask', { x: 'secret-param-4711' });
    const out = await vmcpctl(['dump', 'handles'], { stateDir: d.stateDir });
    assert.equal(out.code, 0, out.stderr);
    const mine = out.stdout.split('\n').filter((l) => l.includes(s.state.slice(0, 14)));
    assert.equal(mine.length, 1, out.stdout);
    const h = JSON.parse(mine[0]);
    assert.equal(h.composite, 'ask');
    assert.equal(h.used, false);
    assert.ok(!out.stdout.includes('secret-param-4711'), 'no params');
    assert.ok(!out.stdout.includes('S:echo'), 'no step output');
    assert.ok(!out.stdout.includes(s.state), 'not the whole id');
  }));
});

// ---------------------------------------------------------------------------

const AUTHZ_COMPOSITES = `
compositeTools:
  - name: gated_echo
    description: One advertised step
    steps:
      - {id: e, tool: spec.echo, arguments: {x: "1"}}
  - name: gated_hidden
    description: Hidden steps
    steps:
      - {id: o, tool: spec.open, arguments: {x: "2"}}
      - {id: s, tool: spec.secret, dependsOn: [o], arguments: {x: "3"}}
  - name: gated_continue
    description: A denied step whose onError continues
    steps:
      - {id: s, tool: spec.secret, onError: {action: continue}, defaultResults: {text: "none"}}
      - {id: o, tool: spec.open, dependsOn: [s], arguments: {x: "{{.steps.s.output.text}}"}}
    output:
      properties:
        o: {type: string, value: "{{.steps.o.output.text}}"}
  - name: gated_ask
    description: Elicitation under OIDC
    steps:
      - id: confirm
        type: elicitation
        message: "Sure?"
        schema: {type: object, properties: {ok: {type: boolean}}}
`;

const POLICIES = `  authz:
    type: cedar
    groupClaimName: groups
    policies:
      - permit(principal, action == Action::"call_tool", resource);
      - permit(principal, action == Action::"get_prompt", resource);
      - |
        forbid(principal, action == Action::"call_tool", resource == Tool::"echo")
        unless { principal in THVGroup::"eng" };
      - |
        forbid(principal, action == Action::"call_tool", resource == Tool::"secret")
        when { resource in MCP::"spec" };
`;

describe('composite steps under the caller\'s principal (OIDC, Cedar)', () => {
  let idp, spec, d, auditFile;
  const tok = {};

  before(async () => {
    idp = await startIdp();
    idp.tokenClaims = { alice: { groups: ['eng'] }, bob: { groups: ['ext'] } };
    spec = await startSpec({ label: 'S', tools: ['echo', 'open', 'secret'] });
    auditFile = path.join(await fsp.mkdtemp(path.join(os.tmpdir(), 'vmcpd-resume-')), 'audit.jsonl');
    d = await startMulti({
      workers: 2,
      backends: [{ name: 'spec', url: spec.url }],
      // open and secret are hidden: composites' steps only
      aggregation: 'tools:\n  - workload: spec\n    filter: [echo]',
      extra: oidcConfig(idp) + POLICIES + AUTHZ_COMPOSITES +
        `audit:\n  enabled: true\n  logFile: ${JSON.stringify(auditFile)}\n`,
    });
    tok.alice = await idp.token('alice');
    tok.bob = await idp.token('bob');
    await waitFor('the composites', async () => {
      const r = await modern(d.port, 'tools/list', {}, { Authorization: `Bearer ${tok.alice}` });
      const names = (r.json?.result?.tools ?? []).map((t) => t.name);
      return ['gated_echo', 'gated_hidden', 'gated_ask'].every((n) => names.includes(n));
    }, { timeout: 20000, interval: 200 });
  });

  after(async () => {
    if (d && !d.stopped)
      await d.stop();
    await idp?.stop();
  });

  const as = (who) => ({ Authorization: `Bearer ${tok[who]}` });

  test('an advertised step is decided by its advertised name, as the caller', guarded(async () => {
    let r = await call(d.port, 'gated_echo', { arguments: {} }, as('alice'));
    assert.equal(r.json?.result?.isError, undefined, r.text);
    assert.match(textOf(r.json.result), /S:echo/);
    r = await call(d.port, 'gated_echo', { arguments: {} }, as('bob'));
    assert.equal(r.json?.result?.isError, true, r.text);
    assert.match(textOf(r.json.result), /step e.*tool spec\.echo: denied by the authorization policy/);
  }));

  test('a hidden step is decided by its own name under MCP::"<backend>"; onError decides', guarded(async () => {
    let r = await call(d.port, 'gated_hidden', { arguments: {} }, as('alice'));
    assert.equal(r.json?.result?.isError, true, r.text);
    assert.match(textOf(r.json.result), /tool spec\.secret: denied by the authorization policy/);
    r = await call(d.port, 'gated_continue', { arguments: {} }, as('alice'));
    assert.equal(r.json?.result?.isError, undefined, r.text);
    assert.equal(r.json.result.structuredContent.o, 'S:open:{"x":"none"}');
    const lines = await waitFor('the denial audited', () => {
      const ev = fs.readFileSync(auditFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l))
        .filter((x) => x.type === 'vmcp_workflow_step_denied');
      return ev.length >= 3 && ev;
    }, { timeout: 10000 });
    const hidden = lines.find((x) => x.target.workflow_name === 'gated_hidden');
    assert.equal(hidden.outcome, 'denied');
    assert.equal(hidden.target.step_id, 's');
    assert.equal(hidden.target.tool_name, 'spec.secret');
    assert.match(JSON.stringify(hidden.subjects), /alice/);
  }));

  test('a handle is its owner\'s: another principal is refused as a forgery, the owner resumes', guarded(async () => {
    const s = await suspend(d.port, 'gated_ask', {}, as('alice'));
    const answer = { confirm: { action: 'accept', content: { ok: true } } };
    const forged = await call(d.port, 'gated_ask', { requestState: 'B'.repeat(s.state.length), inputResponses: answer },
      as('bob'));
    const other = await call(d.port, 'gated_ask', { requestState: s.state, inputResponses: answer }, as('bob'));
    assert.deepEqual(other.json?.error, { code: -32602, message: HANDLE_MESSAGE }, other.text);
    assert.deepEqual(other.json.error, forged.json?.error);
    const mine = await call(d.port, 'gated_ask', { requestState: s.state, inputResponses: answer }, as('alice'));
    assert.equal(mine.json?.result?.resultType, 'complete', mine.text);
    assert.match(d.proc.output, /requestState refused: not_owner/);
  }));
});
