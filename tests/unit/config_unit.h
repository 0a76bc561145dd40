/*
 * Helpers of the vmcpd.yaml unit tests (test_config*.c): one backend to
 * make a file whole, and loads expected to pass or to fail.  Include
 * after <cmocka.h> and shared/config.h.
 */
#ifndef VMCPD_CONFIG_UNIT_H
#define VMCPD_CONFIG_UNIT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BACKEND \
	"backends:\n" \
	"  - name: a\n" \
	"    url: http://127.0.0.1:3001/mcp\n" \
	"    transport: streamable-http\n"

static inline struct config *
load_ok(const char *yaml)
{
	struct config	*cf;
	char		 err[CONFIG_ERR_MAX];

	err[0] = '\0';
	cf = config_load_buffer("t.yaml", yaml, strlen(yaml), err,
	    sizeof(err));
	if (cf == NULL)
		fail_msg("unexpected error: %s", err);
	return cf;
}

/* the load fails; its message into err (expect: for the failure's) */
static inline void
load_err(const char *yaml, const char *expect, char *err, size_t errlen)
{
	struct config	*cf;

	memset(err, 'x', errlen);
	err[errlen - 1] = '\0';
	cf = config_load_buffer("t.yaml", yaml, strlen(yaml), err, errlen);
	if (cf != NULL) {
		config_free(cf);
		fail_msg("loaded, expected: %s", expect);
	}
}

/* the load fails with exactly this message */
static inline void
load_bad(const char *yaml, const char *msg)
{
	char	 err[CONFIG_ERR_MAX];

	load_err(yaml, msg, err, sizeof(err));
	assert_string_equal(err, msg);
}

/* cf's warnings (config_warn(), as with -n), as one string (freed by
 * the caller) */
static inline char *
warnings(const struct config *cf)
{
	char	*s = NULL;
	size_t	 len = 0;
	FILE	*f;

	assert_non_null(f = open_memstream(&s, &len));
	config_warn(cf, f, 1);
	assert_int_equal(fclose(f), 0);
	return s;
}

#endif /* VMCPD_CONFIG_UNIT_H */
