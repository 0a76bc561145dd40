/*
 * The requestState of a 2026-07-28 consent round (link.h): what the
 * client echoes on its retry, attacker-controlled (MCP 2026-07-28,
 * Multi Round-Trip Requests: state that influences authorization is
 * integrity protected and bound to the principal, with a short
 * expiry).  Sealed with the daemon's key (shared/seal.h, AES-256-GCM,
 * the same key on every worker and, with sealKeyFile, every node), so
 * a retry may land anywhere; in hex after LINK_STATE_PREFIX.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "shared/link_rec.h"
#include "shared/seal.h"
#include "worker/link/link.h"

/* bound as the seal's associated data: no other sealed record opens
 * as a state */
#define LINK_STATE_AD	"vmcpd consent requestState v1"
#define LINK_STATE_RAW	((LINK_STATE_MAX - sizeof(LINK_STATE_PREFIX)) / 2)

int
link_state_ours(const char *s)
{
	return s != NULL && strncmp(s, LINK_STATE_PREFIX,
	    sizeof(LINK_STATE_PREFIX) - 1) == 0;
}

int
link_state_seal(const char *scope, const char *backend, const char *id,
    int round, uint64_t now_ms, char *out, size_t len)
{
	json_t	*o;
	char	*hex;
	size_t	 pre = sizeof(LINK_STATE_PREFIX) - 1;
	int	 rc = -1;

	if ((o = json_pack("{s:s, s:s, s:s, s:i, s:I}", "s", scope, "b",
	    backend, "c", id, "n", round, "e",
	    (json_int_t)(now_ms + CONSENT_TTL_MS))) == NULL)
		return -1;
	hex = seal_json_hex(LINK_STATE_AD, o, LINK_STATE_RAW);
	json_decref(o);
	if (hex != NULL && pre + strlen(hex) < len) {
		memcpy(out, LINK_STATE_PREFIX, pre);
		memcpy(out + pre, hex, strlen(hex) + 1);
		rc = 0;
	}
	free(hex);
	return rc;
}

int
link_state_open(const char *s, const char *scope, const char *backend,
    uint64_t now_ms, char *id, size_t idlen, int *round)
{
	json_t		*o;
	const char	*ps, *pb, *pc;
	json_int_t	 e, n;
	int		 rc = -1;

	if (!link_state_ours(s))
		return -1;
	/* ours and intact once opened: still checked as bound */
	if ((o = seal_json_open_hex(LINK_STATE_AD, s +
	    sizeof(LINK_STATE_PREFIX) - 1, LINK_STATE_RAW)) == NULL)
		return -1;
	if (json_unpack(o, "{s:s, s:s, s:s, s:I, s:I}", "s", &ps, "b", &pb,
	    "c", &pc, "n", &n, "e", &e) == 0 && strcmp(ps, scope) == 0 &&
	    strcmp(pb, backend) == 0 && consent_id_valid(pc) &&
	    e > 0 && (uint64_t)e > now_ms && n >= 1 && n <= LINK_ROUNDS &&
	    (size_t)snprintf(id, idlen, "%s", pc) < idlen) {
		*round = (int)n;
		rc = 0;
	}
	json_decref(o);
	return rc;
}
