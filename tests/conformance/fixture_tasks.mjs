// fixture_tasks.mjs: the tasks extension (io.modelcontextprotocol/tasks,
// SEP-2663) for the conformance fixture's 2026-07-28 requests.
//
// The v2 SDK the fixture is built on has no tasks extension, so the
// fixture serves it itself: serveTasks() answers, before the SDK's
// handler sees the request, a tools/call of a task tool from a request
// that declared the extension (a flat CreateTaskResult) and
// tasks/get|update|cancel; everything else goes on to the SDK.  Tasks live
// in memory for their ttlMs.  registerTaskTools() registers the same tools
// with the SDK for the requests that did not declare the extension (the
// synchronous path, or -32021 for the tools that need a task).
//
// A subscriptions/listen naming notifications.taskIds is served here too
// (the SDK's handler knows no taskIds): acknowledged with the ids of live
// tasks, then a notifications/tasks (the DetailedTask) each time one of
// them changes status; the other kinds such a listen asks for are not
// served (its acknowledgement leaves them out).
//
// taskStats() counts the tasks/* requests served and the task listen
// streams open (the interop tests read it at GET /tasks-stats to see what
// reached the backend); dropTaskListens() ends those streams (POST
// /tasks-drop-listens).

import { randomUUID } from 'node:crypto';

import {
  CLIENT_CAPABILITIES_META_KEY,
  ProtocolError,
  acceptedContent,
  fromJsonSchema,
  inputRequired
} from '@modelcontextprotocol/server';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

const TTL_MS = 60000;
const POLL_MS = 200;
const MAX_TASKS = 4096;
const MAX_SECONDS = 300;
const MISSING_CAPABILITY = -32021;
const HEADER_MISMATCH = -32020;
const TERMINAL = ['completed', 'failed', 'cancelled'];

const tasks = new Map();	// taskId -> task
const listens = new Set();	// { res, ids, subId }: task listen streams
const stats = { create: 0, get: 0, update: 0, cancel: 0, listens: 0 };

function text(t) {
  return { type: 'text', text: t };
}

function objectSchema(properties = {}, required = []) {
  return fromJsonSchema({ type: 'object', properties, required });
}

function now() {
  return new Date().toISOString();
}

