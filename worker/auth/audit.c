/*
 * The audit log (audit.h).  The event's fields are the reference
 * vMCP's: audit_id, type, logged_at, outcome, component, source,
 * subjects, target, metadata.extra, data.  The line is written
 * without a tree (audit_line.c), each string escaped as jansson escapes
 * it: a name with a newline or a quote stays inside its string, no name
 * can forge a field or a line.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/random.h>
#include <sys/stat.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "proto/jsonw.h"
#include "proto/method.h"
#include "worker/trace/trace.h"
#include "worker/auth/audit.h"
#include "worker/auth/auth.h"
#include "worker/http/httpd.h"
#include "proto/jsonrpc.h"
#include "proto/http_req.h"
#include "worker/process/counters.h"
#include "worker/process/process.h"

struct audit_ev {
	struct worker	*ae_w;
	void		(*ae_next)(struct httpd_req *, void *);
	const char	*ae_type;	/* static */
	const char	*ae_method;	/* static, or ae_method_own */
	char		*ae_method_own;
	char		*ae_name;
	char		*ae_body;	/* a copy, until what it asks is noted */
	size_t		 ae_bodylen;
	const char	*ae_target_type;	/* static, or NULL */
	json_t		*ae_data;	/* the request's params, or NULL */
	char		*ae_ua;
	char		*ae_reqid;
	const char	*ae_backend;	/* the config's, or NULL */
	char		 ae_peer[INET6_ADDRSTRLEN + 8];
	uint64_t	 ae_start_ms;
	enum audit_outcome ae_outcome;
};

/*
 * The lines of one event-loop turn go out together, with one write(2)
 * at the end of the turn (audit_flush, an event made active by the
 * turn's first line, runs after the events ready with it): a regular
 * file opened O_APPEND takes each write whole, so lines of the workers
 * never interleave, and a write per line cost as much again as the
 * line itself.  Anything else (stderr: a pipe, a terminal) gets a write
 * per line, as a pipe keeps only writes up to PIPE_BUF whole.
 */
#define AUDIT_BATCH_MAX	(64 * 1024)

static int		 audit_fd = -1;
static int		 audit_batched;	/* audit_fd is a regular file */
static struct jsonw	 audit_jw;	/* the lines not written yet */
static struct event	*audit_flush_ev;

static int
audit_open(const struct config_audit *ca)
{
	struct stat	 st;
	int		 fd;

	if (ca->ca_log_file == NULL)
		fd = dup(STDERR_FILENO);
	else if ((fd = open(ca->ca_log_file, O_WRONLY | O_APPEND | O_CREAT |
	    O_CLOEXEC, 0600)) == -1)
		log_warn("audit: %s", ca->ca_log_file);
	audit_batched = fd != -1 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	return fd;
}

/* the lines waiting, written */
static void
audit_flush(void)
{
	if (audit_jw.jw_len == 0)
		return;
	if (audit_fd != -1 && write(audit_fd, audit_jw.jw_buf,
	    audit_jw.jw_len) != (ssize_t)audit_jw.jw_len)
		log_warnx("audit: short write");
	jsonw_reset(&audit_jw);
}

static void
audit_on_flush(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	audit_flush();
}

int
audit_init(struct worker *w)
{
	if (!w->w_conf->cf_audit.ca_enabled)
		return 0;
	if ((audit_fd = audit_open(&w->w_conf->cf_audit)) == -1)
		return -1;
	/* none (no memory): a write per line */
	audit_flush_ev = event_new(w->w_base, -1, 0, audit_on_flush, NULL);
	return 0;
}

void
audit_reopen(struct worker *w)
{
	int fd;

	if (!w->w_conf->cf_audit.ca_enabled)
		return;
	audit_flush();		/* the old file's lines */
	if ((fd = audit_open(&w->w_conf->cf_audit)) == -1)
		return;		/* keep writing to the old one */
	if (audit_fd != -1)
		(void)close(audit_fd);
	audit_fd = fd;
}

void
audit_free(void)
{
	audit_flush();
	if (audit_flush_ev != NULL)
		event_free(audit_flush_ev);
	audit_flush_ev = NULL;
	if (audit_fd != -1)
		(void)close(audit_fd);
	audit_fd = -1;
	jsonw_free(&audit_jw);
}

