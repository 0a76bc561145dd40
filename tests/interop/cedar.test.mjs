// vmcpd's Cedar evaluator (shared/cedar.c) against the official one
// (@cedar-policy/cedar-wasm): thousands of random policy sets inside the
// subset vmcpd supports, over entities shaped like vmcpd's requests
// (Client::"<sub>" with claim_* attributes and THVGroup parents,
// Action::"call_tool" | "get_prompt" | "read_resource", Tool::, Prompt::,
// Resource:: under MCP::"<name>", arg_* attributes, JSON integers as
// Long), must get the same decision, the same satisfied policies and
// the same erroring policies for every request.  A share of the
// conditions is ill-typed or reads absent attributes, so Cedar's error
// semantics (skip the policy, report it) are compared too; a share of
// the policy texts is mutated token-wise, and whatever vmcpd then still
// accepts Cedar must accept and evaluate the same way.
//
// A second test builds requests with vmcpd's builder (claims, group and
// role claims, the view's annotations, arguments, static entities) and
// compares them, through both evaluators, with the entity model written
// out again in JavaScript below, and each call with only the arguments
// the policies may read (what the gate of the hot path parses) against
// itself with all of them.
//
// The seed is printed; CEDAR_SEED=<n> replays a run, CEDAR_CASES=<n>
// changes its size.  A mismatch is shrunk (policies, entities and
// context keys dropped while it persists) and printed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as cedar from '@cedar-policy/cedar-wasm/nodejs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BUILD = path.dirname(path.resolve(ROOT, process.env.VMCPD_BIN || 'build/vmcpd'));
const DRIVER = path.join(BUILD, 'tests', 'drive_cedar');

const SEED = process.env.CEDAR_SEED !== undefined
  ? Number(process.env.CEDAR_SEED) >>> 0
  : (Date.now() ^ (process.pid << 8)) >>> 0;
const CASES = Number(process.env.CEDAR_CASES || 1500);

/* mulberry32: small, seedable, good enough to pick shapes */
function prng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n) => Math.floor(next() * n);
  const pick = (a) => a[int(a.length)];
  const chance = (p) => next() < p;
  return { next, int, pick, chance };
}

/* the world the requests live in */
const SUBS = ['alice', 'bob', 'c"q\\x', 'd::e', 'ünï', 'nul\u0000id'];
const GROUPS = ['eng', 'ops', 'admins', 'data-team'];
const ROLES = ['developer', 'operator'];
const TOOLS = ['weather', 'github_create_pr', 'calc', 'admin_reset'];
const PROMPTS = ['greeting', 'summary'];
const URIS = ['file:///etc/passwd', 'file:///data/config.json', 'file:///data_config.json'];
const ACTIONS = ['call_tool', 'get_prompt', 'read_resource'];
const SERVERS = ['vmcp', 'other'];
const STRINGS = ['', 'a', 'admin', 'Admin', 'New York', 'add', 'safe', 'x@example.com',
  'x@evil.com', 'a*b', 'é', '日本', 'line\nbreak', 'q"uote', 'back\\slash', 'Mail.Read',
  'Mail.ReadWrite', 'nul\u0000'];
const LONGS = [0, 1, -1, 2, 3, 10, 42, -7, 100, 9007199254740991, -9007199254740991];
const LIT_LONGS = ['0', '1', '-1', '2', '3', '10', '42', '-7', '100', '9223372036854775807',
  '-9223372036854775808', '007'];
const CLAIM_ATTRS = ['claim_sub', 'claim_roles', 'claim_level', 'claim_email', 'claim_act',
  'claim_dept', 'claim_dec', 'claim_flag', 'claimset_scp', 'claim_tsid', 'claim_scp'];
const RES_ATTRS = ['name', 'operation', 'feature', 'uri', 'readOnlyHint', 'destructiveHint',
  'openWorldHint', 'arg_mode', 'arg_n', 'arg_flag', 'arg_obj_present', 'owner'];
/* what the request builder makes, or must not */
const BUILT_ATTRS = ['claim_tsid', 'claim_sub', 'claim_level', 'claim_dec', 'claim_scp', 'claim_dept',
  'claim_arg_mode', 'arg_mode', 'arg_obj_present', 'arg_obj', 'arg_n', 'arg_name', 'arg_nul', 'name',
  'operation', 'feature', 'uri', 'readOnlyHint', 'destructiveHint', 'title', 'tenant', 'owner', 'claim_act'];
const CTX_ATTRS = ['claim_sub', 'claim_roles', 'claim_level', 'claim_act', 'claimset_scp',
  'arg_mode', 'arg_n', 'arg_flag', 'arg_location', 'claim_dec'];

const uid = (type, id) => ({ type, id });
const ent = (type, id) => ({ __entity: { type, id } });

/* Cedar source for a string, escaped in one of the ways Cedar allows */
function strLit(r, s, pattern = false) {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0);
    if (ch === '*' && pattern) out += '\\*';
    else if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += r.pick(['\\n', '\\u{a}', '\\x0a']);
    else if (c === 0) out += r.pick(['\\0', '\\u{0}', '\\x00']);
    else if (r.chance(0.15)) out += c < 0x80 && r.chance(0.5)
      ? '\\x' + c.toString(16).padStart(2, '0') : '\\u{' + c.toString(16) + '}';
    else out += ch;
  }
  return out + '"';
}

function entLit(r, type, id) {
  return `${type}::${strLit(r, id)}`;
}

