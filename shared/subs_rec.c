/*
 * Resource subscriptions' records (subs_rec.h): keys, values, and the
 * reconciler's pure decisions.
 */
#include <sys/types.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/sha.h>

#include "proto/hex.h"
#include "subs_rec.h"

static void
subs_hex(const char *s, char *out, size_t hexlen)
{
	unsigned char		 md[SHA256_DIGEST_LENGTH];

	(void)SHA256((const unsigned char *)s, strlen(s), md);
	proto_hex(md, hexlen / 2, out);
}

void
subs_uri_key(const char *uri, char out[SUBS_UK_LEN + 1])
{
	subs_hex(uri, out, SUBS_UK_LEN);
}

void
subs_backend_key(const char *backend, char out[SUBS_BK_LEN + 1])
{
	subs_hex(backend, out, SUBS_BK_LEN);
}

int
subs_holder_session(const char *sid, char *out, size_t outlen)
{
	int n;

	n = snprintf(out, outlen, "s%s", sid);
	return n < 0 || (size_t)n >= outlen || (size_t)n > SUBS_HOLDER_MAX ||
	    strchr(sid, '|') != NULL ? -1 : 0;
}

int
subs_holder_listen(pid_t pid, uint64_t start, uint64_t n, char *out,
    size_t outlen)
{
	int len;

	len = snprintf(out, outlen, "l%ld.%" PRIu64 ".%" PRIu64, (long)pid,
	    start, n);
	return len < 0 || (size_t)len >= outlen ||
	    (size_t)len > SUBS_HOLDER_MAX ? -1 : 0;
}

/* a decimal number of s (len bytes) up to the byte stop: its end */
static const char *
subs_num(const char *s, const char *end, char stop, uint64_t *v)
{
	const char *p = s;

	*v = 0;
	while (p < end && *p >= '0' && *p <= '9') {
		if (*v > (UINT64_MAX - 9) / 10)
			return NULL;
		*v = *v * 10 + (uint64_t)(*p - '0');
		p++;
	}
	if (p == s || p >= end || *p != stop)
		return NULL;
	return p;
}

int
subs_holder_worker(const char *holder, size_t len, pid_t *pid,
    uint64_t *start)
{
	const char	*end = holder + len, *p;
	uint64_t	 v;

	if (len < 2 || holder[0] != 'l' ||
	    (p = subs_num(holder + 1, end, '.', &v)) == NULL || v == 0 ||
	    v > INT32_MAX)
		return -1;
	*pid = (pid_t)v;
	if (subs_num(p + 1, end, '.', start) == NULL)
		return -1;
	return 0;
}

/*
 * "<kind>|a|b|c" of the parts given (b, c may be NULL), and a '|' after
 * the last one for a prefix: its length, or 0 if it does not fit.
 */
static size_t
subs_join(char *buf, char kind, const char *a, const char *b,
    const char *c, int prefix)
{
	const char	*parts[3] = { a, b, c };
	size_t		 len = 1, i, n;

	buf[0] = kind;
	for (i = 0; i < 3 && parts[i] != NULL; i++) {
		n = strlen(parts[i]);
		if (len + 1 + n > SUBS_KEY_MAX)
			return 0;
		buf[len++] = '|';
		memcpy(buf + len, parts[i], n);
		len += n;
	}
	if (prefix) {
		if (len + 1 > SUBS_KEY_MAX)
			return 0;
		buf[len++] = '|';
	}
	buf[len] = '\0';
	return len;
}

size_t
subs_key_hold(char *buf, const char *holder, const char *uk, const char *bk)
{
	return subs_join(buf, SUBS_HOLD, holder, uk, bk, 0);
}

size_t
subs_prefix_holder(char *buf, const char *holder)
{
	return subs_join(buf, SUBS_HOLD, holder, NULL, NULL, 1);
}