static int
audit_listed(char *const *v, size_t n, const char *type)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i], type) == 0)
			return 1;
	return 0;
}

/* eventTypes (none: all) minus excludeEventTypes */
static int
audit_wanted(const struct config_audit *ca, const char *type)
{
	if (audit_listed(ca->ca_exclude, ca->ca_nexclude, type))
		return 0;
	return ca->ca_ntypes == 0 ||
	    audit_listed(ca->ca_types, ca->ca_ntypes, type);
}

static char *
audit_strdup(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
}

static const char *
audit_target_type(const struct mcp_method *mm)
{
	switch (mm->mm_route) {
	case MCP_ROUTE_TOOL:
		return "tool";
	case MCP_ROUTE_PROMPT:
		return "prompt";
	case MCP_ROUTE_URI:
		return "resource";
	default:
		return "endpoint";
	}
}

/* what a request asks, from a sure scan of its body (the front's or
 * the audit's own, the same scan): the method, the name, the params */
static void
audit_note_sure(struct audit_ev *ae, const struct mcp_method *mm,
    const char *name, size_t namelen, const char *params, size_t plen)
{
	ae->ae_type = mm->mm_audit != NULL ? mm->mm_audit : "mcp_request";
	ae->ae_method = mm->mm_name;
	ae->ae_target_type = audit_target_type(mm);
	if (name != NULL)
		ae->ae_name = strndup(name, namelen);
	if (ae->ae_w->w_conf->cf_audit.ca_request_data && params != NULL)
		ae->ae_data = json_loadb(params, plen, 0, NULL);
}

/* by the scan (no tree) when it is sure and names all the event needs */
static int
audit_note_scan(struct audit_ev *ae, const char *body, size_t len)
{
	struct jsonrpc_scan	 sc;
	const struct mcp_method	*mm;

	if (jsonrpc_scan(body, len, &sc) != 1 || (mm = sc.js_mm) == NULL ||
	    (sc.js_name == NULL && (mm->mm_route == MCP_ROUTE_TOOL ||
	    mm->mm_route == MCP_ROUTE_PROMPT || mm->mm_route == MCP_ROUTE_URI)))
		return -1;
	audit_note_sure(ae, mm, sc.js_name, sc.js_namelen, sc.js_params,
	    sc.js_paramslen);
	return 0;
}

/* what a POST's body asks: by the scan, else by a parse */
static void
audit_note_text(struct audit_ev *ae, const char *body, size_t len)
{
	const struct mcp_method	*mm;
	json_t			*root, *params, *n;
	const char		*method;

	if (audit_note_scan(ae, body, len) == 0 ||
	    (root = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL)) ==
	    NULL)
		return;
	if ((method = json_string_value(json_object_get(root, "method"))) !=
	    NULL) {
		mm = mcp_method_find(method);
		ae->ae_type = mm != NULL && mm->mm_audit != NULL ?
		    mm->mm_audit : "mcp_request";
		ae->ae_method = ae->ae_method_own = strdup(method);
		ae->ae_target_type = mm != NULL ? audit_target_type(mm) :
		    "endpoint";
		params = json_object_get(root, "params");
		if ((n = json_object_get(params, "name")) == NULL)
			n = json_object_get(params, "uri");
		ae->ae_name = audit_strdup(json_string_value(n));
		if (ae->ae_w->w_conf->cf_audit.ca_request_data &&
		    json_is_object(params))
			ae->ae_data = json_incref(params);
	}
	json_decref(root);
}

/*
 * What the body asks must be read for every path (a 401 or a 403
 * answers before the front reads the body), but the front's own scan of
 * a tools/call, which most requests are, tells it all
 * (audit_note_call()): the body is kept (a copy: the request's is gone
 * when it ends) and read only if the front did not tell.  A large body
 * is read at once instead.
 */
#define AUDIT_BODY_KEEP	(64 * 1024)

static void
audit_note_body(struct audit_ev *ae, struct httpd_req *req)
{
	const char	*body;
	size_t		 len;

	/* a GET opens a session's stream (the reference's sse_connection) */
	ae->ae_type = httpd_req_method(req) == HTTP_M_GET ? "sse_connection" :
	    "http_request";
	if (httpd_req_method(req) != HTTP_M_POST ||
	    (body = httpd_req_body(req, &len)) == NULL || len == 0)
		return;
	if (len > AUDIT_BODY_KEEP || (ae->ae_body = malloc(len)) == NULL) {
		audit_note_text(ae, body, len);
		return;
	}
	memcpy(ae->ae_body, body, len);
	ae->ae_bodylen = len;
}

