/*
 * The tasks part of a subscriptions/listen stream (listen_tasks.c): the
 * notifications/tasks of the task ids a 2026-07-28 client asked for
 * (params.notifications.taskIds, the tasks extension
 * io.modelcontextprotocol/tasks), heard on a listen stream of the
 * client's own to each backend concerned and relayed with vmcpd's ids.
 */
#ifndef VMCPD_LISTEN_TASKS_H
#define VMCPD_LISTEN_TASKS_H

#include <stddef.h>

#include <jansson.h>

struct httpd_req;
struct worker;
struct listen_tasks;

/* why a listen's task ids are refused before its stream starts */
struct ltask_err {
	int	 le_status;	/* HTTP */
	int	 le_code;	/* JSON-RPC */
	char	 le_msg[300];
	json_t	*le_data;	/* or NULL; the caller's */
};

/* a relayed notification's params, without the subscription id (taken) */
typedef void	(*ltask_send_cb)(void *arg, json_t *params);
/* the ids looked up: 0, or -1 with e filled */
typedef void	(*ltask_done_cb)(void *arg, int rc, struct ltask_err *e);

/*
 * params.notifications of a listen and its clientCapabilities: *ltp
 * NULL if it names no taskIds; -1 refused (e: not an array of strings,
 * -32602; more than sessions.maxSubscriptions, -32602; the extension
 * not declared, -32021 with requiredCapabilities).
 */
int	 listen_tasks_new(struct worker *, const json_t *want,
	    const json_t *caps, struct listen_tasks **ltp,
	    struct ltask_err *e);
/*
 * Each id looked up (task_store.h) and kept if it is a live task of
 * req's principal whose backend is configured (any other is left out
 * of the acknowledgement, as an unknown one), authorized as the
 * tools/call of its tool on view (denied: the listen is refused as a
 * tasks/get would be); done once, at once or later.
 */
void	 listen_tasks_resolve(struct listen_tasks *, struct httpd_req *,
	    json_t *view, ltask_done_cb, void *arg);
/* the ids honoured (borrowed; an empty array if none) */
const json_t *listen_tasks_ids(const struct listen_tasks *);
/* a listen stream to each backend concerned, relayed to send */
void	 listen_tasks_open(struct listen_tasks *, ltask_send_cb, void *arg);
/* its backend streams closed, no callback after */
void	 listen_tasks_free(struct listen_tasks *);

#endif /* VMCPD_LISTEN_TASKS_H */
