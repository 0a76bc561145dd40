/*
 * vmcpctl links: users' linked upstream accounts (outgoingAuth type
 * authorization_code; worker/state/link_store.h), listed from the clear
 * line of each stored link (who, which backend, when), never a token;
 * and one revoked.  With sessionStorage.provider redis the link lives
 * in Redis too: revoke deletes it there as well when Redis answers,
 * else says which key to delete.
 */
#include <sys/time.h>

#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include "shared/config.h"
#include "shared/link_rec.h"
#include "shared/store.h"
#include "shared/store_stat.h"
#include "tools/vmcpctl.h"

#define CTL_LINK_KEY_MAX	(LINK_SCOPE_MAX + 1 + LINK_NAME_MAX)

/* sessionStorage redis of the configuration read, or ctl_redis_host NULL */
static char		*ctl_redis_host, *ctl_redis_prefix, *ctl_redis_pass;
static unsigned int	 ctl_redis_port, ctl_redis_db;

void
ctl_links_config(const struct config *cf)
{
	const struct config_sstore *ss = &cf->cf_sstore;

	if (ss->css_provider != CONFIG_SSTORE_REDIS || ss->css_host == NULL)
		return;
	ctl_redis_host = strdup(ss->css_host);
	ctl_redis_prefix = strdup(ss->css_prefix != NULL ? ss->css_prefix :
	    "");
	ctl_redis_pass = ss->css_password != NULL ?
	    strdup(ss->css_password) : NULL;
	ctl_redis_port = ss->css_port;
	ctl_redis_db = ss->css_db;
	if (ctl_redis_host == NULL || ctl_redis_prefix == NULL)
		err(1, "strdup");
}

/* the clear line of a stored link (before its sealed part) */
static int
ctl_link_shown(const struct store_rec *rec, struct link_rec *lr)
{
	const char	*nl;

	if ((nl = memchr(rec->sr_data, '\n', rec->sr_len)) == NULL)
		return -1;
	return link_rec_decode(rec->sr_data, (size_t)(nl - rec->sr_data),
	    lr);
}

json_t *
ctl_link_value(const struct store_rec *rec)
{
	struct link_rec	*lr;
	json_t		*o = NULL;

	if ((lr = malloc(sizeof(*lr))) == NULL)
		return NULL;
	if (ctl_link_shown(rec, lr) == 0)
		o = json_pack("{s:s, s:s, s:s, s:o, s:o, s:o}", "backend",
		    lr->lr_backend, "iss", lr->lr_iss, "sub", lr->lr_sub,
		    "linked", ctl_time(lr->lr_linked_ms), "refreshed",
		    ctl_time(lr->lr_refreshed_ms), "expires",
		    ctl_time(lr->lr_expires_ms));
	else
		o = json_string("(not readable)");
	free(lr);
	return o;
}

struct ctl_links {
	json_t		*cl_list;
	const char	*cl_who;	/* revoke: a scope or a sub */
	const char	*cl_backend;
	int		 cl_err;
};

static int
ctl_links_cb(void *arg, const void *key, size_t klen,
    const struct store_rec *rec)
{
	struct ctl_links	*cl = arg;
	struct link_rec		*lr;
	const char		*bar;
	json_t			*o;
	size_t			 slen;

	if ((bar = memchr(key, '|', klen)) == NULL)
		return 0;
	slen = (size_t)(bar - (const char *)key);
	if ((lr = malloc(sizeof(*lr))) == NULL) {
		cl->cl_err = 1;
		return 1;
	}
	if (ctl_link_shown(rec, lr) == -1 || (cl->cl_backend != NULL &&
	    strcmp(lr->lr_backend, cl->cl_backend) != 0) ||
	    (cl->cl_who != NULL && strcmp(lr->lr_sub, cl->cl_who) != 0 &&
	    (strlen(cl->cl_who) != slen || memcmp(cl->cl_who, key,
	    slen) != 0))) {
		free(lr);
		return 0;
	}
	o = json_pack("{s:s%, s:s, s:s, s:s, s:o, s:o, s:o}", "scope", key,
	    slen, "iss", lr->lr_iss, "sub", lr->lr_sub, "backend",
	    lr->lr_backend, "linked", ctl_time(lr->lr_linked_ms), "refreshed",
	    ctl_time(lr->lr_refreshed_ms), "expires",
	    ctl_time(lr->lr_expires_ms));
	free(lr);
	if (o == NULL || json_array_append_new(cl->cl_list, o) == -1) {
		cl->cl_err = 1;
		return 1;
	}
	return 0;
}

/* the links (of who and backend, if given): a JSON array, or NULL */
static json_t *
ctl_links_read(struct store *st, const char *who, const char *backend)
{
	struct ctl_links	 cl;

	memset(&cl, 0, sizeof(cl));
	cl.cl_who = who;
	cl.cl_backend = backend;
	if ((cl.cl_list = json_array()) == NULL)
		return NULL;
	if (store_iter(st, STORE_LINKS, store_now_ms(), 0, ctl_links_cb,
	    &cl) == -1 || cl.cl_err) {
		warnx("cannot read the %s db", store_db_name(STORE_LINKS));
		json_decref(cl.cl_list);
		return NULL;
	}
	return cl.cl_list;
}

