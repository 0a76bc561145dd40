/*
 * libFuzzer: the HTTP client's URL split (shared/http_url.c).
 *
 * Input: a URL.  One taken must hold together: its authority right
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
	free(url);
	return 0;
}
