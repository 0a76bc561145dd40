#!/usr/bin/env node
// fixture.mjs [PORT]: the project's conformance fixture backend.
//
// One MCP endpoint, http://127.0.0.1:PORT/mcp, built on the v2 TypeScript
// SDK, serving both protocol eras:
//   - 2025-11-25 (Legacy): stateful sessions (Mcp-Session-Id), POST with
//     SSE answers, the GET notification stream, DELETE, resumable streams;
//   - 2026-07-28 (Modern): stateless per-request `_meta` envelope, served by
//     createMcpHandler (server/discover, subscriptions/listen, MRTR).
// It registers every tool, prompt and resource the conformance server
// scenarios call by name, so the suite run directly against it is the
// baseline a run through vmcpd is compared with.
//
// The port comes from argv[2] or $PORT (default 0 = any free port); the
// first stdout line is "PORT <n>".  Binds 127.0.0.1 only.  SIGTERM/SIGINT
// end it.  $FIXTURE_VERBOSE=1 logs each request to stderr.  The tasks
// extension (2026-07-28) is fixture_tasks.mjs; GET /tasks-stats counts the
// tasks/* requests it served and its task listen streams, POST
// /tasks-drop-listens ends those streams.

import { randomUUID, randomBytes } from 'node:crypto';
import http from 'node:http';

import {
  NodeStreamableHTTPServerTransport,
  localhostHostValidation,
  toNodeHandler
} from '@modelcontextprotocol/node';
import {
  CLIENT_CAPABILITIES_META_KEY,
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
  ResourceTemplate,
  acceptedContent,
  classifyInboundRequest,
  createMcpHandler,
  createRequestStateCodec,
  fromJsonSchema,
  inputRequired,
  isInitializeRequest
} from '@modelcontextprotocol/server';

import {
  TASKS_EXTENSION,
  registerTaskTools,
  dropTaskListens,
  serveTasks,
  taskStats
} from './fixture_tasks.mjs';

const verbose = process.env.FIXTURE_VERBOSE === '1';
const MAX_SESSIONS = 4096;
const MAX_EVENTS = 1000;		// per session
const MAX_BODY = 4 * 1024 * 1024;

// A 1x1 PNG and a 44-byte silent WAV, base64.
const PNG_1X1 =
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const WAV_SILENT =
    'UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=';

const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error',
    'critical', 'alert', 'emergency'];