function genWorld(r) {
  const entities = [];
  const sub = r.pick(SUBS);
  const principal = uid('Client', sub);
  const claims = () => {
    const a = {};
    if (r.chance(0.8)) a.claim_sub = sub;
    if (r.chance(0.7)) a.claim_roles = Array.from({ length: r.int(4) }, () => r.pick(['admin', 'dev', 'data_analyst', 'Admin']));
    if (r.chance(0.6)) a.claim_level = r.pick(LONGS);
    if (r.chance(0.5)) a.claim_email = r.pick(['a@example.com', 'b@evil.com', 'c@EXAMPLE.com', '']);
    if (r.chance(0.3)) a.claim_act = { sub: r.pick(SUBS) };
    if (r.chance(0.3)) a.claim_dept = r.pick(['eng', 'contractor']);
    if (r.chance(0.2)) a.claim_dec = { __extn: { fn: 'decimal', arg: r.pick(['0.5', '1.5', '1.50', '-2.0001']) } };
    if (r.chance(0.3)) a.claim_flag = r.chance(0.5);
    if (r.chance(0.4)) a.claimset_scp = Array.from({ length: r.int(3) }, () => r.pick(['Mail.Read', 'User.Read.All', 'Mail.ReadWrite']));
    return a;
  };
  const pclaims = claims();
  if (r.chance(0.85)) {
    const parents = GROUPS.filter(() => r.chance(0.35)).map((g) => uid('THVGroup', g));
    entities.push({ uid: principal, attrs: pclaims, parents });
  }
  for (const g of GROUPS) {
    if (r.chance(0.5)) {
      entities.push({
        uid: uid('THVGroup', g), attrs: r.chance(0.3) ? { label: g } : {},
        parents: ROLES.filter(() => r.chance(0.4)).map((x) => uid('THVRole', x)),
      });
    }
  }
  const kind = r.int(3);
  const action = uid('Action', ACTIONS[kind]);
  if (r.chance(0.3))
    entities.push({ uid: action, attrs: { operation: 'x' }, parents: r.chance(0.5) ? [uid('Action', 'any')] : [] });
  const rid = kind === 0 ? r.pick(TOOLS) : kind === 1 ? r.pick(PROMPTS) : r.pick(URIS);
  const resource = uid(['Tool', 'Prompt', 'Resource'][kind], rid);
  const rattrs = { name: rid, operation: ['call', 'get', 'read'][kind], feature: ['tool', 'prompt', 'resource'][kind] };
  if (kind === 2) rattrs.uri = rid;
  for (const h of ['readOnlyHint', 'destructiveHint', 'openWorldHint'])
    if (kind === 0 && r.chance(0.5)) rattrs[h] = r.chance(0.5);
  const args = {};
  if (r.chance(0.5)) args.arg_mode = r.pick(['safe', 'unsafe', 'add']);
  if (r.chance(0.5)) args.arg_n = r.pick(LONGS);
  if (r.chance(0.3)) args.arg_flag = r.chance(0.5);
  if (r.chance(0.2)) args.arg_obj_present = true;
  if (r.chance(0.3)) args.arg_location = r.pick(['New York', 'London', 'Paris']);
  if (r.chance(0.2)) rattrs.owner = r.pick(SUBS);
  Object.assign(rattrs, args);
  if (r.chance(0.9)) {
    entities.push({ uid: resource, attrs: rattrs,
      parents: r.chance(0.8) ? [uid('MCP', r.pick(SERVERS))] : [] });
  }
  const context = {};
  for (const [k, v] of Object.entries(pclaims)) if (r.chance(0.7)) context[k] = v;
  Object.assign(context, args);
  return { entities, request: { principal, action, resource, context } };
}

