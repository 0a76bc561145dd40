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
/* an RFC 3339 UTC stamp with milliseconds, or null for 0 */
json_t	*ctl_time(uint64_t ms);
/* vmcpctl_links.c: users' linked accounts; links revoke writes */
int	ctl_links(struct store *, int, char *[]);
int	ctl_links_writes(int, char *[]);
void	ctl_links_config(const struct config *);
/* a stored link's clear part, for dump (never a token) */
json_t	*ctl_link_value(const struct store_rec *);

#endif
