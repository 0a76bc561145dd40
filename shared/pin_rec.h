/*
 * Pinned definitions (aggregation.pinning): the first definition vmcpd
 * sees of each backend tool, prompt and resource template is pinned by
 * the SHA-256 of its canonical text; a later, different one is a
 * pending change an operator approves or rejects (vmcpctl pins, the
 * console).  These are the records and the digest; where they live is
 * worker/state/pin_store.h.  Pure: no I/O.
 */
#ifndef VMCPD_PIN_REC_H
#define VMCPD_PIN_REC_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define PIN_BACKEND_MAX		128	/* a backend's name */
#define PIN_NAME_MAX		256	/* a tool's, prompt's or template's */
#define PIN_HASH_LEN		64	/* SHA-256, lower-case hex */
#define PIN_TEXT_MAX		(256 * 1024)	/* a canonical definition */

enum pin_kind {
	PIN_TOOL = 0,
	PIN_PROMPT,
	PIN_TEMPLATE,		/* a resource template: named by uriTemplate */
	PIN_NKINDS
};

enum pin_state {
	PIN_PINNED = 0,		/* served as pinned */
	PIN_PENDING,		/* pr_new differs from the pin: awaits a word */
	PIN_REJECTED		/* pr_new was refused: withheld until the
				 * backend serves the pinned one again or a
				 * newer one (pending anew) */
};

/*
 * One pinned definition, keyed (backend, kind, name).  The texts are
 * the canonical definitions (pin_digest()), malloc'd, NULL when absent
 * (pr_new_text with PIN_PINNED); pin_rec_clear() frees them.
 */
struct pin_rec {
	char		 pr_backend[PIN_BACKEND_MAX + 1];
	enum pin_kind	 pr_kind;
	char		 pr_name[PIN_NAME_MAX + 1];
	enum pin_state	 pr_state;
	char		 pr_hash[PIN_HASH_LEN + 1];	/* the pin */
	char		*pr_text;
	uint64_t	 pr_pinned_ms;		/* first seen, or approved */
	char		 pr_new[PIN_HASH_LEN + 1];	/* "" when pinned */
	char		*pr_new_text;
	uint64_t	 pr_new_ms;		/* the change first seen */
};

/* "tool", "prompt", "template"; and back: 0, or -1 */
const char	*pin_kind_name(enum pin_kind);
int		 pin_kind_parse(const char *, enum pin_kind *);
const char	*pin_state_name(enum pin_state);	/* "pinned", ... */

/*
 * A definition as a backend listed it (an item of tools/list,
 * prompts/list or resources/templates/list): its name into name (the
 * tool's or prompt's name, the template's uriTemplate), its canonical
 * text (malloc'd into *text if text is not NULL: the members that reach
 * a model -- name, title, description, inputSchema, outputSchema,
 * annotations for a tool; name, title, description, arguments for a
 * prompt; uriTemplate, name, title, description, mimeType for a
 * template -- serialized with sorted keys, compact, no _meta) and its
 * SHA-256 in hex.  0, or -1: not such an item (no name), a name past
 * PIN_NAME_MAX, a text past PIN_TEXT_MAX, no memory.
 */
int	 pin_digest(enum pin_kind, const json_t *item,
	    char name[PIN_NAME_MAX + 1], char hash[PIN_HASH_LEN + 1],
	    char **text);

/*
 * The codec (shared/pin_rec.c), fuzzed (tests/fuzz/fuzz_pin_rec.c): one
 * JSON object, malloc'd, *len set (NULL: no memory); decode: 0, or -1
 * if it is no such record (every string bounded, nothing read past
 * len); the decoded record's texts are the caller's (pin_rec_clear()).
 */
char	*pin_rec_encode(const struct pin_rec *, size_t *len);
int	 pin_rec_decode(const void *, size_t, struct pin_rec *);
void	 pin_rec_clear(struct pin_rec *);

/*
 * An operator's word on one record (pure; pin_db_decide() and Redis
 * use it): approve makes the change the pin, reject marks it rejected.
 * all: approve-all or its reject, which touch pending changes only.  1
 * if rec changed, 0 if there was nothing to decide.
 */
int	 pin_rec_decide(struct pin_rec *, int approve, int all,
	    uint64_t now_ms);

/* the record's key, "<backend>|<kind>|<name>": its length, or -1 */
#define PIN_KEY_MAX	(PIN_BACKEND_MAX + 10 + PIN_NAME_MAX)
int	 pin_key(char key[PIN_KEY_MAX + 1], const char *backend,
	    enum pin_kind, const char *name);

/*
 * With sessionStorage.provider redis, the fleet's pins (the worker's
 * pin_redis.c and vmcpctl pins): "<keyPrefix>pin:<backend>" a hash of
 * "<kind>|<name>" to a record as pin_rec_encode() writes it, and
 * "<keyPrefix>pinstamp:<backend>" a counter every decision bumps,
 * which each node's builder polls.  pin_redis_lua writes one record,
 * KEYS[1] the hash, KEYS[2] the stamp, ARGV[1] the op, ARGV[2] the
 * field, ARGV[3] the record:
 *   "put" (a node's check), ARGV[4] its pin's hash, ARGV[5] its state,
 *	ARGV[6] its change: written unless Redis holds another pin (another
 *	node's first pin wins) or a word on this very change; {1}, or
 *	{0, Redis's record} for the host's copy to take;
 *   "decide" (an operator's word), ARGV[4] the change decided on:
 *	written if Redis still holds that change pending or rejected (or
 *	nothing), and the stamp bumped: {1, stamp}; else {0, Redis's}.
 */
#define PIN_REDIS_KIND		"pin"
#define PIN_REDIS_STAMP		"pinstamp"
extern const char	pin_redis_lua[];

#endif /* VMCPD_PIN_REC_H */
