/*
 * libFuzzer: the readers of a view's layout (worker/view/view_layout.c) on
 * arbitrary bytes.  The layout is written by vmcpd itself, but it is
 * read where it lies in the map: no reader may go out of bounds or
 * crash whatever the bytes are.
 *
 * Input: one byte for the page size and the kind, a NUL-ended name
 * (the route, item or template asked for), then the layout's bytes;
 * each page is read whole and through a filter.  Bytes
 * that begin with the layout's magic reach the tables' checks.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "worker/view/view.h"
#include "worker/view/view_layout.h"
#include "worker/view/view_read.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* a filter per principal (worker/auth/authz.c) that keeps every other item */
static int
fuzz_filter(void *arg, enum view_kind k, const char *key, size_t klen,
    const char *text, size_t tlen)
{
	unsigned int *n = arg;

	(void)k;
	if (klen > 0)
		(void)key[klen - 1];
	if (tlen > 0)
		(void)text[tlen - 1];
	return (*n)++ & 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct view_page_req	 q;
	struct view_page	 pg;
	struct view_route	 r;
	const uint8_t		*nul;
	char			*name, *lay, *text;
	size_t			 nlen, llen, pre, n1, n2, tlen;
	unsigned int		 kept = 0;
	uint64_t		 id;
	int			 k;

	if (size < 2 || (nul = memchr(data + 1, '\0', size - 1)) == NULL)
		return 0;
	nlen = (size_t)(nul - (data + 1));
	llen = size - nlen - 2;
	/* the magic and table count put in front when asked, to go on to
	 * the tables; exact copies: ASan sees a read past either */
	pre = (data[0] & 0x80) ? 8 : 0;
	if ((name = malloc(nlen + 1)) == NULL ||
	    (lay = malloc(pre + llen + 1)) == NULL) {
		free(name);
		return 0;
	}
	memcpy(name, data + 1, nlen + 1);
	memcpy(lay, "VMV1\x0c\0\0\0", pre);
	memcpy(lay + pre, nul + 1, llen);
	llen += pre;
	(void)view_layout_id(lay, llen, &id);
	memset(&q, 0, sizeof(q));
	q.vq_pagesize = (size_t)(data[0] & 0x0f) + 1;
	q.vq_modern = (data[0] & 0x10) != 0;
	q.vq_offset = (size_t)((data[0] >> 5) & 3);
	q.vq_last = (data[0] & 0x40) ? name : NULL;
	/* a shard's last key even at its end (worker/view/view_store.c) */
	q.vq_more = q.vq_modern;
	for (k = 0; k < VIEW_KIND_N; k++) {
		q.vq_kind = (enum view_kind)k;
		q.vq_filter = NULL;
		if (view_layout_page(lay, llen, &q, &pg) == 0)
			view_page_clear(&pg);
		q.vq_filter = fuzz_filter;
		q.vq_farg = &kept;
		if (view_layout_page(lay, llen, &q, &pg) == 0)
			view_page_clear(&pg);
		(void)view_layout_counts(lay, llen, (enum view_kind)k, &n1,
		    &n2);
		if (view_layout_item(lay, llen, (enum view_kind)k, name, nlen,
		    &text, &tlen) == 0)
			free(text);
	}
	for (k = VIEW_ROUTE_TOOL; k <= VIEW_ROUTE_RESOURCE; k++)
		if (view_layout_route(lay, llen, (enum view_route_kind)k, name,
		    nlen, &r) == 0)
			view_route_clear(&r);
	if (view_layout_template(lay, llen, name, 0, &r) == 0)
		view_route_clear(&r);
	if (view_layout_template(lay, llen, name, 1, &r) == 0)
		view_route_clear(&r);
	free(name);
	free(lay);
	return 0;
}