function missingCapability(what) {
  return new ProtocolError(MISSING_CAPABILITY,
      `${what} needs the ${TASKS_EXTENSION} extension`,
      { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
}

function declared(params) {
  const caps = params?._meta?.[CLIENT_CAPABILITIES_META_KEY];
  return caps?.extensions?.[TASKS_EXTENSION] !== undefined;
}

function seconds(args) {
  const s = Number(args?.seconds ?? 0);
  return Number.isFinite(s) && s > 0 ? Math.min(s, MAX_SECONDS) : 0;
}

// ---------------------------------------------------------------------------
// The task tools.  Each plan says how a task runs: after `delay` ms it
// settles with `settle()` unless it first asks for input (`asks`).

const ELICIT_CONFIRM = (what) => ({
  method: 'elicitation/create',
  params: {
    mode: 'form',
    message: `Confirm ${what}?`,
    requestedSchema: {
      type: 'object',
      properties: { confirm: { type: 'boolean' } },
      required: ['confirm']
    }
  }
});

const PLANS = {
  slow_compute: (args) => ({
    delay: seconds(args) * 1000,
    settle: () => ({ result: { content: [text(
        `computed ${args?.label ?? ''} after ${seconds(args)} s`)] } })
  }),
  failing_job: () => ({
    delay: 1000,
    settle: () => ({ result: { content: [text('the job failed')],
        isError: true } })
  }),
  protocol_error_job: () => ({
    delay: 200,
    settle: () => ({ error: { code: -32603,
        message: 'protocol_error_job: internal failure' } })
  }),
  confirm_delete: (args) => ({
    asks: { confirm: ELICIT_CONFIRM(`deleting ${args?.filename}`) },
    settle: (answers) => ({ result: { content: [text(
        `deleted ${args?.filename}: ` +
        JSON.stringify(answers.confirm?.content ?? {}))] } })
  }),
  multi_input: () => ({
    asks: { first: ELICIT_CONFIRM('the first input'),
        second: ELICIT_CONFIRM('the second input') },
    settle: (answers) => ({ result: { content: [text(
        `inputs: ${answers.first?.content?.name}, ` +
        `${answers.second?.content?.name}`)] } })
  }),
  test_tool_with_task: (_args, inputResponses) => ({
    delay: 300,
    settle: () => ({ result: { content: [text(`Hello, ${
        acceptedContent(inputResponses, 'user_name')?.name}!`)] } })
  })
};

// The tools that cannot run without a task (taskSupport "required"): a
// request that did not declare the extension gets -32021 before the SDK.
const REQUIRED = ['failing_job', 'test_tool_with_task'];

// Does this tools/call become a task?  test_tool_with_task only on its
// final MRTR round (the name gathered); the others always.
function wantsTask(name, params) {
  if (!Object.hasOwn(PLANS, name))
    return false;
  if (name === 'test_tool_with_task')
    return typeof acceptedContent(params.inputResponses,
        'user_name')?.name === 'string';
  return true;
}

function sweep() {
  const t = Date.now();
  for (const [id, task] of tasks) {
    if (task.expires <= t) {
      clearTimeout(task.timer);
      tasks.delete(id);
    }
  }
}

function touch(task, status) {
  task.status = status;
  task.lastUpdatedAt = now();
  notifyListens(task);
}

function settle(task) {
  if (TERMINAL.includes(task.status))
    return;
  const out = task.plan.settle(task.answers);
  task.outcome = out;
  touch(task, out.error !== undefined ? 'failed' : 'completed');
}

function createTask(name, params) {
  sweep();
  if (tasks.size >= MAX_TASKS)
    throw new ProtocolError(-32603, `too many tasks (${MAX_TASKS})`);
  const plan = PLANS[name](params.arguments ?? {}, params.inputResponses);
  const created = now();
  const task = {
    taskId: randomUUID(),
    status: 'working',
    createdAt: created,
    lastUpdatedAt: created,
    expires: Date.now() + TTL_MS,
    plan,
    pending: { ...(plan.asks ?? {}) },
    answers: {}
  };
  if (plan.asks !== undefined)
    task.status = 'input_required';
  else
    task.timer = setTimeout(() => settle(task), plan.delay).unref();
  tasks.set(task.taskId, task);
  stats.create++;
  return task;
}

function envelope(task) {
  return {
    taskId: task.taskId,
    status: task.status,
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttlMs: TTL_MS,
    pollIntervalMs: POLL_MS
  };
}

function detailed(task) {
  const d = { resultType: 'complete', ...envelope(task) };
  if (task.status === 'input_required')
    d.inputRequests = task.pending;
  else if (task.status === 'completed')
    d.result = { resultType: 'complete', ...task.outcome.result };
  else if (task.status === 'failed')
    d.error = task.outcome.error;
  return d;
}

// notifications/tasks: the DetailedTask, to the listens naming the task
function notifyListens(task) {
  const { resultType: _, ...params } = detailed(task);
  for (const l of listens) {
    if (!l.ids.includes(task.taskId))
      continue;
    l.res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0',
        method: 'notifications/tasks', params: { ...params,
        _meta: { 'io.modelcontextprotocol/subscriptionId': l.subId } } })}\n\n`);
  }
}

// A subscriptions/listen naming taskIds (SEP-2663, Task Status
// Notifications): refused without the extension (-32021), else its SSE
// stream, acknowledged with the live ones among them.
function listenTasks(req, res, id, params) {
  const m = req.headers['mcp-method'];
  if (m !== undefined && m !== 'subscriptions/listen')
    throw new ProtocolError(HEADER_MISMATCH,
        `Mcp-Method header ${m} does not match the body's subscriptions/listen`);
  if (!declared(params))
    throw missingCapability('notifications.taskIds');
  const asked = params.notifications.taskIds;
  if (!Array.isArray(asked))
    throw new ProtocolError(-32602, 'notifications.taskIds must be an array');
  sweep();
  const l = { res, subId: id,
    ids: asked.filter((t) => typeof t === 'string' && tasks.has(t)) };
  res.writeHead(200, { 'content-type': 'text/event-stream',
    'cache-control': 'no-cache' });
  res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: { taskIds: l.ids },
        _meta: { 'io.modelcontextprotocol/subscriptionId': id } } })}\n\n`);
  listens.add(l);
  stats.listens++;
  res.on('close', () => listens.delete(l));
}

function lookup(params) {
  sweep();
  const id = params?.taskId;
  const task = typeof id === 'string' ? tasks.get(id) : undefined;
  if (task === undefined)
    throw new ProtocolError(-32602, `unknown taskId: ${String(id)}`);
  return task;
}

const METHODS = {
  'tasks/get': (params) => {
    stats.get++;
    return detailed(lookup(params));
  },
  'tasks/update': (params) => {
    stats.update++;
    const task = lookup(params);
    const r = params.inputResponses;
    if (r === null || typeof r !== 'object' || Array.isArray(r))
      throw new ProtocolError(-32602, 'inputResponses must be an object');
    if (task.status === 'input_required') {
      for (const key of Object.keys(r)) {
        if (!Object.hasOwn(task.pending, key))
          continue;	// unknown or already answered: ignored
        task.answers[key] = r[key];
        delete task.pending[key];
      }
      task.lastUpdatedAt = now();
      if (Object.keys(task.pending).length === 0) {
        touch(task, 'working');
        task.timer = setTimeout(() => settle(task), 100).unref();
      }
    }
    return { resultType: 'complete' };
  },
  'tasks/cancel': (params) => {
    stats.cancel++;
    const task = lookup(params);
    if (!TERMINAL.includes(task.status)) {
      clearTimeout(task.timer);
      touch(task, 'cancelled');
    }
    return { resultType: 'complete' };
  }
};

function answer(res, status, id, member) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', id, ...member }));
}

function fail(res, id, e) {
  const error = { code: e.code ?? -32603, message: e.message };
  if (e.data !== undefined)
    error.data = e.data;
  answer(res, e.code === HEADER_MISMATCH ||
      e.code === MISSING_CAPABILITY ? 400 : 200, id, { error });
}

// The routing headers of SEP-2243 and SEP-2663 (Mcp-Method, Mcp-Name =
// params.taskId on tasks/*), checked as the SDK checks them for the
// requests it serves.
function checkHeaders(req, method, params) {
  const m = req.headers['mcp-method'];
  if (m !== undefined && m !== method)
    throw new ProtocolError(HEADER_MISMATCH,
        `Mcp-Method header ${m} does not match the body's ${method}`);
  const want = method === 'tools/call' ? params.name : params.taskId;
  const n = req.headers['mcp-name'];
  if (n === undefined || n.trim() !== String(want))
    throw new ProtocolError(HEADER_MISMATCH,
        `Mcp-Name header does not match the body (${String(want)})`);
}

