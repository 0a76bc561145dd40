/*
 * The transport to backends: a JSON-RPC body POSTed over Streamable
 * HTTP to one backend (its URL, or its bridge's Unix socket), on the
 * worker's libcurl multi.  A response may be JSON or an SSE stream; the
 * stream is parsed as it arrives (and resumed after a cut), messages
 * are handed up as they come, and the final response completes the
 * call.  Request ids are ours ("vmcpd-<pid>-<seq>"), unique across
 * workers sharing a backend session.  Which revision, which session,
 * what to resend: upstream.c.  The HTTP requests themselves (URL or
 * bridge socket, credentials, headers) and those whose answer nobody
 * reads are made in backend_http.c.
 */
#include <sys/queue.h>
#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/event.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "shared/http_client.h"
#include "worker/upstream/flow.h"
#include "proto/proto.h"
#include "proto/method.h"
#include "proto/jsonrpc.h"
#include "proto/headers.h"
#include "proto/sse.h"
#include "proto/jsonspan.h"
#include "shared/stats.h"
#include "worker/process/counters.h"
#include "worker/process/process.h"
#include "worker/trace/trace.h"
#include "worker/upstream/backend.h"
#include "worker/upstream/backend_int.h"

#define BACKEND_BODY_MAX	(64 * 1024 * 1024)
#define BACKEND_EVENT_MAX	(16 * 1024 * 1024)
#define BACKEND_INFO_TTL_MS	(5 * 60 * 1000)
#define BACKEND_INFO_MAX	(1024 * 1024)	/* a description cached */
#define BACKEND_SID_MAX		256
#define BACKEND_RESUMES		3	/* GET + Last-Event-ID after a cut */
#define BACKEND_RETRY_MAX_MS	5000

struct backend_call {
	TAILQ_ENTRY(backend_call)	 bc_entry;	/* every call alive */
	struct worker			*bc_w;
	const struct config_backend	*bc_be;
	struct http_call		*bc_http;
	struct sse_parser		*bc_sse;
	char				 bc_id[64];
	char				 bc_resp_sid[BACKEND_SID_MAX];
	char				*bc_body;
	size_t				 bc_len;
	size_t				 bc_cap;	/* bc_body's size */
	long				 bc_status;
	size_t				 bc_held;	/* charged, bytes */
	enum abudget_limit		 bc_refused;	/* a budget said no */
	int				 bc_is_sse;
	int				 bc_sent_sid;
	int				 bc_finished;	/* done delivered */
	int				 bc_cancelled;
	int				 bc_depth;	/* in a data callback */
	int				 bc_resumes;	/* GETs after a cut */
	long				 bc_retry_ms;	/* the stream's retry: */
	char				 bc_last_id[128]; /* its last event id */
	char				 bc_version[32];
	uint64_t			 bc_t0;		/* sent at, for diag */
	struct trace_span		*bc_span;	/* its CLIENT span */
	struct event			*bc_timer;	/* resume after retry */
	struct http_call		*bc_abort;	/* its cancellation */
	const struct backend_call_cbs	*bc_cbs;
	void				*bc_arg;
};

static TAILQ_HEAD(, backend_call) backend_calls =
    TAILQ_HEAD_INITIALIZER(backend_calls);

/*
 * The answers this process buffers at once (operational.answerBuffer):
 * a call's body and SSE buffers are charged as they grow, and one that
 * would pass the worker's budget or its backend's is refused (the
 * transfer aborted, its caller told which limit): each answer is
 * capped, this caps them all, so that many large answers at once are
 * refused, not held.
 */
static struct abudget	backend_budget;
static int		backend_budget_set;

static void	backend_call_free(struct backend_call *);

/* snprintf(buf, size, "%s", s) without printf, for the hot path */
static void
backend_copy(char *buf, size_t size, const char *s)
{
	size_t	n = strlen(s);

	if (n >= size)
		n = size - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
}

