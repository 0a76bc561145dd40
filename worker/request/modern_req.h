/*
 * The Modern edge's request in flight, shared by modern.c (dispatch,
 * answers) and modern_params.c (the request as the backend gets it).
 */
#ifndef VMCPD_MODERN_REQ_H
#define VMCPD_MODERN_REQ_H

#include <jansson.h>

#include "proto/proto.h"
#include "worker/process/process.h"
#include "worker/upstream/upstream_result.h"
#include "worker/process/request.h"
#include "shared/task_rec.h"

/*
 * What the hot path's call (its spans in the request's r_fast) adds in
 * 2026-07-28, read off a scan of the body (proto_modern_scan_call)
 * instead of a tree; modern_fast_load() parses the body when the call
 * turns out to need the tree.
 */
struct modern_fast {
	const char	*mf_meta;	/* params._meta */
	size_t		 mf_metalen;
	char		*mf_name;	/* params.name, a copy (r_fast's) */
	const char	*mf_nameval;	/* its value's text, quotes and all */
	const char	*mf_caps;	/* _meta's clientCapabilities */
	size_t		 mf_capslen;
	char		*mf_own;	/* the backend's name if renamed */
};

struct mreq {
	struct request			 m_r;		/* no params if r_fast */
	struct modern_fast		 m_fast;
	int				 m_log;		/* logLevel was set */
	char				 m_needcap[32];	/* lacked by client */
	char				 m_refused[64];	/* method refused */
	/* tasks/get, update, cancel: the client's task id, which the
	 * backend's answer maps back to */
	char				 m_task[TASK_ID_LEN + 1];
	/* the capabilities a backend without the tasks extension gets */
	json_t				*m_bcaps;
	/* its task record, read (task_store.h) */
	int				 m_tstate;	/* MODERN_TASK_* */
	int				 m_tgot;	/* 0, STORE_NOTFOUND, -1 */
	struct task_rec			*m_trec;
	/* a new task: its id, and the result held while it is written */
	char				 m_tnew[TASK_ID_LEN + 1];
	json_t				*m_tresult;
	/* a composite run as a task, until its client is answered */
	struct ctask			*m_ctask;
};
#define MODERN_TASK_NONE	0
#define MODERN_TASK_WAIT	1	/* the record asked for */
#define MODERN_TASK_GOT		2

/* why vmcpd answers a tasks/get, update or cancel itself: the error */
struct modern_task_err {
	int		 te_status;	/* HTTP */
	int		 te_code;
	char		 te_msg[300];
	json_t		*te_data;	/* the caller's to send, or NULL */
};

/* modern.c */
/* an error (data taken), or a result (taken) of resultType type: the
 * request answered */
void	 modern_error(struct mreq *, int status, int code,
	    const char *message, json_t *data);
void	 modern_result_out(struct mreq *, json_t *result, const char *type);
/* the hot path's call as a tree, from the body parsed again; a call
 * routed already gets its backend params (-1: it cannot) */
int	 modern_fast_load(struct mreq *);

/* modern_task.c: the tasks extension (2026-07-28) */
/* this request declared the extension (its tree or the hot path's text) */
int	 modern_task_declared(struct mreq *);
/* the view's backend advertises the extension */
int	 modern_task_backend(json_t *view, const char *backend);
/* -32021's data: requiredCapabilities naming the extension */
json_t	*modern_task_required(void);
/* tasks/get|update|cancel resolved to the task's backend and params
 * (r_be, r_bparams): 0; -1 and te, the answer; 1: waiting for the
 * record (the resolve phase runs again) */
int	 modern_task_route(struct mreq *, struct modern_task_err *te);
#define MODERN_TASK_ANSWERED	2	/* modern_task_route(): by vmcpd */
/* a backend's result of type: a tasks/get, update or cancel answer's
 * id mapped back (0: go on); a new task's mapped, 1: result taken, the
 * answer is modern_task_answer()'s once the record is written; -1 with
 * err (the client gets an internal error) */
int	 modern_task_result(struct mreq *, json_t *result, const char *type,
	    char *err, size_t errlen);

/* modern.c: a new task's answer (result taken; NULL: err) */
void	 modern_task_answer(struct mreq *, json_t *result, const char *err);
/* modern.c: vmcpd's own answer to a tasks/get, update or cancel
 * (result taken, of resultType complete; NULL: the error code and
 * message) */
void	 modern_task_local(struct mreq *, json_t *result, int code,
	    const char *message);

/* modern_ctask.c: tasks/get, update, cancel of a composite's task
 * (m_trec a TASK_WORKFLOW record of this principal, authorized): 0,
 * answered (maybe later); -1 and te */
int	 modern_ctask(struct mreq *, struct modern_task_err *te);

/* modern_consent.c: the credential phase's consent (rc_consent) and a
 * retry's answer to it (rc_consent_answer), pipeline.h */
void	 modern_consent(struct request *, const char *id, const char *url,
	    int round);
int	 modern_consent_answer(struct request *, char *id, size_t idlen,
	    int *round);

/* modern_params.c */
/* the request in the revision the backend is met in (create_request
 * of struct upstream_cbs) */
int	 modern_params(void *arg, enum proto_era, struct upstream_params *);

#endif /* VMCPD_MODERN_REQ_H */
