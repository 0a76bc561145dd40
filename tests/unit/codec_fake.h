/*
 * The HTTP reply functions faked for the client codecs' tests
 * (test_codec_legacy.c, test_codec_modern.c): what would go to the
 * client is recorded, its body parsed, in one reply record.  Included
 * by one test file each (it defines the fakes).
 */
#ifndef VMCPD_TEST_CODEC_FAKE_H
#define VMCPD_TEST_CODEC_FAKE_H

#include <string.h>

#include <jansson.h>

#include "worker/http/http_reply.h"
#include "worker/http/httpd.h"
#include "worker/upstream/upstream_result.h"
#include "trace_fake.h"

#define FAKE_REQ	((struct httpd_req *)(uintptr_t)0x1000)

static struct {
	int	 f_replies;		/* front_reply_* calls */
	int	 f_text_replies;	/* of which as text */
	int	 f_status;
	json_t	*f_body;		/* the last message sent */
	char	*f_session;		/* Mcp-Session-Id, if any */
	int	 f_close_cleared;
	int	 f_sse_started, f_sse_sent, f_sse_ended;
} fake;

static void
fake_reset(void)
{
	json_decref(fake.f_body);
	free(fake.f_session);
	memset(&fake, 0, sizeof(fake));
}

static void
fake_body(json_t *body)
{
	json_decref(fake.f_body);
	fake.f_body = body;
}

static json_t *
fake_member(const json_t *id, const char *kind, const char *json,
    size_t len)
{
	json_t *v;

	assert_non_null(v = json_loadb(json, len, 0, NULL));
	return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, kind,
	    v);
}

/* the backend's response (JSON text, or NULL) as a tree, given to the
 * codec's uc_done as the upstream edge would */
static void
fake_done_tree(const struct upstream_cbs *cbs, void *arg, enum proto_era era,
    enum upstream_status st, const char *response)
{
	struct upstream_result	 ur;
	json_t			*resp = NULL;

	memset(&ur, 0, sizeof(ur));
	ur.ur_status = st;
	ur.ur_era = era;
	if (response != NULL)
		assert_non_null(resp = json_loads(response, 0, NULL));
	ur.ur_response = resp;
	ur.ur_errmsg = "the backend went away";
	cbs->uc_done(arg, &ur);
	json_decref(resp);
}

void
front_reply_json(struct httpd_req *req, int status, json_t *body,
    const char *session_id)
{
	assert_ptr_equal(req, FAKE_REQ);
	fake.f_replies++;
	fake.f_status = status;
	fake_body(json_deep_copy(body));
	free(fake.f_session);
	fake.f_session = session_id != NULL ? strdup(session_id) : NULL;
}

void
front_reply_error(struct httpd_req *req, int status, json_t *id, int code,
    const char *message)
{
	json_t *e;

	e = jsonrpc_error_new(id, code, message, NULL);
	front_reply_json(req, status, e, NULL);
	json_decref(e);
}

void
front_reply_member(struct httpd_req *req, const json_t *id,
    const char *kind, const char *json, size_t len)
{
	assert_ptr_equal(req, FAKE_REQ);
	fake.f_replies++;
	fake.f_text_replies++;
	fake.f_status = 200;
	fake_body(fake_member(id, kind, json, len));
}

void
front_reply_result(struct httpd_req *req, const json_t *id,
    const char *result, size_t len)
{
	front_reply_member(req, id, "result", result, len);
}

char *
front_compose(const json_t *id, const char *kind, const char *json,
    size_t len, size_t *outlen)
{
	json_t	*m;
	char	*s;

	m = fake_member(id, kind, json, len);
	s = json_dumps(m, JSON_COMPACT);
	json_decref(m);
	*outlen = strlen(s);
	return s;
}

void
front_reply_empty(struct httpd_req *req, int status)
{
	(void)req;
	fake.f_replies++;
	fake.f_status = status;
}

