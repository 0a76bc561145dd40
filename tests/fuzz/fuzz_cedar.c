/*
 * libFuzzer: shared/cedar.c on arbitrary bytes.
 *
 * Input: Cedar policy text, then optionally a NUL and a JSON context.
 * What parses is checked (cedar_policyset_check) and evaluated for a few
 * requests against a fixed store, and for a request built from the JSON
 * as claims, annotations and arguments; checked: the parser answers NULL with
 * a "fuzz:line:col: " message or a set, evaluation answers the same twice
 * and a decision consistent with the per-policy results, and the built
 * request gives every policy the same result with only the arguments
 * the set may read (cedar_policyset_reads_arg()) as with all of them,
 * and cedar_args_text() picks those off the JSON as params' text as a
 * tree would.  The parser is handed an exact-size copy, not
 * NUL-terminated, so ASan sees any read past the end.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/cedar.h"
#include "shared/cedar_args.h"
#include "shared/cedar_request.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char store_json[] =
    "[{\"uid\": {\"type\": \"Client\", \"id\": \"alice\"},"
    "  \"attrs\": {\"claim_roles\": [\"admin\"], \"claim_level\": 5,"
    "    \"claim_act\": {\"sub\": \"bob\"}},"
    "  \"parents\": [{\"type\": \"THVGroup\", \"id\": \"eng\"}]},"
    " {\"uid\": {\"type\": \"THVGroup\", \"id\": \"eng\"}, \"attrs\": {},"
    "  \"parents\": [{\"type\": \"THVRole\", \"id\": \"dev\"}]},"
    " {\"uid\": {\"type\": \"THVRole\", \"id\": \"dev\"}, \"attrs\": {},"
    "  \"parents\": [{\"type\": \"THVGroup\", \"id\": \"eng\"}]},"
    " {\"uid\": {\"type\": \"Tool\", \"id\": \"weather\"},"
    "  \"attrs\": {\"name\": \"weather\", \"readOnlyHint\": true},"
    "  \"parents\": [{\"type\": \"MCP\", \"id\": \"vmcp\"}]}]";

static const char *const actions[] = {
	"call_tool", "get_prompt", "read_resource", NULL
};

static void
uid_set(struct cedar_uid *u, const char *type, const char *id)
{
	u->cu_type.cs_ptr = type;
	u->cu_type.cs_len = strlen(type);
	u->cu_id.cs_ptr = id;
	u->cu_id.cs_len = strlen(id);
}

static void
evaluate(const struct cedar_policyset *ps, const struct cedar_entities *ce,
    const json_t *ctx)
{
	static const char *const who[] = { "alice", "ghost" };
	struct cedar_request	 rq;
	struct cedar_response	 r1, r2;
	enum cedar_result	*res1, *res2;
	size_t			 n, i, k, nerr;
	int			 rc1, rc2, permit, forbid;

	n = cedar_policyset_len(ps);
	if ((res1 = calloc(n + 1, sizeof(*res1))) == NULL ||
	    (res2 = calloc(n + 1, sizeof(*res2))) == NULL)
		abort();
	for (k = 0; k < 2; k++) {
		memset(&rq, 0, sizeof(rq));
		uid_set(&rq.cr_principal, "Client", who[k]);
		uid_set(&rq.cr_action, "Action", actions[k]);
		uid_set(&rq.cr_resource, "Tool", "weather");
		rq.cr_context = ctx;
		memset(&r1, 0, sizeof(r1));
		memset(&r2, 0, sizeof(r2));
		r1.cr_results = res1;
		r2.cr_results = res2;
		rc1 = cedar_authorize(ps, ce, &rq, &r1);
		rc2 = cedar_authorize(ps, ce, &rq, &r2);
		if (rc1 != rc2)
			abort();
		if (rc1 == -1)
			continue;
		if (r1.cr_decision != r2.cr_decision ||
		    r1.cr_nerrors != r2.cr_nerrors ||
		    memcmp(res1, res2, n * sizeof(*res1)) != 0)
			abort();
		/* Cedar's rule, recomputed from the per-policy results */
		permit = forbid = 0;
		nerr = 0;
		for (i = 0; i < n; i++) {
			if (res1[i] == CEDAR_ERROR)
				nerr++;
			/* which effect isn't exposed: a forbid denies alone */
			if (res1[i] == CEDAR_SATISFIED)
				permit = 1;
		}
		if (nerr != r1.cr_nerrors ||
		    (r1.cr_decision == CEDAR_ALLOW && !permit))
			abort();
		if (nerr > 0 && r1.cr_error[0] == '\0')
			abort();
		(void)forbid;
	}
	free(res1);
	free(res2);
}

