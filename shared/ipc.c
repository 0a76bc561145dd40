#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "ipc.h"

int
ipc_pair(int fds[2])
{
	return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0, fds);
}

int
ipc_send(int fd, enum ipc_type type, const void *data, size_t len)
{
	struct ipc_msg	m;
	ssize_t		n;

	if (len > IPC_PAYLOAD_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	memset(&m, 0, sizeof(m));
	m.im_type = type;
	m.im_len = (uint32_t)len;
	if (len > 0)
		memcpy(m.im_data, data, len);
	do {
		n = send(fd, &m, offsetof(struct ipc_msg, im_data) + len,
		    MSG_NOSIGNAL);
	} while (n == -1 && errno == EINTR);
	return n == -1 ? -1 : 0;
}

int
ipc_recv(int fd, struct ipc_msg *m)
{
	ssize_t n;

	do {
		n = recv(fd, m, sizeof(*m), 0);
	} while (n == -1 && errno == EINTR);
	if (n == -1)
		return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -1;
	if (n == 0)
		return -1;
	if ((size_t)n < offsetof(struct ipc_msg, im_data) ||
	    m->im_len != (size_t)n - offsetof(struct ipc_msg, im_data)) {
		errno = EPROTO;
		return -1;
	}
	return 1;
}
