/*
 * mcp_echo: a small, fast MCP server for benchmarks, so that the backend
 * is not what a gateway benchmark measures.  Streamable HTTP on POST
 * /mcp, one libevent loop, both revisions: 2025-11-25 with sessions, and
 * 2026-07-28 (a request whose _meta and MCP-Protocol-Version say so:
 * stateless, server/discover, resultType, and its serverInfo in every
 * result's _meta, as the official SDK v2 server stamps it).
 *
 *	mcp_echo [-s mode] [-p port] [-n tools] [-x prefix]
 *
 * Answers are JSON, or with -s (or MCP_ECHO_SSE=mode in the environment)
 * every 200 answer with a body is an event stream: "Content-Type:
 * text/event-stream", chunked, the JSON-RPC message in one "event:
 * message" event of its own chunk, then the terminating chunk.  The mode
 * says how, after what servers do:
 *
 *	sdk	the TypeScript SDK's StreamableHTTPServerTransport as it is by
 *		default (no event store: no id line, no priming event):
 *		head, event chunk and end in one write, as Node corks them
 *	split	the same, but the end in a write of its own once the event
 *		is out, as servers that flush each event write it
 *	store	the SDK with an event store (server-everything): first a
 *		priming event ("id: ...", empty data), then the message with
 *		an id line; one write
 *
 * Tools: <prefix>echo and <prefix>tool_1 .. <prefix>tool_<n>; every one
 * answers its "message" argument as text.  Binds 127.0.0.1 only and
 * prints "PORT n" on stdout once it listens.  SIGINT/SIGTERM stop it.
 */
#include <sys/types.h>
#include <sys/random.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/util.h>
#include <jansson.h>

#define ECHO_VERSION		"2025-11-25"
#define ECHO_MODERN		"2026-07-28"
#define ECHO_SID_BYTES		16
#define ECHO_SESSIONS_MAX	65536
#define ECHO_BODY_MAX		(4 * 1024 * 1024)
#define ECHO_TOOLS_MAX		100000
#define ECHO_SERVER_INFO_KEY	"io.modelcontextprotocol/serverInfo"
#define ECHO_NAME		"mcp_echo"
#define ECHO_IMPL_VERSION	"1.0"

struct echo_server {
	struct event_base	*es_base;
	struct evhttp		*es_http;
	json_t			*es_sessions;	/* id -> true */
	char			*es_tools;	/* serialized tools array */
	size_t			 es_tools_len;
	const char		*es_prefix;
	size_t			 es_prefix_len;
	int			 es_ntools;
};

/* -s: answers as an event stream */
enum echo_sse_mode {
	ECHO_JSON,
	ECHO_SSE_SDK,
	ECHO_SSE_SPLIT,
	ECHO_SSE_STORE
};
static enum echo_sse_mode	echo_sse;
static unsigned long long	echo_event_id;

static void
echo_usage(void)
{
	fprintf(stderr, "usage: mcp_echo [-s sdk|split|store] [-p port] "
	    "[-n tools] [-x prefix]\n");
	exit(2);
}

static int
echo_sse_parse(const char *s, enum echo_sse_mode *out)
{
	if (strcmp(s, "sdk") == 0)
		*out = ECHO_SSE_SDK;
	else if (strcmp(s, "split") == 0)
		*out = ECHO_SSE_SPLIT;
	else if (strcmp(s, "store") == 0)
		*out = ECHO_SSE_STORE;
	else
		return -1;
	return 0;
}

/* split: the head and the event are out, the end goes in a write of
 * its own */
static void
echo_sse_sent(struct evhttp_connection *evcon, void *arg)
{
	(void)evcon;
	evhttp_send_reply_end(arg);
}

/*
 * A JSON-RPC message (buf: drained; the caller frees it) as the answer:
 * JSON, or one SSE event framed as the SDK's writeSSEEvent() frames it.
 */
static void
echo_send(struct evhttp_request *req, int status, const char *reason,
    struct evbuffer *buf)
{
	struct evkeyvalq	*h = evhttp_request_get_output_headers(req);
	struct evbuffer		*prime = NULL;
	evutil_socket_t		 fd;
	char			 pre[80];
	int			 n, one = 1;

