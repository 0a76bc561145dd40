/*
 * Closing the backend sessions of ended client sessions
 * (backend_session_close.c).
 */
#ifndef VMCPD_BACKEND_SESSION_CLOSE_H
#define VMCPD_BACKEND_SESSION_CLOSE_H

#include <sys/types.h>
#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
struct config_backend;
struct session;
struct worker;

/* backend_session_close.c: closing the backend sessions of ended client sessions */
int	 bclose_init(struct worker *);
void	 bclose_free(void);
void	 bclose_opened(struct worker *, const struct config_backend *);
void	 bclose_forget(struct worker *, const struct config_backend *);
void	 bclose_session(struct worker *, const struct session *);
void	 bclose_replaced(struct worker *, const struct config_backend *,
	    const char *sid, const char *version);
/* a scope's backend session no record names any more (evicted, or an
 * open that lost a race): closed once its calls are over */
void	 bclose_unheld(struct worker *, const struct config_backend *,
	    const char *sid, const char *version);

#endif
