/*
 * Composite-tool templates: the reference vMCP's Go text/template subset
 * ({{.params.x}}, {{.steps.id.output.f}}, {{json x}}, {{quote x}},
 * {{fromJson s}}, eq ne lt le gt ge and or not index, {{if}}{{else}}
 * {{end}}, pipelines), compiled once at load and evaluated against a
 * jansson context.  Unlike the reference, a missing key is an error and
 * a template that is one action alone yields the value itself, so an
 * integer stays an integer.
 */
#ifndef VMCPD_TEMPLATE_H
#define VMCPD_TEMPLATE_H

#include <stddef.h>

#include <jansson.h>

#define TMPL_SRC_MAX	65536		/* bytes of template source */
#define TMPL_DEPTH_MAX	64		/* nesting of (), if and calls */
#define TMPL_OUT_MAX	(1024 * 1024)	/* bytes of rendered text */
#define TMPL_ERR_MAX	256

struct tmpl;

/*
 * Compiles src (len bytes).  On error returns NULL, writes a message to
 * err and the 0-based byte offset of the error in src to *offp (if not
 * NULL).
 */
struct tmpl	*tmpl_compile(const char *src, size_t len, char *err,
		    size_t errlen, size_t *offp);
void		 tmpl_free(struct tmpl *);

/* 1 if src has no action at all: evaluating it yields the text itself */
int		 tmpl_is_literal(const struct tmpl *);

/*
 * Evaluates against ctx (an object: params, steps, forEach, workflow).
 * A template that is exactly one action yields that action's value; any
 * other yields a string.  Returns a new reference, or NULL with err set.
 */
json_t		*tmpl_eval(const struct tmpl *, json_t *ctx, char *err,
		    size_t errlen);

/* as tmpl_eval(), then a boolean: true, false or their text forms */
int		 tmpl_eval_bool(const struct tmpl *, json_t *ctx, int *,
		    char *err, size_t errlen);

/*
 * Calls fn for each field path that starts at the root of the context,
 * (".steps.fetch.output.title" gives "steps", "fetch", "output",
 * "title"); stops at the first non-zero return and returns it.
 */
int		 tmpl_walk_paths(const struct tmpl *,
		    int (*fn)(const char *const *, size_t, void *), void *);

#endif /* VMCPD_TEMPLATE_H */
