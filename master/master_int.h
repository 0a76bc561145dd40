/*
 * The master's private declarations, shared by master.c (its loop:
 * signals, timers, stop), master_gen.c (generations and their children:
 * spawn, reap, respawn, drain) and master_reload.c (SIGHUP's new
 * generation).
 */
#ifndef VMCPD_MASTER_INT_H
#define VMCPD_MASTER_INT_H

#include <sys/queue.h>
#include <sys/types.h>

#include <stdint.h>

struct config;
struct diag_slot;

#define RELOAD_READY_MS	15000	/* a new generation must be ready by then */
#define KILL_GRACE_MS	2000	/* after the drain deadline, SIGKILL */
#define HEALTHY_MS	10000	/* a worker up this long is not looping */

enum child_kind {
	CHILD_WORKER,
	CHILD_KEEPER,
	CHILD_BRIDGE,		/* slot: the backend's index */
	CHILD_BUILDER		/* the view builder */
};

enum child_state {
	CHILD_STARTING,
	CHILD_READY,
	CHILD_DRAINING
};

struct child {
	TAILQ_ENTRY(child)	 c_entry;
	pid_t			 c_pid;
	int			 c_fd;		/* channel; -1 after EOF */
	enum child_kind		 c_kind;
	enum child_state	 c_state;
	int			 c_slot;	/* worker slot, -1 keeper */
	unsigned int		 c_gen;
	uint64_t		 c_started_ms;
	uint64_t		 c_kill_ms;	/* SIGKILL then; 0 = never */
	int			 c_killed;	/* SIGKILLed as an operator asked */
};

/* respawn bookkeeping of one slot of a generation */
struct slot {
	pid_t		 sl_pid;	/* 0 when not running */
	int		 sl_crashes;	/* consecutive quick deaths */
	uint64_t	 sl_respawn_ms;	/* 0 = nothing scheduled */
	int		 sl_fatal;	/* exited deliberately: leave dead */
};

struct gen {
	unsigned int	 g_num;
	struct config	*g_conf;
	int		 g_listen_fd;
	uint16_t	 g_port;
	int		 g_diag_fd;	/* diagnostics listener; -1: none */
	struct diag_slot *g_stats;	/* shared with the workers */
	int		 g_nworkers;
	struct slot	*g_workers;
	struct slot	 g_keeper;
	struct slot	 g_builder;
	struct slot	*g_bridges;	/* one per backend; used: stdio, sse */
	uint64_t	 g_deadline_ms;	/* pending reload must be ready by */
};


TAILQ_HEAD(master_child_list, child);

extern struct master_child_list	 master_children;
extern struct gen		*master_cur, *master_next;
extern int			 master_stopping;
extern int			 master_exit_status;

/* master_gen.c */
struct gen *gen_new(struct config *, int listen_fd, uint16_t port);
void	 gen_free(struct gen *, const struct gen *keep);
int	 gen_nbridges(const struct gen *);
int	 gen_spawn_all(struct gen *);
int	 master_spawn(struct gen *, enum child_kind, int slot);
void	 master_reap(void);
void	 master_drain_gen(unsigned int gen, uint64_t drain_ms);

/* master_reload.c */
int	 master_diag_open(const struct config *, int main_fd);
void	 master_reload(void);
int	 gen_ready(const struct gen *);
void	 master_reload_commit(void);
void	 master_reload_abort(const char *why);

/* master.c */
void	 master_stop(int);
int	 master_write_port(const struct config *, uint16_t);
int	 master_check_store(const struct config *);

#endif
