/*
 * What an entry a backend lists may be before vmcpd advertises it
 * (view_rules.c, pure): the rules its name or URI must keep, the caps
 * on its description and title, and the text an error message may
 * quote of a name that broke them.  docs/ARCHITECTURE.md, "What a
 * backend may advertise".
 */
#ifndef VMCPD_VIEW_RULES_H
#define VMCPD_VIEW_RULES_H

#include <stddef.h>

#include <jansson.h>

#define VIEW_PROMPT_NAME_MAX	128	/* characters, as a tool name's */
#define VIEW_URI_MAX		4096	/* bytes of a URI or URI template */
#define VIEW_DESCRIPTION_DEFAULT 16384	/* characters */
#define VIEW_TITLE_DEFAULT	256	/* characters */
#define VIEW_QUOTE_MAX		48	/* characters of a name quoted */
#define VIEW_QUOTE_LEN		(VIEW_QUOTE_MAX * 8 + 32)

/* 1 if s is valid UTF-8 (no overlong form, surrogate, past U+10FFFF) */
int	 view_utf8_valid(const char *s);

/*
 * 1 if s (valid UTF-8) is a label fit to show: 1 to max characters, no
 * control character (C0, DEL, C1), no line or paragraph separator and
 * no bidirectional formatting character (which reorders what is shown
 * around it).  The rule of prompt names, resource URIs and URI
 * templates.
 */
int	 view_label_ok(const char *s, size_t max);

/*
 * 1 if s[0, len) (UTF-8) has more than max characters (max >= 2), with
 * *cut the byte offset, at a character's start, of the first one past
 * max - 1: what stays before a "..." (U+2026) is added; else 0.
 * *chars gets its length in characters either way.
 */
int	 view_text_cut(const char *s, size_t len, size_t max, size_t *cut,
	    size_t *chars);

/*
 * obj's description and title (a tool's annotations.title too) cut to
 * max_desc and max_title characters with a "...": a shallow copy with
 * them cut, or obj itself when none is over (a new reference either
 * way; NULL: no memory).  Each cut is said to said(arg, field, max,
 * characters it had, the setting's name).
 */
typedef void	(*view_said_fn)(void *, const char *field, size_t max,
		    size_t had, const char *setting);
json_t	*view_texts_cut(json_t *obj, int tool, size_t max_desc,
	    size_t max_title, view_said_fn said, void *arg);

/*
 * s as an error message may quote it: at most VIEW_QUOTE_MAX
 * characters, the rest counted; controls, quotes, backslashes and
 * every character beyond ASCII escaped (\n, \x1b, \u202e), so that a
 * hostile name neither spans log lines nor drives a terminal.  buf
 * holds VIEW_QUOTE_LEN bytes.
 */
const char *view_quote(char *buf, size_t buflen, const char *s);

#endif /* VMCPD_VIEW_RULES_H */