/* expressions: mostly well-typed, some deliberately not */
function genExpr(r, d) {
  /* an operand: a relation in parentheses, since relations don't chain */
  const anyOf = () => {
    const g = r.pick([genBool, genLong, genStr, genSet, genEnt, genRecordish]);
    return g === genBool ? `(${g(r, d - 1)})` : g(r, d - 1);
  };
  function genBool(r, d) {
    if (d <= 0) return r.pick(['true', 'false', 'resource.readOnlyHint', 'context.arg_flag', 'principal.claim_flag']);
    const k = r.int(22);
    switch (k) {
      case 20: return `${r.pick(['principal', 'context', 'resource', 'action'])} has ${r.pick(BUILT_ATTRS)}`;
      case 21: return `${r.pick(['principal', 'context', 'resource', 'action'])}.${r.pick(BUILT_ATTRS)} == ${anyOf()}`;
      case 16: case 17: return `${genLong(r, d - 1)} ${r.pick(['<', '<=', '>', '>=', '==', '!='])} ${genLong(r, d - 1)}`;
      case 18: return `${r.pick(['principal', 'resource', 'action', genEnt(r, d - 1)])} in [${Array.from({ length: 1 + r.int(3) }, () => r.chance(0.7) ? genEnt(r, d - 1) : anyOf()).join(', ')}]`;
      case 19: { const [subj, pat] = genLikePair(r); return `${subj} like ${pat}`; }
      case 0: return `${genBool(r, d - 1)} && ${genBool(r, d - 1)}`;
      case 1: return `${genBool(r, d - 1)} || ${genBool(r, d - 1)}`;
      case 2: return `!${r.chance(0.3) ? '!' : ''}(${genBool(r, d - 1)})`;
      case 3: return `${anyOf()} ${r.pick(['==', '!='])} ${anyOf()}`;
      case 4: return `${r.chance(0.9) ? genLong(r, d - 1) : anyOf()} ${r.pick(['<', '<=', '>', '>='])} ${r.chance(0.9) ? genLong(r, d - 1) : anyOf()}`;
      case 5: return `${r.chance(0.9) ? genEnt(r, d - 1) : anyOf()} in ${r.chance(0.5) ? genEnt(r, d - 1) : `[${Array.from({ length: r.int(3) }, () => r.chance(0.9) ? genEnt(r, d - 1) : anyOf()).join(', ')}]`}`;
      case 6: return `${r.chance(0.9) ? genRecordish(r, d - 1) : anyOf()} has ${r.chance(0.7) ? r.pick([...CLAIM_ATTRS, ...RES_ATTRS, 'label', 'sub', 'nope']) : strLit(r, r.pick(['claim_sub', 'arg_mode', 'sub', 'no pe', '']))}`;
      case 7: return `${r.chance(0.9) ? genStr(r, d - 1) : anyOf()} like ${genPattern(r)}`;
      case 8: return `${r.chance(0.9) ? genSet(r, d - 1) : anyOf()}.contains(${anyOf()})`;
      case 9: return `${r.chance(0.9) ? genSet(r, d - 1) : anyOf()}.${r.pick(['containsAll', 'containsAny'])}(${r.chance(0.9) ? genSet(r, d - 1) : anyOf()})`;
      case 10: return `${r.chance(0.9) ? genSet(r, d - 1) : anyOf()}.isEmpty()`;
      case 11: return `(${genBool(r, d - 1)})`;
      case 12: return `${genRecordish(r, d - 1)} has ${r.pick(['claim_roles', 'readOnlyHint', 'arg_n'])} && ${genBool(r, d - 1)}`;
      case 13: return `principal in ${entLit(r, 'THVGroup', r.pick(GROUPS))}`;
      case 14: return `resource in ${entLit(r, 'MCP', r.pick(SERVERS))}`;
      default: return r.pick(['true', 'false', `${genAttr(r, d - 1)}`]);
    }
  }
  function genAttr(r, d) {
    const base = genRecordish(r, d);
    const a = r.pick([...CLAIM_ATTRS, ...RES_ATTRS, ...CTX_ATTRS, 'label', 'sub', 'missing']);
    return r.chance(0.8) ? `${base}.${a}` : `${base}[${strLit(r, a)}]`;
  }
  function genLong(r, d) {
    if (d <= 0 || r.chance(0.5)) return r.pick(LIT_LONGS);
    return r.pick(['principal.claim_level', 'context.claim_level', 'context.arg_n', 'resource.arg_n', 'principal.claim_dec', 'context.claim_dec']);
  }
  function genStr(r, d) {
    if (d <= 0 || r.chance(0.5)) return strLit(r, r.pick([...STRINGS, ...SUBS]));
    return r.pick(['principal.claim_email', 'principal.claim_sub', 'context.claim_sub', 'resource.name',
      'context.arg_mode', 'resource.arg_mode', 'context.claim_act.sub', 'principal.claim_act["sub"]',
      'context.arg_location', 'resource.uri', 'resource.owner']);
  }
  function genSet(r, d) {
    if (d <= 0 || r.chance(0.5)) {
      return r.pick(['principal.claim_roles', 'context.claim_roles', 'context.claimset_scp',
        'principal.claimset_scp', '[]', '["admin"]', '["Mail.Read", "User.Read.All"]']);
    }
    return `[${Array.from({ length: r.int(4) }, () => r.chance(0.8) ? genStr(r, d - 1) : anyOf()).join(', ')}]`;
  }
  function genEnt(r, d) {
    return r.pick([
      () => 'principal', () => 'resource', () => 'action',
      () => entLit(r, 'Client', r.pick(SUBS)), () => entLit(r, 'THVGroup', r.pick(GROUPS)),
      () => entLit(r, 'THVRole', r.pick(ROLES)), () => entLit(r, 'MCP', r.pick(SERVERS)),
      () => entLit(r, 'Tool', r.pick(TOOLS)), () => entLit(r, 'Action', r.pick([...ACTIONS, 'any'])),
      () => entLit(r, 'NS::Tool', r.pick(TOOLS)),
    ])();
  }
  function genRecordish(r, d) {
    if (d > 0 && r.chance(0.1)) return `(${genRecordish(r, d - 1)})`;
    return r.pick(['principal', 'resource', 'context', 'action', 'context.claim_act', 'principal.claim_act',
      entLit(r, 'THVGroup', r.pick(GROUPS))]);
  }
  return genBool(r, d);
}

/* a string and a pattern made of the same pieces, so that some match */
function genLikePair(r) {
  if (r.chance(0.1)) {	/* prefix and suffix overlap: "a" like "a*a" is false */
    const x = r.pick(['a', 'é', 'ab', 'aa']);
    return [strLit(r, r.pick([x, x + x, x.slice(1)])), `"${x}*${r.pick([x, x.slice(1), x + x])}"`];
  }
  const pieces = Array.from({ length: 1 + r.int(4) }, () => r.pick(['a', 'b', '*', 'é', '@x.com', '']));
  const stars = pieces.map(() => r.chance(0.4));
  let subj = '';
  let pat = '"';
  pieces.forEach((p, i) => {
    if (stars[i]) { pat += '*'; subj += r.pick(['', 'z', 'zz*', 'a']); }
    pat += strLit(r, p, true).slice(1, -1);
    subj += p;
  });
  if (r.chance(0.3)) subj = r.chance(0.5) ? subj.slice(1) : subj + r.pick(['a', '*']);
  else if (r.chance(0.2)) subj = pieces.join('').slice(0, 1 + r.int(2));	/* prefix and suffix overlap */
  return [strLit(r, subj), pat + '"'];
}

