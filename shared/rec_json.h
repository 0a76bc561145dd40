/*
 * The members of the store's JSON records (link_rec.c, task_rec.c,
 * pin_rec.c), read bounded: what a damaged store or a foreign Redis
 * holds is never trusted.  Pure.
 */
#ifndef VMCPD_REC_JSON_H
#define VMCPD_REC_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* string member key copied into dst[max + 1]: no NUL inside, empty
 * only if may_empty; 0, or -1 */
int	 rec_json_copy(json_t *o, const char *key, char *dst, size_t max,
	    int may_empty);
/* a stamp: an integer from 0; 0, or -1 */
int	 rec_json_stamp(json_t *o, const char *key, uint64_t *out);

#endif /* VMCPD_REC_JSON_H */