size_t
subs_prefix_holder_uri(char *buf, const char *holder, const char *uk)
{
	return subs_join(buf, SUBS_HOLD, holder, uk, NULL, 1);
}

size_t
subs_prefix_release(char *buf, const char *holder, const char *uri)
{
	char uk[SUBS_UK_LEN + 1];

	if (uri == NULL)
		return subs_prefix_holder(buf, holder);
	subs_uri_key(uri, uk);
	return subs_prefix_holder_uri(buf, holder, uk);
}

size_t
subs_key_pair(char *buf, char kind, const char *bk, const char *uk)
{
	return subs_join(buf, kind, bk, uk, NULL, 0);
}

size_t
subs_prefix_want(char *buf, const char *bk, const char *uk)
{
	return subs_join(buf, SUBS_WANT, bk, uk, NULL, 1);
}

size_t
subs_prefix_backend(char *buf, char kind, const char *bk)
{
	return subs_join(buf, kind, bk, NULL, NULL, 1);
}

size_t
subs_key_worker(char *buf, pid_t pid, uint64_t start)
{
	int n;

	n = snprintf(buf, SUBS_KEY_MAX + 1, "p|%ld.%" PRIu64, (long)pid,
	    start);
	return n < 0 || n > SUBS_KEY_MAX ? 0 : (size_t)n;
}

size_t
subs_prefix_worker_holds(char *buf, const char *wkey, size_t wlen)
{
	int n;

	if (wlen < 3 || memcmp(wkey, "p|", 2) != 0)
		return 0;
	n = snprintf(buf, SUBS_KEY_MAX + 1, "h|l%.*s.", (int)(wlen - 2),
	    wkey + 2);
	return n < 0 || n > SUBS_KEY_MAX ? 0 : (size_t)n;
}