/* the body kept, read now if the front did not tell */
static void
audit_note_kept(struct audit_ev *ae)
{
	if (ae->ae_body == NULL)
		return;
	audit_note_text(ae, ae->ae_body, ae->ae_bodylen);
	free(ae->ae_body);
	ae->ae_body = NULL;
}

/* a dotted quad by hand (inet_ntop() cost 1.7k instructions a line) */
static void
audit_peer4(const uint8_t *a, char *out)
{
	size_t	 i;
	uint8_t	 v;

	for (i = 0; i < 4; i++) {
		v = a[i];
		if (v >= 100)
			*out++ = (char)('0' + v / 100);
		if (v >= 10)
			*out++ = (char)('0' + v / 10 % 10);
		*out++ = (char)('0' + v % 10);
		*out++ = i < 3 ? '.' : '\0';
	}
}

static void
audit_peer(struct audit_ev *ae, struct httpd_req *req)
{
	struct sockaddr_storage	 ss;
	socklen_t		 sl = sizeof(ss);

	memcpy(ae->ae_peer, "local", sizeof("local"));
	if (httpd_req_peer(req, &ss, &sl) == -1)
		return;
	if (ss.ss_family == AF_INET)
		audit_peer4((const uint8_t *)&((struct sockaddr_in *)&ss)->
		    sin_addr, ae->ae_peer);
	else if (ss.ss_family == AF_INET6 && inet_ntop(AF_INET6,
	    &((struct sockaddr_in6 *)&ss)->sin6_addr, ae->ae_peer,
	    sizeof(ae->ae_peer)) == NULL)
		memcpy(ae->ae_peer, "local", sizeof("local"));
}

static const char *
audit_outcome_name(enum audit_outcome o, int status)
{
	switch (o) {
	case AUDIT_SUCCESS:
		return "success";
	case AUDIT_FAILURE:
		return "failure";
	case AUDIT_ERROR:
		return "error";
	case AUDIT_DENIED:
		return "denied";
	case AUDIT_APPLICATION_ERROR:
		return "application_error";
	case AUDIT_BY_STATUS:
	default:
		break;
	}
	if (status == 401 || status == 403)
		return "denied";
	if (status >= 200 && status < 400)
		return "success";
	if (status >= 400 && status < 500)
		return "failure";
	return "error";
}

/*
 * RFC 4122 version 4; hex by hand (snprintf per byte cost 11k
 * instructions of every audited request), the random bytes drawn for
 * 16 ids at a time (a system call per line was as many)
 */
static void
audit_uuid(char out[37])
{
	static const char	 hex[] = "0123456789abcdef";
	static uint8_t		 pool[256];
	static size_t		 used = sizeof(pool);
	uint8_t			*b;
	size_t			 i;
	char			*p = out;

	if (used == sizeof(pool)) {
		if (getrandom(pool, sizeof(pool), 0) != (ssize_t)sizeof(pool))
			memset(pool, 0, sizeof(pool));
		used = 0;
	}
	b = pool + used;
	used += 16;
	b[6] = (b[6] & 0x0f) | 0x40;
	b[8] = (b[8] & 0x3f) | 0x80;
	for (i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*p++ = '-';
		*p++ = hex[b[i] >> 4];
		*p++ = hex[b[i] & 0x0f];
	}
	*p = '\0';
	/* drawn once: not in the next id, not in a core */
	explicit_bzero(b, 16);
}

/* subjects: the principal's user name and id, or anonymous */
static void
audit_subjects(const struct principal *p, struct audit_line *al)
{
	const char *u;

	al->al_user = "anonymous";
	al->al_user_id = NULL;
	if (p == NULL)
		return;
	if ((u = json_string_value(json_object_get(p->p_claims, "name"))) !=
	    NULL || (u = json_string_value(json_object_get(p->p_claims,
	    "preferred_username"))) != NULL || (u = json_string_value(
	    json_object_get(p->p_claims, "email"))) != NULL ||
	    (u = p->p_sub) != NULL)
		al->al_user = u;
	al->al_user_id = p->p_sub;
}