function genPattern(r) {
  const parts = [];
  const n = 1 + r.int(4);
  let s = '';
  for (let i = 0; i < n; i++) {
    if (r.chance(0.4)) s += '\u0001';	/* a wildcard */
    else s += r.pick(['a', '@example.com', 'Mail.Read', '*', 'é', 'x', 'line\n', 'b', '']);
  }
  // \u0001 stands for the wildcard, any other * is a literal star
  let out = '"';
  for (const piece of s.split('\u0001')) parts.push(strLit(r, piece, true).slice(1, -1));
  out += parts.join('*');
  return out + '"';
}

function genScope(r, which) {
  const k = r.int(which === 'action' ? 4 : 3);
  if (k === 0 || r.chance(0.3)) return which;
  if (which === 'principal') {
    return k === 1 ? `principal == ${entLit(r, 'Client', r.pick(SUBS))}`
      : `principal in ${r.chance(0.5) ? entLit(r, 'THVGroup', r.pick(GROUPS)) : entLit(r, 'THVRole', r.pick(ROLES))}`;
  }
  if (which === 'action') {
    if (k === 1) return `action == ${entLit(r, 'Action', r.pick(ACTIONS))}`;
    if (k === 2) return `action in ${entLit(r, 'Action', r.pick([...ACTIONS, 'any']))}`;
    return `action in [${Array.from({ length: r.int(3) }, () => entLit(r, 'Action', r.pick([...ACTIONS, 'any']))).join(', ')}]`;
  }
  return k === 1 ? `resource == ${r.chance(0.5) ? entLit(r, 'Tool', r.pick(TOOLS)) : entLit(r, 'Resource', r.pick(URIS))}`
    : `resource in ${entLit(r, 'MCP', r.pick(SERVERS))}`;
}

function genPolicy(r) {
  let s = '';
  if (r.chance(0.1)) s += `@id(${strLit(r, 'p' + r.int(100))})\n`;
  s += `${r.chance(0.6) ? 'permit' : 'forbid'}(${genScope(r, 'principal')}, ${genScope(r, 'action')}, ${genScope(r, 'resource')})`;
  const nc = r.int(3);
  for (let i = 0; i < nc; i++)
    s += `\n  ${r.chance(0.7) ? 'when' : 'unless'} { ${genExpr(r, 1 + r.int(3))} }`;
  return s + ';' + (r.chance(0.1) ? ' // comment' : '');
}

/* token-wise mutation: what vmcpd still accepts, Cedar must too */
const MUT_TOKENS = ['(', ')', '[', ']', '{', '}', ',', ';', '.', '==', '!=', '<', '&&', '||', '!', '-',
  '+', 'in', 'has', 'like', 'is', 'if', 'true', '"s"', '1', 'principal', 'context', '::', '@a',
  'when', 'unless', 'permit', 'Tool::"x"', '?principal', '{}', '*'];

function mutate(r, text) {
  const toks = text.match(/"(?:\\.|[^"\\])*"|[A-Za-z_][A-Za-z_0-9]*|\d+|==|!=|<=|>=|&&|\|\||::|\S/gs) || [];
  const n = 1 + r.int(2);
  for (let i = 0; i < n && toks.length > 0; i++) {
    const at = r.int(toks.length);
    const k = r.int(3);
    if (k === 0) toks.splice(at, 1);
    else if (k === 1) toks.splice(at, 0, r.pick(MUT_TOKENS));
    else toks[at] = r.pick(MUT_TOKENS);
  }
  return toks.join(' ');
}

function genCase(r) {
  const np = r.int(5);
  const policies = Array.from({ length: np }, () => genPolicy(r));
  let text = policies.join('\n');
  const mutated = r.chance(0.08);
  if (mutated) text = mutate(r, text);
  const worlds = Array.from({ length: 4 }, () => genWorld(r));
  // one store per case: the union of the worlds' entities, first wins
  const seen = new Set();
  const entities = [];
  for (const w of worlds) {
    for (const e of w.entities) {
      const k = JSON.stringify(e.uid);
      if (!seen.has(k)) { seen.add(k); entities.push(e); }
    }
  }
  return { policies: text, entities, requests: worlds.map((w) => w.request), mutated };
}

/* official answers: per request the decision and per-policy S/N/E */
function cedarRun(c) {
  const pr = cedar.checkParsePolicySet({ staticPolicies: c.policies });
  if (pr.type !== 'success') return { parse: 'error', message: pr.errors.map((e) => e.message).join('; ') };
  const parts = cedar.policySetTextToParts(c.policies);
  const effects = parts.type === 'success'
    ? parts.policies.map((p) => cedar.policyToJson(p).json.effect) : null;
  const n = parts.type === 'success' ? parts.policies.length : 0;
  const results = [];
  assert.equal(cedar.preparsePolicySet('case', { staticPolicies: c.policies }).type, 'success');
  for (const q of c.requests) {
    const a = cedar.statefulIsAuthorized({ ...q, preparsedPolicySetId: 'case', entities: c.entities });
    if (a.type !== 'success') { results.push({ request: 'error', message: a.errors.map((e) => e.message).join('; ') }); continue; }
    const errs = new Set(a.response.diagnostics.errors.map((e) => e.policyId));
    const reason = new Set(a.response.diagnostics.reason);
    results.push({ decision: a.response.decision, errs, reason, n, effects });
  }
  return { results };
}

