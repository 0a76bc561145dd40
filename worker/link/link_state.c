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
	static const char	 hex[] = "0123456789abcdef";
	uint8_t			 sealed[LINK_STATE_RAW];
	json_t			*o;
	char			*text;
	size_t			 n, i, pre = sizeof(LINK_STATE_PREFIX) - 1;
	int			 rc = -1;

	if ((o = json_pack("{s:s, s:s, s:s, s:i, s:I}", "s", scope, "b",
	    backend, "c", id, "n", round, "e",
	    (json_int_t)(now_ms + CONSENT_TTL_MS))) == NULL)
		return -1;
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (text == NULL)
		return -1;
	n = strlen(text) + SEAL_OVERHEAD;
	if (n <= sizeof(sealed) && pre + 2 * n < len &&
	    seal_data(LINK_STATE_AD, sizeof(LINK_STATE_AD) - 1, text,
	    strlen(text), sealed, n) == 0) {
		memcpy(out, LINK_STATE_PREFIX, pre);
		for (i = 0; i < n; i++) {
			out[pre + 2 * i] = hex[sealed[i] >> 4];
			out[pre + 2 * i + 1] = hex[sealed[i] & 0xf];
		}
		out[pre + 2 * n] = '\0';
		rc = 0;
	}
	free(text);
	return rc;
}

static int
link_state_nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int
link_state_open(const char *s, const char *scope, const char *backend,
    uint64_t now_ms, char *id, size_t idlen, int *round)
{
	uint8_t		 sealed[LINK_STATE_RAW];
	char		 text[LINK_STATE_RAW + 1];
	json_t		*o;
	const char	*hx, *ps, *pb, *pc;
	json_int_t	 e, n;
	size_t		 len, i, plen;
	int		 hi, lo, rc = -1;

	if (!link_state_ours(s))
		return -1;
	hx = s + sizeof(LINK_STATE_PREFIX) - 1;
	len = strlen(hx);
	if (len % 2 != 0 || len / 2 > sizeof(sealed) ||
	    len / 2 <= SEAL_OVERHEAD)
		return -1;
	for (i = 0; i < len / 2; i++) {
		if ((hi = link_state_nibble(hx[2 * i])) == -1 ||
		    (lo = link_state_nibble(hx[2 * i + 1])) == -1)
			return -1;
		sealed[i] = (uint8_t)(hi << 4 | lo);
	}
	if (seal_open(LINK_STATE_AD, sizeof(LINK_STATE_AD) - 1, sealed,
	    len / 2, (uint8_t *)text, sizeof(text) - 1, &plen) == -1)
		return -1;
	text[plen] = '\0';
	/* ours and intact from here: still checked as bound */
	if ((o = json_loads(text, 0, NULL)) == NULL)
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