static int
ctl_links_list(struct store *st, int json)
{
	json_t		*list, *o;
	char		*s;
	size_t		 i;

	if ((list = ctl_links_read(st, NULL, NULL)) == NULL)
		return 1;
	if (json) {
		if ((s = json_dumps(list, JSON_COMPACT)) == NULL)
			errx(1, "out of memory");
		printf("%s\n", s);
		free(s);
		json_decref(list);
		return 0;
	}
	if (json_array_size(list) == 0)
		printf("no linked accounts\n");
	json_array_foreach(list, i, o)
		printf("%s %s %s\n  scope %s linked %s refreshed %s expires "
		    "%s\n", ctl_str(o, "backend", "-"), ctl_str(o, "iss", "-"),
		    ctl_str(o, "sub", "-"), ctl_str(o, "scope", "-"),
		    ctl_str(o, "linked", "-"), ctl_str(o, "refreshed", "-"),
		    ctl_str(o, "expires", "-"));
	json_decref(list);
	return 0;
}

redisContext *
ctl_redis_open(void)
{
	struct timeval	 tv = { 2, 0 };
	redisContext	*c;
	redisReply	*r = NULL;

	if (ctl_redis_host == NULL || (c = redisConnectWithTimeout(
	    ctl_redis_host, (int)ctl_redis_port, tv)) == NULL)
		return NULL;
	if (c->err)
		goto fail;
	(void)redisSetTimeout(c, tv);
	if (ctl_redis_pass != NULL) {
		r = redisCommand(c, "AUTH %s", ctl_redis_pass);
		if (r == NULL || r->type == REDIS_REPLY_ERROR)
			goto fail;
		freeReplyObject(r);
	}
	r = redisCommand(c, "SELECT %u", ctl_redis_db);
	if (r == NULL || r->type == REDIS_REPLY_ERROR)
		goto fail;
	freeReplyObject(r);
	return c;
 fail:
	if (r != NULL)
		freeReplyObject(r);
	redisFree(c);
	return NULL;
}

const char *
ctl_redis_where(const char **prefix)
{
	static char	where[300];

	if (ctl_redis_host == NULL)
		return NULL;
	if (prefix != NULL)
		*prefix = ctl_redis_prefix;
	(void)snprintf(where, sizeof(where), "%s:%u", ctl_redis_host,
	    ctl_redis_port);
	return where;
}

/* DEL of key in Redis: 1 deleted, 0 not there, -1 not reached */
static int
ctl_links_redis_del(const char *key)
{
	redisContext	*c;
	redisReply	*r;
	int		 rc = -1;

	if ((c = ctl_redis_open()) == NULL)
		return -1;
	r = redisCommand(c, "DEL %s", key);
	if (r != NULL && r->type == REDIS_REPLY_INTEGER)
		rc = r->integer > 0;
	if (r != NULL)
		freeReplyObject(r);
	redisFree(c);
	return rc;
}

static int
ctl_links_revoke(struct store *st, const char *who, const char *backend)
{
	json_t		*list;
	const char	*scope;
	char		 key[CTL_LINK_KEY_MAX + 1], rkey[1024];
	int		 rc = 1, r;

	if ((list = ctl_links_read(st, who, backend)) == NULL)
		return 1;
	if (json_array_size(list) == 0) {
		warnx("no link of %s for backend %s", who, backend);
		goto done;
	}
	if (json_array_size(list) > 1) {
		warnx("%s has links for backend %s at %zu issuers: name one "
		    "by its scope (vmcpctl links)", who, backend,
		    json_array_size(list));
		goto done;
	}
	scope = json_string_value(json_object_get(json_array_get(list, 0),
	    "scope"));
	(void)snprintf(key, sizeof(key), "%s|%s", scope, backend);
	if (store_del(st, STORE_LINKS, key, strlen(key)) != 0) {
		warnx("cannot change the %s db", store_db_name(STORE_LINKS));
		goto done;
	}
	printf("link of %s for backend %s revoked; the next call asks that "
	    "user to consent again\n", json_string_value(json_object_get(
	    json_array_get(list, 0), "sub")), backend);
	rc = 0;
	if (ctl_redis_host == NULL)
		goto done;
	(void)snprintf(rkey, sizeof(rkey), "%slink:%s", ctl_redis_prefix,
	    key);
	if ((r = ctl_links_redis_del(rkey)) >= 0)
		printf("Redis %s:%u: %s %s\n", ctl_redis_host, ctl_redis_port,
		    rkey, r ? "deleted" : "was not there");
	else {
		warnx("Redis %s:%u not reached: the link is still there for "
		    "every node; delete it with: redis-cli DEL '%s'",
		    ctl_redis_host, ctl_redis_port, rkey);
		rc = 1;
	}
 done:
	json_decref(list);
	return rc;
}

int
ctl_links(struct store *st, int argc, char *argv[])
{
	int	 json = 0;

	if (argc >= 2 && strcmp(argv[1], "revoke") == 0) {
		if (argc != 4 || *argv[2] == '\0' || *argv[3] == '\0' ||
		    strchr(argv[3], '|') != NULL) {
			ctl_usage();
			return 1;
		}
		return st == NULL ? 0 : ctl_links_revoke(st, argv[2],
		    argv[3]);
	}
	if (ctl_opt_json(argc, argv, &json, 0) != 0)
		return 1;
	return st == NULL ? 0 : ctl_links_list(st, json);
}

int
ctl_links_writes(int argc, char *argv[])
{
	return argc >= 2 && strcmp(argv[1], "revoke") == 0;
}