	if (echo_sse == ECHO_JSON || status != 200) {
		evhttp_add_header(h, "Content-Type", "application/json");
		evhttp_send_reply(req, status, reason, buf);
		return;
	}
	if (echo_sse == ECHO_SSE_STORE) {
		/* ids as long as the SDK's UUIDs */
		n = snprintf(pre, sizeof(pre), "event: message\nid: %036llu\n"
		    "data: ", echo_event_id + 2);
		if ((prime = evbuffer_new()) == NULL ||
		    evbuffer_add_printf(prime, "id: %036llu\ndata: \n\n",
		    echo_event_id + 1) == -1 ||
		    evbuffer_prepend(buf, pre, (size_t)n) == -1 ||
		    evbuffer_add(buf, "\n\n", 2) == -1) {
			if (prime != NULL)
				evbuffer_free(prime);
			evhttp_send_error(req, 500, NULL);
			return;
		}
		echo_event_id += 2;
	} else if (evbuffer_prepend(buf, "event: message\ndata: ", 21) ==
	    -1 || evbuffer_add(buf, "\n\n", 2) == -1) {
		evhttp_send_error(req, 500, NULL);
		return;
	}
	/* Node's http servers set noDelay: the last chunk is not held
	 * back for our ACK */
	fd = bufferevent_getfd(evhttp_connection_get_bufferevent(
	    evhttp_request_get_connection(req)));
	if (fd != -1)
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
		    sizeof(one));
	evhttp_add_header(h, "Content-Type", "text/event-stream");
	evhttp_add_header(h, "Cache-Control", "no-cache, no-transform");
	evhttp_add_header(h, "X-Accel-Buffering", "no");
	evhttp_send_reply_start(req, status, reason);
	if (prime != NULL) {
		evhttp_send_reply_chunk(req, prime);
		evbuffer_free(prime);
	}
	if (echo_sse == ECHO_SSE_SPLIT) {
		evhttp_send_reply_chunk_with_cb(req, buf, echo_sse_sent, req);
		return;
	}
	/* all in one write, as the loop writes what piled up */
	evhttp_send_reply_chunk(req, buf);
	evhttp_send_reply_end(req);
}

static int
echo_dump_cb(const char *buf, size_t len, void *arg)
{
	return evbuffer_add(arg, buf, len);
}

/* body NULL: no body (202, 200 to DELETE) */
static void
echo_reply(struct evhttp_request *req, int status, const char *reason,
    json_t *body, const char *sid)
{
	struct evkeyvalq	*h = evhttp_request_get_output_headers(req);
	struct evbuffer		*buf = NULL;

	if (sid != NULL)
		evhttp_add_header(h, "Mcp-Session-Id", sid);
	if (body != NULL) {
		if ((buf = evbuffer_new()) == NULL ||
		    json_dump_callback(body, echo_dump_cb, buf,
		    JSON_COMPACT) == -1) {
			if (buf != NULL)
				evbuffer_free(buf);
			evhttp_send_error(req, 500, NULL);
			return;
		}
		echo_send(req, status, reason, buf);
		evbuffer_free(buf);
		return;
	}
	evhttp_send_reply(req, status, reason, NULL);
}

static void
echo_reply_error(struct evhttp_request *req, int status, json_t *id,
    int code, const char *message)
{
	json_t	*msg;

	msg = json_pack("{s:s, s:O?, s:{s:i, s:s}}", "jsonrpc", "2.0",
	    "id", id, "error", "code", code, "message", message);
	if (msg == NULL) {
		evhttp_send_error(req, 500, NULL);
		return;
	}
	echo_reply(req, status, NULL, msg, NULL);
	json_decref(msg);
}

/* result is stolen */
static void
echo_reply_result(struct evhttp_request *req, json_t *id, json_t *result,
    const char *sid)
{
	json_t	*msg;

	msg = json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id,
	    "result", result);
	if (msg == NULL) {
		evhttp_send_error(req, 500, NULL);
		return;
	}
	echo_reply(req, 200, "OK", msg, sid);
	json_decref(msg);
}

