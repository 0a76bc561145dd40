/*
 * Wake-ups between workers (wake.h): the datagram codec, this worker's
 * wake socket, and sending to one worker or to all the others.
 */
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/paths.h"
#include "worker/process/wake.h"

static const struct config	*wake_conf;
static pid_t			 wake_pid;
static int			 wake_fd = -1;	/* bound: receives */
static int			 wake_out = -1;	/* unbound: sends */
static struct event		*wake_ev;
static wake_handler		 wake_cb;
static void			*wake_arg;
static char			 wake_path[sizeof(((struct sockaddr_un *)0)->
				    sun_path)];

/*
 * Every type takes a; *b says whether it takes b: 0 never, 1 always, 2
 * maybe.  -1 for a type that is none of ours.
 */
static int
wake_arity(int type, int *b)
{
	switch (type) {
	case WAKE_MRTR:
	case WAKE_RESUBSCRIBE:
	case WAKE_VIEW_READY:
		*b = 0;
		return 0;
	case WAKE_STREAM:
	case WAKE_LISTEN:
	case WAKE_VIEW_BUILD:
		*b = 2;
		return 0;
	case WAKE_CANCEL:
		*b = 1;
		return 0;
	default:
		return -1;
	}
}

size_t
wake_encode(enum wake_type type, const char *a, const char *b,
    unsigned char *buf)
{
	struct wake_hdr	h;
	size_t		alen, blen;
	int		bwant;

	if (wake_arity(type, &bwant) == -1 || a == NULL)
		return 0;
	if (b != NULL && *b == '\0')
		b = NULL;
	if ((b != NULL && bwant == 0) || (b == NULL && bwant == 1))
		return 0;
	alen = strlen(a);
	blen = b != NULL ? strlen(b) : 0;
	if (alen == 0 || alen > WAKE_ARG_MAX || blen > WAKE_ARG_MAX - alen)
		return 0;
	memset(&h, 0, sizeof(h));
	h.wh_version = WAKE_VERSION;
	h.wh_type = (uint8_t)type;
	h.wh_alen = (uint16_t)alen;
	h.wh_blen = (uint16_t)blen;
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), a, alen);
	if (blen > 0)
		memcpy(buf + sizeof(h) + alen, b, blen);
	return sizeof(h) + alen + blen;
}

int
wake_decode(const unsigned char *buf, size_t len, struct wake_msg *m)
{
	struct wake_hdr	 h;
	const char	*a, *b;
	int		 bwant;

	if (len < sizeof(h) || len > WAKE_MSG_MAX)
		return -1;
	memcpy(&h, buf, sizeof(h));
	if (h.wh_version != WAKE_VERSION || h.wh_pad != 0 ||
	    wake_arity(h.wh_type, &bwant) == -1 ||
	    (size_t)h.wh_alen + h.wh_blen != len - sizeof(h) ||
	    h.wh_alen == 0 || (h.wh_blen > 0 && bwant == 0) ||
	    (h.wh_blen == 0 && bwant == 1))
		return -1;
	a = (const char *)buf + sizeof(h);
	b = a + h.wh_alen;
	/* the arguments become C strings: no NUL inside */
	if (memchr(a, '\0', h.wh_alen) != NULL ||
	    memchr(b, '\0', h.wh_blen) != NULL)
		return -1;
	m->wm_type = (enum wake_type)h.wh_type;
	memcpy(m->wm_a, a, h.wh_alen);
	m->wm_a[h.wh_alen] = '\0';
	memcpy(m->wm_b, b, h.wh_blen);
	m->wm_b[h.wh_blen] = '\0';
	return 0;
}

static void
wake_on_read(evutil_socket_t fd, short ev, void *arg)
{
	unsigned char	 buf[WAKE_MSG_MAX + 1];	/* + 1: too long is seen */
	struct wake_msg	 m;
	ssize_t		 n;

	(void)ev;
	(void)arg;
	while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		if (wake_decode(buf, (size_t)n, &m) == -1) {
			log_debug("dropped a malformed wake-up (%zd bytes)", n);
			continue;
		}
		wake_cb(wake_arg, &m);
	}
}

int
wake_init(struct event_base *base, const struct config *conf, pid_t self,
    wake_handler cb, void *arg)
{
	struct sockaddr_un sun;

	wake_conf = conf;
	wake_pid = self;
	wake_cb = cb;
	wake_arg = arg;
	if ((wake_out = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1)
		log_warn("wake-up socket");
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (paths_wake_socket(conf, self, wake_path, sizeof(wake_path)) ==
	    -1) {
		/* too long a path: streams still get events on each tick */
		log_warnx("state directory path too long for a wake socket; "
		    "GET streams are served every keep-alive tick instead");
		wake_path[0] = '\0';
		return 0;
	}
	memcpy(sun.sun_path, wake_path, strlen(wake_path));
	(void)unlink(wake_path);
	if ((wake_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1 ||
	    bind(wake_fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		log_warn("wake socket %s", wake_path);
		if (wake_fd != -1)
			close(wake_fd);
		wake_fd = -1;
		wake_path[0] = '\0';
		return 0;
	}
	if ((wake_ev = event_new(base, wake_fd, EV_READ | EV_PERSIST,
	    wake_on_read, NULL)) == NULL || event_add(wake_ev, NULL) == -1)
		return -1;
	return 0;
}

const char *
wake_self_path(void)
{
	return wake_path;
}

void
wake_send(pid_t pid, enum wake_type type, const char *a, const char *b)
{
	struct sockaddr_un	sun;
	unsigned char		buf[WAKE_MSG_MAX];
	size_t			len;

	if (wake_out == -1 || wake_conf == NULL)
		return;
	if ((len = wake_encode(type, a, b, buf)) == 0) {
		log_warnx("a wake-up of type %d does not fit", (int)type);
		return;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (paths_wake_socket(wake_conf, pid, sun.sun_path,
	    sizeof(sun.sun_path)) == -1)
		return;
	/* a dead worker's socket refuses: nothing is lost */
	(void)sendto(wake_out, buf, len, MSG_DONTWAIT,
	    (struct sockaddr *)&sun, sizeof(sun));
}

/* "w-PID.sock": the pid, else 0 */
static pid_t
wake_sock_pid(const char *name)
{
	char	*end;
	long	 pid;

	if (strncmp(name, "w-", 2) != 0 || name[2] < '1' || name[2] > '9')
		return 0;
	errno = 0;
	pid = strtol(name + 2, &end, 10);
	if (errno != 0 || pid <= 0 || strcmp(end, ".sock") != 0)
		return 0;
	return (pid_t)pid;
}

void
wake_broadcast(enum wake_type type, const char *a, const char *b)
{
	struct dirent	*de;
	DIR		*d;
	pid_t		 pid;

	if (wake_conf == NULL ||
	    (d = opendir(wake_conf->cf_state_dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL)
		if ((pid = wake_sock_pid(de->d_name)) != 0 && pid != wake_pid)
			wake_send(pid, type, a, b);
	closedir(d);
}

void
wake_free(void)
{
	if (wake_ev != NULL)
		event_free(wake_ev);
	wake_ev = NULL;
	if (wake_fd != -1) {
		close(wake_fd);
		(void)unlink(wake_path);
	}
	wake_fd = -1;
	if (wake_out != -1)
		close(wake_out);
	wake_out = -1;
}
