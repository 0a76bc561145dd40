/*
 * vmcpctl pins: the pinned definitions (aggregation.pinning; the pins
 * db, shared/pin_db.h) listed, with their pending and rejected changes
 * (-v: the pinned and the changed text, line by line); and an
 * operator's word on a change: approve, approve-all, reject.  A word
 * moves the backend's decision stamp, which the builder watches: it
 * lists the backend again and clients get list_changed.  With
 * sessionStorage.provider redis the pins live in Redis too
 * (shared/pin_rec.h): the host's copy of the backend is made current
 * from Redis first, and each word is written there unless Redis holds
 * another word on that change, which then comes into the host's copy.
 */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include "shared/pin_db.h"
#include "shared/store.h"
#include "tools/vmcpctl.h"

#define CTL_PIN_RKEY_MAX	(PIN_BACKEND_MAX + 512)

/* s, with every byte a terminal could act on shown as \xNN */
static void
ctl_pins_put(FILE *fp, const char *s)
{
	const unsigned char	*p;

	for (p = (const unsigned char *)s; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f || *p == '\\')
			fprintf(fp, "\\x%02x", *p);
		else
			fputc(*p, fp);
}

/* a canonical text as parsed JSON (null if absent or not JSON) */
static json_t *
ctl_pins_text(const char *text)
{
	json_t	*o;

	if (text == NULL || (o = json_loads(text, 0, NULL)) == NULL)
		return json_null();
	return o;
}

struct ctl_pins {
	json_t	*cp_list;
	int	 cp_verbose;
	int	 cp_err;
};

static int
ctl_pins_cb(void *arg, const struct pin_rec *pr)
{
	struct ctl_pins	*cp = arg;
	json_t		*o, *change = json_null();

	if (pr->pr_state != PIN_PINNED)
		change = json_pack("{s:s, s:o}", "hash", pr->pr_new, "seen",
		    ctl_time(pr->pr_new_ms));
	o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:o}", "backend",
	    pr->pr_backend, "kind", pin_kind_name(pr->pr_kind), "name",
	    pr->pr_name, "state", pin_state_name(pr->pr_state), "hash",
	    pr->pr_hash, "pinned", ctl_time(pr->pr_pinned_ms), "change",
	    change);
	if (o != NULL && cp->cp_verbose && (json_object_set_new(o, "text",
	    ctl_pins_text(pr->pr_text)) == -1 || json_object_set_new(o,
	    "newText", ctl_pins_text(pr->pr_new_text)) == -1)) {
		json_decref(o);
		o = NULL;
	}
	if (o == NULL || json_array_append_new(cp->cp_list, o) == -1) {
		cp->cp_err = 1;
		return 1;
	}
	return 0;
}

/* a text's lines, indented and sorted as JSON (NULL: none) */
static char *
ctl_pins_lines(const json_t *text)
{
	if (json_is_null(text))
		return NULL;
	return json_dumps(text, JSON_INDENT(2) | JSON_SORT_KEYS);
}

/* 1 if line (up to its newline) is one of the lines of text */
static int
ctl_pins_has_line(const char *text, const char *line, size_t len)
{
	const char	*p, *nl;

	for (p = text; p != NULL && *p != '\0'; p = nl != NULL ? nl + 1 :
	    NULL) {
		nl = strchr(p, '\n');
		if ((size_t)((nl != NULL ? nl : p + strlen(p)) - p) == len &&
		    memcmp(p, line, len) == 0)
			return 1;
	}
	return 0;
}

/* text's lines, each marked mark if the other text lacks it */
static void
ctl_pins_show(const char *title, const char *text, const char *other,
    char mark)
{
	const char	*p, *nl;
	char		*line;
	size_t		 len;

	printf("  %s:\n", title);
	for (p = text; p != NULL && *p != '\0'; p = nl != NULL ? nl + 1 :
	    NULL) {
		nl = strchr(p, '\n');
		len = (size_t)((nl != NULL ? nl : p + strlen(p)) - p);
		if ((line = strndup(p, len)) == NULL)
			err(1, "strndup");
		printf("  %c ", other != NULL && !ctl_pins_has_line(other, p,
		    len) ? mark : ' ');
		ctl_pins_put(stdout, line);
		putchar('\n');
		free(line);
	}
}

static void
ctl_pins_print(const json_t *o, int verbose)
{
	const json_t	*ch = json_object_get(o, "change");
	char		*old, *new;

	ctl_pins_put(stdout, ctl_str(o, "backend", "-"));
	printf(" %s ", ctl_str(o, "kind", "-"));
	ctl_pins_put(stdout, ctl_str(o, "name", "-"));
	printf(" %s\n  pinned %.12s at %s\n", ctl_str(o, "state", "-"),
	    ctl_str(o, "hash", "-"), ctl_str(o, "pinned", "-"));
	if (json_is_object(ch))
		printf("  %s %.12s seen %s\n", strcmp(ctl_str(o, "state", "-"),
		    "rejected") == 0 ? "rejected change" : "change",
		    ctl_str(ch, "hash", "-"), ctl_str(ch, "seen", "-"));
	if (!verbose)
		return;
	old = ctl_pins_lines(json_object_get(o, "text"));
	new = ctl_pins_lines(json_object_get(o, "newText"));
	if (old != NULL)
		ctl_pins_show("pinned", old, new, '-');
	if (new != NULL)
		ctl_pins_show("changed", new, old, '+');
	free(old);
	free(new);
}

