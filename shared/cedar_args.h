/*
 * What Cedar policies read of a call's arguments (cedar_args.c).
 */
#ifndef VMCPD_CEDAR_ARGS_H
#define VMCPD_CEDAR_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "shared/cedar.h"

/*
 * What the policies may read of a call's arguments (the arg_* attributes
 * of the resource and of the context, below), found when the set is
 * parsed: nothing, the arguments cedar_policyset_reads_arg() names, or
 * all of them (a policy uses context whole: context == .., [context]).
 * Conservative: an attribute arg_k or arg_k_present read or tested
 * (.arg_k, ["arg_k"], has arg_k) on any expression counts.  A call
 * authorized with only the arguments read gets the decision it gets
 * with all of them.
 */
enum cedar_args {
	CEDAR_ARGS_NONE = 0,
	CEDAR_ARGS_SOME,
	CEDAR_ARGS_ALL
};
enum cedar_args	 cedar_policyset_args(const struct cedar_policyset *);
/* 1 if the argument named key (klen bytes) may be read */
int		 cedar_policyset_reads_arg(const struct cedar_policyset *,
		    const char *key, size_t klen);
/* the i-th argument name of a CEDAR_ARGS_SOME set (sorted), or NULL */
const struct cedar_str *cedar_policyset_arg_name(
		    const struct cedar_policyset *, size_t i);
/*
 * The arguments of args (a call's, parsed) the policies may read: *out
 * NULL when they read none or args is no object, else a new object of
 * those (args itself when they read all).  0, or -1 out of memory.
 */
int		 cedar_args_pick(const struct cedar_policyset *,
		    const json_t *args, json_t **out);
/*
 * The same off a tools/call's params' text (a JSON object): *args NULL
 * when they read none or the params have no arguments object, else a
 * new object of the arguments read, only their values parsed (the
 * whole object when a key holds an escape, more than CEDAR_ARGS_SCAN
 * members are sent, or every argument is read).  0, or -1 (text that does not load as jsonrpc_parse() loads
 * it, a name read twice, out of memory): the caller denies.  A key sent
 * twice that no policy reads is not looked for (the front's scan refused
 * it already).
 */
#define CEDAR_ARGS_SCAN	64
int		 cedar_args_text(const struct cedar_policyset *,
		    const char *params, size_t plen, json_t **args);

#endif /* VMCPD_CEDAR_ARGS_H */