/* our request id "vmcpd-<pid>-<seq>" */
static void
backend_make_id(char *buf, size_t size, pid_t pid, unsigned long long seq)
{
	static char	prefix[32];
	static size_t	plen;
	static pid_t	ppid;
	char		num[24], *s;
	size_t		n;

	if (ppid != pid || plen == 0) {
		(void)snprintf(prefix, sizeof(prefix), "vmcpd-%d-", (int)pid);
		plen = strlen(prefix);
		ppid = pid;
	}
	s = proto_utoa(num + sizeof(num), seq, 10);
	n = (size_t)(num + sizeof(num) - s);
	if (plen + n >= size) {
		buf[0] = '\0';
		return;
	}
	memcpy(buf, prefix, plen);
	memcpy(buf + plen, s, n);
	buf[plen + n] = '\0';
}
static void	backend_finish(struct backend_call *, int rc, json_t *response,
		    int flags, const char *errmsg);

static size_t
backend_index(const struct backend_call *bc)
{
	return (size_t)(bc->bc_be - bc->bc_w->w_conf->cf_backends);
}

/* the bytes bc's buffers hold: its body, its SSE parser's */
static size_t
backend_held(const struct backend_call *bc)
{
	return bc->bc_cap + (bc->bc_sse != NULL ?
	    sse_parser_held(bc->bc_sse) : 0);
}

/* bc's buffers about to hold want bytes: 0, or -1 (bc_refused says
 * which budget refused it) */
static int
backend_charge(struct backend_call *bc, size_t want)
{
	enum abudget_limit	lim;
	size_t			bi = backend_index(bc);

	if (!backend_budget_set)
		return 0;
	if ((lim = abudget_charge(&backend_budget, bi, &bc->bc_held,
	    want)) != ABUDGET_OK) {
		bc->bc_refused = lim;
		return -1;
	}
	if (bi < backend_budget.ab_nbe)
		diag_answer_bytes(bc->bc_w, bc->bc_be,
		    backend_budget.ab_used_be[bi]);
	return 0;
}

/* why bc was refused, for its caller (and the client) */
static void
backend_refusal(const struct backend_call *bc, char *msg, size_t len)
{
	const struct config	*cf = bc->bc_w->w_conf;
	int			 worker = bc->bc_refused == ABUDGET_WORKER;
	size_t			 lim = worker ? cf->cf_answer_buf :
				    cf->cf_answer_buf_backend;

	(void)snprintf(msg, len, "backend %s: its answer was refused: the "
	    "answers buffered at once would pass operational.answerBuffer."
	    "%s (%zu %s)", bc->bc_be->cb_name, worker ? "perWorker" :
	    "perBackend", lim % (1024 * 1024) == 0 ? lim / (1024 * 1024) :
	    lim, lim % (1024 * 1024) == 0 ? "MiB" : "bytes");
}

/*
 * A request the backend sent mid-call: the caller relays it to its
 * client, or it is answered here (ping) or refused with a reason.
 */
static void
backend_answer_request(struct backend_call *bc, struct jsonrpc_msg *m)
{
	json_t		*reply;
	const char	*sid = bc->bc_sent_sid ? bc->bc_resp_sid : NULL;
	char		 why[256] = "";

	int		 ping = MCP_METHOD_IS(m->jm_mm, MCP_M_PING);

	if (!ping && bc->bc_cbs != NULL &&
	    bc->bc_cbs->bc_request != NULL &&
	    bc->bc_cbs->bc_request(bc->bc_arg, m->jm_root, bc->bc_resp_sid[0] ?
	    bc->bc_resp_sid : NULL, why, sizeof(why)) == 0)
		return;
	if (ping)
		reply = jsonrpc_result_new(m->jm_id, json_object());
	else
		reply = jsonrpc_error_new(m->jm_id, JSONRPC_METHOD_NOT_FOUND,
		    why[0] != '\0' ? why : "vmcpd cannot relay this request "
		    "to a client", NULL);
	if (reply == NULL)
		return;
	if (!ping)
		log_info("backend %s sent %s mid-call; refused: %s",
		    bc->bc_be->cb_name, m->jm_method, why[0] ? why : "no relay");
	backend_post_nowait(bc->bc_w, bc->bc_be, sid[0] ? sid : NULL, NULL,
	    reply);
	json_decref(reply);
}

