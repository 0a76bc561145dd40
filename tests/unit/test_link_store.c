/*
 * Unit tests for worker/state/link.c: per-user upstream accounts in this
 * host's store.  Links are written and read back sealed (the tokens
 * never in the clear at rest, the clear line vmcpctl shows), bound to
 * their key (moved, they do not open), lost with the seal key; a
 * consent is taken once (a replay finds nothing); link_credential()
 * gives "Bearer <token>" or a reason naming the backend.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared/config.h"
#include "shared/seal.h"
#include "shared/store.h"
#include "worker/process/process.h"
#include "worker/state/link_store.h"
#include "unit.h"

#define SCOPE	"0123456789abcdef0123456789abcdef"
#define TOKEN	"gho_s3cr3tAccess"
#define RTOKEN	"ghr_s3cr3tRefresh"

struct fixture {
	char		 f_dir[64];
	struct worker	 f_w;
	/* what the callbacks saw */
	int		 f_calls;
	int		 f_rc;
	struct link_rec	 f_lr;
	struct consent_rec f_cr;
};

static int
setup(void **state)
{
	struct fixture	*f;

	if ((f = calloc(1, sizeof(*f))) == NULL)
		return -1;
	if (seal_key_generate() == -1 ||
	    unit_store_dir_make("test_link_store", f->f_dir,
	    sizeof(f->f_dir)) == -1 ||
	    store_open(&f->f_w.w_store, f->f_dir, 16 << 20, 126, 0) == -1)
		return -1;
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture	*f = *state;

	store_close(f->f_w.w_store);
	unit_store_dir_remove(f->f_dir);
	free(f);
	return 0;
}

static void
on_done(void *arg, int rc)
{
	struct fixture	*f = arg;

	f->f_calls++;
	f->f_rc = rc;
}

static void
on_link(void *arg, int rc, const struct link_rec *lr)
{
	struct fixture	*f = arg;

	f->f_calls++;
	f->f_rc = rc;
	if (rc == 0)
		f->f_lr = *lr;
	else
		assert_null(lr);
}

static void
on_consent(void *arg, int rc, const struct consent_rec *cr)
{
	struct fixture	*f = arg;

	f->f_calls++;
	f->f_rc = rc;
	if (rc == 0)
		f->f_cr = *cr;
	else
		assert_null(cr);
}

static void
link_fill(struct link_rec *lr, const char *backend)
{
	memset(lr, 0, sizeof(*lr));
	(void)snprintf(lr->lr_backend, sizeof(lr->lr_backend), "%s", backend);
	(void)snprintf(lr->lr_iss, sizeof(lr->lr_iss), "https://idp.example");
	(void)snprintf(lr->lr_sub, sizeof(lr->lr_sub), "alice");
	lr->lr_linked_ms = store_now_ms();
	lr->lr_expires_ms = lr->lr_linked_ms + 3600 * 1000;
	(void)snprintf(lr->lr_access, sizeof(lr->lr_access), TOKEN);
	(void)snprintf(lr->lr_refresh, sizeof(lr->lr_refresh), RTOKEN);
}

/* the raw stored bytes of a link */
static struct store_rec
raw_link(struct fixture *f, const char *key)
{
	struct store_rec	 rec;

	memset(&rec, 0, sizeof(rec));
	assert_int_equal(store_get(f->f_w.w_store, STORE_LINKS, key,
	    strlen(key), store_now_ms(), &rec), 0);
	return rec;
}