// Answers the request and returns true if it is one of the tasks
// extension's; returns false for the SDK to serve it.
export function serveTasks(req, res, body) {
  if (body === null || typeof body !== 'object' || Array.isArray(body) ||
      typeof body.method !== 'string' || body.id === undefined)
    return false;
  const { id, method } = body;
  const params = body.params ?? {};
  let serve;
  if (method === 'tools/call') {
    if (!declared(params)) {
      if (!REQUIRED.includes(params.name))
        return false;
      serve = () => {
        throw missingCapability(params.name);
      };
    } else if (wantsTask(params.name, params)) {
      serve = () => ({ resultType: 'task',
          ...envelope(createTask(params.name, params)) });
    } else {
      return false;
    }
  } else if (method === 'subscriptions/listen' &&
      params.notifications?.taskIds !== undefined) {
    try {
      listenTasks(req, res, id, params);
    } catch (e) {
      fail(res, id, e);
    }
    return true;
  } else if (Object.hasOwn(METHODS, method)) {
    serve = () => {
      if (!declared(params))
        throw missingCapability(method);
      return METHODS[method](params);
    };
  } else {
    return false;
  }
  try {
    checkHeaders(req, method, params);
    answer(res, 200, id, { result: serve() });
  } catch (e) {
    fail(res, id, e);
  }
  return true;
}

