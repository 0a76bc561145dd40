/*
 * Helpers shared by the cmocka unit tests.  Include after <cmocka.h>.
 */
#ifndef VMCPD_UNIT_H
#define VMCPD_UNIT_H

#include <jansson.h>

/* a JSON fixture, any value; a bad fixture fails the test */
static inline json_t *
jparse(const char *s)
{
	json_error_t	 e;
	json_t		*j;

	if ((j = json_loads(s, JSON_DECODE_ANY, &e)) == NULL)
		fail_msg("bad test JSON (%s): %s", e.text, s);
	return j;
}

#endif
