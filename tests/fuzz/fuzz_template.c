/*
 * libFuzzer: tmpl_compile() and tmpl_eval() on arbitrary bytes.
 *
 * Input: a template, a NUL, a JSON context (without the NUL, or when the
 * rest is no JSON object, a fixed context).  Checked: compiling twice
 * agrees; a compile error has an offset within the input; a template
 * without "{{" compiles, is literal and evaluates to its own text; an
 * evaluation yields a value or an error message, never both or neither;
 * the paths walked are non-empty.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/template.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char FIXED[] = "{\"params\":{\"a\":1,\"s\":\"x\",\"l\":[1,2]},"
    "\"steps\":{\"x\":{\"output\":{\"text\":\"{\\\"id\\\":2}\"}}},"
    "\"forEach\":{\"item\":{},\"index\":0},\"workflow\":{\"id\":\"w\"}}";

static int
walk(const char *const *segs, size_t n, void *arg)
{
	size_t	 i;

	(void)arg;
	for (i = 0; i < n; i++)
		if (segs[i][0] == '\0')
			abort();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char		 err[TMPL_ERR_MAX], err2[TMPL_ERR_MAX];
	struct tmpl	*t, *t2;
	json_t		*ctx, *v;
	const char	*src = (const char *)data;
	size_t		 len, off = SIZE_MAX, off2 = SIZE_MAX;

	len = strnlen(src, size);
	ctx = NULL;
	if (len < size)
		ctx = json_loadb(src + len + 1, size - len - 1, 0, NULL);
	if (!json_is_object(ctx)) {
		json_decref(ctx);
		if ((ctx = json_loads(FIXED, 0, NULL)) == NULL)
			abort();
	}
	t = tmpl_compile(src, len, err, sizeof(err), &off);
	t2 = tmpl_compile(src, len, err2, sizeof(err2), &off2);
	if ((t == NULL) != (t2 == NULL))
		abort();
	if (t == NULL) {
		if (off > len || off != off2 || strcmp(err, err2) != 0 ||
		    err[0] == '\0')
			abort();
		if (memmem(src, len, "{{", 2) == NULL && len <= TMPL_SRC_MAX)
			abort();
		goto done;
	}
	if (tmpl_walk_paths(t, walk, NULL) != 0)
		abort();
	err[0] = '\0';
	v = tmpl_eval(t, ctx, err, sizeof(err));
	if ((v == NULL) == (err[0] == '\0'))
		abort();
	if (memmem(src, len, "{{", 2) == NULL) {
		/* literal text; not UTF-8 is the one error */
		if (!tmpl_is_literal(t))
			abort();
		if (v != NULL && (!json_is_string(v) ||
		    json_string_length(v) != len ||
		    memcmp(json_string_value(v), src, len) != 0))
			abort();
	}
	json_decref(v);
done:
	tmpl_free(t);
	tmpl_free(t2);
	json_decref(ctx);
	return 0;
}
