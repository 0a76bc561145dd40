/*
 * Driver of tests/interop/links_web.test.mjs's expiry case: writes a
 * pending consent, as a worker's link_consent_new() does, into a
 * running vmcpd's state directory (LMDB is shared between processes),
 * sealed under the daemon's sessionStorage.sealKeyFile, expiring in
 * ttl_ms; prints its id.  The test then walks it past its expiry.
 *
 *	drive_consent statedir keyfile scope iss sub backend ttl_ms
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/config_sstore.h"
#include "shared/link_rec.h"
#include "shared/seal.h"
#include "shared/store.h"
#include "worker/process/process.h"
#include "worker/state/link_store.h"

static int	 drive_rc = 1;

static void
drive_done(void *arg, int rc)
{
	(void)arg;
	drive_rc = rc == 0 ? 0 : 1;
}

static int
drive_key(const char *path)
{
	uint8_t	 key[SEAL_KEY_LEN];
	char	 text[256];
	size_t	 n;
	FILE	*f;

	if ((f = fopen(path, "r")) == NULL)
		return -1;
	n = fread(text, 1, sizeof(text), f);
	fclose(f);
	if (config_sstore_key_decode(text, n, key) == -1)
		return -1;
	return seal_key_set(key);
}

int
main(int argc, char *argv[])
{
	struct worker		 w;
	struct consent_rec	 cr;

	if (argc != 8) {
		fprintf(stderr, "usage: drive_consent statedir keyfile scope "
		    "iss sub backend ttl_ms\n");
		return 2;
	}
	memset(&w, 0, sizeof(w));
	memset(&cr, 0, sizeof(cr));
	if (drive_key(argv[2]) == -1 || consent_id_new(cr.cr_id) == -1 ||
	    store_open(&w.w_store, argv[1], 16 << 20, 126, 0) == -1)
		return 1;
	(void)snprintf(cr.cr_scope, sizeof(cr.cr_scope), "%s", argv[3]);
	(void)snprintf(cr.cr_iss, sizeof(cr.cr_iss), "%s", argv[4]);
	(void)snprintf(cr.cr_sub, sizeof(cr.cr_sub), "%s", argv[5]);
	(void)snprintf(cr.cr_backend, sizeof(cr.cr_backend), "%s", argv[6]);
	cr.cr_leg = CONSENT_LOGIN;
	cr.cr_created_ms = store_now_ms();
	cr.cr_expires_ms = cr.cr_created_ms + strtoull(argv[7], NULL, 10);
	if (link_store->ls_cput(&w, &cr, drive_done, NULL) == -1)
		drive_rc = 1;
	if (drive_rc == 0)
		printf("%s %llu\n", cr.cr_id,
		    (unsigned long long)cr.cr_expires_ms);
	store_close(w.w_store);
	return drive_rc;
}
