/*
 * Pinned definitions (pin_rec.h): the canonical text of a listed
 * definition and its SHA-256, and the record's codec: one line of JSON,
 * version-tagged ("v"), bounded on both sides.  Pure: no I/O.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/sha.h>

#include "proto/hex.h"
#include "shared/pin_rec.h"
#include "shared/rec_json.h"

#define PIN_REC_V	1
/* a record's line at most: two texts, each escaped at worst to six
 * bytes a byte (\u00XX), and the rest */
#define PIN_REC_MAX	(12 * (size_t)PIN_TEXT_MAX + 4096)

static const char *const pin_kinds[PIN_NKINDS] = {
	[PIN_TOOL] = "tool",
	[PIN_PROMPT] = "prompt",
	[PIN_TEMPLATE] = "template",
};

static const char *const pin_states[] = {
	[PIN_PINNED] = "pinned",
	[PIN_PENDING] = "pending",
	[PIN_REJECTED] = "rejected",
};
#define PIN_NSTATES	(sizeof(pin_states) / sizeof(pin_states[0]))

/*
 * The members of each kind that reach a model (MCP 2025-11-25, Tool,
 * Prompt, ResourceTemplate); the first names the definition.
 */
static const char *const pin_members[PIN_NKINDS][7] = {
	[PIN_TOOL] = { "name", "title", "description", "inputSchema",
	    "outputSchema", "annotations", NULL },
	[PIN_PROMPT] = { "name", "title", "description", "arguments", NULL },
	[PIN_TEMPLATE] = { "uriTemplate", "name", "title", "description",
	    "mimeType", NULL },
};

const char *
pin_kind_name(enum pin_kind k)
{
	if ((unsigned int)k >= PIN_NKINDS)
		return "unknown";
	return pin_kinds[k];
}

/* s's index in names[n], or -1 */
static int
pin_lookup(const char *const *names, unsigned int n, const char *s)
{
	unsigned int	i;

	for (i = 0; s != NULL && i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return (int)i;
	return -1;
}

int
pin_kind_parse(const char *s, enum pin_kind *k)
{
	int	i;

	if ((i = pin_lookup(pin_kinds, PIN_NKINDS, s)) == -1)
		return -1;
	*k = (enum pin_kind)i;
	return 0;
}

const char *
pin_state_name(enum pin_state st)
{
	if ((unsigned int)st >= PIN_NSTATES)
		return "unknown";
	return pin_states[st];
}

static int
pin_state_parse(const char *s, enum pin_state *st)
{
	int	i;

	if ((i = pin_lookup(pin_states, PIN_NSTATES, s)) == -1)
		return -1;
	*st = (enum pin_state)i;
	return 0;
}

int
pin_digest(enum pin_kind kind, const json_t *item,
    char name[PIN_NAME_MAX + 1], char hash[PIN_HASH_LEN + 1], char **text)
{
	unsigned char	 d[SHA256_DIGEST_LENGTH];
	const char	*const *m;
	json_t		*o = NULL, *v;
	char		*s = NULL;
	size_t		 n;

	if (text != NULL)
		*text = NULL;
	if ((unsigned int)kind >= PIN_NKINDS || !json_is_object(item))
		return -1;
	m = pin_members[kind];
	v = json_object_get(item, m[0]);
	if (!json_is_string(v) || (n = json_string_length(v)) == 0 ||
	    n > PIN_NAME_MAX || strlen(json_string_value(v)) != n)
		return -1;
	if ((o = json_object()) == NULL)
		return -1;
	for (; *m != NULL; m++)
		if ((v = json_object_get(item, *m)) != NULL &&
		    json_object_set(o, *m, v) == -1)
			goto fail;
	if ((s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS)) == NULL ||
	    (n = strlen(s)) > PIN_TEXT_MAX)
		goto fail;
	(void)SHA256((const unsigned char *)s, n, d);
	proto_hex(d, sizeof(d), hash);
	v = json_object_get(item, pin_members[kind][0]);
	memcpy(name, json_string_value(v), json_string_length(v) + 1);
	json_decref(o);
	if (text != NULL)
		*text = s;
	else
		free(s);
	return 0;
 fail:
	free(s);
	json_decref(o);
	return -1;
}

int
pin_key(char key[PIN_KEY_MAX + 1], const char *backend, enum pin_kind kind,
    const char *name)
{
	size_t	bl, nl;
	int	n;

	if (backend == NULL || name == NULL ||
	    (unsigned int)kind >= PIN_NKINDS ||
	    (bl = strnlen(backend, PIN_BACKEND_MAX + 1)) == 0 ||
	    bl > PIN_BACKEND_MAX || strchr(backend, '|') != NULL ||
	    (nl = strnlen(name, PIN_NAME_MAX + 1)) == 0 || nl > PIN_NAME_MAX)
		return -1;
	n = snprintf(key, PIN_KEY_MAX + 1, "%s|%s|%s", backend,
	    pin_kinds[kind], name);
	if (n < 0 || n > PIN_KEY_MAX)
		return -1;
	return n;
}

int
pin_rec_decide(struct pin_rec *pr, int approve, int all, uint64_t now_ms)
{
	if (pr->pr_state == PIN_PINNED || (all && pr->pr_state != PIN_PENDING))
		return 0;
	if (!approve) {
		if (pr->pr_state == PIN_REJECTED)
			return 0;
		pr->pr_state = PIN_REJECTED;
		return 1;
	}
	memcpy(pr->pr_hash, pr->pr_new, sizeof(pr->pr_hash));
	free(pr->pr_text);
	pr->pr_text = pr->pr_new_text;
	pr->pr_new_text = NULL;
	pr->pr_new[0] = '\0';
	pr->pr_new_ms = 0;
	pr->pr_pinned_ms = now_ms;
	pr->pr_state = PIN_PINNED;
	return 1;
}

