/*
 * RFC 6570 URI templates, matched rather than expanded: the
 * resources/read router asks which resource template a URI belongs to.
 * Pure: no I/O, no global state.
 */
#ifndef VMCPD_URITEMPLATE_H
#define VMCPD_URITEMPLATE_H

/* the longest template and URI matched; longer ones match nothing */
#define URITEMPLATE_TMPL_MAX	4096
#define URITEMPLATE_URI_MAX	16384

/*
 * 1 if uri is an expansion of tmpl (the expression forms of levels 1-4,
 * read narrowly: proto/uritemplate.c says how), else 0.  A malformed
 * template, a NULL argument or one over its limit match nothing.
 */
int	uritemplate_match(const char *tmpl, const char *uri);

#endif
