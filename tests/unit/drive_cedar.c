/*
 * The Cedar evaluator on JSON lines, for tests/interop/cedar.test.mjs
 * (one process for thousands of cases).  Each input line:
 *
 *	{"policies": "text", "entities": [Cedar entity JSON],
 *	 "requests": [{"principal": uid, "action": uid, "resource": uid,
 *	     "context": {}}]}
 *
 * Each output line: {"parse": "error", "message": ...}, or
 * {"entities": "error", "message": ...}, or {"results": [{"decision":
 * "allow"|"deny", "policies": "SNE..." (per policy: Satisfied, Not
 * satisfied, Error), "error": first message}]} (a malformed request is
 * {"request": "error", ...} in results).
 *
 * A line with "build": {"conf": {groupClaimName, roleClaimName,
 * groupEntityType, server}, "store": [entities], "claims": {},
 * "calls": [{"kind": "tool"|"prompt"|"resource", "name", "annotations",
 * "arguments"}]} instead of entities and requests builds each request
 * with cedar_principal_new() and cedar_access_new(); its results also
 * have "picked": "decision:letters" for the call with only the
 * arguments the policies may read (cedar_policyset_reads_arg()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "shared/cedar.h"
#include "shared/cedar_args.h"
#include "shared/cedar_request.h"

static int
uid_get(const json_t *req, const char *key, struct cedar_uid *u)
{
	const json_t	*j, *t, *id;

	j = json_object_get(req, key);
	if (!json_is_string(t = json_object_get(j, "type")) ||
	    !json_is_string(id = json_object_get(j, "id")))
		return -1;
	u->cu_type.cs_ptr = json_string_value(t);
	u->cu_type.cs_len = json_string_length(t);
	u->cu_id.cs_ptr = json_string_value(id);
	u->cu_id.cs_len = json_string_length(id);
	return 0;
}

static json_t *
run_request(const struct cedar_policyset *ps,
    const struct cedar_entities *ents, const json_t *rq)
{
	struct cedar_request	 req;
	struct cedar_response	 resp;
	enum cedar_result	*res;
	char			*letters;
	size_t			 n, i;
	json_t			*out;

	memset(&req, 0, sizeof(req));
	if (uid_get(rq, "principal", &req.cr_principal) == -1 ||
	    uid_get(rq, "action", &req.cr_action) == -1 ||
	    uid_get(rq, "resource", &req.cr_resource) == -1)
		return json_pack("{ss ss}", "request", "error", "message",
		    "bad uid");
	req.cr_context = json_object_get(rq, "context");
	n = cedar_policyset_len(ps);
	if ((res = calloc(n + 1, sizeof(*res))) == NULL ||
	    (letters = calloc(n + 1, 1)) == NULL)
		abort();
	memset(&resp, 0, sizeof(resp));
	resp.cr_results = res;
	if (cedar_authorize(ps, ents, &req, &resp) == -1) {
		out = json_pack("{ss ss}", "request", "error", "message",
		    resp.cr_error);
	} else {
		for (i = 0; i < n; i++)
			letters[i] = res[i] == CEDAR_SATISFIED ? 'S' :
			    res[i] == CEDAR_ERROR ? 'E' : 'N';
		out = json_pack("{ss ss ss}", "decision",
		    resp.cr_decision == CEDAR_ALLOW ? "allow" : "deny",
		    "policies", letters, "error", resp.cr_error);
	}
	free(res);
	free(letters);
	return out;
}

static const char *
conf_str(const json_t *conf, const char *key)
{
	return json_string_value(json_object_get(conf, key));
}

/* one built call: its response, and per-policy letters into letters */
static void
build_call(const struct cedar_policyset *ps,
    const struct cedar_authz_conf *conf, const struct cedar_principal *cp,
    const struct cedar_call *call, struct cedar_response *resp,
    enum cedar_result *res, char *letters)
{
	struct cedar_access	*ca;
	char			 err[CEDAR_ERRLEN];
	size_t			 k, n = cedar_policyset_len(ps);

	if ((ca = cedar_access_new(conf, cp, call, err, sizeof(err))) == NULL)
		abort();
	memset(resp, 0, sizeof(*resp));
	resp->cr_results = res;
	if (cedar_access_authorize(ps, ca, resp) == -1)
		abort();
	for (k = 0; k < n; k++)
		letters[k] = res[k] == CEDAR_SATISFIED ? 'S' :
		    res[k] == CEDAR_ERROR ? 'E' : 'N';
	letters[n] = '\0';
	cedar_access_free(ca);
}

#define DECISION(r)	((r)->cr_decision == CEDAR_ALLOW ? "allow" : "deny")

/*
 * {"build": {"conf", "store", "claims", "calls": [call]}}: the builder;
 * each result's "picked" is "decision:letters" with only the arguments
 * the policies may read (cedar_policyset_reads_arg()), to equal its own.
 */
