/*
 * Helpers shared by the cmocka unit tests.  Include after <cmocka.h>.
 */
#ifndef VMCPD_UNIT_H
#define VMCPD_UNIT_H

#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

/* a JSON fixture, any value; a bad fixture fails the test */
static inline json_t *
jparse(const char *s)
{
	json_error_t	 e;
	json_t		*j;

	if ((j = json_loads(s, JSON_DECODE_ANY, &e)) == NULL)
		fail_msg("bad test JSON (%s): %s", e.text, s);
	return j;
}

/*
 * A new directory for a test's state, name.XXXXXX under $TMPDIR (a short
 * one) or /tmp, in dir: 0, or -1
 */
static inline int
unit_store_dir_make(const char *name, char *dir, size_t len)
{
	const char *tmp = getenv("TMPDIR");

	(void)snprintf(dir, len, "%s/%s.XXXXXX",
	    tmp != NULL && strlen(tmp) < 32 ? tmp : "/tmp", name);
	return mkdtemp(dir) == NULL ? -1 : 0;
}

/* a state directory made for a test, with its LMDB files, removed */
static inline void
unit_store_dir_remove(const char *dir)
{
	static const char *const files[] = { "data.mdb", "lock.mdb" };
	char	 path[256];
	size_t	 i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		(void)snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		(void)unlink(path);
	}
	(void)rmdir(dir);
}

/* a listening socket on 127.0.0.1 (nonblocking), its port in *port */
static inline int
unit_listen_loopback(uint16_t *port)
{
	struct sockaddr_in	 sin;
	socklen_t		 len = sizeof(sin);
	int			 fd;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0)) == -1 ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(fd, 8) == -1 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) == -1)
		fail_msg("listener");
	*port = ntohs(sin.sin_port);
	return fd;
}

/* a (blocking) client connected to 127.0.0.1:port */
static inline int
unit_connect_loopback(uint16_t port)
{
	struct sockaddr_in	 sin;
	int			 fd;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(port);
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1)
		fail_msg("client");
	return fd;
}

/* loop turns until *v reaches want, 5 s at most: 1 if it did */
static inline int
unit_loop_until(struct event_base *base, const int *v, int want)
{
	struct timespec	 ts = { 0, 1000 * 1000 };
	int		 i;

	for (i = 0; i < 5000 && *v < want; i++) {
		(void)event_base_loop(base, EVLOOP_NONBLOCK);
		if (*v < want)
			(void)nanosleep(&ts, NULL);
	}
	return *v >= want;
}

#endif