static int
ctl_pins_list(struct store *st, int json, int verbose)
{
	struct ctl_pins	 cp;
	json_t		*o;
	char		*s;
	size_t		 i;

	memset(&cp, 0, sizeof(cp));
	cp.cp_verbose = verbose;
	if ((cp.cp_list = json_array()) == NULL)
		errx(1, "out of memory");
	if (pin_db_list(st, NULL, ctl_pins_cb, &cp) == -1 || cp.cp_err) {
		warnx("cannot read the %s db", store_db_name(STORE_PINS));
		json_decref(cp.cp_list);
		return 1;
	}
	if (json) {
		if ((s = json_dumps(cp.cp_list, JSON_COMPACT)) == NULL)
			errx(1, "out of memory");
		printf("%s\n", s);
		free(s);
	} else if (json_array_size(cp.cp_list) == 0)
		printf("no pinned definitions\n");
	else
		json_array_foreach(cp.cp_list, i, o)
			ctl_pins_print(o, verbose);
	json_decref(cp.cp_list);
	return 0;
}

/* "<prefix><kind>:<backend>" */
static void
ctl_pins_rkey(char key[CTL_PIN_RKEY_MAX], const char *prefix,
    const char *kind, const char *backend)
{
	(void)snprintf(key, CTL_PIN_RKEY_MAX, "%s%s:%s", prefix, kind,
	    backend);
}

/* the host's copy of backend made Redis's: how many taken, or -1 */
static int
ctl_pins_pull(struct store *st, redisContext *c, const char *prefix,
    const char *backend)
{
	redisReply	*r;
	char		 key[CTL_PIN_RKEY_MAX], be[PIN_BACKEND_MAX + 1];
	size_t		 i;
	int		 n = 0;

	ctl_pins_rkey(key, prefix, PIN_REDIS_KIND, backend);
	if ((r = redisCommand(c, "HGETALL %s", key)) == NULL ||
	    r->type != REDIS_REPLY_ARRAY) {
		if (r != NULL)
			freeReplyObject(r);
		return -1;
	}
	for (i = 1; i < r->elements; i += 2)
		if (r->element[i]->type == REDIS_REPLY_STRING &&
		    pin_db_take(st, r->element[i]->str, r->element[i]->len,
		    be) == 1)
			n++;
	freeReplyObject(r);
	return n;
}

struct ctl_word {
	struct store	*cw_st;
	redisContext	*cw_redis;
	const char	*cw_prefix;
	int		 cw_approve;
	int		 cw_written;	/* in Redis */
	int		 cw_taken;	/* Redis's instead */
	int		 cw_lost;	/* Redis not answering */
};

/* one record decided on the host: the script writes it to Redis */
static int
ctl_pins_word(void *arg, const struct pin_rec *pr)
{
	struct ctl_word	*cw = arg;
	redisReply	*r;
	char		 hkey[CTL_PIN_RKEY_MAX], skey[CTL_PIN_RKEY_MAX];
	char		 be[PIN_BACKEND_MAX + 1];
	char		*field, *data;
	size_t		 len;

	printf("%s %s ", cw->cw_approve ? "approved" : "rejected",
	    pin_kind_name(pr->pr_kind));
	ctl_pins_put(stdout, pr->pr_name);
	printf(" of backend %s (change %.12s)\n", pr->pr_backend,
	    cw->cw_approve ? pr->pr_hash : pr->pr_new);
	if (cw->cw_redis == NULL)
		return 0;
	ctl_pins_rkey(hkey, cw->cw_prefix, PIN_REDIS_KIND, pr->pr_backend);
	ctl_pins_rkey(skey, cw->cw_prefix, PIN_REDIS_STAMP, pr->pr_backend);
	if (asprintf(&field, "%s|%s", pin_kind_name(pr->pr_kind),
	    pr->pr_name) == -1)
		err(1, "asprintf");
	if ((data = pin_rec_encode(pr, &len)) == NULL)
		errx(1, "out of memory");
	r = redisCommand(cw->cw_redis, "EVAL %s 2 %s %s decide "
	    "%s %b %s", pin_redis_lua, hkey, skey, field, data, len,
	    cw->cw_approve ? pr->pr_hash : pr->pr_new);
	free(field);
	free(data);
	if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
	    r->element[0]->type != REDIS_REPLY_INTEGER)
		cw->cw_lost++;
	else if (r->element[0]->integer == 1)
		cw->cw_written++;
	else if (r->elements > 1 &&
	    r->element[1]->type == REDIS_REPLY_STRING &&
	    pin_db_take(cw->cw_st, r->element[1]->str, r->element[1]->len,
	    be) != -1)
		cw->cw_taken++;
	else
		cw->cw_lost++;
	if (r != NULL)
		freeReplyObject(r);
	return 0;
}