const char pin_redis_lua[] =
"local cur = redis.call('HGET', KEYS[1], ARGV[2])\n"
"local c = nil\n"
"if cur then\n"
"  local ok, v = pcall(cjson.decode, cur)\n"
"  if ok and type(v) == 'table' then c = v end\n"
"end\n"
"if ARGV[1] == 'put' then\n"
"  if c and c.hash ~= ARGV[4] then return {0, cur} end\n"
"  if c and ARGV[5] == 'pending' and c.state ~= 'pinned' and\n"
"      c.new == ARGV[6] then return {0, cur} end\n"
"  redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])\n"
"  return {1}\n"
"end\n"
"if c and (c.state == 'pinned' or c.new ~= ARGV[4]) then\n"
"  return {0, cur}\n"
"end\n"
"redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])\n"
"return {1, redis.call('INCR', KEYS[2])}\n";

/* --- codec --- */

char *
pin_rec_encode(const struct pin_rec *pr, size_t *len)
{
	json_t	*o;
	char	*s;

	if ((unsigned int)pr->pr_kind >= PIN_NKINDS ||
	    (unsigned int)pr->pr_state >= PIN_NSTATES)
		return NULL;
	o = json_pack("{s:i, s:s, s:s, s:s, s:s, s:s, s:s?, s:I, s:s, s:s?, "
	    "s:I}", "v", PIN_REC_V, "backend", pr->pr_backend, "kind",
	    pin_kinds[pr->pr_kind], "name", pr->pr_name, "state",
	    pin_states[pr->pr_state], "hash", pr->pr_hash, "text",
	    pr->pr_text, "pinned", (json_int_t)pr->pr_pinned_ms, "new",
	    pr->pr_new, "newText", pr->pr_new_text, "newSeen",
	    (json_int_t)pr->pr_new_ms);
	if (o == NULL)
		return NULL;
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (s != NULL && (*len = strlen(s)) > PIN_REC_MAX) {
		free(s);
		return NULL;
	}
	return s;
}

/* a hash: 64 lower-case hex digits, or "" if may_empty */
static int
pin_copy_hash(json_t *o, const char *key, char *dst, int may_empty)
{
	const char	*s = json_string_value(json_object_get(o, key));
	size_t		 n;

	if (s == NULL)
		return -1;
	if (*s == '\0' && may_empty) {
		*dst = '\0';
		return 0;
	}
	if ((n = strspn(s, "0123456789abcdef")) != PIN_HASH_LEN ||
	    s[n] != '\0')
		return -1;
	memcpy(dst, s, PIN_HASH_LEN + 1);
	return 0;
}

/* a text, malloc'd into *dst; null or absent: NULL */
static int
pin_copy_text(json_t *o, const char *key, char **dst)
{
	json_t	*v = json_object_get(o, key);
	size_t	 n;

	*dst = NULL;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_string(v) || (n = json_string_length(v)) > PIN_TEXT_MAX ||
	    strlen(json_string_value(v)) != n)
		return -1;
	if ((*dst = malloc(n + 1)) == NULL)
		return -1;
	memcpy(*dst, json_string_value(v), n + 1);
	return 0;
}

int
pin_rec_decode(const void *data, size_t len, struct pin_rec *pr)
{
	json_t		*o, *v;
	json_error_t	 je;
	int		 rc = -1;

	memset(pr, 0, sizeof(*pr));
	if (data == NULL || len > PIN_REC_MAX || (o = json_loadb(data, len,
	    JSON_REJECT_DUPLICATES, &je)) == NULL)
		return -1;
	v = json_object_get(o, "v");
	if (!json_is_object(o) || !json_is_integer(v) ||
	    json_integer_value(v) != PIN_REC_V)
		goto done;
	if (rec_json_copy(o, "backend", pr->pr_backend, PIN_BACKEND_MAX,
	    0) == -1 ||
	    strchr(pr->pr_backend, '|') != NULL ||
	    pin_kind_parse(json_string_value(json_object_get(o, "kind")),
	    &pr->pr_kind) == -1 ||
	    rec_json_copy(o, "name", pr->pr_name, PIN_NAME_MAX, 0) == -1 ||
	    pin_state_parse(json_string_value(json_object_get(o, "state")),
	    &pr->pr_state) == -1 ||
	    pin_copy_hash(o, "hash", pr->pr_hash, 0) == -1 ||
	    rec_json_stamp(o, "pinned", &pr->pr_pinned_ms) == -1 ||
	    pin_copy_hash(o, "new", pr->pr_new, 1) == -1 ||
	    rec_json_stamp(o, "newSeen", &pr->pr_new_ms) == -1 ||
	    pin_copy_text(o, "text", &pr->pr_text) == -1 ||
	    pin_copy_text(o, "newText", &pr->pr_new_text) == -1)
		goto done;
	/* a change is pending or rejected; a pin has none */
	if ((pr->pr_state == PIN_PINNED) != (pr->pr_new[0] == '\0') ||
	    (pr->pr_state == PIN_PINNED && pr->pr_new_text != NULL))
		goto done;
	rc = 0;
 done:
	json_decref(o);
	if (rc == -1)
		pin_rec_clear(pr);
	return rc;
}

void
pin_rec_clear(struct pin_rec *pr)
{
	if (pr == NULL)
		return;
	free(pr->pr_text);
	free(pr->pr_new_text);
	memset(pr, 0, sizeof(*pr));
}