static int
echo_mint_sid(char *out, size_t outlen)
{
	static const char	 hex[] = "0123456789abcdef";
	unsigned char		 raw[ECHO_SID_BYTES];
	size_t			 i;

	if (outlen < sizeof(raw) * 2 + 1 ||
	    getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return -1;
	for (i = 0; i < sizeof(raw); i++) {
		out[2 * i] = hex[raw[i] >> 4];
		out[2 * i + 1] = hex[raw[i] & 0xf];
	}
	out[2 * i] = '\0';
	return 0;
}

static void
echo_do_initialize(struct echo_server *es, struct evhttp_request *req,
    json_t *id)
{
	json_t	*result;
	char	 sid[ECHO_SID_BYTES * 2 + 1];

	if (json_object_size(es->es_sessions) >= ECHO_SESSIONS_MAX) {
		echo_reply_error(req, 503, id, -32000, "Too many sessions");
		return;
	}
	if (echo_mint_sid(sid, sizeof(sid)) == -1 ||
	    json_object_set_new(es->es_sessions, sid, json_true()) == -1) {
		echo_reply_error(req, 500, id, -32603, "Internal error");
		return;
	}
	result = json_pack("{s:s, s:{s:{}}, s:{s:s, s:s}}",
	    "protocolVersion", ECHO_VERSION,
	    "capabilities", "tools",
	    "serverInfo", "name", "mcp_echo", "version", "1.0");
	if (result == NULL) {
		echo_reply_error(req, 500, id, -32603, "Internal error");
		return;
	}
	echo_reply_result(req, id, result, sid);
}

/*
 * The list never changes, so it is serialized once and the answer is
 * spliced around it; only the id is encoded per request.
 */
static void
echo_do_tools_list(struct echo_server *es, struct evhttp_request *req,
    json_t *id, int modern)
{
	struct evbuffer	*buf;
	char		*ids;

	if ((ids = json_dumps(id, JSON_ENCODE_ANY | JSON_COMPACT)) == NULL) {
		evhttp_send_error(req, 500, NULL);
		return;
	}
	if ((buf = evbuffer_new()) == NULL ||
	    evbuffer_add_printf(buf, "{\"jsonrpc\":\"2.0\",\"id\":%s,"
	    "\"result\":{\"tools\":", ids) == -1 ||
	    evbuffer_add_reference(buf, es->es_tools, es->es_tools_len,
	    NULL, NULL) == -1 ||
	    (modern ? evbuffer_add_printf(buf, ",\"resultType\":\"complete\","
	    "\"ttlMs\":0,\"cacheScope\":\"public\",\"_meta\":{\""
	    ECHO_SERVER_INFO_KEY "\":{\"name\":\"" ECHO_NAME "\","
	    "\"version\":\"" ECHO_IMPL_VERSION "\"}}}}") :
	    evbuffer_add(buf, "}}", 2)) == -1) {
		if (buf != NULL)
			evbuffer_free(buf);
		free(ids);
		evhttp_send_error(req, 500, NULL);
		return;
	}
	free(ids);
	echo_send(req, 200, "OK", buf);
	evbuffer_free(buf);
}

static int
echo_known_tool(struct echo_server *es, const char *name)
{
	const char	*p;
	char		*end;
	long		 n;

	if (strncmp(name, es->es_prefix, es->es_prefix_len) != 0)
		return 0;
	name += es->es_prefix_len;
	if (strcmp(name, "echo") == 0)
		return 1;
	if (strncmp(name, "tool_", 5) != 0)
		return 0;
	p = name + 5;
	if (*p < '1' || *p > '9')
		return 0;
	errno = 0;
	n = strtol(p, &end, 10);
	return errno == 0 && *end == '\0' && n >= 1 && n <= es->es_ntools;
}

static void
echo_do_tools_call(struct echo_server *es, struct evhttp_request *req,
    json_t *id, json_t *params, int modern)
{
	json_t		*result;
	const char	*name;
	const char	*text = "";

	name = json_string_value(json_object_get(params, "name"));
	if (name == NULL) {
		echo_reply_error(req, 200, id, -32602,
		    "Invalid params: name is required");
		return;
	}
	if (!echo_known_tool(es, name)) {
		echo_reply_error(req, 200, id, -32602,
		    "Invalid params: unknown tool");
		return;
	}
	if (json_is_string(json_object_get(json_object_get(params,
	    "arguments"), "message")))
		text = json_string_value(json_object_get(json_object_get(
		    params, "arguments"), "message"));
	if (modern)
		result = json_pack("{s:[{s:s, s:s}], s:s, s:{s:{s:s, s:s}}}",
		    "content", "type", "text", "text", text, "resultType",
		    "complete", "_meta", ECHO_SERVER_INFO_KEY, "name",
		    ECHO_NAME, "version", ECHO_IMPL_VERSION);
	else
		result = json_pack("{s:[{s:s, s:s}]}", "content", "type",
		    "text", "text", text);
	if (result == NULL) {
		echo_reply_error(req, 500, id, -32603, "Internal error");
		return;
	}
	echo_reply_result(req, id, result, NULL);
}

/*
 * A 2026-07-28 request: no session; the version in _meta must match
 * the header, and Mcp-Method the method (the minimum a benchmark needs).
 */
static void
echo_handle_modern(struct echo_server *es, struct evhttp_request *req,
    json_t *msg, json_t *id, const char *method)
{
	struct evkeyvalq	*h = evhttp_request_get_input_headers(req);
	const char		*hv, *hm;
	json_t			*r;

	hv = evhttp_find_header(h, "MCP-Protocol-Version");
	hm = evhttp_find_header(h, "Mcp-Method");
	if (hv == NULL || strcmp(hv, ECHO_MODERN) != 0 || hm == NULL ||
	    method == NULL || strcmp(hm, method) != 0) {
		echo_reply_error(req, 400, id, -32020, "Header mismatch");
		return;
	}
	if (id == NULL) {
		echo_reply(req, 202, "Accepted", NULL, NULL);
		return;
	}
	if (strcmp(method, "tools/call") == 0)
		echo_do_tools_call(es, req, id, json_object_get(msg, "params"),
		    1);
	else if (strcmp(method, "tools/list") == 0)
		echo_do_tools_list(es, req, id, 1);
	else if (strcmp(method, "server/discover") == 0) {
		r = json_pack("{s:s, s:[s, s], s:{s:{}}, s:i, s:s, s:{s:{s:s, "
		    "s:s}}}", "resultType", "complete", "supportedVersions",
		    ECHO_VERSION, ECHO_MODERN, "capabilities", "tools", "ttlMs",
		    0, "cacheScope", "public", "_meta", ECHO_SERVER_INFO_KEY,
		    "name", ECHO_NAME, "version", ECHO_IMPL_VERSION);
		if (r == NULL)
			echo_reply_error(req, 500, id, -32603,
			    "Internal error");
		else
			echo_reply_result(req, id, r, NULL);
	} else
		echo_reply_error(req, 404, id, -32601, "Method not found");
}

static void
echo_handle_post(struct echo_server *es, struct evhttp_request *req)
{
	struct evbuffer	*in = evhttp_request_get_input_buffer(req);
	json_t		*msg = NULL, *id;
	json_error_t	 jerr;
	const char	*method, *sid, *pv;
	size_t		 len;

	len = evbuffer_get_length(in);
	msg = json_loadb((const char *)evbuffer_pullup(in, -1), len, 0, &jerr);
	if (msg == NULL) {
		echo_reply_error(req, 400, NULL, -32700, "Parse error");
		return;
	}
	if (!json_is_object(msg)) {
		echo_reply_error(req, 400, NULL, -32600, "Invalid Request");
		goto done;
	}
	id = json_object_get(msg, "id");
	method = json_string_value(json_object_get(msg, "method"));
	if (method != NULL && strcmp(method, "initialize") == 0 && id != NULL) {
		echo_do_initialize(es, req, id);
		goto done;
	}
	if ((pv = json_string_value(json_object_get(json_object_get(
	    json_object_get(msg, "params"), "_meta"),
	    "io.modelcontextprotocol/protocolVersion"))) != NULL &&
	    strcmp(pv, ECHO_MODERN) == 0) {
		echo_handle_modern(es, req, msg, id, method);
		goto done;
	}
	sid = evhttp_find_header(evhttp_request_get_input_headers(req),
	    "Mcp-Session-Id");
	if (sid == NULL) {
		echo_reply_error(req, 400, id, -32600,
		    "Bad Request: Mcp-Session-Id header is required");
		goto done;
	}
	if (json_object_get(es->es_sessions, sid) == NULL) {
		echo_reply_error(req, 404, id, -32001, "Session not found");
		goto done;
	}
	/* notifications and responses to us: nothing to answer */
	if (id == NULL || method == NULL) {
		echo_reply(req, 202, "Accepted", NULL, NULL);
		goto done;
	}
	if (strcmp(method, "tools/call") == 0)
		echo_do_tools_call(es, req, id, json_object_get(msg, "params"),
		    0);
	else if (strcmp(method, "tools/list") == 0)
		echo_do_tools_list(es, req, id, 0);
	else if (strcmp(method, "ping") == 0)
		echo_reply_result(req, id, json_object(), NULL);
	else
		echo_reply_error(req, 200, id, -32601, "Method not found");
done:
	json_decref(msg);
}

static void
echo_handle_delete(struct echo_server *es, struct evhttp_request *req)
{
	const char	*sid;

	sid = evhttp_find_header(evhttp_request_get_input_headers(req),
	    "Mcp-Session-Id");
	if (sid == NULL) {
		echo_reply_error(req, 400, NULL, -32600,
		    "Bad Request: Mcp-Session-Id header is required");
		return;
	}
	if (json_object_del(es->es_sessions, sid) == -1) {
		echo_reply_error(req, 404, NULL, -32001, "Session not found");
		return;
	}
	evhttp_send_reply(req, 200, "OK", NULL);
}

static void
echo_on_request(struct evhttp_request *req, void *arg)
{
	struct echo_server	*es = arg;
	const char		*path;

	path = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));
	if (path == NULL || strcmp(path, "/mcp") != 0) {
		evhttp_send_error(req, 404, NULL);
		return;
	}
	switch (evhttp_request_get_command(req)) {
	case EVHTTP_REQ_POST:
		echo_handle_post(es, req);
		break;
	case EVHTTP_REQ_DELETE:
		echo_handle_delete(es, req);
		break;
	default:
		/* no standalone GET stream: the spec's answer is 405 */
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Allow", "POST, DELETE");
		evhttp_send_error(req, 405, NULL);
		break;
	}
}