/* why a word changed nothing */
static void
ctl_pins_none(struct store *st, const char *backend, const char *name,
    int approve)
{
	struct pin_rec	 rec;
	const char	*why = "no such pinned definition (vmcpctl pins)";
	int		 kind;

	for (kind = 0; name != NULL && kind < PIN_NKINDS; kind++) {
		if (pin_db_get(st, backend, (enum pin_kind)kind, name,
		    &rec) != 0)
			continue;
		if (rec.pr_state == PIN_REJECTED && !approve)
			why = "its change is rejected already";
		else if (rec.pr_state == PIN_PINNED)
			why = "it is as pinned: no change pending";
		pin_rec_clear(&rec);
	}
	if (name == NULL)
		warnx("backend %s: no pending change", backend);
	else {
		fprintf(stderr, "vmcpctl: ");
		ctl_pins_put(stderr, name);
		fprintf(stderr, " of backend %s: %s\n", backend, why);
	}
}

static int
ctl_pins_decide(struct store *st, const char *backend, const char *name,
    int approve)
{
	struct ctl_word	 cw;
	const char	*where, *prefix = "";
	long		 n = 0, k;
	int		 kind, rc = 0;

	memset(&cw, 0, sizeof(cw));
	cw.cw_st = st;
	cw.cw_approve = approve;
	if ((where = ctl_redis_where(&prefix)) != NULL) {
		cw.cw_prefix = prefix;
		if ((cw.cw_redis = ctl_redis_open()) == NULL ||
		    ctl_pins_pull(st, cw.cw_redis, prefix, backend) == -1) {
			warnx("Redis %s not reached: deciding on this host's "
			    "copy only; decide again once Redis answers, or "
			    "other nodes keep their own", where);
			rc = 1;
		}
	}
	if (name == NULL)
		n = pin_db_decide_each(st, backend, PIN_TOOL, NULL, approve,
		    ctl_pins_word, &cw);
	/* by name: whichever kind it is pending as */
	for (kind = 0; name != NULL && n != -1 && kind < PIN_NKINDS; kind++)
		n = (k = pin_db_decide_each(st, backend, (enum pin_kind)kind,
		    name, approve, ctl_pins_word, &cw)) == -1 ? -1 : n + k;
	if (cw.cw_redis != NULL)
		redisFree(cw.cw_redis);
	if (n == -1) {
		warnx("cannot change the %s db", store_db_name(STORE_PINS));
		return 1;
	}
	if (n == 0) {
		ctl_pins_none(st, backend, name, approve);
		return 1;
	}
	if (where != NULL && cw.cw_redis != NULL)
		printf("Redis %s: %d written%s\n", where, cw.cw_written,
		    cw.cw_taken > 0 ? ", others decided there already "
		    "(theirs taken)" : "");
	if (cw.cw_lost > 0) {
		warnx("Redis %s: %d not written: this host's only", where,
		    cw.cw_lost);
		rc = 1;
	}
	printf("backend %s is listed again within seconds; clients get "
	    "list_changed\n", backend);
	return rc;
}

static int
ctl_pins_name_ok(const char *s, size_t max)
{
	return s != NULL && *s != '\0' && strlen(s) <= max;
}

int
ctl_pins(struct store *st, int argc, char *argv[])
{
	int	 json = 0, verbose = 0, i;
	int	 approve;

	if (argc >= 2 && (strcmp(argv[1], "approve") == 0 ||
	    strcmp(argv[1], "reject") == 0 ||
	    strcmp(argv[1], "approve-all") == 0)) {
		approve = strcmp(argv[1], "reject") != 0;
		if (argc != (strcmp(argv[1], "approve-all") == 0 ? 3 : 4) ||
		    !ctl_pins_name_ok(argv[2], PIN_BACKEND_MAX) ||
		    strchr(argv[2], '|') != NULL || (argc == 4 &&
		    !ctl_pins_name_ok(argv[3], PIN_NAME_MAX))) {
			ctl_usage();
			return 1;
		}
		return st == NULL ? 0 : ctl_pins_decide(st, argv[2],
		    argc == 4 ? argv[3] : NULL, approve);
	}
	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "-j") == 0)
			json = 1;
		else if (strcmp(argv[i], "-v") == 0)
			verbose = 1;
		else {
			ctl_usage();
			return 1;
		}
	return st == NULL ? 0 : ctl_pins_list(st, json, verbose);
}

int
ctl_pins_writes(int argc, char *argv[])
{
	return argc >= 2 && (strcmp(argv[1], "approve") == 0 ||
	    strcmp(argv[1], "approve-all") == 0 ||
	    strcmp(argv[1], "reject") == 0);
}