static int
backend_id_matches(const struct backend_call *bc, json_t *id)
{
	return json_is_string(id) && strcmp(json_string_value(id),
	    bc->bc_id) == 0;
}

/* the CLIENT span ends with the answer, not with a stream the backend
 * keeps open after it (that transfer's end may come much later) */
static void
backend_span_answered(struct backend_call *bc, int rc, const char *errmsg)
{
	if (bc->bc_span == NULL)
		return;
	backend_trace_done(bc->bc_span, rc, bc->bc_status, errmsg);
	backend_trace_end(bc->bc_span, 1);
	bc->bc_span = NULL;
}

/*
 * The common case, cheaply: the final answer to our request, passed on
 * as text.  Only a well-formed answer to our id qualifies; anything
 * else (notifications, requests, oddities) takes the parsing path.
 */
static int
backend_on_answer_raw(struct backend_call *bc, const char *data, size_t len)
{
	struct proto_span	 m[8], rm[BACKEND_RESULT_MEMBERS];
	struct proto_members	 rs = { rm, BACKEND_RESULT_MEMBERS, 0, NULL,
				    NULL };
	struct proto_members	 pm = { m, 8, 0, "result", NULL };
	const struct proto_span	*id, *r, *e, *v, *mem = NULL;
	size_t			 n, idlen = strlen(bc->bc_id);

	/* the result's members in the same pass, if wanted */
	if (bc->bc_cbs == NULL || bc->bc_cbs->bc_done_raw == NULL)
		return -1;
	if (bc->bc_cbs->bc_raw_members)
		pm.pm_sub = &rs;
	if (proto_json_members_sub(data, len, &pm) == -1)
		return -1;
	n = pm.pm_n;
	id = proto_json_member(m, n, "id");
	r = proto_json_member(m, n, "result");
	e = proto_json_member(m, n, "error");
	v = proto_json_member(m, n, "jsonrpc");
	if (id == NULL || v == NULL || (r == NULL) == (e == NULL) ||
	    proto_json_member(m, n, "method") != NULL ||
	    v->ps_vallen != 5 || memcmp(v->ps_val, "\"2.0\"", 5) != 0 ||
	    id->ps_vallen != idlen + 2 || id->ps_val[0] != '"' ||
	    memcmp(id->ps_val + 1, bc->bc_id, idlen) != 0 ||
	    (r != NULL ? r : e)->ps_val[0] != '{')
		return -1;
	/*
	 * Sure to be this result's: some kept, all of them, and inside it
	 * (a repeated "result" leaves the last one's; that of none is
	 * scanned again, cheaply)
	 */
	if (r != NULL && rs.pm_n > 0 && rs.pm_n <= rs.pm_max &&
	    rm[0].ps_val > r->ps_val && rm[0].ps_val < r->ps_val + r->ps_vallen)
		mem = rm;
	bc->bc_finished = 1;
	diag_backend_done(bc->bc_w, bc->bc_be, bc->bc_t0, 0, bc->bc_status,
	    NULL);
	backend_span_answered(bc, 0, NULL);
	bc->bc_cbs->bc_done_raw(bc->bc_arg, r != NULL ? "result" : "error",
	    (r != NULL ? r : e)->ps_val, (r != NULL ? r : e)->ps_vallen, mem,
	    rs.pm_n);
	return 0;
}

/* one JSON-RPC message from the backend, from SSE or a JSON body */
static int
backend_on_message(struct backend_call *bc, const char *data, size_t len)
{
	struct jsonrpc_msg	m;
	struct jsonrpc_err	err;

	if (bc->bc_finished)
		return 0;
	if (len == 0)
		return 0;	/* SEP-1699 priming event */
	if (backend_on_answer_raw(bc, data, len) == 0)
		return 0;
	if (jsonrpc_parse(data, len, &m, &err) == -1) {
		log_warnx("backend %s sent an invalid message: %s",
		    bc->bc_be->cb_name, err.je_msg);
		return 0;
	}
	switch (m.jm_kind) {
	case JSONRPC_RESPONSE:
	case JSONRPC_ERROR:
		if (backend_id_matches(bc, m.jm_id))
			backend_finish(bc, 0, m.jm_root, 0, NULL);
		break;
	case JSONRPC_NOTIFICATION:
		if (bc->bc_cbs != NULL && bc->bc_cbs->bc_message != NULL)
			bc->bc_cbs->bc_message(bc->bc_arg, m.jm_root);
		break;
	case JSONRPC_REQUEST:
		backend_answer_request(bc, &m);
		break;
	}
	jsonrpc_msg_clear(&m);
	return 0;
}