/* the call's decision and each policy's result, with these arguments */
static void
build_call(const struct cedar_policyset *ps,
    const struct cedar_authz_conf *conf, const struct cedar_principal *cp,
    const json_t *ann, const json_t *args, struct cedar_response *resp)
{
	struct cedar_access	*ca;
	struct cedar_call	 call;
	char			 err[CEDAR_ERRLEN];

	memset(&call, 0, sizeof(call));
	call.cc_kind = CEDAR_TOOL;
	call.cc_name = "weather";
	call.cc_annotations = ann;
	call.cc_arguments = args;
	if ((ca = cedar_access_new(conf, cp, &call, err, sizeof(err))) ==
	    NULL)
		abort();
	if (cedar_access_authorize(ps, ca, resp) == -1)
		abort();
	cedar_access_free(ca);
}

/*
 * The JSON as claims and as arguments, through the request builder;
 * then with only the arguments the policies may read: every policy
 * must come out the same (the gate of the hot path parses no others).
 */
static void
build(const struct cedar_policyset *ps, const struct cedar_entities *ce,
    const json_t *j)
{
	static const struct cedar_authz_conf conf = {
		.ca_group_claim = "realm.roles", .ca_role_claim = "role",
		.ca_server = "vmcp"
	};
	struct cedar_principal	*cp;
	struct cedar_response	 r1, r2;
	enum cedar_result	*res1, *res2;
	json_t			*picked;
	char			 err[CEDAR_ERRLEN];
	size_t			 n;

	if ((cp = cedar_principal_new(&conf, ce, j, err, sizeof(err))) ==
	    NULL)
		return;
	n = cedar_policyset_len(ps);
	if ((res1 = calloc(n + 1, sizeof(*res1))) == NULL ||
	    (res2 = calloc(n + 1, sizeof(*res2))) == NULL)
		abort();
	memset(&r1, 0, sizeof(r1));
	memset(&r2, 0, sizeof(r2));
	r1.cr_results = res1;
	r2.cr_results = res2;
	build_call(ps, &conf, cp, j, j, &r1);
	if (cedar_args_pick(ps, j, &picked) == -1)
		abort();
	build_call(ps, &conf, cp, j, picked, &r2);
	if (r1.cr_decision != r2.cr_decision ||
	    r1.cr_nerrors != r2.cr_nerrors ||
	    memcmp(res1, res2, n * sizeof(*res1)) != 0)
		abort();
	json_decref(picked);
	free(res1);
	free(res2);
	cedar_principal_free(cp);
}

/*
 * The JSON text as a tools/call's params: what cedar_args_text() reads
 * off the text equals what a tree of it gives (text jsonrpc_parse()
 * would load; other text may be refused, never misread silently).
 */
static void
args_text(const struct cedar_policyset *ps, const char *text, size_t len)
{
	json_t	*p, *want, *got;
	int	 rc;

	rc = cedar_args_text(ps, text, len, &got);
	p = json_loadb(text, len, JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES |
	    JSON_DECODE_ANY, NULL);
	if (json_is_object(p)) {
		if (cedar_args_pick(ps, json_object_get(p, "arguments"),
		    &want) == -1)
			abort();
		if (rc == -1 || (want == NULL) != (got == NULL) ||
		    (want != NULL && !json_equal(want, got)))
			abort();
		json_decref(want);
	}
	json_decref(p);
	json_decref(got);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cedar_entities	*ce;
	struct cedar_policyset		*ps;
	json_error_t			 je;
	json_t				*ctx, *store;
	const uint8_t			*nul;
	char				*text, err[CEDAR_ERRLEN];
	size_t				 tlen;

	if (ce == NULL) {
		if ((store = json_loads(store_json, 0, &je)) == NULL ||
		    (ce = cedar_entities_new(NULL)) == NULL ||
		    cedar_entities_add_json(ce, store, err, sizeof(err)) == -1)
			abort();
		json_decref(store);
	}
	nul = memchr(data, '\0', size);
	tlen = nul != NULL ? (size_t)(nul - data) : size;
	ctx = NULL;
	if (nul != NULL)
		ctx = json_loadb((const char *)nul + 1, size - tlen - 1,
		    JSON_ALLOW_NUL, &je);
	if ((text = malloc(tlen + 1)) == NULL)
		abort();
	memcpy(text, data, tlen);
	err[0] = 'x';
	ps = cedar_parse("fuzz", text, tlen, err, sizeof(err));
	if (ps == NULL) {
		if (strncmp(err, "fuzz:", 5) != 0)
			abort();
	} else {
		(void)cedar_policyset_check(ps, actions, err, sizeof(err));
		evaluate(ps, ce, ctx);
		build(ps, ce, ctx);
		if (nul != NULL)
			args_text(ps, (const char *)nul + 1, size - tlen - 1);
		cedar_policyset_free(ps);
	}
	free(text);
	json_decref(ctx);
	return 0;
}