static int
echo_build_tools(struct echo_server *es)
{
	json_t	*tools, *tool;
	char	 name[256];
	int	 i;

	if ((tools = json_array()) == NULL)
		return -1;
	for (i = 0; i <= es->es_ntools; i++) {
		if (i == 0)
			(void)snprintf(name, sizeof(name), "%secho",
			    es->es_prefix);
		else
			(void)snprintf(name, sizeof(name), "%stool_%d",
			    es->es_prefix, i);
		tool = json_pack("{s:s, s:s, s:{s:s, s:{s:{s:s}}, s:[s]}}",
		    "name", name,
		    "description", "Echoes its message back.",
		    "inputSchema", "type", "object",
		    "properties", "message", "type", "string",
		    "required", "message");
		if (tool == NULL || json_array_append_new(tools, tool) == -1)
			goto fail;
	}
	if ((es->es_tools = json_dumps(tools, JSON_COMPACT)) == NULL)
		goto fail;
	es->es_tools_len = strlen(es->es_tools);
	json_decref(tools);
	return 0;
fail:
	json_decref(tools);
	return -1;
}

static void
echo_on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct echo_server	*es = arg;

	(void)sig;
	(void)what;
	event_base_loopbreak(es->es_base);
}

static int
echo_listen(struct echo_server *es, int port)
{
	struct evhttp_bound_socket	*bs;
	struct sockaddr_in		 sin;
	socklen_t			 slen = sizeof(sin);

	bs = evhttp_bind_socket_with_handle(es->es_http, "127.0.0.1", port);
	if (bs == NULL) {
		fprintf(stderr, "mcp_echo: cannot listen on 127.0.0.1:%d\n",
		    port);
		return -1;
	}
	if (getsockname(evhttp_bound_socket_get_fd(bs),
	    (struct sockaddr *)&sin, &slen) == -1) {
		perror("mcp_echo: getsockname");
		return -1;
	}
	printf("PORT %d\n", ntohs(sin.sin_port));
	fflush(stdout);
	return 0;
}