void
front_sse_start(struct httpd_req *req, const char *session_id)
{
	assert_ptr_equal(req, FAKE_REQ);
	fake.f_sse_started++;
	free(fake.f_session);
	fake.f_session = session_id != NULL ? strdup(session_id) : NULL;
}

int
front_sse_send(struct httpd_req *req, const char *id, const json_t *msg)
{
	(void)id;
	assert_ptr_equal(req, FAKE_REQ);
	fake.f_sse_sent++;
	fake_body(json_deep_copy(msg));
	return 0;
}

int
front_sse_send_text(struct httpd_req *req, const char *id, const char *data,
    size_t len)
{
	(void)id;
	assert_ptr_equal(req, FAKE_REQ);
	fake.f_sse_sent++;
	fake.f_text_replies++;
	fake_body(json_loadb(data, len, 0, NULL));
	return 0;
}

int
front_sse_prime(struct httpd_req *req, const char *id, long retry_ms)
{
	(void)id;
	(void)retry_ms;
	assert_ptr_equal(req, FAKE_REQ);
	return 0;
}

void
front_sse_end(struct httpd_req *req)
{
	assert_ptr_equal(req, FAKE_REQ);
	fake.f_sse_ended++;
}

void
httpd_req_set_close_cb(struct httpd_req *req, httpd_req_cb cb, void *arg)
{
	(void)req;
	(void)arg;
	if (cb == NULL)
		fake.f_close_cleared = 1;
}

/* no body text: the codecs take their tree paths */
const char *
front_params_text(struct httpd_req *req, size_t *len)
{
	(void)req;
	*len = 0;
	return NULL;
}

const char *
front_param_header(void *req, const char *name)
{
	(void)req;
	(void)name;
	return NULL;
}


/* the rest of http_reply.o and httpd.o, which a codec must not reach
 * here (their members would clash with the fakes above) */
#define FAKE_NOT_HERE()	fail_msg("%s: not expected here", __func__)

void
front_reply_init(const struct config *c, int slot, pid_t pid)
{
	(void)c;
	(void)slot;
	(void)pid;
	FAKE_NOT_HERE();
}

int
front_host_ok(const struct config *c, struct httpd_req *req)
{
	(void)c;
	(void)req;
	FAKE_NOT_HERE();
	return 0;
}

int
front_host_check(const struct config *c, struct httpd_req *req)
{
	(void)c;
	(void)req;
	FAKE_NOT_HERE();
	return 0;
}

void
front_sse_keepalive(struct httpd_req *req)
{
	(void)req;
	FAKE_NOT_HERE();
}

const char *
front_header(struct httpd_req *req, const char *name)
{
	(void)req;
	(void)name;
	return NULL;
}

int
front_get_only(struct httpd_req *req)
{
	(void)req;
	FAKE_NOT_HERE();
	return -1;
}

struct httpd *
httpd_new(struct event_base *b, int fd, const struct httpd_limits *l,
    httpd_req_cb cb, void *arg)
{
	(void)b;
	(void)fd;
	(void)l;
	(void)cb;
	(void)arg;
	FAKE_NOT_HERE();
	return NULL;
}

void
httpd_stop_accepting(struct httpd *h)
{
	(void)h;
	FAKE_NOT_HERE();
}

void
httpd_drain(struct httpd *h, httpd_idle_cb cb, void *arg)
{
	(void)h;
	(void)cb;
	(void)arg;
	FAKE_NOT_HERE();
}

void
httpd_close_idle(struct httpd *h)
{
	(void)h;
	FAKE_NOT_HERE();
}

size_t
httpd_nconns(const struct httpd *h)
{
	(void)h;
	return 0;
}

void
httpd_free(struct httpd *h)
{
	(void)h;
	FAKE_NOT_HERE();
}

int
httpd_req_method(const struct httpd_req *req)
{
	(void)req;
	return 0;
}

