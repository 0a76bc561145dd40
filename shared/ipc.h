/*
 * The control channel between the master and each child: a
 * SOCK_SEQPACKET socketpair carrying small fixed-form messages.
 */
#ifndef VMCPD_IPC_H
#define VMCPD_IPC_H

#include <stddef.h>
#include <stdint.h>

enum ipc_type {
	IPC_READY = 1,	/* child -> master: initialised, serving */
	IPC_DRAIN,	/* master -> child: stop accepting, finish, exit */
	IPC_STOP,	/* master -> child: exit now */
	IPC_REOPEN	/* master -> child: reopen log files */
};

#define IPC_PAYLOAD_MAX	480
/* IPC_DRAIN's payload on a stop: no generation follows to serve clients */
#define IPC_DRAIN_STOP	"stop"

struct ipc_msg {
	uint32_t	im_type;
	uint32_t	im_len;
	char		im_data[IPC_PAYLOAD_MAX];
};

int	ipc_pair(int fds[2]);	/* nonblocking, close-on-exec */
int	ipc_send(int fd, enum ipc_type, const void *data, size_t len);
/* 1 got one, 0 nothing now (EAGAIN), -1 closed or error */
int	ipc_recv(int fd, struct ipc_msg *);

#endif
