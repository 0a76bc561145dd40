/*
 * The diagnostics listener (diag.c): /status and /metrics.
 */
#ifndef VMCPD_DIAG_H
#define VMCPD_DIAG_H

#include <sys/types.h>
#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
struct evbuffer;
struct worker;

/* diag.c: the diagnostics listener, /status and /metrics */
int	 diag_init(struct worker *);
void	 diag_drain(struct worker *);
void	 diag_free(struct worker *);
/* a metric family's HELP and TYPE lines */
int	 diag_family(struct evbuffer *, const char *name, const char *type,
	    const char *help);
/* diag_op.c: the MCP operation duration histograms */
int	 diag_op_metrics(struct evbuffer *, const struct worker *);

#endif