static int
backend_on_sse(void *arg, const struct sse_event *ev)
{
	struct backend_call *bc = arg;

	/* what a resume needs if the server cuts the stream short */
	if (ev->se_id != NULL && strlen(ev->se_id) < sizeof(bc->bc_last_id))
		backend_copy(bc->bc_last_id, sizeof(bc->bc_last_id), ev->se_id);
	if (ev->se_retry >= 0)
		bc->bc_retry_ms = ev->se_retry;

	if (ev->se_event[0] != '\0' && strcmp(ev->se_event, "message") != 0)
		return 0;
	return backend_on_message(bc, ev->se_data, ev->se_data_len);
}

/*
 * Room in the body for n more bytes and a NUL, charged first: the whole
 * answer at once when its length is known, else twice the room each
 * time (a realloc a chunk copied the body over and over, quadratic
 * where realloc cannot move pages, as under ASan).
 */
static int
backend_body_room(struct backend_call *bc, size_t n)
{
	size_t	 need = bc->bc_len + n + 1, cap;
	char	*nb;

	if (need <= bc->bc_cap)
		return 0;
	cap = bc->bc_cap * 2 < BACKEND_BODY_MAX + 1 ? bc->bc_cap * 2 :
	    BACKEND_BODY_MAX + 1;
	if (cap < need)
		cap = need;
	if (backend_charge(bc, backend_held(bc) - bc->bc_cap + cap) == -1 ||
	    (nb = realloc(bc->bc_body, cap)) == NULL)
		return -1;
	bc->bc_body = nb;
	bc->bc_cap = cap;
	return 0;
}

/* a body of a Content-Length the answer is held whole: taken at once,
 * or refused before a byte of it comes */
static int
backend_body_length(struct backend_call *bc, struct http_call *hc)
{
	const char		*cl = http_call_header(hc, "Content-Length");
	char			*end;
	unsigned long long	 n;

	if (cl == NULL || *cl < '0' || *cl > '9')
		return 0;
	errno = 0;
	n = strtoull(cl, &end, 10);
	if (errno != 0 || *end != '\0' || n == 0 || n > BACKEND_BODY_MAX)
		return 0;	/* the framing is the HTTP client's */
	return backend_body_room(bc, (size_t)n);
}

static int
backend_on_head(void *arg, struct http_call *hc, long status)
{
	struct backend_call	*bc = arg;
	const char		*ct, *sid;

	bc->bc_status = status;
	if ((sid = http_call_header(hc, "Mcp-Session-Id")) != NULL &&
	    strlen(sid) < sizeof(bc->bc_resp_sid))
		backend_copy(bc->bc_resp_sid, sizeof(bc->bc_resp_sid), sid);
	ct = http_call_header(hc, "Content-Type");
	if (status >= 200 && status < 300 && ct != NULL &&
	    strncasecmp(ct, "text/event-stream", 17) == 0) {
		bc->bc_is_sse = 1;
		bc->bc_sse = sse_parser_new(BACKEND_EVENT_MAX, backend_on_sse,
		    bc);
		if (bc->bc_sse == NULL)
			return -1;
		return 0;
	}
	return backend_body_length(bc, hc);
}