function debug(...args) {
  if (verbose)
    console.error('[fixture]', ...args);
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function text(t) {
  return { type: 'text', text: t };
}

function objectSchema(properties = {}, required = []) {
  return fromJsonSchema({ type: 'object', properties, required });
}

// requestState leaves the server and comes back from the client, so it is
// sealed with a per-process HMAC key; the SDK's seam rejects anything that
// fails verification with -32602 before a handler sees it.
const stateCodec = createRequestStateCodec({ key: randomBytes(32) });

// Resource subscriptions of the Legacy sessions, by session id.
const subscriptions = new Map();
let watchedVersion = 1;

// The lists the test_trigger_*_change tools change before they notify:
// SEP-2575's list-changed checks expect a real change ("Mutated the tool
// list"), and a gateway that relists a backend on list_changed tells its
// own clients only when what it serves differs.  Each trigger bumps its
// list's generation, which a description in that list carries (servers
// built afterwards: every Modern request, new Legacy sessions).
const listGeneration = { tools: 0, prompts: 0 };

// ---------------------------------------------------------------------------
// Resumable SSE streams (SEP-1699): a bounded in-memory event log per
// session (the SDK names every session's GET stream alike, so a shared
// log would replay one session's events into another).  Event ids are
// "<streamId>.<seq>" with a per-session increasing sequence.

function makeEventStore() {
  const log = new Map();	// eventId -> { streamId, seq, message }
  let seq = 0;
  return {
    async storeEvent(streamId, message) {
      const eventId = `${streamId}.${++seq}`;
      log.set(eventId, { streamId, seq, message });
      if (log.size > MAX_EVENTS)
        log.delete(log.keys().next().value);
      return eventId;
    },
    async getStreamIdForEventId(eventId) {
      return log.get(eventId)?.streamId;
    },
    async replayEventsAfter(lastEventId, { send }) {
      // An evicted id still names its stream and position.
      const dot = lastEventId.lastIndexOf('.');
      const known = log.get(lastEventId);
      const streamId = known?.streamId ??
          (dot > 0 ? lastEventId.slice(0, dot) : lastEventId);
      let after = known?.seq ?? Number(lastEventId.slice(dot + 1));
      if (!Number.isInteger(after))
        after = Infinity;	// not one of ours: replay nothing
      for (const [id, ev] of log) {
        if (ev.streamId !== streamId || ev.seq <= after)
          continue;
        // Priming events carry no message; nothing to replay.
        if (ev.message && Object.keys(ev.message).length > 0)
          await send(id, ev.message);
      }
      return streamId;
    }
  };
}

// ---------------------------------------------------------------------------
// The server definition, shared by both eras.  Legacy: one instance per
// session.  Modern: one instance per HTTP request (createMcpHandler).

function buildServer(era) {
  let logLevel = 'debug';
  const server = new McpServer({
    name: 'vmcpd-conformance-fixture',
    version: '1.0.0'
  }, {
    capabilities: {
      tools: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      prompts: { listChanged: true },
      // Deprecated in 2026-07-28 but still negotiated by 2025-11-25
      // sessions (logging/setLevel).
      logging: {},
      completions: {},
      // The tasks extension, served by fixture_tasks.mjs (2026-07-28).
      ...(era === 'modern' ?
          { extensions: { [TASKS_EXTENSION]: {} } } : {})
    },
    requestState: { verify: stateCodec.verify },
    // 2026-07-28 caching hints (SEP-2549); 2025 answers never carry them.
    cacheHints: {
      'tools/list': { ttlMs: 30000, cacheScope: 'public' },
      'prompts/list': { ttlMs: 30000, cacheScope: 'public' },
      'resources/list': { ttlMs: 30000, cacheScope: 'public' },
      'resources/templates/list': { ttlMs: 30000, cacheScope: 'public' },
      'resources/read': { ttlMs: 0, cacheScope: 'private' }
    }
  });

  // Session-wide log notifications (Legacy), filtered by setLevel.
  function log(level, data) {
    if (LOG_LEVELS.indexOf(level) < LOG_LEVELS.indexOf(logLevel))
      return;
    server.server.notification({
      method: 'notifications/message',
      params: { level, logger: 'fixture', data }
    }).catch(() => {});
  }

  registerTools(server, era);
  registerInputRequiredTools(server);
  if (era === 'modern')
    registerTaskTools(server);
  registerResources(server, log);
  registerPrompts(server);

  server.server.setRequestHandler('logging/setLevel', async (req) => {
    logLevel = req.params.level;
    log('info', `log level is now ${logLevel}`);
    return {};
  });

  server.server.setRequestHandler('completion/complete', async (req) => {
    return { completion: complete(req.params) };
  });

  return server;
}

// Completion values for prompt arguments and template variables.
const COMPLETIONS = {
  'test_prompt_with_arguments/arg1': ['paris', 'park', 'party', 'test'],
  'test_prompt_with_arguments/arg2': ['alpha', 'beta', 'gamma'],
  'test://template/{id}/data/id': ['1', '42', '123']
};

function complete(params) {
  const ref = params.ref ?? {};
  const key = `${ref.name ?? ref.uri}/${params.argument?.name}`;
  const prefix = String(params.argument?.value ?? '');
  const values = (COMPLETIONS[key] ?? [])
      .filter((v) => v.startsWith(prefix));
  return { values, total: values.length, hasMore: false };
}

function registerTools(server, era) {
  server.registerTool('test_simple_text', {
    description: 'Returns one text block'
  }, async () => ({
    content: [text('This is a simple text response for testing.')]
  }));

  server.registerTool('test_image_content', {
    description: 'Returns one PNG image block'
  }, async () => ({
    content: [{ type: 'image', data: PNG_1X1, mimeType: 'image/png' }]
  }));

  server.registerTool('test_audio_content', {
    description: 'Returns one WAV audio block'
  }, async () => ({
    content: [{ type: 'audio', data: WAV_SILENT,
        mimeType: 'audio/wav' }]
  }));

  server.registerTool('test_embedded_resource', {
    description: 'Returns an embedded text resource'
  }, async () => ({
    content: [{
      type: 'resource',
      resource: {
        uri: 'test://embedded-resource',
        mimeType: 'text/plain',
        text: 'This is an embedded resource content.'
      }
    }]
  }));

  server.registerTool('test_multiple_content_types', {
    description: 'Returns text, image and resource blocks'
  }, async () => ({
    content: [
      text('Multiple content types test:'),
      { type: 'image', data: PNG_1X1, mimeType: 'image/png' },
      {
        type: 'resource',
        resource: {
          uri: 'test://mixed-content-resource',
          mimeType: 'application/json',
          text: '{"test":"data","value":123}'
        }
      }
    ]
  }));

  server.registerTool('test_tool_with_logging', {
    description: 'Sends three log notifications while it runs',
    inputSchema: objectSchema()
  }, async (_args, ctx) => {
    for (const step of ['started', 'processing data', 'completed']) {
      await ctx.mcpReq.notify({
        method: 'notifications/message',
        params: { level: 'info', logger: 'fixture',
            data: `Tool execution ${step}` }
      });
      await sleep(20);
    }
    return { content: [text('Tool with logging executed successfully')] };
  });

  server.registerTool('test_tool_with_progress', {
    description: 'Reports progress 0, 50, 100 when given a token',
    inputSchema: objectSchema()
  }, async (_args, ctx) => {
    const token = ctx.mcpReq._meta?.progressToken;
    // No token, no progress notifications (spec MUST NOT).
    if (token !== undefined) {
      for (const progress of [0, 50, 100]) {
        await ctx.mcpReq.notify({
          method: 'notifications/progress',
          params: { progressToken: token, progress,
              total: 100,
              message: `${progress}% done` }
        });
        if (progress < 100)
          await sleep(20);
      }
    }
    return { content: [text(String(token ?? 'no progress token'))] };
  });

  server.registerTool('test_error_handling', {
    description: 'Always fails with isError: true'
  }, async () => {
    throw new Error('This tool intentionally returns an error for testing');
  });

  server.registerTool('test_sampling', {
    description: 'Asks the client to sample an LLM',
    inputSchema: objectSchema({
      prompt: { type: 'string', description: 'prompt for the LLM' }
    }, ['prompt'])
  }, async (args, ctx) => {
    try {
      const r = await ctx.mcpReq.send({
        method: 'sampling/createMessage',
        params: {
          messages: [{ role: 'user',
              content: text(args.prompt) }],
          maxTokens: 100
        }
      });
      const answer = r?.content?.text ?? JSON.stringify(r?.content);
      return { content: [text(`LLM response: ${answer}`)] };
    } catch (e) {
      return { content: [text(`sampling failed: ${e.message}`)],
          isError: true };
    }
  });

  server.registerTool('test_elicitation', {
    description: 'Asks the user for input via the client',
    inputSchema: objectSchema({
      message: { type: 'string',
          description: 'what to ask the user' }
    }, ['message'])
  }, async (args, ctx) => elicitAndReport(ctx, {
    message: args.message,
    requestedSchema: {
      type: 'object',
      properties: {
        response: { type: 'string',
            description: 'the user\'s answer' }
      },
      required: ['response']
    }
  }));

  server.registerTool('test_elicitation_sep1034_defaults', {
    description: 'Elicitation whose fields all carry defaults (SEP-1034)',
    inputSchema: objectSchema()
  }, async (_args, ctx) => elicitAndReport(ctx, {
    message: 'Check the defaults and change what you like',
    requestedSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', default: 'John Doe' },
        age: { type: 'integer', default: 30 },
        score: { type: 'number', default: 95.5 },
        status: { type: 'string',
            enum: ['active', 'inactive', 'pending'],
            default: 'active' },
        verified: { type: 'boolean', default: true }
      },
      required: []
    }
  }));

  server.registerTool('test_elicitation_sep1330_enums', {
    description: 'Elicitation with the five enum forms (SEP-1330)',
    inputSchema: objectSchema()
  }, async (_args, ctx) => elicitAndReport(ctx, {
    message: 'Pick from each list',
    requestedSchema: {
      type: 'object',
      properties: {
        untitledSingle: { type: 'string',
            enum: ['option1', 'option2', 'option3'] },
        titledSingle: { type: 'string', oneOf: [
          { const: 'value1', title: 'First Option' },
          { const: 'value2', title: 'Second Option' },
          { const: 'value3', title: 'Third Option' }
        ] },
        legacyEnum: { type: 'string',
            enum: ['opt1', 'opt2', 'opt3'],
            enumNames: ['Option One', 'Option Two',
                'Option Three'] },
        untitledMulti: { type: 'array', minItems: 1,
            maxItems: 3, items: { type: 'string',
            enum: ['option1', 'option2', 'option3'] } },
        titledMulti: { type: 'array', minItems: 1,
            maxItems: 3, items: { anyOf: [
          { const: 'value1', title: 'First Choice' },
          { const: 'value2', title: 'Second Choice' },
          { const: 'value3', title: 'Third Choice' }
        ] } }
      },
      required: []
    }
  }));

  // SEP-1699: closes the POST's SSE stream mid-call; the client must
  // reconnect with Last-Event-ID and gets the result from the replay.
  server.registerTool('test_reconnection', {
    description: 'Closes its SSE stream mid-call (SEP-1699)',
    inputSchema: objectSchema()
  }, async (_args, ctx) => {
    ctx.http?.closeSSE?.();
    await sleep(100);
    return { content: [text('Reconnection test completed successfully')] };
  });

  // Keywords from JSON Schema 2020-12 that must survive tools/list.
  server.registerTool('json_schema_2020_12_tool', {
    description: 'Input schema using JSON Schema 2020-12 keywords',
    inputSchema: fromJsonSchema({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: {
        address: {
          $anchor: 'addressDef',
          type: 'object',
          properties: {
            street: { type: 'string' },
            city: { type: 'string' }
          }
        }
      },
      properties: {
        name: { type: 'string' },
        address: { $ref: '#/$defs/address' },
        contactMethod: { type: 'string',
            enum: ['phone', 'email'] },
        phone: { type: 'string' },
        email: { type: 'string' }
      },
      allOf: [{ anyOf: [{ required: ['phone'] },
          { required: ['email'] }] }],
      if: {
        properties: { contactMethod: { const: 'phone' } },
        required: ['contactMethod']
      },
      then: { required: ['phone'] },
      else: { required: ['email'] },
      additionalProperties: false
    })
  }, async (args) => ({
    content: [text(`received ${JSON.stringify(args)}`)]
  }));

  // SEP-2243: an argument mirrored into an Mcp-Param-* header.
  server.registerTool('test_x_mcp_header', {
    description: 'Argument mirrored into the Mcp-Param-Region header',
    inputSchema: fromJsonSchema({
      type: 'object',
      properties: {
        region: { type: 'string', 'x-mcp-header': 'Region' },
        level: { type: 'integer' }
      }
    })
  }, async (args) => ({
    content: [text(`region=${args.region ?? '<none>'}`)]
  }));

  // Legacy only: change the watched resource and tell subscribers.
  if (era === 'legacy') {
    server.registerTool('test_update_watched_resource', {
      description: 'Changes test://watched-resource',
      inputSchema: objectSchema()
    }, async () => {
      watchedVersion++;
      await notifySubscribers('test://watched-resource');
      return { content: [text(`version ${watchedVersion}`)] };
    });
  }

  // server-stateless (SEP-2575) diagnostics.
  server.registerTool('test_missing_capability', {
    description: 'Needs the sampling client capability',
    inputSchema: objectSchema()
  }, async (_args, ctx) => {
    if (ctx.mcpReq.inputResponses?.answer === undefined) {
      return inputRequired({ inputRequests: {
        answer: inputRequired.createMessage({
          messages: [{ role: 'user',
              content: text('Say pong') }],
          maxTokens: 16
        })
      } });
    }
    return { content: [text('sampled')] };
  });

  server.registerTool('test_streaming_elicitation', {
    description: 'Answers with result frames only',
    inputSchema: objectSchema()
  }, async () => ({ content: [text('no server-to-client requests')] }));

  server.registerTool('test_logging_tool', {
    description: 'Logs through the request-scoped, logLevel-gated channel',
    inputSchema: objectSchema()
  }, async (_args, ctx) => {
    await ctx.mcpReq.log('info', 'test_logging_tool ran');
    return { content: [text('logged')] };
  });

  server.registerTool('test_trigger_tool_change', {
    description: 'Changes the tools list (this description: generation ' +
        `${listGeneration.tools}), publishes notifications/tools/list_changed`,
    inputSchema: objectSchema()
  }, async () => {
    listGeneration.tools++;
    modern.notify.toolsChanged();
    return { content: [text('tools list_changed published')] };
  });

  server.registerTool('test_trigger_prompt_change', {
    description: 'Changes the prompts list (test_changing_prompt), ' +
        'publishes notifications/prompts/list_changed',
    inputSchema: objectSchema()
  }, async () => {
    listGeneration.prompts++;
    modern.notify.promptsChanged();
    return { content: [text('prompts list_changed published')] };
  });
}