static void
test_link_put_get(void **state)
{
	struct fixture		*f = *state;
	struct link_rec		 lr, shown;
	struct store_rec	 rec;
	const char		*nl;

	link_fill(&lr, "github");
	assert_int_equal(link_store->ls_put(&f->f_w, SCOPE, &lr, on_done, f),
	    0);
	assert_int_equal(f->f_calls, 1);
	assert_int_equal(f->f_rc, 0);
	assert_int_equal(link_store->ls_get(&f->f_w, SCOPE, "github",
	    on_link, f), 0);
	assert_int_equal(f->f_calls, 2);
	assert_int_equal(f->f_rc, 0);
	assert_memory_equal(&f->f_lr, &lr, sizeof(lr));

	/* at rest: no token in the clear; the clear line vmcpctl shows */
	rec = raw_link(f, SCOPE "|github");
	assert_null(memmem(rec.sr_data, rec.sr_len, TOKEN, strlen(TOKEN)));
	assert_null(memmem(rec.sr_data, rec.sr_len, RTOKEN, strlen(RTOKEN)));
	assert_non_null(nl = memchr(rec.sr_data, '\n', rec.sr_len));
	assert_int_equal(link_rec_decode(rec.sr_data, (size_t)(nl -
	    rec.sr_data), &shown), 0);
	assert_string_equal(shown.lr_sub, "alice");
	assert_string_equal(shown.lr_backend, "github");
	assert_int_equal(shown.lr_expires_ms, lr.lr_expires_ms);
	assert_string_equal(shown.lr_access, "");
	/* with a refresh token, kept without expiry */
	assert_int_equal(rec.sr_expires_ms, 0);

	/* moved under another key, it does not open */
	assert_int_equal(store_put(f->f_w.w_store, STORE_LINKS,
	    SCOPE "|gitlab", strlen(SCOPE "|gitlab"), rec.sr_data, rec.sr_len,
	    0, store_now_ms()), 0);
	free(rec.sr_data);
	assert_int_equal(link_store->ls_get(&f->f_w, SCOPE, "gitlab",
	    on_link, f), 0);
	assert_int_equal(f->f_rc, STORE_NOTFOUND);

	/* another principal has none */
	assert_int_equal(link_store->ls_get(&f->f_w,
	    "fedcba9876543210fedcba9876543210", "github", on_link, f), 0);
	assert_int_equal(f->f_rc, STORE_NOTFOUND);

	/* without a refresh token, gone when its access token expires */
	lr.lr_refresh[0] = '\0';
	assert_int_equal(link_store->ls_put(&f->f_w, SCOPE, &lr, on_done, f),
	    0);
	rec = raw_link(f, SCOPE "|github");
	assert_int_equal(rec.sr_expires_ms, lr.lr_expires_ms);
	free(rec.sr_data);

	/* dropped */
	assert_int_equal(link_store->ls_del(&f->f_w, SCOPE, "github",
	    on_done, f), 0);
	assert_int_equal(f->f_rc, 0);
	assert_int_equal(link_store->ls_get(&f->f_w, SCOPE, "github",
	    on_link, f), 0);
	assert_int_equal(f->f_rc, STORE_NOTFOUND);
	assert_int_equal(link_store->ls_del(&f->f_w, SCOPE, "github",
	    on_done, f), 0);
	assert_int_equal(f->f_rc, 0);
}

static void
test_link_credential(void **state)
{
	struct fixture		*f = *state;
	struct config_backend	 be;
	struct link_rec		 lr;
	char			 authz[LINK_TOKEN_MAX + 16], why[256];

	memset(&be, 0, sizeof(be));
	be.cb_name = "github";
	assert_int_equal(link_credential(&f->f_w, &be, SCOPE, authz,
	    sizeof(authz), why, sizeof(why)), -1);
	assert_string_equal(why, "backend github: this user's account there "
	    "is not linked (authorization_code), or its link could not be "
	    "read");
	assert_int_equal(link_credential(&f->f_w, &be, "", authz,
	    sizeof(authz), why, sizeof(why)), -1);
	assert_non_null(strstr(why, "backend github"));

	link_fill(&lr, "github");
	assert_int_equal(link_store->ls_put(&f->f_w, SCOPE, &lr, on_done, f),
	    0);
	assert_int_equal(link_credential(&f->f_w, &be, SCOPE, authz,
	    sizeof(authz), why, sizeof(why)), 0);
	assert_string_equal(authz, "Bearer " TOKEN);
	/* too small a buffer: no cut token */
	assert_int_equal(link_credential(&f->f_w, &be, SCOPE, authz, 10,
	    why, sizeof(why)), -1);
	assert_null(strstr(why, TOKEN));

	/* a new seal key (a restart without sealKeyFile): lost */
	assert_int_equal(seal_key_generate(), 0);
	assert_int_equal(link_credential(&f->f_w, &be, SCOPE, authz,
	    sizeof(authz), why, sizeof(why)), -1);
	assert_null(strstr(why, TOKEN));
}

static void
consent_fill(struct consent_rec *cr)
{
	memset(cr, 0, sizeof(*cr));
	assert_int_equal(consent_id_new(cr->cr_id), 0);
	(void)snprintf(cr->cr_scope, sizeof(cr->cr_scope), SCOPE);
	(void)snprintf(cr->cr_backend, sizeof(cr->cr_backend), "github");
	cr->cr_created_ms = store_now_ms();
	cr->cr_expires_ms = cr->cr_created_ms + CONSENT_TTL_MS;
	assert_int_equal(link_random(cr->cr_nonce, CONSENT_NONCE_LEN), 0);
	assert_int_equal(link_random(cr->cr_verifier, CONSENT_VERIFIER_LEN),
	    0);
}

