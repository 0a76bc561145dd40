/*
 * application/x-www-form-urlencoded (RFC 6749 appendix B, as HTML's
 * form encoding): the bodies vmcpd posts to an authorization server
 * (introspection, RFC 7662; token exchange, RFC 8693) and the client
 * credentials of RFC 6749 2.3.1.  Pure: no I/O, no global state.
 */
#ifndef VMCPD_FORM_H
#define VMCPD_FORM_H

#include <stddef.h>

/* s form-encoded, malloc'd; NULL: no memory */
char	*proto_form_escape(const char *s);

/*
 * name=value appended to the form in *body (*len bytes, NUL-terminated;
 * *body NULL and *len 0 to start one), '&' between pairs; value is
 * encoded, name is written as it is.  0, or -1: no memory, the form
 * untouched.
 */
int	 proto_form_add(char **body, size_t *len, const char *name,
	    const char *value);

#endif