async function elicitAndReport(ctx, params) {
  try {
    const r = await ctx.mcpReq.send({
      method: 'elicitation/create',
      params
    });
    return { content: [text(`User response: action=${r.action}, ` +
        `content=${JSON.stringify(r.content ?? {})}`)] };
  } catch (e) {
    return { content: [text(`elicitation failed: ${e.message}`)],
        isError: true };
  }
}

// Multi-round-trip tools (SEP-2322).  Each returns inputRequired() until
// the retried request carries what it needs.
const ASK_NAME = () => inputRequired.elicit({
  message: 'What is your name?',
  requestedSchema: {
    type: 'object',
    properties: { name: { type: 'string' } },
    required: ['name']
  }
});

const ASK_CONFIRM = () => inputRequired.elicit({
  message: 'Please confirm',
  requestedSchema: {
    type: 'object',
    properties: { ok: { type: 'boolean' } },
    required: ['ok']
  }
});

function registerInputRequiredTools(server) {
  server.registerTool('test_input_required_result_elicitation', {
    description: 'MRTR: asks for the caller\'s name',
    inputSchema: objectSchema()
  }, async (_args, ctx) => {
    const name = acceptedContent(ctx.mcpReq.inputResponses,
        'user_name')?.name;
    if (typeof name !== 'string')
      return inputRequired({ inputRequests: {
          user_name: ASK_NAME() } });
    return { content: [text(`Hello, ${name}!`)] };
  });

  server.registerTool('test_input_required_result_sampling', {
    description: 'MRTR: asks for an LLM completion',
    inputSchema: objectSchema()
  }, async (_args, ctx) => {
    const r = ctx.mcpReq.inputResponses?.capital_question;
    if (r === undefined) {
      return inputRequired({ inputRequests: {
        capital_question: inputRequired.createMessage({
          messages: [{ role: 'user', content:
              text('What is the capital of France?') }],
          maxTokens: 100
        })
      } });
    }
    const answer = typeof r.content?.text === 'string' ?
        r.content.text : JSON.stringify(r);
    return { content: [text(`Sampling response: ${answer}`)] };
  });

  server.registerTool('test_input_required_result_list_roots', {
    description: 'MRTR: asks for the client\'s roots',
    inputSchema: objectSchema()
  }, async (_args, ctx) => {
    const roots = ctx.mcpReq.inputResponses?.client_roots?.roots;
    if (!Array.isArray(roots))
      return inputRequired({ inputRequests: {
          client_roots: inputRequired.listRoots() } });
    return { content: [text(`${roots.length} root(s): ` +
        roots.map((r) => r.uri).join(', '))] };
  });

  server.registerTool('test_input_required_result_request_state', {
    description: 'MRTR: round-trips sealed requestState',
    inputSchema: objectSchema()
  }, async (_args, ctx) => {
    const ok = acceptedContent(ctx.mcpReq.inputResponses, 'confirm');
    if (ok === undefined) {
      return inputRequired({
        inputRequests: { confirm: ASK_CONFIRM() },
        requestState: await stateCodec.mint(
            { tool: 'request_state', n: randomUUID() })
      });
    }
    if (ctx.mcpReq.requestState()?.tool !== 'request_state')
      throw new ProtocolError(ProtocolErrorCode.InvalidParams,
          'requestState missing or not ours');
    return { content: [text('state-ok: requestState verified')] };
  });

  server.registerTool('test_input_required_result_multiple_inputs', {
    description: 'MRTR: elicitation, sampling and roots in one round',
    inputSchema: objectSchema()
  }, async (_args, ctx) => {
    const r = ctx.mcpReq.inputResponses;
    const name = acceptedContent(r, 'user_name')?.name;
    const greeting = r?.greeting?.content?.text;
    const roots = r?.client_roots?.roots;
    if (typeof name !== 'string' || typeof greeting !== 'string' ||
        !Array.isArray(roots)) {
      return inputRequired({
        inputRequests: {
          user_name: ASK_NAME(),
          greeting: inputRequired.createMessage({
            messages: [{ role: 'user', content:
                text('Write a greeting') }],
            maxTokens: 50
          }),
          client_roots: inputRequired.listRoots()
        },
        requestState: await stateCodec.mint(
            { tool: 'multiple_inputs', n: randomUUID() })
      });
    }
    return { content: [text(`${greeting} ${name} ` +
        `(${roots.length} root(s))`)] };
  });

  // The round number travels in the sealed requestState; the Modern
  // path keeps nothing between requests.
  server.registerTool('test_input_required_result_multi_round', {
    description: 'MRTR: two elicitation rounds, then a result',
    inputSchema: objectSchema()
  }, async (_args, ctx) => {
    const st = ctx.mcpReq.requestState();
    const round = st?.tool === 'multi_round' ? st.round : 0;
    const r = ctx.mcpReq.inputResponses;
    if (round === 0) {
      return inputRequired({
        inputRequests: { step1: inputRequired.elicit({
          message: 'Step 1: your name?',
          requestedSchema: { type: 'object',
              properties: { name: { type: 'string' } },
              required: ['name'] }
        }) },
        requestState: await stateCodec.mint(
            { tool: 'multi_round', round: 1 })
      });
    }
    if (round === 1) {
      const name = acceptedContent(r, 'step1')?.name ?? '?';
      return inputRequired({
        inputRequests: { step2: inputRequired.elicit({
          message: 'Step 2: your favourite colour?',
          requestedSchema: { type: 'object',
              properties: { color: { type: 'string' } },
              required: ['color'] }
        }) },
        requestState: await stateCodec.mint(
            { tool: 'multi_round', round: 2, name })
      });
    }
    const color = acceptedContent(r, 'step2')?.color ?? '?';
    return { content: [text(`Multi-round complete: ${st.name} ` +
        `likes ${color}`)] };
  });

  server.registerTool('test_input_required_result_tampered_state', {
    description: 'MRTR: tampered requestState is rejected by the seam',
    inputSchema: objectSchema()
  }, async (_args, ctx) => {
    if (ctx.mcpReq.requestState()?.tool === 'tampered_state' &&
        acceptedContent(ctx.mcpReq.inputResponses, 'confirm') !==
        undefined)
      return { content: [text('integrity-ok')] };
    return inputRequired({
      inputRequests: { confirm: ASK_CONFIRM() },
      requestState: await stateCodec.mint(
          { tool: 'tampered_state', n: randomUUID() })
    });
  });

  // Only ask for input kinds the request declares it can supply.
  server.registerTool('test_input_required_result_capabilities', {
    description: 'MRTR: honours the declared client capabilities',
    inputSchema: objectSchema()
  }, async (_args, ctx) => {
    if (ctx.mcpReq.inputResponses !== undefined)
      return { content: [text('input received')] };
    const caps = ctx.mcpReq.envelope?.[CLIENT_CAPABILITIES_META_KEY] ??
        {};
    const asks = {};
    if (caps.elicitation !== undefined)
      asks.user_name = ASK_NAME();
    if (caps.sampling !== undefined)
      asks.greeting = inputRequired.createMessage({
        messages: [{ role: 'user',
            content: text('Say hello') }],
        maxTokens: 50
      });
    if (caps.roots !== undefined)
      asks.client_roots = inputRequired.listRoots();
    if (Object.keys(asks).length === 0)
      return { content: [text('no declared capability to ask')] };
    return inputRequired({ inputRequests: asks });
  });
}