static void
test_consent_once(void **state)
{
	struct fixture		*f = *state;
	struct consent_rec	 cr;
	struct store_rec	 rec;

	consent_fill(&cr);
	assert_int_equal(link_store->ls_cput(&f->f_w, &cr, on_done, f), 0);
	assert_int_equal(f->f_rc, 0);
	/* sealed whole: not even the verifier in the clear */
	memset(&rec, 0, sizeof(rec));
	assert_int_equal(store_get(f->f_w.w_store, STORE_CONSENTS, cr.cr_id,
	    strlen(cr.cr_id), store_now_ms(), &rec), 0);
	assert_null(memmem(rec.sr_data, rec.sr_len, cr.cr_verifier,
	    strlen(cr.cr_verifier)));
	assert_int_equal(rec.sr_expires_ms, cr.cr_expires_ms);
	free(rec.sr_data);
	/* read, not used up */
	assert_int_equal(link_store->ls_cget(&f->f_w, cr.cr_id, on_consent,
	    f), 0);
	assert_int_equal(f->f_rc, 0);
	assert_memory_equal(&f->f_cr, &cr, sizeof(cr));
	assert_int_equal(link_store->ls_cget(&f->f_w, cr.cr_id, on_consent,
	    f), 0);
	assert_int_equal(f->f_rc, 0);
	/* the next leg replaces it */
	cr.cr_leg = CONSENT_UPSTREAM;
	assert_int_equal(link_random(cr.cr_nonce, CONSENT_NONCE_LEN), 0);
	assert_int_equal(link_store->ls_cput(&f->f_w, &cr, on_done, f), 0);
	/* taken once: a replay finds nothing */
	assert_int_equal(link_store->ls_ctake(&f->f_w, cr.cr_id, on_consent,
	    f), 0);
	assert_int_equal(f->f_rc, 0);
	assert_memory_equal(&f->f_cr, &cr, sizeof(cr));
	assert_int_equal(link_store->ls_ctake(&f->f_w, cr.cr_id, on_consent,
	    f), 0);
	assert_int_equal(f->f_rc, STORE_NOTFOUND);
	assert_int_equal(link_store->ls_cget(&f->f_w, cr.cr_id, on_consent,
	    f), 0);
	assert_int_equal(f->f_rc, STORE_NOTFOUND);
	/* not an id of ours: refused before the store */
	assert_int_equal(link_store->ls_ctake(&f->f_w, "vmcpd-e-x",
	    on_consent, f), -1);
	/* one consent's sealed record under another's id does not open */
	consent_fill(&cr);
	assert_int_equal(link_store->ls_cput(&f->f_w, &cr, on_done, f), 0);
	memset(&rec, 0, sizeof(rec));
	assert_int_equal(store_get(f->f_w.w_store, STORE_CONSENTS, cr.cr_id,
	    strlen(cr.cr_id), store_now_ms(), &rec), 0);
	consent_fill(&cr);
	assert_int_equal(store_put(f->f_w.w_store, STORE_CONSENTS, cr.cr_id,
	    strlen(cr.cr_id), rec.sr_data, rec.sr_len, 0, store_now_ms()), 0);
	free(rec.sr_data);
	assert_int_equal(link_store->ls_ctake(&f->f_w, cr.cr_id, on_consent,
	    f), 0);
	assert_int_equal(f->f_rc, STORE_NOTFOUND);
}

/* two processes race for one consent: exactly one has it */
static void
test_consent_race(void **state)
{
	struct fixture		*f = *state;
	struct consent_rec	 cr;
	int			 i, got = 0, n, st;
	pid_t			 pid[4];

	for (n = 0; n < 20; n++) {
		consent_fill(&cr);
		assert_int_equal(link_store->ls_cput(&f->f_w, &cr, on_done, f),
		    0);
		for (i = 0; i < 4; i++) {
			if ((pid[i] = fork()) == 0) {
				struct worker	 w;

				memset(&w, 0, sizeof(w));
				f->f_rc = -1;
				if (store_open(&w.w_store, f->f_dir, 16 << 20,
				    126, 0) == -1)
					_exit(2);
				(void)link_store->ls_ctake(&w, cr.cr_id,
				    on_consent, f);
				_exit(f->f_rc == 0 ? 0 : 1);
			}
			assert_true(pid[i] > 0);
		}
		for (i = 0, got = 0; i < 4; i++) {
			assert_int_equal(waitpid(pid[i], &st, 0), pid[i]);
			assert_true(WIFEXITED(st));
			assert_int_not_equal(WEXITSTATUS(st), 2);
			got += WEXITSTATUS(st) == 0;
		}
		assert_int_equal(got, 1);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_link_put_get, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_link_credential, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_consent_once, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_consent_race, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