const char *
httpd_req_path(const struct httpd_req *req)
{
	(void)req;
	return "/mcp";
}

const char *
httpd_req_host(const struct httpd_req *req)
{
	(void)req;
	return NULL;
}

const char *
httpd_req_header(const struct httpd_req *req, const char *n)
{
	(void)req;
	(void)n;
	return NULL;
}

const char *
httpd_req_known(const struct httpd_req *req, int f)
{
	(void)req;
	(void)f;
	return NULL;
}

/* no body: the tests start on a tree, a reparse is not expected */
const char *
httpd_req_body(const struct httpd_req *req, size_t *len)
{
	(void)req;
	*len = 0;
	FAKE_NOT_HERE();
	return NULL;
}

int
httpd_req_gone(const struct httpd_req *req)
{
	(void)req;
	return 0;
}

int
httpd_req_peer(const struct httpd_req *req, struct sockaddr_storage *ss,
    socklen_t *len)
{
	(void)req;
	(void)ss;
	(void)len;
	return -1;
}

void
httpd_req_set_done_cb(struct httpd_req *req, httpd_req_cb cb, void *arg)
{
	(void)req;
	(void)cb;
	(void)arg;
}

void *
httpd_req_done_arg(const struct httpd_req *req)
{
	(void)req;
	return NULL;
}

int
httpd_req_status(const struct httpd_req *req)
{
	(void)req;
	return 0;
}

uint64_t
httpd_req_arrived(const struct httpd_req *req)
{
	(void)req;
	return 0;
}

const char *
httpd_req_query(const struct httpd_req *req)
{
	(void)req;
	return NULL;
}

void
httpd_req_set_data(struct httpd_req *req, void *d, void (*fn)(void *))
{
	(void)req;
	(void)d;
	(void)fn;
}

void *
httpd_req_data(const struct httpd_req *req)
{
	(void)req;
	return NULL;
}

int
httpd_req_peer_uid(const struct httpd_req *req, uid_t *uid)
{
	(void)req;
	(void)uid;
	return -1;
}

int
httpd_add_header(struct httpd_req *req, const char *n, const char *v)
{
	(void)req;
	(void)n;
	(void)v;
	FAKE_NOT_HERE();
	return -1;
}

void
httpd_send_reply(struct httpd_req *req, int status, struct evbuffer *b)
{
	(void)req;
	(void)status;
	(void)b;
	FAKE_NOT_HERE();
}

void
httpd_send_reply_iov(struct httpd_req *req, int status,
    const struct iovec *iov, int n)
{
	(void)req;
	(void)status;
	(void)iov;
	(void)n;
	FAKE_NOT_HERE();
}

void
httpd_send_start(struct httpd_req *req, int status)
{
	(void)req;
	(void)status;
	FAKE_NOT_HERE();
}

int
httpd_send_chunk(struct httpd_req *req, const void *p, size_t n)
{
	(void)req;
	(void)p;
	(void)n;
	FAKE_NOT_HERE();
	return -1;
}

void
httpd_send_end(struct httpd_req *req)
{
	(void)req;
	FAKE_NOT_HERE();
}

size_t
httpd_req_unsent(const struct httpd_req *req)
{
	(void)req;
	return 0;
}

unsigned int
httpd_req_tag(const struct httpd_req *req)
{
	(void)req;
	return 0;
}

void
httpd_req_set_tag(struct httpd_req *req, unsigned int t)
{
	(void)req;
	(void)t;
}

void
httpd_req_tag_error(struct httpd_req *req, int code)
{
	(void)req;
	(void)code;
}

void *
httpd_req_trace(const struct httpd_req *req)
{
	(void)req;
	return NULL;
}

void
httpd_req_set_trace(struct httpd_req *req, void *span)
{
	(void)req;
	(void)span;
}

#endif /* VMCPD_TEST_CODEC_FAKE_H */