function registerResources(server, log) {
  server.registerResource('static-text', 'test://static-text', {
    title: 'Static text',
    description: 'A fixed text resource',
    mimeType: 'text/plain'
  }, async () => ({
    contents: [{ uri: 'test://static-text', mimeType: 'text/plain',
        text: 'This is the content of the static text resource.' }]
  }));

  server.registerResource('static-binary', 'test://static-binary', {
    title: 'Static binary',
    description: 'A fixed PNG resource',
    mimeType: 'image/png'
  }, async () => ({
    contents: [{ uri: 'test://static-binary', mimeType: 'image/png',
        blob: PNG_1X1 }]
  }));

  server.registerResource('watched-resource', 'test://watched-resource', {
    title: 'Watched resource',
    description: 'Target of subscribe/unsubscribe',
    mimeType: 'text/plain'
  }, async () => ({
    contents: [{ uri: 'test://watched-resource',
        mimeType: 'text/plain',
        text: `Watched resource content, version ${watchedVersion}` }]
  }));

  server.registerResource('template',
      new ResourceTemplate('test://template/{id}/data',
          { list: undefined }), {
    title: 'Template',
    description: 'Data for any id',
    mimeType: 'application/json'
  }, async (uri, vars) => ({
    contents: [{ uri: uri.toString(), mimeType: 'application/json',
        text: JSON.stringify({ id: vars.id, templateTest: true,
            data: `Data for ID: ${vars.id}` }) }]
  }));

  server.server.setRequestHandler('resources/subscribe', async (req, ctx) => {
    const sid = ctx.sessionId;
    if (sid !== undefined) {
      if (!subscriptions.has(sid))
        subscriptions.set(sid, new Set());
      subscriptions.get(sid).add(req.params.uri);
    }
    log('info', `subscribed to ${req.params.uri}`);
    return {};
  });

  server.server.setRequestHandler('resources/unsubscribe',
      async (req, ctx) => {
    subscriptions.get(ctx.sessionId)?.delete(req.params.uri);
    log('info', `unsubscribed from ${req.params.uri}`);
    return {};
  });
}

