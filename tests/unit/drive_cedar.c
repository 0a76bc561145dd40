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
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "shared/cedar.h"

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
