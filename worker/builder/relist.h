/*
 * The builder's relists of backends whose lists changed (relist.c).
 */
#ifndef VMCPD_RELIST_H
#define VMCPD_RELIST_H

struct worker;

/* backend's lists changed: listed again, now or when its gate says */
void	 relist_backend(struct worker *, const char *backend);
void	 relist_free(void);

#endif
