/*
 * The listening socket is created by the master before forking and
 * kept open for its whole life, so a worker's death never closes the
 * accept queue.  SO_REUSEPORT lets a second instance bind beside it
 * during a binary upgrade.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "shared/log.h"
#include "master.h"

/* "unix:/path": a stale socket file is replaced, anything else kept */
static int
listen_open_unix(const char *path, uint16_t *bound)
{
	struct sockaddr_un	 sun;
	struct stat		 st;
	int			 fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		log_warnx("listen unix:%s: path too long", path);
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path));
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		(void)unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1) {
		log_warn("listen unix:%s: socket", path);
		return -1;
	}
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    listen(fd, SOMAXCONN) == -1) {
		log_warn("listen unix:%s", path);
		close(fd);
		return -1;
	}
	*bound = 0;
	return fd;
}

int
listen_open(const char *host, uint16_t port, uint16_t *bound)
{
	struct addrinfo		 hints, *res = NULL;
	struct sockaddr_storage	 ss;
	socklen_t		 sslen = sizeof(ss);
	char			 portstr[8];
	int			 fd = -1, on = 1, rc;

	if (strncmp(host, "unix:", 5) == 0)
		return listen_open_unix(host + 5, bound);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	if (strcmp(host, "localhost") != 0)
		hints.ai_flags |= AI_NUMERICHOST;
	(void)snprintf(portstr, sizeof(portstr), "%u", port);
	if ((rc = getaddrinfo(host, portstr, &hints, &res)) != 0) {
		log_warnx("listen %s:%u: %s", host, port, gai_strerror(rc));
		return -1;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
	if (fd == -1) {
		log_warn("listen %s:%u: socket", host, port);
		goto fail;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) == -1) {
		log_warn("listen %s:%u: setsockopt", host, port);
		goto fail;
	}
	if (bind(fd, res->ai_addr, res->ai_addrlen) == -1) {
		log_warn("listen %s:%u: bind", host, port);
		goto fail;
	}
	if (listen(fd, SOMAXCONN) == -1) {
		log_warn("listen %s:%u: listen", host, port);
		goto fail;
	}
	if (getsockname(fd, (struct sockaddr *)&ss, &sslen) == -1) {
		log_warn("listen %s:%u: getsockname", host, port);
		goto fail;
	}
	if (ss.ss_family == AF_INET6)
		*bound = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	else
		*bound = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	freeaddrinfo(res);
	return fd;
fail:
	if (fd != -1)
		close(fd);
	freeaddrinfo(res);
	return -1;
}
