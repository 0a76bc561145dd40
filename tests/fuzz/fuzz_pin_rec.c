/*
 * libFuzzer: the pinned definitions' records and digest
 * (shared/pin_rec.c) on arbitrary bytes: what a damaged store or a
 * foreign Redis could hold, and what a backend could list.  A record
 * that decodes has every string bounded and NUL-ended and a state that
 * agrees with its change, and encodes again to a record that decodes
 * alike, whose line says "state":"pinned" only if it is; a definition
 * that digests has a bounded name and a 64-digit hash of its text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "shared/pin_rec.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static int
text_same(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

static void
fuzz_digest(const uint8_t *data, size_t size)
{
	char		 name[PIN_NAME_MAX + 1], hash[PIN_HASH_LEN + 1];
	char		 h2[PIN_HASH_LEN + 1];
	char		*text;
	json_t		*o, *again;
	json_error_t	 je;
	int		 k;

	if ((o = json_loadb((const char *)data, size, 0, &je)) == NULL)
		return;
	for (k = 0; k < PIN_NKINDS; k++) {
		if (pin_digest((enum pin_kind)k, o, name, hash, &text) == -1) {
			if (text != NULL)
				abort();
			continue;
		}
		if (text == NULL || strlen(text) > PIN_TEXT_MAX ||
		    strlen(name) == 0 || strlen(name) > PIN_NAME_MAX ||
		    strlen(hash) != PIN_HASH_LEN ||
		    strspn(hash, "0123456789abcdef") != PIN_HASH_LEN)
			abort();
		/* the canonical text is its own canonical text */
		if ((again = json_loads(text, 0, &je)) == NULL ||
		    pin_digest((enum pin_kind)k, again, name, h2, NULL) != 0 ||
		    strcmp(hash, h2) != 0)
			abort();
		json_decref(again);
		free(text);
	}
	json_decref(o);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pin_rec	 pr, back;
	char		*s;
	size_t		 len;

	if (pin_rec_decode(data, size, &pr) == 0) {
		if (strlen(pr.pr_backend) == 0 ||
		    strlen(pr.pr_backend) > PIN_BACKEND_MAX ||
		    strlen(pr.pr_name) > PIN_NAME_MAX ||
		    strlen(pr.pr_hash) != PIN_HASH_LEN ||
		    (pr.pr_state == PIN_PINNED) != (pr.pr_new[0] == '\0') ||
		    (pr.pr_text != NULL && strlen(pr.pr_text) > PIN_TEXT_MAX) ||
		    (s = pin_rec_encode(&pr, &len)) == NULL)
			abort();
		/* pin_db_list_changes() tells a pin by this alone */
		if ((pr.pr_state == PIN_PINNED) != (memmem(s, len,
		    ",\"state\":\"pinned\",", 18) != NULL))
			abort();
		if (pin_rec_decode(s, len, &back) != 0 ||
		    strcmp(pr.pr_backend, back.pr_backend) != 0 ||
		    strcmp(pr.pr_name, back.pr_name) != 0 ||
		    strcmp(pr.pr_hash, back.pr_hash) != 0 ||
		    strcmp(pr.pr_new, back.pr_new) != 0 ||
		    pr.pr_kind != back.pr_kind ||
		    pr.pr_state != back.pr_state ||
		    pr.pr_pinned_ms != back.pr_pinned_ms ||
		    pr.pr_new_ms != back.pr_new_ms ||
		    !text_same(pr.pr_text, back.pr_text) ||
		    !text_same(pr.pr_new_text, back.pr_new_text))
			abort();
		free(s);
		pin_rec_clear(&back);
		(void)pin_rec_decide(&pr, size & 1, (size >> 1) & 1, 1);
		pin_rec_clear(&pr);
	} else if (pr.pr_text != NULL || pr.pr_new_text != NULL)
		abort();
	fuzz_digest(data, size);
	return 0;
}