static int
backend_on_data(void *arg, struct http_call *hc, const char *buf, size_t len)
{
	struct backend_call	*bc = arg;
	int			 rc;

	(void)hc;
	if (bc->bc_cancelled)
		return -1;
	if (bc->bc_is_sse) {
		/* what it may buffer of these bytes, then what it does */
		if (backend_charge(bc, backend_held(bc) + len) == -1)
			return -1;
		/* a callback may cancel this call: free it only after */
		bc->bc_depth++;
		rc = sse_parser_feed(bc->bc_sse, buf, len);
		bc->bc_depth--;
		if (rc == -1 || bc->bc_cancelled)
			return -1;
		return backend_charge(bc, backend_held(bc));
	}
	if (bc->bc_finished)
		return 0;
	if (bc->bc_len + len > BACKEND_BODY_MAX ||
	    backend_body_room(bc, len) == -1)
		return -1;
	memcpy(bc->bc_body + bc->bc_len, buf, len);
	bc->bc_len += len;
	bc->bc_body[bc->bc_len] = '\0';
	return 0;
}

/* does an error body say the backend no longer knows our session? */
static int
backend_session_lost(struct backend_call *bc)
{
	json_t		*o, *msg;
	json_error_t	 jerr;
	int		 lost = 0;

	if (!bc->bc_sent_sid)
		return 0;
	if (bc->bc_status == 404)
		return 1;
	if (bc->bc_status != 400 || bc->bc_body == NULL)
		return 0;
	/* some servers (the TypeScript SDK's) answer 400 for it */
	if ((o = json_loadb(bc->bc_body, bc->bc_len, JSON_ALLOW_NUL,
	    &jerr)) == NULL)
		return 0;
	msg = json_object_get(json_object_get(o, "error"), "message");
	if (json_is_string(msg) && strcasestr(json_string_value(msg),
	    "session") != NULL)
		lost = 1;
	json_decref(o);
	return lost;
}

/*
 * A non-2xx answer: the JSON-RPC error in its body, if any, goes up
 * with it (a 2026-07-28 backend's -3202x come at 400), and a 4xx says
 * the backend turned the request away before running it.
 */
static void
backend_refused(struct backend_call *bc)
{
	json_t		*body = NULL;
	json_error_t	 jerr;
	const char	*m;
	char		 msg[512];
	int		 flags = 0;

	if (bc->bc_body != NULL && bc->bc_len > 0)
		body = json_loadb(bc->bc_body, bc->bc_len, JSON_ALLOW_NUL,
		    &jerr);
	if (!json_is_object(json_object_get(body, "error"))) {
		json_decref(body);
		body = NULL;
	}
	if (backend_session_lost(bc))
		flags |= BACKEND_F_LOST;
	if (bc->bc_status >= 400 && bc->bc_status < 500 &&
	    bc->bc_status != 408 && bc->bc_status != 429)
		flags |= BACKEND_F_REFUSED;
	m = json_string_value(json_object_get(json_object_get(body, "error"),
	    "message"));
	(void)snprintf(msg, sizeof(msg), "backend %s answered HTTP %ld%s%.200s",
	    bc->bc_be->cb_name, bc->bc_status, m != NULL ? ": " : "",
	    m != NULL ? m : "");
	backend_finish(bc, -1, body, flags, msg);
	json_decref(body);
}

static void	backend_on_resume(evutil_socket_t, short, void *);

/*
 * The server closed the stream before its response (SEP-1699 polling):
 * resume it with GET and Last-Event-ID after the retry it asked for.
 */
static int
backend_resume(struct backend_call *bc)
{
	struct timeval	tv;
	long		ms = bc->bc_retry_ms;

	if (!bc->bc_is_sse || !bc->bc_sent_sid || bc->bc_last_id[0] == '\0' ||
	    bc->bc_resumes >= BACKEND_RESUMES)
		return -1;
	if (ms < 0)
		ms = 0;
	if (ms > BACKEND_RETRY_MAX_MS)
		ms = BACKEND_RETRY_MAX_MS;
	if (bc->bc_timer == NULL && (bc->bc_timer = evtimer_new(
	    bc->bc_w->w_base, backend_on_resume, bc)) == NULL)
		return -1;
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	if (evtimer_add(bc->bc_timer, &tv) == -1)
		return -1;
	bc->bc_resumes++;
	log_debug("backend %s cut the stream of %s; resuming after event %s",
	    bc->bc_be->cb_name, bc->bc_id, bc->bc_last_id);
	if (bc->bc_cbs != NULL && bc->bc_cbs->bc_cut != NULL)
		bc->bc_cbs->bc_cut(bc->bc_arg, ms);
	return 0;
}

