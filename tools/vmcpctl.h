/*
 * vmcpctl's commands beyond the store's dump and stat: what an
 * operator needs in an incident (vmcpctl_ops.c).
 */
#ifndef VMCPD_VMCPCTL_H
#define VMCPD_VMCPCTL_H

#include <stdint.h>

#include <jansson.h>

struct config;
struct store;
struct store_rec;

/* daemon.diagnostics of the configuration read, "" when unset */
extern char	ctl_diag_addr[];

void	ctl_usage(void);
/* only -j (JSON) takes options, then nargs arguments: 0, *json set;
 * else 1 (the usage said) */
int	ctl_opt_json(int, char *[], int *json, int nargs);
int	ctl_status(struct store *, int, char *[]);
int	ctl_status_show(int, char *[]);
int	ctl_reprobe(struct store *, int, char *[]);
int	ctl_rebuild_views(struct store *, int, char *[]);
int	ctl_drop_sessions(struct store *, int, char *[]);
/* o's string member key, or dflt */
const char *ctl_str(const json_t *o, const char *key, const char *dflt);
/* an RFC 3339 UTC stamp with milliseconds, or null for 0 */
json_t	*ctl_time(uint64_t ms);
/* vmcpctl_links.c: users' linked accounts; links revoke writes */
int	ctl_links(struct store *, int, char *[]);
int	ctl_links_writes(int, char *[]);
void	ctl_links_config(const struct config *);
/* a stored link's clear part, for dump (never a token) */
json_t	*ctl_link_value(const struct store_rec *);
/*
 * sessionStorage redis of the configuration read (vmcpctl_links.c): a
 * connection, authenticated and on its db (NULL: none configured, or
 * not reached); "host:port" and the key prefix (NULL: none configured).
 */
struct redisContext;
struct redisContext *ctl_redis_open(void);
const char *ctl_redis_where(const char **prefix);
/* vmcpctl_pins.c: pinned definitions; approve, approve-all, reject
 * write */
int	ctl_pins(struct store *, int, char *[]);
int	ctl_pins_writes(int, char *[]);

#endif
