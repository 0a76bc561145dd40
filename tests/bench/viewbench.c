/*
 * viewbench: what a view costs at scale (issue 11, item 5): the time
 * to build and store the view of B backends x T tools, and the heap a
 * worker holds for it after its first list.
 *
 *   make -f tests/bench/Makefile build/bench/viewbench
 *   build/bench/viewbench [backends [tools]]   (default 100 x 1000)
 *
 * The backends' lists are made up like real ones (a description, an
 * input schema with two properties, annotations); the view is resolved,
 * laid out and stored the way worker/view/view_store.c does, then read back the
 * way a worker answers its first tools/list (a header decoded, a page of
 * aggregation.pageSize's default copied out in place).  Wall time and
 * CPU time are printed: on a shared machine the CPU time is the figure.
 * Listing the backends and storing their raw lists are not in it.  A
 * measurement, not a test: the figures depend on the machine.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "shared/log.h"
#include "shared/store.h"
#include "worker/view/view.h"
#include "worker/view/view_layout.h"
#include "worker/view/view_read.h"

static uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* the machine is shared: CPU time says what the build costs */
static uint64_t
cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static json_t *
tools_make(size_t b, size_t n)
{
	json_t	*a = json_array();
	char	 name[64], desc[160];
	size_t	 i;

	for (i = 0; i < n; i++) {
		(void)snprintf(name, sizeof(name), "tool_%zu_%zu", b, i);
		(void)snprintf(desc, sizeof(desc), "Tool %zu of backend %zu: "
		    "does one thing with its two arguments and answers.", i,
		    b);
		json_array_append_new(a, json_pack("{s:s, s:s, s:{s:s, "
		    "s:{s:{s:s, s:s}, s:{s:s, s:i}}, s:[s]}, s:{s:b, s:b}}",
		    "name", name, "description", desc, "inputSchema", "type",
		    "object", "properties", "text", "type", "string",
		    "description", "what to echo", "count", "type", "integer",
		    "minimum", 0, "required", "text", "annotations",
		    "readOnlyHint", 1, "openWorldHint", 0));
	}
	return a;
}

static size_t
heap_used(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}


/* as worker/view/view_store.c: the layout, then the small header */
static json_t *held;

static int
viewbench_store(struct store *st, struct view_input *in, size_t n,
    const struct view_clock *c)
{
	struct view_resolved	 vs;
	json_t			*hdr, *digests = json_object();
	char			*buf, *h;
	size_t			 len;
	uint64_t		 t0 = now_us(), t1, t2, t3, t4;

	if ((hdr = json_object()) == NULL || view_mark(hdr, in, n, c) == -1 ||
	    view_resolve(NULL, in, n, &vs) == -1)
		return -1;
	t1 = now_us();
	if (view_layout(&vs, 1, NULL, &buf, &len, digests) == -1)
		return -1;
	t2 = now_us();
	if (store_put(st, STORE_VIEWS, "vdata", 5, buf, len, c->vl_now +
	    600000, c->vl_now) == -1)
		return -1;
	json_object_set_new(hdr, "layout", json_string("vdata"));
	json_object_set(hdr, "digests", digests);
	h = json_dumps(hdr, JSON_COMPACT);
	if (store_put(st, STORE_VIEWS, "view", 4, h, strlen(h), c->vl_now +
	    600000, c->vl_now) == -1)
		return -1;
	t3 = now_us();
	free(h);
	free(buf);
	json_decref(hdr);
	json_decref(digests);
	view_resolved_free(&vs);
	t4 = now_us();
	printf("  resolved %llu ms, laid out %llu ms, stored %llu ms "
	    "(%zu bytes), freed %llu ms\n",
	    (unsigned long long)(t1 - t0) / 1000,
	    (unsigned long long)(t2 - t1) / 1000,
	    (unsigned long long)(t3 - t2) / 1000, len,
	    (unsigned long long)(t4 - t3) / 1000);
	return 0;
}

struct page_read {
	struct view_page_req	*pr_q;
	struct view_page	*pr_pg;
};

static int
page_cb(void *arg, const void *data, size_t len)
{
	struct page_read *r = arg;

	return view_layout_page(data, len, r->pr_q, r->pr_pg);
}

/* a worker's list: the header once per view, the page in place */
static int
viewbench_first_list(struct store *st)
{
	struct store_rec	 rec;
	struct view_page_req	 q;
	struct view_page	 pg;
	struct page_read	 r = { &q, &pg };
	const char		*key;

	if (held == NULL) {
		if (store_get(st, STORE_VIEWS, "view", 4, store_now_ms(),
		    &rec) != 0)
			return -1;
		held = json_loadb(rec.sr_data, rec.sr_len, 0, NULL);
		store_rec_clear(&rec);
	}
	memset(&q, 0, sizeof(q));
	q.vq_kind = VIEW_KIND_TOOLS;
	q.vq_pagesize = 1000;	/* aggregation.pageSize's default */
	key = json_string_value(json_object_get(held, "layout"));
	if (key == NULL || store_read(st, STORE_VIEWS, key, strlen(key),
	    store_now_ms(), page_cb, &r) != 0 || pg.vp_count == 0)
		return -1;
	view_page_clear(&pg);
	return 0;
}

int
main(int argc, char *argv[])
{
	struct view_input	*in;
	struct view_clock	 c;
	struct store		*st;
	char			 dir[] = "/tmp/viewbench.XXXXXX";
	size_t			 nb = 100, nt = 1000, i;
	uint64_t		 t0, t1, t2, c0;

	if (argc > 1)
		nb = strtoul(argv[1], NULL, 10);
	if (argc > 2)
		nt = strtoul(argv[2], NULL, 10);
	log_init(0, 0);
	if (mkdtemp(dir) == NULL || store_open(&st, dir, 8ULL << 30, 64,
	    0) == -1) {
		fprintf(stderr, "cannot open a store in %s\n", dir);
		return 1;
	}
	if ((in = calloc(nb, sizeof(*in))) == NULL)
		return 1;
	for (i = 0; i < nb; i++) {
		char *name;

		if (asprintf(&name, "be%03zu", i) == -1)
			return 1;
		in[i].vi_backend = name;
		in[i].vi_tools = tools_make(i, nt);
		in[i].vi_listed_ms = store_now_ms();
	}
	c.vl_now = store_now_ms();
	c.vl_ttl = 60000;
	c.vl_stale = 600000;
	c.vl_retry = 5000;

	t0 = now_us();
	c0 = cpu_us();
	if (viewbench_store(st, in, nb, &c) == -1)
		return 1;
	t1 = now_us();
	printf("%zu backends x %zu tools: built and stored in %llu ms "
	    "(%.2f us per tool), %llu ms of CPU\n", nb, nt,
	    (unsigned long long)(t1 - t0) / 1000, (double)(t1 - t0) /
	    (double)(nb * nt), (unsigned long long)(cpu_us() - c0) / 1000);
	{
		size_t h0 = heap_used();

		t1 = now_us();
		if (viewbench_first_list(st) == -1)
			return 1;
		t2 = now_us();
		printf("a worker's first tools/list: %llu us, heap held %zu "
		    "bytes (%.1f bytes per tool)\n", (unsigned long long)(t2 -
		    t1), heap_used() - h0, (double)(heap_used() - h0) /
		    (double)(nb * nt));
		t1 = now_us();
		if (viewbench_first_list(st) == -1)
			return 1;
		t2 = now_us();
		printf("a warm tools/list: %llu us\n",
		    (unsigned long long)(t2 - t1));
	}
	store_close(st);
	{
		char cmd[128];

		(void)snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		(void)system(cmd);
	}
	return 0;
}
