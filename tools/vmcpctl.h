/*
 * vmcpctl's commands beyond the store's dump and stat: what an
 * operator needs in an incident (vmcpctl_ops.c).
 */
#ifndef VMCPD_VMCPCTL_H
#define VMCPD_VMCPCTL_H

struct store;

/* daemon.diagnostics of the configuration read, "" when unset */
extern char	ctl_diag_addr[];

void	ctl_usage(void);
int	ctl_status(struct store *, int, char *[]);
int	ctl_status_show(int, char *[]);
int	ctl_reprobe(struct store *, int, char *[]);
int	ctl_rebuild_views(struct store *, int, char *[]);
int	ctl_drop_sessions(struct store *, int, char *[]);

#endif