function vmcpdRun(cases) {
  const input = cases.map((c) => JSON.stringify({ policies: c.policies, entities: c.entities, requests: c.requests })).join('\n') + '\n';
  if (process.env.CEDAR_DUMP) fs.writeFileSync(process.env.CEDAR_DUMP, input);
  const p = spawnSync(DRIVER, [], { input, maxBuffer: 1 << 28, encoding: 'utf8' });
  assert.equal(p.status, 0, `${DRIVER} failed: ${p.stderr}`);
  const lines = p.stdout.split('\n').filter((l) => l.length > 0);
  assert.equal(lines.length, cases.length, 'driver answered every case');
  return lines.map((l) => JSON.parse(l));
}

/* '' if the two agree on case c (request i, or all), else what differs */
function compare(c, mine, theirs, only) {
  if (theirs.parse === 'error' || mine.parse === 'error') {
    if (mine.parse === 'error' && theirs.parse !== 'error') {
      // vmcpd may refuse what it doesn't support; only a generated
      // (unmutated) text is inside the subset and must parse
      return c.mutated ? '' : `vmcpd rejects a policy set Cedar accepts: ${mine.message}`;
    }
    if (mine.parse !== 'error') return `vmcpd accepts a policy set Cedar rejects: ${theirs.message}`;
    return '';
  }
  if (mine.entities === 'error') return `vmcpd rejects the entities: ${mine.message}`;
  for (let i = 0; i < c.requests.length; i++) {
    if (only !== undefined && i !== only) continue;
    const m = mine.results[i];
    const t = theirs.results[i];
    if (t.request === 'error' || m.request === 'error') {
      if (t.request !== m.request) return `request ${i}: vmcpd ${JSON.stringify(m)}, Cedar ${JSON.stringify(t)}`;
      continue;
    }
    if (m.policies.length !== t.n) return `request ${i}: ${m.policies.length} policies, Cedar ${t.n}`;
    const mErr = [];
    const mReason = [];
    const forbidden = [...m.policies].some((x, j) => x === 'S' && t.effects[j] === 'forbid');
    [...m.policies].forEach((x, j) => {
      if (x === 'E') mErr.push(`policy${j}`);
      if (x === 'S' && (t.effects[j] === 'forbid') === forbidden) mReason.push(`policy${j}`);
    });
    const tErr = [...t.errs].sort();
    const tReason = [...t.reason].sort();
    if (m.decision !== t.decision || JSON.stringify(mErr) !== JSON.stringify(tErr) ||
        JSON.stringify(mReason) !== JSON.stringify(tReason)) {
      return `request ${i}: vmcpd ${m.decision} reason ${mReason} errors ${mErr} (${m.error}); ` +
        `Cedar ${t.decision} reason ${tReason} errors ${tErr}`;
    }
  }
  return '';
}

/* drop what doesn't matter to a mismatch, one piece at a time */
function shrink(c, req) {
  const differs = (x) => compare(x, vmcpdRun([x])[0], cedarRun(x), 0);
  let cur = { ...c, requests: [c.requests[req]] };
  if (!differs(cur)) return cur;
  const parts = cedar.policySetTextToParts(cur.policies);
  if (parts.type === 'success' && !c.mutated) {
    let pols = parts.policies;
    for (let i = pols.length - 1; i >= 0; i--) {
      const t = { ...cur, policies: pols.filter((_, j) => j !== i).join('\n') };
      if (differs(t)) { pols = pols.filter((_, j) => j !== i); cur = t; }
    }
  }
  for (let i = cur.entities.length - 1; i >= 0; i--) {
    const t = { ...cur, entities: cur.entities.filter((_, j) => j !== i) };
    if (differs(t)) cur = t;
  }
  for (const k of Object.keys(cur.requests[0].context)) {
    const ctx = { ...cur.requests[0].context };
    delete ctx[k];
    const t = { ...cur, requests: [{ ...cur.requests[0], context: ctx }] };
    if (differs(t)) cur = t;
  }
  return cur;
}

