/*
 * libFuzzer: the HTTP client's URL split (shared/http_url.c).
 *
 * Input: a URL.  http_url_redact() of it is checked (redact_check()).
 * One taken must hold together: its authority right
 * after "http://", the host in it (maybe empty), a port in 1..65535, a path inside
 * the URL with no space, control character or fragment, and an address
 * only of the family its length says.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/http_client.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/*
 * http_url_redact(): within its bound, idempotent, and nothing of a
 * query value is left: each item is "name=***", "***" or empty.
 */
static void
redact_check(const char *url, size_t size)
{
	char		*r, *r2;
	const char	*q, *e;

	if (strlen(url) != size)
		return;		/* a NUL inside: C strings stop there */
	if ((r = http_url_redact(url)) == NULL)
		abort();
	if (strlen(r) > 4 * size ||
	    (r2 = http_url_redact(r)) == NULL || strcmp(r, r2) != 0)
		abort();
	free(r2);
	if ((q = strchr(r, '?')) != NULL &&
	    (strstr(r, "://") == NULL || q > strstr(r, "://"))) {
		for (q++; *q != '\0' && *q != '#'; q = e) {
			e = q + strcspn(q, "&;#");
			if (e > q && (e - q < 3 || strncmp(e - 3, "***", 3)
			    != 0))
				abort();
			if (*e == '&' || *e == ';')
				e++;
		}
	}
	free(r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_url	 u;
	char		*url;
	size_t		 i;

	if ((url = malloc(size + 1)) == NULL)
		abort();
	memcpy(url, data, size);
	url[size] = '\0';
	if (http_url_split(url, &u) == 0) {
		/* an empty host ("http://:1") is libcurl's to refuse */
		if (u.hu_auth != url + 7 || u.hu_authlen == 0 ||
		    u.hu_hostlen > u.hu_authlen ||
		    u.hu_port == 0 || u.hu_port > 65535 ||
		    u.hu_path != u.hu_auth + u.hu_authlen ||
		    u.hu_path + u.hu_pathlen > url + strlen(url))
			abort();
		for (i = 0; i < u.hu_pathlen; i++)
			if ((unsigned char)u.hu_path[i] <= 0x20 ||
			    u.hu_path[i] == 0x7f || u.hu_path[i] == '#')
				abort();
		if ((u.hu_addrlen == sizeof(struct sockaddr_in) &&
		    u.hu_addr.ss_family != AF_INET) ||
		    (u.hu_addrlen == sizeof(struct sockaddr_in6) &&
		    u.hu_addr.ss_family != AF_INET6) ||
		    (u.hu_addrlen != 0 && u.hu_addrlen !=
		    sizeof(struct sockaddr_in) && u.hu_addrlen !=
		    sizeof(struct sockaddr_in6)))
			abort();
		(void)http_addr_private((struct sockaddr *)&u.hu_addr);
	}
	redact_check(url, size);
	free(url);
	return 0;
}