static int
subs_hex_ok(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

int
subs_key_of_hold(const void *hkey, size_t hklen, char *kbuf, size_t *klen,
    size_t *plen, char *dbuf, size_t *dlen)
{
	const char	*k = hkey, *uk, *bk;
	size_t		 hlen;
	int		 n;

	/* h|<holder>|<uk>|<bk>: the holder has no '|' */
	if (hklen < 2 + 1 + 1 + SUBS_UK_LEN + 1 + SUBS_BK_LEN ||
	    hklen > SUBS_KEY_MAX || memcmp(k, "h|", 2) != 0)
		return -1;
	bk = k + hklen - SUBS_BK_LEN;
	uk = bk - 1 - SUBS_UK_LEN;
	hlen = (size_t)(uk - 1 - (k + 2));
	if (uk[-1] != '|' || bk[-1] != '|' || hlen == 0 ||
	    memchr(k + 2, '|', hlen) != NULL || !subs_hex_ok(uk,
	    SUBS_UK_LEN) || !subs_hex_ok(bk, SUBS_BK_LEN))
		return -1;
	n = snprintf(kbuf, SUBS_KEY_MAX + 1, "k|%.*s|%.*s|%.*s", SUBS_BK_LEN,
	    bk, SUBS_UK_LEN, uk, (int)hlen, k + 2);
	if (n < 0 || n > SUBS_KEY_MAX)
		return -1;
	*klen = (size_t)n;
	*plen = 2 + SUBS_BK_LEN + 1 + SUBS_UK_LEN + 1;
	n = snprintf(dbuf, SUBS_KEY_MAX + 1, "d|%.*s|%.*s", SUBS_BK_LEN, bk,
	    SUBS_UK_LEN, uk);
	if (n < 0 || n > SUBS_KEY_MAX)
		return -1;
	*dlen = (size_t)n;
	return 0;
}

int
subs_key_split(const void *key, size_t klen, char bk[SUBS_BK_LEN + 1],
    char uk[SUBS_UK_LEN + 1])
{
	const char *k = key;

	if (klen < 2 + SUBS_BK_LEN + 1 + SUBS_UK_LEN || k[1] != '|' ||
	    k[2 + SUBS_BK_LEN] != '|' || (klen > 2 + SUBS_BK_LEN + 1 +
	    SUBS_UK_LEN && k[2 + SUBS_BK_LEN + 1 + SUBS_UK_LEN] != '|') ||
	    !subs_hex_ok(k + 2, SUBS_BK_LEN) ||
	    !subs_hex_ok(k + 2 + SUBS_BK_LEN + 1, SUBS_UK_LEN))
		return -1;
	memcpy(bk, k + 2, SUBS_BK_LEN);
	bk[SUBS_BK_LEN] = '\0';
	memcpy(uk, k + 2 + SUBS_BK_LEN + 1, SUBS_UK_LEN);
	uk[SUBS_UK_LEN] = '\0';
	return 0;
}

int
subs_val_encode(const char *backend, const char *uri, const char *bsid,
    char **buf, size_t *len)
{
	json_t *a;

	*buf = NULL;
	a = bsid != NULL ? json_pack("[s, s, s]", backend, uri, bsid) :
	    json_pack("[s, s]", backend, uri);
	if (a == NULL)
		return -1;
	*buf = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	if (*buf == NULL)
		return -1;
	*len = strlen(*buf);
	return 0;
}

int
subs_val_decode(const void *buf, size_t len, struct subs_val *sv)
{
	json_t		*a;
	const char	*b, *u, *s = NULL;

	memset(sv, 0, sizeof(*sv));
	if ((a = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL)) == NULL)
		return -1;
	if (!json_is_array(a) || json_array_size(a) < 2 ||
	    json_array_size(a) > 3 ||
	    (b = json_string_value(json_array_get(a, 0))) == NULL ||
	    (u = json_string_value(json_array_get(a, 1))) == NULL ||
	    (json_array_size(a) == 3 &&
	    (s = json_string_value(json_array_get(a, 2))) == NULL) ||
	    (sv->sv_backend = strdup(b)) == NULL ||
	    (sv->sv_uri = strdup(u)) == NULL ||
	    (s != NULL && (sv->sv_bsid = strdup(s)) == NULL)) {
		json_decref(a);
		subs_val_clear(sv);
		return -1;
	}
	json_decref(a);
	return 0;
}

void
subs_val_clear(struct subs_val *sv)
{
	free(sv->sv_backend);
	free(sv->sv_uri);
	free(sv->sv_bsid);
	memset(sv, 0, sizeof(*sv));
}

int
subs_stat_start(const char *buf, size_t len, uint64_t *start)
{
	const char	*p, *end = buf + len;
	int		 field;

	/* "pid (comm) state ...": comm may hold spaces and ')' */
	for (p = end; p > buf && p[-1] != ')'; p--)
		;
	if (p == buf)
		return -1;
	/* p is after ')': fields 3.. follow, each after one space */
	for (field = 2; field < 22; field++) {
		if (p >= end || *p != ' ')
			return -1;
		p++;
		if (field + 1 == 22)
			break;
		while (p < end && *p != ' ')
			p++;
	}
	if (subs_num(p, end, ' ', start) == NULL &&
	    subs_num(p, end, '\n', start) == NULL)
		return -1;
	return 0;
}

enum subs_act
subs_decide(int wanted, const char *made_bsid, const char *cur_bsid)
{
	int here = made_bsid != NULL && cur_bsid != NULL &&
	    strcmp(made_bsid, cur_bsid) == 0;

	if (wanted)
		return here ? SUBS_ACT_NONE : SUBS_ACT_SUBSCRIBE;
	if (made_bsid == NULL)
		return SUBS_ACT_NONE;
	return here ? SUBS_ACT_UNSUBSCRIBE : SUBS_ACT_FORGET;
}

size_t
subs_take_count(size_t inflight, size_t max, size_t queued, size_t qmax)
{
	if (inflight >= max || queued >= qmax)
		return 0;
	return qmax - queued;
}