test(`vmcpd's Cedar evaluator decides as the official one (seed ${SEED})`, { timeout: 600000 }, () => {
  assert.ok(fs.existsSync(DRIVER), `${DRIVER} is not built (make unit)`);
  console.log(`# cedar differential: seed ${SEED} (CEDAR_SEED=${SEED} replays), ${CASES} cases`);
  const r = prng(SEED);
  const cases = Array.from({ length: CASES }, () => genCase(r));
  const mine = vmcpdRun(cases);
  let requests = 0, errored = 0, allowed = 0, mutatedAccepted = 0, refused = 0;
  for (let i = 0; i < cases.length; i++) {
    const c = cases[i];
    const theirs = cedarRun(c);
    const diff = compare(c, mine[i], theirs);
    if (diff) {
      let small = c;
      if (mine[i].results && theirs.results) {
        const bad = c.requests.findIndex((_, j) => compare(c, mine[i], theirs, j) !== '');
        small = shrink(c, bad >= 0 ? bad : 0);
      }
      assert.fail(`case ${i} (seed ${SEED}): ${diff}\nminimal case:\n${JSON.stringify(small, null, 1)}\n` +
        `vmcpd: ${JSON.stringify(vmcpdRun([small])[0])}`);
    }
    if (mine[i].parse === 'error') { refused++; continue; }
    if (c.mutated) mutatedAccepted++;
    for (const m of mine[i].results) {
      requests++;
      if (m.decision === 'allow') allowed++;
      if (m.policies && m.policies.includes('E')) errored++;
    }
  }
  console.log(`# ${cases.length} policy sets, ${requests} requests equal: ${allowed} allowed, ` +
    `${errored} with an erroring policy; ${mutatedAccepted} mutated sets accepted by both, ${refused} refused`);
  assert.ok(requests >= 4000, 'enough requests compared');
  assert.ok(errored > requests / 20, 'errors are exercised');
  assert.ok(allowed > requests / 20, 'allows are exercised');
});

// The request builder (cedar_principal_new, cedar_access_new) against
// the entity model written out again here from its description
// (docs/ARCHITECTURE.md, "Authorization"), evaluated by the official
// Cedar: random claims, group claims, annotations, arguments and static
// entities, the same policy generator.

const DROP = Symbol('drop');

/* plain JSON as Cedar JSON: integers Long, exact reals decimal, nulls out */
function modelValue(v, depth) {
  if (depth > 10 || v === null) return DROP;
  if (typeof v === 'number') {
    if (Number.isInteger(v)) return Math.abs(v) < 9.2e18 ? v : DROP;
    const s = String(v);
    return /^-?\d+\.\d{1,4}$/.test(s) ? { __extn: { fn: 'decimal', arg: s } } : DROP;
  }
  if (Array.isArray(v)) return v.map((x) => modelValue(x, depth + 1)).filter((x) => x !== DROP);
  if (typeof v === 'object') {
    const o = {};
    for (const [k, x] of Object.entries(v)) {
      const y = modelValue(x, depth + 1);
      if (y !== DROP) o[k] = y;
    }
    return o;
  }
  return v;
}

function claimAt(claims, name) {
  if (name in claims) return claims[name];
  if (!name.includes('.')) return undefined;
  let o = claims;
  const parts = name.split('.');
  for (const p of parts.slice(0, -1)) {
    o = o[p];
    if (o === null || typeof o !== 'object' || Array.isArray(o)) return undefined;
  }
  return o[parts[parts.length - 1]];
}

