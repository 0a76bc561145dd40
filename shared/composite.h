/*
 * Composite tools (workflows over many backends): their definition as
 * loaded from compositeTools[] (composite_config.c), the dataflow
 * scheduler that runs one (composite_sched.c: a state machine with no
 * I/O, driven by "call finished" events and asking its driver to start
 * calls), and the pure pieces around a run (composite_io.c: parameter
 * validation, the result, the derived safety annotations).  This
 * header: the definition; the run in composite_sched.h, the pieces
 * around it in composite_io.h.
 */
#ifndef VMCPD_COMPOSITE_H
#define VMCPD_COMPOSITE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "template.h"

#define COMPOSITE_STEPS_MAX		100
#define COMPOSITE_RETRY_MAX		10
#define COMPOSITE_PARALLEL_MAX		50
#define COMPOSITE_ITERATIONS_MAX	1000
#define COMPOSITE_OUTPUT_DEPTH		10
#define COMPOSITE_TIMEOUT_MS		(30 * 60 * 1000ULL)
/* without longRunning, a timeout written at least this long makes the
 * composite a task for a client that declared the tasks extension */
#define COMPOSITE_TASK_TIMEOUT_MS	(60 * 1000ULL)
#define COMPOSITE_STEP_TIMEOUT_MS	(5 * 60 * 1000ULL)
#define COMPOSITE_ELICIT_TIMEOUT_MAX_MS	(10 * 60 * 1000ULL)
#define COMPOSITE_RETRY_DELAY_MS	1000ULL
#define COMPOSITE_BACKOFF_CAP		60	/* x retryDelay */
#define COMPOSITE_SCHEMA_MAX		(100 * 1024)	/* elicitation */
#define COMPOSITE_SCHEMA_DEPTH		10
#define COMPOSITE_ANSWER_MAX		(1024 * 1024)
#define COMPOSITE_ANSWER_DEPTH		10
#define COMPOSITE_FP_LEN		64	/* hex SHA-256 */

/* a composite's route in the view: never a backend name (config_backends.c
 * allows no ':' in those) */
#define COMPOSITE_ROUTE			":composite"

enum composite_kind {
	COMPOSITE_TOOL,
	COMPOSITE_ELICITATION,
	COMPOSITE_FOREACH
};

enum composite_onerror {
	COMPOSITE_ABORT,
	COMPOSITE_CONTINUE,
	COMPOSITE_RETRY,
	COMPOSITE_SKIP_REMAINING	/* elicitation onDecline/onCancel */
};

/* a templated JSON value: its string leaves compiled, in the order
 * composite_tvalue_expand() walks them (jansson keeps insertion order) */
struct composite_tvalue {
	json_t		 *ct_json;
	struct tmpl	**ct_tmpl;
	size_t		  ct_ntmpl;
};

struct composite_step {
	char			 *cs_id;
	enum composite_kind	  cs_kind;
	size_t			  cs_line;	/* of the step, for messages */
	size_t			  cs_col;

	size_t			 *cs_deps;	/* indexes of dependsOn */
	size_t			  cs_ndeps;
	struct tmpl		 *cs_cond;	/* or NULL */
	enum composite_onerror	  cs_onerror;
	unsigned int		  cs_retry_count;
	uint64_t		  cs_retry_delay_ms;
	json_t			 *cs_defaults;	/* defaultResults or NULL */
	uint64_t		  cs_timeout_ms;

	/* tool */
	char			 *cs_tool;	/* "backend.tool" or a name */
	struct composite_tvalue	  cs_args;

	/* elicitation */
	struct tmpl		 *cs_message;
	json_t			 *cs_schema;
	enum composite_onerror	  cs_ondecline;
	enum composite_onerror	  cs_oncancel;

	/* forEach */
	struct tmpl		 *cs_collection;
	char			 *cs_itemvar;
	unsigned int		  cs_max_parallel;
	unsigned int		  cs_max_iterations;
	struct composite_step	 *cs_inner;
};

struct composite_prop {
	char			 *cp_name;
	char			 *cp_type;	/* string integer ... array */
	char			 *cp_desc;
	struct tmpl		 *cp_value;	/* or NULL */
	json_t			 *cp_default;	/* or NULL */
	struct composite_prop	 *cp_props;	/* nested object properties */
	size_t			  cp_nprops;
	char			**cp_required;
	size_t			  cp_nrequired;
};

struct composite {
	char			*co_name;
	char			*co_desc;
	json_t			*co_params;	/* a JSON Schema object */
	uint64_t		 co_timeout_ms;
	/* a task for a client that declared the tasks extension:
	 * longRunning, or else a timeout of COMPOSITE_TASK_TIMEOUT_MS */
	int			 co_long;
	json_t			*co_annotations; /* as written, or NULL */
	struct composite_step	*co_steps;
	size_t			 co_nsteps;
	struct composite_prop	*co_output;	/* the root, or NULL */
	size_t			 co_line;
	size_t			 co_col;
	/* of the definition as written: a handle minted before a reload
	 * that changed it is refused (composite_snap.c) */
	char			 co_fp[COMPOSITE_FP_LEN + 1];
};

struct composite_list {
	struct composite	**cl_items;
	size_t			  cl_n;
};

void	 composite_free(struct composite *);
void	 composite_list_free(struct composite_list *);
/* compositeTools of a YAML document alone (the unit tests' way in) */
int	 composite_load_buffer(const char *name, const char *buf, size_t len,
	    struct composite_list *, char *err, size_t errlen);
struct config;
/* the configuration's composite of that name (len bytes), or NULL */
const struct composite *composite_find(const struct config *,
	    const char *name, size_t len);
void	 composite_tvalue_free(struct composite_tvalue *);
json_t	*composite_tvalue_expand(const struct composite_tvalue *, json_t *ctx,
	    char *err, size_t errlen);

#endif /* VMCPD_COMPOSITE_H */
