/*
 * The pure pieces around a composite's run (composite_io.c): its
 * parameters checked, its result, its schemas and annotations.
 */
#ifndef VMCPD_COMPOSITE_IO_H
#define VMCPD_COMPOSITE_IO_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "shared/composite.h"

/*
 * composite_io.c.  composite_params(): the client's arguments checked
 * against parameters with defaults applied (a new object), or NULL and
 * err naming the argument (the caller's -32602).
 */
json_t		*composite_params(const struct composite *, json_t *args,
		    char *err, size_t errlen);
/* the CallToolResult of a finished run's context: structuredContent
 * plus the same as one JSON text item; NULL and err if a required
 * output has no value */
json_t		*composite_result(const struct composite *, json_t *ctx,
		    char *err, size_t errlen);
int		 composite_type_ok(const char *type, const json_t *);
/* v against a JSON Schema (the subset composite_params() checks),
 * defaults filled in; 0, or -1 and err */
int		 composite_schema_check(const json_t *schema, json_t *v,
		    char *err, size_t errlen);
size_t		 composite_json_depth(const json_t *);
size_t		 composite_json_size(const json_t *);	/* compact text */
/* a step's expanded arguments coerced in place to its tool's
 * inputSchema (a string where it wants an integer, number, boolean,
 * object or array is parsed if it can be), hidden tools included (the
 * reference coerces advertised tools only) */
void		 composite_coerce_args(json_t *args, const json_t *schema);
json_t		*composite_input_schema(const struct composite *);
json_t		*composite_output_schema(const struct composite *);	/* or NULL */
/*
 * The advertised annotations: the safety floor over the tool steps
 * (forEach inner steps included; lookup gives a step tool's annotations
 * as a new reference, NULL when unknown), the explicit ones merged over
 * it; NULL and err when an explicit hint claims safer than the floor.
 */
json_t		*composite_annotations(const struct composite *,
		    json_t *(*lookup)(void *, const char *tool), void *,
		    char *err, size_t errlen);

#endif /* VMCPD_COMPOSITE_IO_H */