static void
backend_on_done(void *arg, struct http_call *hc, int result,
    const char *errmsg)
{
	struct backend_call	*bc = arg;
	char			 msg[512];

	(void)hc;
	bc->bc_http = NULL;	/* freed by the client after this */
	if (bc->bc_abort != NULL)
		return;		/* freed once its cancellation is through */
	if (bc->bc_finished) {
		backend_call_free(bc);
		return;
	}
	if (bc->bc_refused != ABUDGET_OK) {
		backend_refusal(bc, msg, sizeof(msg));
		backend_finish(bc, -1, NULL, BACKEND_F_BUDGET, msg);
	} else if (result == -1) {
		(void)snprintf(msg, sizeof(msg), "backend %s: %s",
		    bc->bc_be->cb_name, errmsg);
		backend_finish(bc, -1, NULL, 0, msg);
	} else if (bc->bc_status < 200 || bc->bc_status >= 300) {
		backend_refused(bc);
	} else if (!bc->bc_is_sse && bc->bc_len > 0) {
		(void)backend_on_message(bc, bc->bc_body, bc->bc_len);
		if (!bc->bc_finished) {
			(void)snprintf(msg, sizeof(msg), "backend %s sent no "
			    "response to request %s", bc->bc_be->cb_name,
			    bc->bc_id);
			backend_finish(bc, -1, NULL, 0, msg);
		}
	} else {
		if (backend_resume(bc) == 0)
			return;
		(void)snprintf(msg, sizeof(msg), "backend %s ended the stream "
		    "without a response", bc->bc_be->cb_name);
		backend_finish(bc, -1, NULL, 0, msg);
	}
	backend_call_free(bc);
}

static void
backend_on_resume(evutil_socket_t fd, short ev, void *arg)
{
	static const struct http_call_cbs hcbs = {
		backend_on_head, backend_on_data, backend_on_done
	};
	struct backend_call	*bc = arg;
	char			 msg[512];

	(void)fd;
	(void)ev;
	if (bc->bc_sse != NULL)
		sse_parser_free(bc->bc_sse);
	bc->bc_sse = NULL;
	(void)backend_charge(bc, backend_held(bc));
	bc->bc_is_sse = 0;
	bc->bc_status = 0;
	bc->bc_http = backend_get_stream(bc->bc_w, bc->bc_be, bc->bc_resp_sid,
	    bc->bc_version[0] != '\0' ? bc->bc_version : NULL, bc->bc_last_id);
	if (bc->bc_http != NULL)
		http_call_set_timeout(bc->bc_http, bc->bc_be->cb_timeout_ms);
	if (bc->bc_http == NULL ||
	    http_call_start(bc->bc_http, &hcbs, bc) == -1) {
		bc->bc_http = NULL;
		(void)snprintf(msg, sizeof(msg), "backend %s: cannot resume the "
		    "stream", bc->bc_be->cb_name);
		backend_finish(bc, -1, NULL, 0, msg);
		backend_call_free(bc);
	}
}

/*
 * Deliver the outcome once.  A stream may go on after its response
 * (it SHOULD end): the transfer then finishes quietly in the
 * background, so its connection can be reused.
 */
static void
backend_finish(struct backend_call *bc, int rc, json_t *response, int flags,
    const char *errmsg)
{
	if (bc->bc_finished)
		return;
	bc->bc_finished = 1;
	/* a refusal is this worker's doing, not the backend's failure */
	if (bc->bc_refused != ABUDGET_OK)
		diag_count_answer_refused(bc->bc_w, bc->bc_be,
		    bc->bc_refused == ABUDGET_WORKER ? DIAG_BUDGET_WORKER :
		    DIAG_BUDGET_BACKEND);
	else
		diag_backend_done(bc->bc_w, bc->bc_be, bc->bc_t0, rc,
		    bc->bc_status, errmsg);
	backend_span_answered(bc, rc, errmsg);
	if (bc->bc_cbs != NULL && bc->bc_cbs->bc_done != NULL)
		bc->bc_cbs->bc_done(bc->bc_arg, rc, response, flags, errmsg);
}

