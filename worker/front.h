/*
 * The HTTP front (front.c): the server set up on the inherited listener,
 * the routes.
 */
#ifndef VMCPD_FRONT_H
#define VMCPD_FRONT_H

#include <sys/types.h>
#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
struct config;
struct worker;

/* front.c: the HTTP server (httpd.c) set up, the routes */
int	 front_init(struct worker *);
void	 front_drain(struct worker *, int stop);
size_t	 front_nconns(struct worker *);
void	 front_free(struct worker *);

#endif