function registerPrompts(server) {
  server.registerPrompt('test_changing_prompt', {
    title: 'Changing prompt',
    description: `Generation ${listGeneration.prompts} of the prompts list ` +
        '(test_trigger_prompt_change changes it)'
  }, async () => ({
    messages: [{ role: 'user', content: text(
        `Prompts list generation ${listGeneration.prompts}.`) }]
  }));

  server.registerPrompt('test_simple_prompt', {
    title: 'Simple prompt',
    description: 'A prompt without arguments'
  }, async () => ({
    messages: [{ role: 'user',
        content: text('This is a simple prompt for testing.') }]
  }));

  server.registerPrompt('test_prompt_with_arguments', {
    title: 'Prompt with arguments',
    description: 'A prompt with two required arguments',
    argsSchema: objectSchema({
      arg1: { type: 'string', description: 'First argument' },
      arg2: { type: 'string', description: 'Second argument' }
    }, ['arg1', 'arg2'])
  }, async (args) => ({
    messages: [{ role: 'user', content: text('Prompt with arguments: ' +
        `arg1='${args.arg1}', arg2='${args.arg2}'`) }]
  }));

  server.registerPrompt('test_prompt_with_embedded_resource', {
    title: 'Prompt with embedded resource',
    description: 'Embeds the resource named by resourceUri',
    argsSchema: objectSchema({
      resourceUri: { type: 'string',
          description: 'URI of the resource to embed' }
    }, ['resourceUri'])
  }, async (args) => ({
    messages: [
      { role: 'user', content: { type: 'resource', resource: {
        uri: args.resourceUri, mimeType: 'text/plain',
        text: 'Embedded resource content for testing.' } } },
      { role: 'user', content:
          text('Please process the embedded resource above.') }
    ]
  }));

  server.registerPrompt('test_prompt_with_image', {
    title: 'Prompt with image',
    description: 'A prompt carrying an image'
  }, async () => ({
    messages: [
      { role: 'user', content: { type: 'image', data: PNG_1X1,
          mimeType: 'image/png' } },
      { role: 'user',
          content: text('Please analyze the image above.') }
    ]
  }));

  // MRTR on prompts/get: needs elicited context before rendering.
  server.registerPrompt('test_input_required_result_prompt', {
    title: 'MRTR prompt',
    description: 'Asks for context before it renders'
  }, async (ctx) => {
    const c = acceptedContent(ctx.mcpReq.inputResponses,
        'user_context')?.context;
    if (typeof c !== 'string') {
      return inputRequired({ inputRequests: {
        user_context: inputRequired.elicit({
          message: 'What context should the prompt use?',
          requestedSchema: { type: 'object',
              properties: { context: { type: 'string' } },
              required: ['context'] }
        })
      } });
    }
    return { messages: [{ role: 'user',
        content: text(`Use the following context: ${c}`) }] };
  });
}