// Ends every task listen stream (the interop tests: a backend stream
// that ends under vmcpd); returns how many.
export function dropTaskListens() {
  const n = listens.size;
  for (const l of listens)
    l.res.end();
  listens.clear();
  return n;
}

export function taskStats() {
  return { ...stats, live: tasks.size, listening: listens.size };
}

// The same tools for the SDK, reached by the requests that did not
// declare the extension (slow_compute and protocol_error_job run at once,
// confirm_delete and multi_input ask through MRTR; serveTasks() answers
// -32021 for the others) and by test_tool_with_task's first MRTR round.
export function registerTaskTools(server) {
  server.registerTool('greet', {
    description: 'Says hello (never a task)',
    inputSchema: objectSchema({ name: { type: 'string' } })
  }, async (args) => ({ content: [text(`Hello, ${args.name}!`)] }));

  server.registerTool('slow_compute', {
    description: 'Sleeps `seconds` then answers; a task when it can be',
    inputSchema: objectSchema({ seconds: { type: 'number' },
        label: { type: 'string' } })
  }, async (args) => {
    await new Promise((r) => setTimeout(r, seconds(args) * 1000));
    return PLANS.slow_compute(args).settle().result;
  });

  server.registerTool('protocol_error_job', {
    description: 'Fails with a protocol error; a task when it can be',
    inputSchema: objectSchema()
  }, async () => {
    const e = PLANS.protocol_error_job().settle().error;
    throw new ProtocolError(e.code, e.message);
  });

  server.registerTool('failing_job', {
    description: `Task only (${TASKS_EXTENSION} required)`,
    inputSchema: objectSchema()
  }, async () => {
    throw missingCapability('failing_job');	// not reached: serveTasks()
  });

  // Without a task, the same questions through MRTR.
  for (const name of ['confirm_delete', 'multi_input']) {
    server.registerTool(name, {
      description: 'Asks for input; a task when it can be',
      inputSchema: objectSchema({ filename: { type: 'string' } })
    }, async (args, ctx) => {
      const plan = PLANS[name](args);
      const r = ctx.mcpReq.inputResponses ?? {};
      const missing = Object.keys(plan.asks).filter((k) =>
        acceptedContent(r, k) === undefined);
      if (missing.length === 0)
        return plan.settle(r).result;
      const asks = {};
      for (const k of missing)
        asks[k] = inputRequired.elicit({
          message: plan.asks[k].params.message,
          requestedSchema: plan.asks[k].params.requestedSchema
        });
      return inputRequired({ inputRequests: asks });
    });
  }

  // Round 1 asks for the name (MRTR); the final round becomes a task,
  // which only a request that declared the extension can get.
  server.registerTool('test_tool_with_task', {
    description: 'MRTR, then a task (task required)',
    inputSchema: objectSchema()
  }, async () => {
    return inputRequired({ inputRequests: {
      user_name: inputRequired.elicit({
        message: 'What is your name?',
        requestedSchema: { type: 'object',
            properties: { name: { type: 'string' } },
            required: ['name'] }
      })
    } });
  });
}
