/*
 * libFuzzer: the store's record codec on arbitrary bytes (what a damaged
 * or foreign data.mdb could hold).  A record that decodes accounts for
 * every byte: header, group, payload; its payload is a NUL-terminated
 * copy, and encoding it again without the group gives the same header.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/store.h"
#include "shared/store_codec.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct store_rec	 rec;
	uint8_t			*buf;
	int			 n;

	if (store_rec_decode(data, size, &rec) == -1)
		return 0;
	if (rec.sr_glen > STORE_GROUP_MAX ||
	    STORE_HDR_LEN + rec.sr_glen + rec.sr_len != size ||
	    rec.sr_data == NULL || rec.sr_data[rec.sr_len] != '\0' ||
	    memcmp(rec.sr_data, data + STORE_HDR_LEN + rec.sr_glen,
	    rec.sr_len) != 0)
		abort();
	if ((buf = malloc(STORE_HDR_LEN + rec.sr_len)) == NULL)
		abort();
	n = store_rec_encode(buf, STORE_HDR_LEN + rec.sr_len, rec.sr_type,
	    rec.sr_flags, rec.sr_expires_ms, rec.sr_updated_ms, rec.sr_data,
	    rec.sr_len);
	if (n != (int)(STORE_HDR_LEN + rec.sr_len) ||
	    memcmp(buf, data, 4) != 0 || buf[4] != 0 ||
	    memcmp(buf + 5, data + 5, STORE_HDR_LEN - 5) != 0)
		abort();
	free(buf);
	store_rec_clear(&rec);
	return 0;
}
