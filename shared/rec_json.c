/*
 * The members of the store's JSON records, read bounded (rec_json.h).
 */
#include <string.h>

#include <jansson.h>

#include "shared/rec_json.h"

int
rec_json_copy(json_t *o, const char *key, char *dst, size_t max,
    int may_empty)
{
	json_t		*v = json_object_get(o, key);
	const char	*s = json_string_value(v);
	size_t		 n;

	if (s == NULL || (n = json_string_length(v)) > max ||
	    strlen(s) != n || (n == 0 && !may_empty))
		return -1;
	memcpy(dst, s, n + 1);
	return 0;
}

int
rec_json_stamp(json_t *o, const char *key, uint64_t *out)
{
	json_t	*v = json_object_get(o, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -1;
	*out = (uint64_t)json_integer_value(v);
	return 0;
}