function modelRequest(b, call) {
  const { conf, claims } = b;
  const store = b.store || [];
  const key = (u) => `${u.type}\u0000${u.id}`;
  const staticOf = (u) => store.find((e) => key(e.uid) === key(u));
  const merge = (u, attrs, parents) => {
    const old = staticOf(u);
    const ps = [...parents];
    for (const p of old ? old.parents : []) if (!ps.some((q) => key(q) === key(p))) ps.push(p);
    return { uid: u, attrs: { ...(old ? old.attrs : {}), ...attrs }, parents: ps };
  };
  const claimAttrs = {};
  for (const [k, v] of Object.entries(claims)) {
    if (k === 'tsid') continue;
    const x = modelValue(v, 1);
    if (x !== DROP) claimAttrs[`claim_${k}`] = x;
  }
  const type = conf.groupEntityType || 'THVGroup';
  const parents = [];
  const addGroups = (a) => {
    for (const g of a) if (typeof g === 'string' && !parents.some((p) => p.id === g)) parents.push({ type, id: g });
  };
  let g = conf.groupClaimName ? claimAt(claims, conf.groupClaimName) : undefined;
  for (const n of ['groups', 'roles', 'cognito:groups']) if (!Array.isArray(g)) g = claims[n];
  if (Array.isArray(g)) addGroups(g);
  if (conf.roleClaimName && Array.isArray(claimAt(claims, conf.roleClaimName))) addGroups(claimAt(claims, conf.roleClaimName));
  const principal = { type: 'Client', id: claims.sub };
  const k = { tool: ['Tool', 'call_tool', 'call'], prompt: ['Prompt', 'get_prompt', 'get'], resource: ['Resource', 'read_resource', 'read'] }[call.kind];
  const rattrs = {};
  for (const h of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'])
    if (typeof (call.annotations || {})[h] === 'boolean') rattrs[h] = call.annotations[h];
  Object.assign(rattrs, { name: call.name, operation: k[2], feature: call.kind });
  if (call.kind === 'resource') rattrs.uri = call.name;
  const args = {};
  const a = call.arguments || {};
  for (const [n, v] of Object.entries(a)) {
    if (v !== null && typeof v === 'object') continue;
    const x = modelValue(v, 10);
    if (x !== DROP) args[`arg_${n}`] = x;
  }
  for (const [n, v] of Object.entries(a)) if (v !== null && typeof v === 'object') args[`arg_${n}_present`] = true;
  Object.assign(rattrs, args);
  const resource = { type: k[0], id: call.name };
  const action = { type: 'Action', id: k[1] };
  const built = [
    merge(principal, claimAttrs, parents),
    merge(resource, rattrs, conf.server ? [{ type: 'MCP', id: conf.server }] : []),
    merge(action, { operation: k[2] }, []),
  ];
  const entities = [...store.filter((e) => !built.some((x) => key(x.uid) === key(e.uid))), ...built];
  return { principal, action, resource, context: { ...args, ...claimAttrs }, entities };
}

/* conditions aimed at what the builder makes */
const BUILT_VALUES = {
  name: [...TOOLS, ...PROMPTS, ...URIS].map((x) => JSON.stringify(x)), operation: ['"call"', '"get"', '"read"'],
  feature: ['"tool"', '"prompt"', '"resource"'], uri: URIS.map((x) => JSON.stringify(x)),
  arg_mode: ['"safe"', '"unsafe"'], arg_name: ['"spoof"'], claim_tsid: ['"session"'], tenant: ['"t1"'],
  arg_obj_present: ['true', 'false'], readOnlyHint: ['true', 'false'], destructiveHint: ['true', 'false'],
  claim_arg_mode: ['"spoof"'], claim_sub: SUBS.map((x) => JSON.stringify(x)), claim_dept: ['"contractor"'],
};

/* conditions aimed at what the builder made of claims and calls (hints) */
function genBuiltCond(r, d, hints) {
  const v = () => r.pick(['principal', 'context', 'resource', 'action']);
  const attr = () => r.pick(r.chance(0.5) ? BUILT_ATTRS
    : ['name', 'operation', 'feature', 'uri', 'arg_obj_present', 'claim_tsid', 'tenant', 'owner']);
  const lit = (a) => (a === 'name' || a === 'uri' ? strLit(r, r.pick(hints.names))
    : r.pick(BUILT_VALUES[a] || ['true', 'false', '0', '1', '5', '3', '"safe"']));
  const one = () => {
    switch (r.int(7)) {
      case 6:
      case 0: return `${v()} has ${attr()}`;
      case 1: { const a = attr(); return `${v()}.${a} == ${lit(a)}`; }
      case 2: return `${v()}.${attr()}`;
      case 5:
      case 3: return `principal in ${r.pick([...hints.types, 'THVRole'])}::${strLit(r, r.pick([...hints.groups, 'static', 'admins']))}`;
      case 4: return `${v()}.${r.pick(['claim_level', 'arg_n', 'claim_dec'])} ${r.pick(['<', '>=', '=='])} ${r.pick(LIT_LONGS)}`;
      default: return d > 1 ? genExpr(r, d) : 'true';
    }
  };
  const n = 1 + r.int(2);
  return Array.from({ length: n }, one).join(r.pick([' && ', ' || ']));
}

function genBuildPolicy(r, hints) {
  let s = `${r.chance(0.6) ? 'permit' : 'forbid'}(${genScope(r, 'principal')}, ${genScope(r, 'action')}, ${genScope(r, 'resource')})`;
  const nc = r.int(3);
  for (let i = 0; i < nc; i++)
    s += `\n  ${r.chance(0.7) ? 'when' : 'unless'} { ${genBuiltCond(r, r.int(3), hints)} }`;
  return s + ';';
}

function genBuild(r) {
  const sub = r.pick(SUBS.filter((s) => !s.includes('\u0000')));
  const claims = { sub };
  const groups = GROUPS.filter(() => r.chance(0.4));
  const where = r.int(5);
  const conf = {};
  if (where === 0) claims.groups = groups;
  else if (where === 1) claims.roles = groups;
  else if (where === 2) claims['cognito:groups'] = groups;
  else if (where === 3) { claims.realm_access = { roles: groups }; conf.groupClaimName = 'realm_access.roles'; }
  else { claims.team = groups; conf.groupClaimName = r.chance(0.8) ? 'team' : 'nope'; if (r.chance(0.5)) claims.roles = ['admins']; }
  if (r.chance(0.3)) { conf.roleClaimName = 'role_list'; claims.role_list = [r.pick(ROLES), 5]; }
  if (r.chance(0.2)) conf.groupEntityType = r.pick(['THVGroup', 'Team']);
  if (r.chance(0.9)) conf.server = r.pick(SERVERS);
  if (r.chance(0.6)) claims.roles = claims.roles || [r.pick(['admin', 'dev', 'data_analyst'])];
  if (r.chance(0.6)) claims.level = r.pick([...LONGS, 5.0, 0.5, 1.25, -2.5, 0.123456, 1e21]);
  if (r.chance(0.4)) claims.email = r.pick(['a@example.com', 'b@evil.com']);
  if (r.chance(0.3)) claims.act = { sub: r.pick(SUBS), depth: { x: r.pick([1, null, 'y']) } };
  if (r.chance(0.3)) claims.dept = r.chance(0.5) ? 'contractor' : null;
  if (r.chance(0.3)) claims.flag = r.chance(0.5);
  if (r.chance(0.2)) claims.dec = r.pick([0.5, 1.5, 2.0001, 0.1 + 0.2]);
  if (r.chance(0.4)) claims.tsid = 'session';
  if (r.chance(0.2)) claims.arg_mode = 'spoof';
  if (r.chance(0.2)) claims.scp = ['Mail.Read', 1, null, [2]];
  const store = [];
  if (r.chance(0.4)) store.push({ uid: { type: 'Client', id: sub }, attrs: { tenant: 't1', claim_sub: 'static' }, parents: [{ type: 'THVGroup', id: 'static' }] });
  if (r.chance(0.5)) store.push({ uid: { type: 'THVGroup', id: r.pick(GROUPS) }, attrs: {}, parents: [{ type: 'THVRole', id: r.pick(ROLES) }] });
  if (r.chance(0.3)) store.push({ uid: { type: 'Action', id: r.pick(ACTIONS) }, attrs: { operation: 'static' }, parents: [{ type: 'Action', id: 'any' }] });
  const calls = Array.from({ length: 3 }, () => {
    const kind = r.pick(['tool', 'prompt', 'resource']);
    const name = kind === 'tool' ? r.pick(TOOLS) : kind === 'prompt' ? r.pick(PROMPTS) : r.pick(URIS);
    const call = { kind, name };
    if (kind === 'tool' && r.chance(0.7)) {
      call.annotations = {};
      for (const h of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint', 'title', 'name'])
        if (r.chance(0.5)) call.annotations[h] = r.pick([true, false, 'yes', 1]);
    }
    if (r.chance(0.7)) {
      call.arguments = {};
      if (r.chance(0.5)) call.arguments.mode = r.pick(['safe', 'unsafe', 'add']);
      if (r.chance(0.5)) call.arguments.n = r.pick([...LONGS, 2.5, 0.123456]);
      if (r.chance(0.3)) call.arguments.flag = r.chance(0.5);
      if (r.chance(0.3)) call.arguments.obj = r.chance(0.5) ? { a: 1 } : [1];
      if (r.chance(0.2)) call.arguments.obj_present = false;
      if (r.chance(0.2)) call.arguments.location = r.pick(['New York', 'London']);
      if (r.chance(0.2)) call.arguments.name = 'spoof';
      if (r.chance(0.1)) call.arguments.nul = null;
    }
    if (r.chance(0.3) && !store.some((e) => e.uid.type === 'Tool') && kind === 'tool')
      store.push({ uid: { type: 'Tool', id: name }, attrs: { owner: r.pick(SUBS), name: 'static' }, parents: [{ type: 'MCP', id: 'team' }] });
    return call;
  });
  const np = 1 + r.int(4);
  const hints = {
    types: [conf.groupEntityType || 'THVGroup', 'Team'],
    names: calls.map((c) => c.name),
    groups: [...GROUPS, ...ROLES].filter((g) => JSON.stringify(claims).includes(JSON.stringify(g))),
  };
  if (hints.groups.length === 0) hints.groups.push('eng');
  return { policies: Array.from({ length: np }, () => genBuildPolicy(r, hints)).join('\n'), build: { conf, store, claims, calls } };
}

test(`vmcpd's request builder matches the entity model (seed ${SEED})`, { timeout: 600000 }, () => {
  assert.ok(fs.existsSync(DRIVER), `${DRIVER} is not built (make unit)`);
  const r = prng(SEED ^ 0x5eed);
  const cases = Array.from({ length: Math.ceil(CASES / 2) }, () => genBuild(r));
  const input = cases.map((c) => JSON.stringify(c)).join('\n') + '\n';
  const p = spawnSync(DRIVER, [], { input, maxBuffer: 1 << 28, encoding: 'utf8' });
  assert.equal(p.status, 0, `${DRIVER} failed: ${p.stderr}`);
  const mine = p.stdout.split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l));
  assert.equal(mine.length, cases.length);
  let requests = 0, errored = 0, allowed = 0;
  for (let i = 0; i < cases.length; i++) {
    const c = cases[i];
    const reqs = c.build.calls.map((call) => modelRequest(c.build, call));
    // as a plain case: the model's entities, one store per request
    const theirs = { results: [] };
    if (cedar.preparsePolicySet('b', { staticPolicies: c.policies }).type !== 'success') {
      assert.equal(mine[i].parse, 'error', `case ${i}: vmcpd accepts a policy set Cedar refuses`);
      continue;
    }
    const effects = cedar.policySetTextToParts(c.policies).policies.map((x) => cedar.policyToJson(x).json.effect);
    for (const q of reqs) {
      const a = cedar.statefulIsAuthorized({ principal: q.principal, action: q.action, resource: q.resource,
        context: q.context, preparsedPolicySetId: 'b', entities: q.entities });
      assert.equal(a.type, 'success', `case ${i}: Cedar refuses the model's request: ${JSON.stringify(a.errors)}\n${JSON.stringify(q)}`);
      theirs.results.push({ decision: a.response.decision, errs: new Set(a.response.diagnostics.errors.map((e) => e.policyId)),
        reason: new Set(a.response.diagnostics.reason), n: effects.length, effects });
    }
    assert.ok(mine[i].results, `case ${i}: ${JSON.stringify(mine[i])}`);
    const diff = compare({ requests: reqs }, mine[i], theirs);
    if (diff) {
      assert.fail(`case ${i} (seed ${SEED}): ${diff}\n${JSON.stringify(c, null, 1)}\nmodel: ` +
        JSON.stringify(reqs, null, 1));
    }
    for (const m of mine[i].results) {
      // the hot path's gate: only the arguments the policies may read
      assert.equal(m.picked, `${m.decision}:${m.policies}`,
        `case ${i} (seed ${SEED}): with only the arguments read\n${JSON.stringify(c, null, 1)}`);
      requests++;
      if (m.decision === 'allow') allowed++;
      if (m.policies.includes('E')) errored++;
    }
  }
  console.log(`# builder: ${cases.length} principals, ${requests} calls equal: ${allowed} allowed, ${errored} with an erroring policy`);
  assert.ok(allowed > requests / 20 && errored > requests / 20, 'allows and errors are exercised');
});
