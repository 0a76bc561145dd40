/*
 * Addresses and URLs as the HTTP client sees them, pure: a plain
 * http:// URL split for http_h1.c (RFC 3986 3.2: an authority with no
 * userinfo; RFC 9110 4.2.1), a URL with its credentials redacted, and
 * the addresses a public-only call may not reach.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "shared/http_client.h"

int
http_url_split(const char *url, struct http_url *u)
{
	struct sockaddr_in	*sin = (struct sockaddr_in *)&u->hu_addr;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&u->hu_addr;
	const char		*a, *ae, *he, *q;
	char			 host[INET6_ADDRSTRLEN + 2];
	size_t			 hlen;

	memset(u, 0, sizeof(*u));
	u->hu_port = 80;
	if (strncasecmp(url, "http://", 7) != 0)
		return -1;
	a = url + 7;
	ae = a + strcspn(a, "/?#");
	if (ae == a || memchr(a, '@', (size_t)(ae - a)) != NULL)
		return -1;
	if (*a == '[') {
		if ((he = memchr(a, ']', (size_t)(ae - a))) == NULL)
			return -1;
		he++;
	} else if ((he = memchr(a, ':', (size_t)(ae - a))) == NULL)
		he = ae;
	if (he < ae) {
		if (*he != ':' || he + 1 == ae || ae - he > 6)
			return -1;
		u->hu_port = 0;
		for (q = he + 1; q < ae; q++) {
			if (*q < '0' || *q > '9')
				return -1;
			u->hu_port = u->hu_port * 10 +
			    (unsigned long)(*q - '0');
		}
		if (u->hu_port == 0 || u->hu_port > 65535)
			return -1;
	}
	u->hu_path = ae;
	u->hu_pathlen = strcspn(ae, "#");
	for (q = ae; q < ae + u->hu_pathlen; q++)
		if ((unsigned char)*q <= 0x20 || *q == 0x7f)
			return -1;
	u->hu_auth = a;
	u->hu_authlen = (size_t)(ae - a);
	u->hu_hostlen = hlen = (size_t)(he - a);
	if (hlen >= sizeof(host))
		return 0;
	memcpy(host, a, hlen);
	host[hlen] = '\0';
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)u->hu_port);
		u->hu_addrlen = sizeof(*sin);
	} else if (host[0] == '[' && hlen > 2) {
		host[hlen - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &sin6->sin6_addr) == 1) {
			sin6->sin6_family = AF_INET6;
			sin6->sin6_port = htons((uint16_t)u->hu_port);
			u->hu_addrlen = sizeof(*sin6);
		}
	}
	return 0;
}

/* append s[0, n) to the buffer at *o (sized by the caller) */
static void
http_put(char **o, const char *s, size_t n)
{
	memcpy(*o, s, n);
	*o += n;
}

char *
http_url_redact(const char *url)
{
	const size_t	 rlen = sizeof(HTTP_URL_REDACTED) - 1;
	const char	*p, *a, *ae, *at, *q, *e, *eq;
	char		*out, *o;
	size_t		 len = strlen(url);

	/* at most one "***" per byte of the original, plus the NUL */
	if (len > (SIZE_MAX - 1) / (rlen + 1) ||
	    (out = malloc(len * (rlen + 1) + 1)) == NULL)
		return NULL;
	o = out;
	p = url;
	/* "scheme://": no '/', '?' or '#' before it */
	if ((a = strstr(url, "://")) != NULL &&
	    strcspn(url, "/?#") == (size_t)(a - url) + 1) {
		a += 3;
		ae = a + strcspn(a, "/?#");
		http_put(&o, url, (size_t)(a - url));
		/* the last '@' ends the userinfo (RFC 3986 3.2.1) */
		for (at = NULL, q = a; q < ae; q++)
			if (*q == '@')
				at = q;
		if (at != NULL) {
			http_put(&o, HTTP_URL_REDACTED, rlen);
			a = at;
		}
		p = a;
	}
	/* the path as it is, then the query's names without their values */
	q = p + strcspn(p, "?#");
	http_put(&o, p, (size_t)(q - p));
	if (*q == '?') {
		http_put(&o, "?", 1);
		for (p = q + 1; *p != '\0' && *p != '#'; p = e) {
			e = p + strcspn(p, "&;#");
			eq = memchr(p, '=', (size_t)(e - p));
			if (eq != NULL)
				http_put(&o, p, (size_t)(eq + 1 - p));
			if (e > p)
				http_put(&o, HTTP_URL_REDACTED, rlen);
			if (*e == '&' || *e == ';')
				http_put(&o, e++, 1);
		}
		q = p;
	}
	if (*q == '#') {
		http_put(&o, "#", 1);
		if (q[1] != '\0')
			http_put(&o, HTTP_URL_REDACTED, rlen);
	}
	*o = '\0';
	return out;
}

int
http_addr_group(const struct sockaddr *sa, socklen_t salen, int *family,
    unsigned char key[HTTP_GROUP_LEN])
{
	const unsigned char	*a;

	memset(key, 0, HTTP_GROUP_LEN);
	if (sa->sa_family == AF_INET && salen >= sizeof(struct sockaddr_in)) {
		a = (const unsigned char *)
		    &((const struct sockaddr_in *)(const void *)sa)->sin_addr;
		goto v4;
	}
	if (sa->sa_family != AF_INET6 || salen < sizeof(struct sockaddr_in6))
		return -1;
	a = ((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr.s6_addr;
	if (memcmp(a, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) == 0) {
		a += 12;
		goto v4;
	}
	*family = AF_INET6;
	memcpy(key, a, 8);
	return 0;
v4:
	*family = AF_INET;
	memcpy(key, a, 4);
	return 0;
}

int
http_addr_private(const struct sockaddr *sa)
{
	const unsigned char	*a;
	uint32_t		 v4;

	if (sa->sa_family == AF_INET) {
		a = (const unsigned char *)
		    &((const struct sockaddr_in *)(const void *)sa)->sin_addr;
		goto v4;
	}
	if (sa->sa_family != AF_INET6)
		return 1;
	a = ((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr.s6_addr;
	/* fc00::/7, fe80::/10 */
	if ((a[0] & 0xfe) == 0xfc || (a[0] == 0xfe && (a[1] & 0xc0) == 0x80))
		return 1;
	if (memcmp(a, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) == 0) {
		a += 12;
		goto v4;
	}
	/* :: and ::1 */
	return memcmp(a, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 15) == 0 &&
	    a[15] <= 1;
v4:
	v4 = (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 |
	    (uint32_t)a[2] << 8 | a[3];
	return (v4 >> 24) == 0 || (v4 >> 24) == 10 || (v4 >> 24) == 127 ||
	    (v4 >> 16) == 0xa9fe || (v4 >> 20) == 0xac1 ||
	    (v4 >> 16) == 0xc0a8 || (v4 >> 22) == (0x64400000U >> 22);
}