// ---------------------------------------------------------------------------
// HTTP serving.

const modern = createMcpHandler(() => buildServer('modern'), {
  legacy: 'reject',
  onerror: (e) => debug('modern:', e.message)
});
const serveModern = toNodeHandler(modern);

const sessions = new Map();	// session id -> transport

async function notifySubscribers(uri) {
  for (const [sid, uris] of subscriptions) {
    const t = sessions.get(sid);
    if (t === undefined || !uris.has(uri))
      continue;
    await t.server.server.notification({
      method: 'notifications/resources/updated',
      params: { uri }
    }).catch(() => {});
  }
}

function jsonError(res, status, code, message) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', id: null,
      error: { code, message } }));
}

function header(req, name) {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

async function readBody(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_BODY)
      return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function openSession(req, res, body) {
  const server = buildServer('legacy');
  const transport = new NodeStreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    eventStore: makeEventStore(),
    retryInterval: 1000,
    onsessioninitialized: (sid) => {
      sessions.set(sid, transport);
      // Bound memory: drop the oldest session.
      if (sessions.size > MAX_SESSIONS) {
        const oldest = sessions.keys().next().value;
        sessions.get(oldest).close().catch(() => {});
      }
      debug('session', sid, 'opened');
    }
  });
  transport.server = server;
  transport.onclose = () => {
    const sid = transport.sessionId;
    if (sid !== undefined && sessions.get(sid) === transport) {
      sessions.delete(sid);
      subscriptions.delete(sid);
      debug('session', sid, 'closed');
    }
    server.close().catch(() => {});
  };
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