/* RFC 3339 UTC to the microsecond; the seconds' text kept while the
 * second lasts (strftime() per line cost 2k instructions) */
static void
audit_when(char when[40])
{
	static time_t	 last = (time_t)-1;
	static char	 secs[32];
	static size_t	 slen;
	struct timespec	 ts;
	struct tm	 tm;
	long		 us;
	int		 i;

	(void)clock_gettime(CLOCK_REALTIME, &ts);
	if (ts.tv_sec != last) {
		(void)gmtime_r(&ts.tv_sec, &tm);
		slen = strftime(secs, sizeof(secs), "%Y-%m-%dT%H:%M:%S", &tm);
		last = ts.tv_sec;
	}
	memcpy(when, secs, slen);
	when[slen] = '.';
	us = ts.tv_nsec / 1000;
	for (i = 6; i >= 1; i--) {
		when[slen + (size_t)i] = (char)('0' + us % 10);
		us /= 10;
	}
	when[slen + 7] = 'Z';
	when[slen + 8] = '\0';
}

/* the event's line, after the turn's others (audit_flush) */
static void
audit_emit(const struct audit_line *al)
{
	struct jsonw_mark	 m;
	int			 first = audit_jw.jw_len == 0;

	jsonw_mark(&audit_jw, &m);
	if (audit_line_write(&audit_jw, al) == -1) {
		jsonw_undo(&audit_jw, &m);
		return;
	}
	if (!audit_batched || audit_flush_ev == NULL ||
	    audit_jw.jw_len >= AUDIT_BATCH_MAX)
		audit_flush();
	else if (first)
		event_active(audit_flush_ev, EV_TIMEOUT, 0);
}

/* the request's params as text, cut at maxDataSize; malloc'd */
static char *
audit_data(const struct config_audit *ca, json_t *params, size_t *lenp)
{
	char	*s;
	size_t	 len;

	if ((s = json_dumps(params, JSON_COMPACT)) == NULL)
		return NULL;
	len = strlen(s);
	if (len > ca->ca_max_data) {
		/* not inside a UTF-8 sequence */
		len = ca->ca_max_data;
		while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80)
			len--;
	}
	*lenp = len;
	return s;
}

static void
audit_write(struct audit_ev *ae, struct httpd_req *req)
{
	const struct config_audit	*ca = &ae->ae_w->w_conf->cf_audit;
	struct audit_line		 al;
	char				 id[37], when[40], tid[33], sid[17];
	int				 status = httpd_req_status(req);

	audit_note_kept(ae);
	memset(&al, 0, sizeof(al));
	/* every denial, written or not, for the console's recent ones */
	if (strcmp(audit_outcome_name(ae->ae_outcome, status), "denied") ==
	    0) {
		audit_subjects(auth_principal(req), &al);
		diag_note_denial(ae->ae_w, status, al.al_user, ae->ae_method,
		    ae->ae_name, ae->ae_backend);
	}
	if (!audit_wanted(ca, ae->ae_type) || audit_fd == -1)
		return;
	audit_uuid(id);
	audit_when(when);
	al.al_id = id;
	al.al_type = ae->ae_type;
	al.al_when = when;
	al.al_outcome = audit_outcome_name(ae->ae_outcome, status);
	al.al_component = ca->ca_component;
	al.al_source_type = "network";
	al.al_source_value = ae->ae_peer;
	al.al_source_extra = 1;
	al.al_ua = ae->ae_ua;
	al.al_reqid = ae->ae_reqid;
	audit_subjects(auth_principal(req), &al);
	al.al_method = ae->ae_method != NULL ? ae->ae_method :
	    httpd_req_method(req) == HTTP_M_GET ? "GET" :
	    httpd_req_method(req) == HTTP_M_DELETE ? "DELETE" : "POST";
	al.al_target_type = ae->ae_target_type;
	al.al_name = ae->ae_name;
	al.al_duration_ms = (long long)(store_now_ms() - ae->ae_start_ms);
	al.al_status = status;
	al.al_backend = ae->ae_backend;
	/* its trace, to join the line with the spans (trace.h) */
	if (trace_enabled && trace_ids(httpd_req_trace(req), tid, sid) == 0) {
		al.al_trace_id = tid;
		al.al_span_id = sid[0] != '\0' ? sid : NULL;
	}
	if (ae->ae_data != NULL)
		al.al_data = audit_data(ca, ae->ae_data, &al.al_datalen);
	audit_emit(&al);
	free((char *)(uintptr_t)al.al_data);
}

