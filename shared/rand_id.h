/*
 * Ids vmcpd hands out (a task's, a consent's): a fixed prefix and
 * lower-case hex of random bytes (OpenSSL's RAND_bytes), and the check
 * that a string a client sends back is shaped as one.  Pure but for
 * the random bytes.
 */
#ifndef VMCPD_RAND_ID_H
#define VMCPD_RAND_ID_H

#include <stddef.h>

/* prefix and 2 * nbytes hex digits into out (room for them and a NUL):
 * 0, or -1 (no randomness) */
int	 rand_id_new(const char *prefix, size_t nbytes, char *out);
/* s[0..len) is prefix and 2 * nbytes lower-case hex digits: 1, else 0 */
int	 rand_id_valid(const char *prefix, size_t nbytes, const char *s,
	    size_t len);

#endif /* VMCPD_RAND_ID_H */
