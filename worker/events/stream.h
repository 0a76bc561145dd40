/*
 * Standalone GET streams of Legacy sessions (stream.c).
 */
#ifndef VMCPD_STREAM_H
#define VMCPD_STREAM_H

#include <sys/types.h>
#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
struct httpd_req;
struct session;
struct worker;

/* a POST stream's tag: hex digits (its event ids are "<tag>-<seq>") */
#define STREAM_TAG_LEN	16

/* stream.c: standalone GET streams and delivery to them */
void	 stream_get(struct worker *, struct httpd_req *,
	    struct session *);
int	 stream_publish(struct worker *, const char *sid, const json_t *msg);
/* a POST stream vmcpd ended before its response: its events kept */
int	 stream_post_tag(char tag[STREAM_TAG_LEN + 1]);
int	 stream_post_publish(struct worker *, const char *sid,
	    const char *tag, const char *data, size_t len);
void	 stream_init(struct worker *);
void	 stream_terminate(struct worker *, const char *sid);
void	 stream_drain(struct worker *);
void	 stream_wake(struct worker *, const char *sid, const char *tag);
void	 stream_free_all(struct worker *);

#endif