static int
echo_parse_int(const char *s, long min, long max, int *out)
{
	char	*end;
	long	 v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *s == '\0' || *end != '\0' || v < min || v > max)
		return -1;
	*out = (int)v;
	return 0;
}

int
main(int argc, char *argv[])
{
	struct echo_server	 es;
	struct event		*sigint = NULL, *sigterm = NULL;
	int			 ch, port = 0, rc = 1;

	memset(&es, 0, sizeof(es));
	es.es_prefix = "";
	es.es_ntools = 20;
	if (getenv("MCP_ECHO_SSE") != NULL &&
	    echo_sse_parse(getenv("MCP_ECHO_SSE"), &echo_sse) == -1)
		echo_usage();
	while ((ch = getopt(argc, argv, "n:p:s:x:")) != -1) {
		switch (ch) {
		case 's':
			if (echo_sse_parse(optarg, &echo_sse) == -1)
				echo_usage();
			break;
		case 'n':
			if (echo_parse_int(optarg, 0, ECHO_TOOLS_MAX,
			    &es.es_ntools) == -1)
				echo_usage();
			break;
		case 'p':
			if (echo_parse_int(optarg, 0, 65535, &port) == -1)
				echo_usage();
			break;
		case 'x':
			if (strlen(optarg) > 64)
				echo_usage();
			es.es_prefix = optarg;
			break;
		default:
			echo_usage();
		}
	}
	if (optind != argc)
		echo_usage();
	es.es_prefix_len = strlen(es.es_prefix);
	(void)signal(SIGPIPE, SIG_IGN);

	if ((es.es_sessions = json_object()) == NULL ||
	    echo_build_tools(&es) == -1) {
		fprintf(stderr, "mcp_echo: out of memory\n");
		goto fail;
	}
	if ((es.es_base = event_base_new()) == NULL ||
	    (es.es_http = evhttp_new(es.es_base)) == NULL) {
		fprintf(stderr, "mcp_echo: cannot set up libevent\n");
		goto fail;
	}
	evhttp_set_max_body_size(es.es_http, ECHO_BODY_MAX);
	evhttp_set_max_headers_size(es.es_http, 64 * 1024);
	evhttp_set_timeout(es.es_http, 60);
	evhttp_set_allowed_methods(es.es_http, EVHTTP_REQ_GET |
	    EVHTTP_REQ_POST | EVHTTP_REQ_DELETE);
	evhttp_set_gencb(es.es_http, echo_on_request, &es);
	if ((sigint = evsignal_new(es.es_base, SIGINT, echo_on_signal,
	    &es)) == NULL ||
	    (sigterm = evsignal_new(es.es_base, SIGTERM, echo_on_signal,
	    &es)) == NULL ||
	    evsignal_add(sigint, NULL) == -1 ||
	    evsignal_add(sigterm, NULL) == -1) {
		fprintf(stderr, "mcp_echo: cannot handle signals\n");
		goto fail;
	}
	if (echo_listen(&es, port) == -1)
		goto fail;
	if (event_base_dispatch(es.es_base) == -1) {
		fprintf(stderr, "mcp_echo: event loop failed\n");
		goto fail;
	}
	rc = 0;
fail:
	if (sigint != NULL)
		event_free(sigint);
	if (sigterm != NULL)
		event_free(sigterm);
	if (es.es_http != NULL)
		evhttp_free(es.es_http);
	if (es.es_base != NULL)
		event_base_free(es.es_base);
	free(es.es_tools);
	json_decref(es.es_sessions);
	return rc;
}