static void
backend_call_free(struct backend_call *bc)
{
	if (bc == NULL)
		return;
	TAILQ_REMOVE(&backend_calls, bc, bc_entry);
	backend_trace_end(bc->bc_span, bc->bc_finished);
	if (bc->bc_http != NULL)
		http_call_cancel(bc->bc_http);
	if (bc->bc_abort != NULL)
		http_call_cancel(bc->bc_abort);
	if (bc->bc_sse != NULL)
		sse_parser_free(bc->bc_sse);
	if (bc->bc_timer != NULL)
		event_free(bc->bc_timer);
	free(bc->bc_body);
	bc->bc_sse = NULL;
	bc->bc_body = NULL;
	bc->bc_cap = 0;
	(void)backend_charge(bc, 0);
	free(bc);
}

/* our request id, "vmcpd-<pid>-<seq>" */
void
backend_next_id(struct worker *w, char *buf, size_t size)
{
	backend_make_id(buf, size, w->w_pid,
	    (unsigned long long)++w->w_rpc_seq);
}

const char *
backend_call_session(const struct backend_call *bc)
{
	return bc->bc_resp_sid[0] != '\0' ? bc->bc_resp_sid : NULL;
}

/* POST br to the backend; cbs get what comes back */
struct backend_call *
backend_post(struct worker *w, const struct config_backend *be,
    const struct backend_req *br, const struct backend_call_cbs *cbs,
    void *arg)
{
	static const struct http_call_cbs hcbs = {
		backend_on_head, backend_on_data, backend_on_done
	};
	struct backend_call	*bc;
	struct trace_span	*span = br->br_span;

	if (trace_enabled && span == NULL && !br->br_spanned &&
	    br->br_method != NULL)
		span = backend_trace_begin(be, br->br_trace, br->br_method,
		    NULL, NULL, 0);
	if (!backend_budget_set && abudget_init(&backend_budget,
	    w->w_conf->cf_nbackends, w->w_conf->cf_answer_buf,
	    w->w_conf->cf_answer_buf_backend) == 0)
		backend_budget_set = 1;
	if ((bc = worker_zalloc(sizeof(*bc))) == NULL) {
		trace_discard(span);
		goto fail;
	}
	TAILQ_INSERT_TAIL(&backend_calls, bc, bc_entry);
	bc->bc_span = span;
	backend_trace_note(span, br);
	bc->bc_w = w;
	bc->bc_be = be;
	bc->bc_cbs = cbs;
	bc->bc_arg = arg;
	bc->bc_sent_sid = br->br_bsid != NULL;
	bc->bc_retry_ms = -1;
	bc->bc_t0 = diag_backend_start(br->br_method);
	if (br->br_version != NULL)
		backend_copy(bc->bc_version, sizeof(bc->bc_version),
		    br->br_version);
	if (br->br_bsid != NULL)
		backend_copy(bc->bc_resp_sid, sizeof(bc->bc_resp_sid),
		    br->br_bsid);
	backend_copy(bc->bc_id, sizeof(bc->bc_id), br->br_id);
	if ((bc->bc_http = backend_post_new(w, be, br)) == NULL ||
	    (trace_enabled && backend_trace_headers(bc->bc_http, span,
	    br->br_trace) == -1))
		goto fail;
	http_call_set_timeout(bc->bc_http, be->cb_timeout_ms);
	if (http_call_start(bc->bc_http, &hcbs, bc) == -1) {
		bc->bc_http = NULL;	/* freed by the client */
		goto fail;
	}
	return bc;
fail:
	log_warnx("%s: cannot send %s to backend %s", __func__, br->br_id,
	    be->cb_name);
	backend_call_free(bc);
	return NULL;
}

/* at exit: what is still in flight goes without a callback */
void
backend_free_all(struct worker *w)
{
	struct backend_call *bc;

	(void)w;
	while ((bc = TAILQ_FIRST(&backend_calls)) != NULL)
		backend_call_free(bc);
	abudget_free(&backend_budget);
	backend_budget_set = 0;
}