static json_t *
run_build(const struct cedar_policyset *ps, const json_t *b)
{
	static const char *const kinds[] = { "tool", "prompt", "resource" };
	struct cedar_authz_conf	 conf;
	struct cedar_entities	*store;
	struct cedar_principal	*cp;
	struct cedar_call	 call;
	struct cedar_response	 resp;
	enum cedar_result	*res;
	const json_t		*c, *calls;
	json_t			*out, *results, *picked;
	char			 err[CEDAR_ERRLEN], *letters, *pick;
	size_t			 i, k, n;

	memset(&conf, 0, sizeof(conf));
	c = json_object_get(b, "conf");
	conf.ca_group_claim = conf_str(c, "groupClaimName");
	conf.ca_role_claim = conf_str(c, "roleClaimName");
	conf.ca_group_type = conf_str(c, "groupEntityType");
	conf.ca_server = conf_str(c, "server");
	if ((store = cedar_entities_new(NULL)) == NULL)
		abort();
	if (json_object_get(b, "store") != NULL &&
	    cedar_entities_add_json(store, json_object_get(b, "store"), err,
	    sizeof(err)) == -1) {
		cedar_entities_free(store);
		return json_pack("{ss ss}", "entities", "error", "message",
		    err);
	}
	if ((cp = cedar_principal_new(&conf, store, json_object_get(b,
	    "claims"), err, sizeof(err))) == NULL) {
		cedar_entities_free(store);
		return json_pack("{ss ss}", "principal", "error", "message",
		    err);
	}
	n = cedar_policyset_len(ps);
	if ((res = calloc(n + 1, sizeof(*res))) == NULL ||
	    (letters = calloc(n + 1, 1)) == NULL ||
	    (pick = calloc(n + 8, 1)) == NULL)
		abort();
	results = json_array();
	calls = json_object_get(b, "calls");
	for (i = 0; i < json_array_size(calls); i++) {
		c = json_array_get(calls, i);
		memset(&call, 0, sizeof(call));
		for (k = 0; k < 3; k++)
			if (strcmp(conf_str(c, "kind"), kinds[k]) == 0)
				call.cc_kind = (enum cedar_kind)k;
		call.cc_name = conf_str(c, "name");
		call.cc_annotations = json_object_get(c, "annotations");
		if (cedar_args_pick(ps, json_object_get(c, "arguments"),
		    &picked) == -1)
			abort();
		call.cc_arguments = picked;
		build_call(ps, &conf, cp, &call, &resp, res, letters);
		(void)snprintf(pick, n + 8, "%s:%s", DECISION(&resp), letters);
		json_decref(picked);
		call.cc_arguments = json_object_get(c, "arguments");
		build_call(ps, &conf, cp, &call, &resp, res, letters);
		json_array_append_new(results, json_pack("{ss ss ss ss}",
		    "decision", DECISION(&resp), "policies", letters, "error",
		    resp.cr_error, "picked", pick));
	}
	free(res);
	free(letters);
	free(pick);
	cedar_principal_free(cp);
	cedar_entities_free(store);
	out = json_pack("{so}", "results", results);
	return out;
}

static json_t *
run_case(const json_t *c)
{
	struct cedar_policyset	*ps;
	struct cedar_entities	*ents;
	const json_t		*pol, *rqs;
	json_t			*out, *results;
	char			 err[CEDAR_ERRLEN];
	size_t			 i;

	pol = json_object_get(c, "policies");
	if (!json_is_string(pol))
		return json_pack("{ss ss}", "parse", "error", "message",
		    "no policies");
	if ((ps = cedar_parse("policies", json_string_value(pol),
	    json_string_length(pol), err, sizeof(err))) == NULL)
		return json_pack("{ss ss}", "parse", "error", "message", err);
	if (json_object_get(c, "build") != NULL) {
		out = run_build(ps, json_object_get(c, "build"));
		cedar_policyset_free(ps);
		return out;
	}
	if ((ents = cedar_entities_new(NULL)) == NULL)
		abort();
	if (json_object_get(c, "entities") != NULL &&
	    cedar_entities_add_json(ents, json_object_get(c, "entities"), err,
	    sizeof(err)) == -1) {
		out = json_pack("{ss ss}", "entities", "error", "message", err);
		goto done;
	}
	results = json_array();
	rqs = json_object_get(c, "requests");
	for (i = 0; i < json_array_size(rqs); i++)
		json_array_append_new(results,
		    run_request(ps, ents, json_array_get(rqs, i)));
	out = json_pack("{so}", "results", results);
done:
	cedar_entities_free(ents);
	cedar_policyset_free(ps);
	return out;
}

int
main(void)
{
	json_error_t	 je;
	json_t		*c, *out;
	char		*line;
	size_t		 cap;
	ssize_t		 n;

	line = NULL;
	cap = 0;
	while ((n = getline(&line, &cap, stdin)) > 0) {
		if ((c = json_loadb(line, (size_t)n, JSON_ALLOW_NUL, &je)) ==
		    NULL)
			out = json_pack("{ss ss}", "input", "error", "message",
			    je.text);
		else {
			out = run_case(c);
			json_decref(c);
		}
		if (out == NULL)
			abort();
		json_dumpf(out, stdout, JSON_COMPACT | JSON_ENSURE_ASCII);
		putchar('\n');
		fflush(stdout);
		json_decref(out);
	}
	free(line);
	return 0;
}
