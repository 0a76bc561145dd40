/*
 * Whatever proto_json_members() accepts must be a JSON object to
 * jansson too (numbers out of jansson's range and keys holding \u0000,
 * valid JSON that jansson cannot hold, aside): the relay passes what
 * it accepts on to clients as it is.  A _meta text that
 * proto_meta_text_dropped() says goes whole must go whole by
 * proto_meta_strip() too: the relay drops it without a tree.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/meta.h"
#include "proto/jsonspan.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proto_span	 m[32];
	json_error_t		 err;
	json_t			*o;
	size_t			 n;

	if (proto_json_members((const char *)data, size, m, 32, &n) != 0)
		return 0;
	o = json_loadb((const char *)data, size, JSON_ALLOW_NUL, &err);
	if (o == NULL && strstr(err.text, "overflow") == NULL &&
	    strstr(err.text, "too big") == NULL &&
	    strstr(err.text, "NUL byte in object key") == NULL)
		abort();
	if (o != NULL && !json_is_object(o))
		abort();
	if (o != NULL && proto_meta_text_dropped((const char *)data, size)) {
		proto_meta_strip(o);
		if (json_object_size(o) != 0)
			abort();
	}
	json_decref(o);
	return 0;
}