/* the caller no longer wants the outcome: no callback after this */
void
backend_call_cancel(struct backend_call *bc)
{
	if (bc == NULL)
		return;
	if (bc->bc_finished)
		return;		/* already delivered; freed at its end */
	bc->bc_finished = 1;
	bc->bc_cancelled = 1;
	if (bc->bc_depth == 0)
		backend_call_free(bc);
}

static void
backend_on_aborted(void *arg, struct http_call *hc, int result,
    const char *errmsg)
{
	struct backend_call *bc = arg;

	(void)hc;
	if (result == -1)
		log_debug("backend %s: cancelling %s: %s", bc->bc_be->cb_name,
		    bc->bc_id, errmsg);
	bc->bc_abort = NULL;	/* freed by the client after this */
	backend_call_free(bc);
}

/*
 * The caller gives up on the call and the backend should too (MCP
 * 2025-11-25, Cancellation): notifications/cancelled under our id, on
 * the call's backend session.  The call's own stream stays open until
 * the notification is through, so that a bridge still finds the
 * request it names; whatever it brings is dropped.  (A 2026-07-28 call
 * is cancelled by closing its stream: upstream.c cancels it instead.)
 */
void
backend_call_abort(struct backend_call *bc, const char *reason)
{
	static const struct http_call_cbs hcbs = {
		NULL, NULL, backend_on_aborted
	};
	json_t	*p, *n;

	if (bc == NULL || bc->bc_finished) {
		backend_call_cancel(bc);
		return;
	}
	p = json_pack("{s:s}", "requestId", bc->bc_id);
	if (p != NULL && reason != NULL)
		(void)json_object_set_new(p, "reason", json_string(reason));
	n = p != NULL ? jsonrpc_notification_new("notifications/cancelled",
	    p) : NULL;
	if (n != NULL)
		bc->bc_abort = backend_post_start(bc->bc_w, bc->bc_be,
		    bc->bc_resp_sid[0] != '\0' ? bc->bc_resp_sid : NULL,
		    bc->bc_version[0] != '\0' ? bc->bc_version : NULL, n,
		    &hcbs, bc);
	json_decref(n);
	if (bc->bc_abort == NULL) {
		backend_call_cancel(bc);
		return;
	}
	log_debug("backend %s: cancelled %s", bc->bc_be->cb_name, bc->bc_id);
	bc->bc_finished = 1;	/* no callback: the caller is gone */
	if (bc->bc_timer != NULL)
		(void)evtimer_del(bc->bc_timer);
}

json_t *
backend_info_get(struct worker *w, const struct config_backend *be)
{
	struct store_rec	rec;
	json_t			*o;
	json_error_t		 jerr;

	memset(&rec, 0, sizeof(rec));
	if (store_get(w->w_store, STORE_BACKENDS, be->cb_name,
	    strlen(be->cb_name), store_now_ms(), &rec) != 0)
		return NULL;
	o = json_loadb(rec.sr_data, rec.sr_len, JSON_ALLOW_NUL, &jerr);
	store_rec_clear(&rec);
	return o;
}

void
backend_info_put(struct worker *w, const struct config_backend *be,
    const char *version, json_t *init_result)
{
	json_t		*o;
	char		*buf;
	size_t		 len;
	uint64_t	 now = store_now_ms();

	o = json_pack("{s:s, s:O, s:I}", "pv", version, "result", init_result,
	    "at", (json_int_t)now);
	if (o == NULL)
		return;
	if ((buf = jsonrpc_dump(o, &len)) != NULL) {
		/* a description is small: a huge one is not kept */
		if (len > BACKEND_INFO_MAX)
			log_warnx("backend %s: its description is %zu bytes, "
			    "more than the %d kept; not cached", be->cb_name,
			    len, BACKEND_INFO_MAX);
		else if (store_put(w->w_store, STORE_BACKENDS, be->cb_name,
		    strlen(be->cb_name), buf, len, now + BACKEND_INFO_TTL_MS,
		    now) == -1)
			log_warnx("cannot cache backend %s info", be->cb_name);
		free(buf);
	}
	json_decref(o);
}