async function serveLegacy(req, res, body) {
  const sid = header(req, 'mcp-session-id');
  if (sid !== undefined) {
    const t = sessions.get(sid);
    if (t === undefined) {
      jsonError(res, 404, -32001, 'Session not found');
      return;
    }
    await t.handleRequest(req, res, body);
    return;
  }
  if (req.method === 'POST' && isInitializeRequest(body)) {
    await openSession(req, res, body);
    return;
  }
  jsonError(res, 400, -32000, 'Bad Request: Mcp-Session-Id required');
}

const checkHost = localhostHostValidation();

async function serve(req, res) {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  debug(req.method, path, header(req, 'mcp-method') ?? '',
      header(req, 'mcp-session-id') ?? '');
  if (path === '/tasks-stats' && req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(taskStats()));
    return;
  }
  if (path === '/tasks-drop-listens' && req.method === 'POST') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ dropped: dropTaskListens() }));
    return;
  }
  if (path !== '/mcp') {
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found\n');
    return;
  }
  // DNS rebinding protection: only loopback Host names.
  if (!checkHost(req, res))
    return;
  if (!['GET', 'POST', 'DELETE'].includes(req.method)) {
    res.writeHead(405, { allow: 'GET, POST, DELETE' });
    res.end();
    return;
  }

  let body;
  if (req.method === 'POST') {
    const raw = await readBody(req);
    if (raw === null) {
      jsonError(res, 413, -32600, 'Request body too large');
      return;
    }
    try {
      body = JSON.parse(raw);
    } catch {
      jsonError(res, 400, -32700, 'Parse error');
      return;
    }
  }

  const route = classifyInboundRequest({
    httpMethod: req.method,
    protocolVersionHeader: header(req, 'mcp-protocol-version'),
    mcpMethodHeader: header(req, 'mcp-method'),
    mcpNameHeader: header(req, 'mcp-name'),
    body
  });
  if (route.kind === 'legacy')
    await serveLegacy(req, res, body);
  else if (!serveTasks(req, res, body))
    await serveModern(req, res, body);
}

const httpServer = http.createServer((req, res) => {
  serve(req, res).catch((e) => {
    console.error('[fixture] request failed:', e);
    if (!res.headersSent)
      jsonError(res, 500, -32603, 'Internal error');
    else
      res.end();
  });
});

function shutdown() {
  for (const t of sessions.values())
    t.close().catch(() => {});
  modern.close().catch(() => {});
  httpServer.close();
  httpServer.closeAllConnections?.();
  setTimeout(() => process.exit(0), 500).unref();
}

process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);

const port = Number(process.argv[2] ?? process.env.PORT ?? 0);
httpServer.listen(port, '127.0.0.1', () => {
  process.stdout.write(`PORT ${httpServer.address().port}\n`);
});