static void
audit_on_done(struct httpd_req *req, void *arg)
{
	struct audit_ev	*ae = arg;
	struct worker	*w = ae->ae_w;

	audit_write(ae, req);
	free(ae->ae_method_own);
	free(ae->ae_body);
	free(ae->ae_name);
	free(ae->ae_ua);
	free(ae->ae_reqid);
	json_decref(ae->ae_data);
	if (ae->ae_next != NULL)
		ae->ae_next(req, w);
	free(ae);
}

void
audit_begin(struct worker *w, struct httpd_req *req,
    void (*next)(struct httpd_req *, void *))
{
	struct audit_ev	*ae;

	if (!w->w_conf->cf_audit.ca_enabled ||
	    (ae = calloc(1, sizeof(*ae))) == NULL) {
		httpd_req_set_done_cb(req, next, w);
		return;
	}
	ae->ae_w = w;
	ae->ae_next = next;
	ae->ae_start_ms = store_now_ms();
	ae->ae_ua = audit_strdup(httpd_req_header(req, "User-Agent"));
	ae->ae_reqid = audit_strdup(httpd_req_header(req, "X-Request-ID"));
	audit_peer(ae, req);
	audit_note_body(ae, req);
	httpd_req_set_done_cb(req, audit_on_done, ae);
}

/* the request's event, or NULL (audit off, or none) */
static struct audit_ev *
audit_ev_of(struct worker *w, struct httpd_req *req)
{
	struct audit_ev *ae;

	if (!w->w_conf->cf_audit.ca_enabled || req == NULL ||
	    (ae = httpd_req_done_arg(req)) == NULL || ae == (void *)w)
		return NULL;
	return ae;
}

void
audit_set_outcome(struct worker *w, struct httpd_req *req,
    enum audit_outcome o)
{
	struct audit_ev *ae;

	if ((ae = audit_ev_of(w, req)) != NULL)
		ae->ae_outcome = o;
}

void
audit_set_backend(struct worker *w, struct httpd_req *req,
    const char *backend)
{
	struct audit_ev *ae;

	if ((ae = audit_ev_of(w, req)) != NULL)
		ae->ae_backend = backend;
}

void
audit_note_call(struct worker *w, struct httpd_req *req,
    const struct mcp_method *mm, const char *name, size_t namelen,
    const char *params, size_t plen)
{
	struct audit_ev *ae;

	/* noted already (a large body), or audit off */
	if ((ae = audit_ev_of(w, req)) == NULL || ae->ae_body == NULL)
		return;
	free(ae->ae_body);
	ae->ae_body = NULL;
	audit_note_sure(ae, mm, name, namelen, params, plen);
}

/* a workflow's target or extra as text (NULL: {}), malloc'd */
static char *
audit_dump(json_t *v)
{
	return v != NULL ? json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER |
	    JSON_ENSURE_ASCII) : strdup("{}");
}

void
audit_workflow(struct worker *w, const struct principal *p,
    const char *type, const char *outcome, json_t *target, json_t *extra)
{
	const struct config_audit	*ca = &w->w_conf->cf_audit;
	struct audit_line		 al;
	char				 id[37], when[40];
	char				*t = NULL, *x = NULL;

	if (!ca->ca_enabled || !audit_wanted(ca, type) || audit_fd == -1)
		goto done;
	if ((t = audit_dump(target)) == NULL || (x = audit_dump(extra)) ==
	    NULL)
		goto done;
	memset(&al, 0, sizeof(al));
	audit_uuid(id);
	audit_when(when);
	al.al_id = id;
	al.al_type = type;
	al.al_when = when;
	al.al_outcome = outcome;
	al.al_component = ca->ca_component;
	al.al_source_type = "local";
	al.al_source_value = "vmcpd";
	audit_subjects(p, &al);
	al.al_target_raw = t;
	al.al_target_rawlen = strlen(t);
	al.al_extra_raw = x;
	al.al_extra_rawlen = strlen(x);
	audit_emit(&al);
done:
	free(t);
	free(x);
	json_decref(target);
	json_decref(extra);
}
