/*
 * libFuzzer: a 2026-07-28 consent round's requestState as a client
 * sends it back (worker/link/link_state.c), attacker-controlled: only
 * what this key sealed opens, to a consent id of its shape and a round
 * in range; a state sealed here opens for its own scope and backend
 * only, and not once a byte of it is changed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/link_rec.h"
#include "shared/seal.h"
#include "worker/link/link.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define NOW	1800000000000ULL
#define ID	CONSENT_PREFIX "0123456789abcdef0123456789abcdef"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int	 keyed;
	char		 s[LINK_STATE_MAX + 1], id[CONSENT_ID_LEN + 1];
	char		 scope[32];
	size_t		 n, i;
	int		 round;

	if (!keyed) {
		if (seal_key_generate() == -1)
			abort();
		keyed = 1;
	}
	/* as sent: never opens (nothing but this key's seal does) */
	n = size < LINK_STATE_MAX ? size : LINK_STATE_MAX;
	memcpy(s, data, n);
	s[n] = '\0';
	if (link_state_open(s, "scope", "github", NOW, id, sizeof(id),
	    &round) == 0)
		abort();
	/* sealed here over a scope of the input's: opens for it alone,
	 * and one byte changed (where the input says) does not */
	n = size < sizeof(scope) - 1 ? size : sizeof(scope) - 1;
	for (i = 0; i < n; i++)
		scope[i] = (char)(data[i] % 26 + 'a');
	scope[n] = '\0';
	if (link_state_seal(scope, "github", ID, 1 + (int)(size % LINK_ROUNDS),
	    NOW, s, sizeof(s)) == -1)
		abort();
	if (link_state_open(s, scope, "github", NOW, id, sizeof(id),
	    &round) == -1 || strcmp(id, ID) != 0 ||
	    round != 1 + (int)(size % LINK_ROUNDS))
		abort();
	if (link_state_open(s, scope, "jira", NOW, id, sizeof(id),
	    &round) == 0)
		abort();
	if (size > 0) {
		i = sizeof(LINK_STATE_PREFIX) - 1 + data[0] %
		    (strlen(s) - sizeof(LINK_STATE_PREFIX) + 1);
		s[i] = s[i] == 'f' ? 'e' : 'f';
		if (link_state_open(s, scope, "github", NOW, id, sizeof(id),
		    &round) == 0)
			abort();
	}
	return 0;
}
