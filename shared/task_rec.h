/*
 * A task's record in the store's tasks db (the tasks extension,
 * io.modelcontextprotocol/tasks, of MCP 2026-07-28): the task id vmcpd
 * hands a client is its own, and the record maps it to the backend
 * that made the task and the backend's own id, with whose it is (the
 * identity scope, as a workflow handle's owner) and the tool that made
 * it (a tasks/get, update or cancel is authorized as that tool's
 * call).  Written by
 * worker/request/modern_task.c, dumped by vmcpctl.  Pure: no I/O.
 */
#ifndef VMCPD_TASK_REC_H
#define VMCPD_TASK_REC_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define TASK_PREFIX		"vmcpd-t-"
#define TASK_RAND_BYTES		16	/* 128 random bits */
#define TASK_ID_LEN		(8 + 32)	/* prefix, lower-case hex */
#define TASK_OWNER_MAX		64
#define TASK_NAME_MAX		128	/* a backend's or a tool's name */
#define TASK_BID_MAX		256	/* the backend's task id */
/* a composite's task's cancel mark: the id and this, beside its record
 * (worker/state/task_store.h) */
#define TASK_MARK_SUFFIX	"/cancel"
/* a task whose backend gave no ttlMs (null): kept this long */
#define TASK_TTL_DEFAULT_MS	(24ULL * 60 * 60 * 1000)
/* and no task longer than this, whatever its backend says */
#define TASK_TTL_MAX_MS		(7ULL * 24 * 60 * 60 * 1000)

/*
 * A composite tool run as a task (worker/composite/composite_task.c):
 * its backend is TASK_WORKFLOW, its tool the composite, its "backend's
 * id" the run's id (or, while it waits for the client's input, the
 * workflow handle it is suspended on), and vmcpd keeps its state in
 * the record: the status, the stamps, the runner's lease (a working
 * task whose lease ran out lost its worker) and the outcome.
 */
#define TASK_WORKFLOW		":composite"	/* COMPOSITE_ROUTE */
enum task_status {
	TASK_ST_NONE = 0,	/* a backend's task: the backend knows */
	TASK_ST_WORKING,
	TASK_ST_INPUT,		/* input_required */
	TASK_ST_COMPLETED,
	TASK_ST_FAILED,
	TASK_ST_CANCELLED
};
/* the largest record read back (a workflow's result is in it) */
#define TASK_REC_MAX		(4U * 1024 * 1024)

struct task_rec {
	char	tr_owner[TASK_OWNER_MAX + 1];	/* "" anonymous */
	char	tr_backend[TASK_NAME_MAX + 1];
	char	tr_tool[TASK_NAME_MAX + 1];	/* as the client named it */
	char	tr_bid[TASK_BID_MAX + 1];	/* the backend's task id */
	/* a workflow's (TASK_WORKFLOW) state; NONE for a backend's */
	enum task_status	 tr_status;
	uint64_t		 tr_created_ms;
	uint64_t		 tr_updated_ms;
	uint64_t		 tr_lease_ms;	/* working: the runner's */
	uint64_t		 tr_ttl_ms;
	/* completed: the result; failed: the JSON-RPC error object;
	 * input_required: the inputRequests (owned: task_rec_clear()) */
	json_t			*tr_out;
	/* not encoded: ts_get saw a cancel asked (task_store.h) */
	int			 tr_cancel;
};

/* the record's payload, one line of JSON (malloc'd; NULL: too long or
 * no memory); a workflow's state is in it */
char	*task_rec_encode(const struct task_rec *, size_t *len);
/* a payload read back: 0, or -1 if it is no task record */
int	 task_rec_decode(const void *data, size_t len, struct task_rec *);
/* tr_out dropped (the rest is plain data) */
void	 task_rec_clear(struct task_rec *);
/* "working", ... "cancelled" (NULL for TASK_ST_NONE) */
const char *task_status_name(enum task_status);
/*
 * A workflow's task as a 2026-07-28 client sees it (tasks extension,
 * DetailedTask; a CreateTaskResult is one too): its status at now (a
 * cancel asked of a live one: cancelled; working past its runner's
 * lease: failed, its worker gone), the stamps as RFC 3339 UTC,
 * ttlMs, pollIntervalMs, and by status its result, error or
 * inputRequests.  NULL: no memory.
 */
#define TASK_POLL_MS		1000
#define TASK_LOST_MESSAGE	"Internal error: the worker running the " \
				"workflow stopped"
json_t	*task_rec_detailed(const struct task_rec *, const char *id,
	    uint64_t now_ms);
/* the status task_rec_detailed() shows at now */
enum task_status task_rec_status(const struct task_rec *, uint64_t now_ms);
/* TASK_PREFIX and 32 lower-case hex digits */
int	 task_id_valid(const char *id, size_t len);
/* a new one, of TASK_RAND_BYTES random bytes: 0, or -1 (no randomness) */
int	 task_id_new(char id[TASK_ID_LEN + 1]);
/* how long a task is kept, from its backend's ttlMs (NULL or null:
 * TASK_TTL_DEFAULT_MS; at most TASK_TTL_MAX_MS) */
uint64_t task_ttl_ms(const json_t *ttl);
/*
 * What vmcpctl dump tasks shows of a record: the id's first characters
 * only (the whole id is what a client polls with), the owner's scope, the
 * backend, the tool, the backend's id's start (a composite's: its
 * status); a cancel mark shows as one; a record that is no task's
 * shows its key's start.
 */
#define TASK_DUMP_ID	14
json_t	*task_rec_dump(const void *key, size_t klen, const void *data,
	    size_t len);

#endif /* VMCPD_TASK_REC_H */
