/*
 * Helpers shared by the cmocka unit tests.  Include after <cmocka.h>.
 */
#ifndef VMCPD_UNIT_H
#define VMCPD_UNIT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/*
 * A new directory for a test's state, name.XXXXXX under $TMPDIR (a short
 * one) or /tmp, in dir: 0, or -1
 */
static inline int
unit_store_dir_make(const char *name, char *dir, size_t len)
{
	const char *tmp = getenv("TMPDIR");

	(void)snprintf(dir, len, "%s/%s.XXXXXX",
	    tmp != NULL && strlen(tmp) < 32 ? tmp : "/tmp", name);
	return mkdtemp(dir) == NULL ? -1 : 0;
}

/* a state directory made for a test, with its LMDB files, removed */
static inline void
unit_store_dir_remove(const char *dir)
{
	static const char *const files[] = { "data.mdb", "lock.mdb" };
	char	 path[256];
	size_t	 i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		(void)snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		(void)unlink(path);
	}
	(void)rmdir(dir);
}

#endif
