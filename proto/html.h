/*
 * Text into HTML (the consent pages, worker/link/link_page.c; the
 * console, worker/diag/console_page.c): & < > " ' as character
 * references, so that a text from a backend or a client is shown and
 * never read as markup, in an element or a quoted attribute's value.
 * Pure: no I/O, no global state.
 */
#ifndef VMCPD_HTML_H
#define VMCPD_HTML_H

struct jsonw;

/* s escaped, appended to jw (a NULL s: nothing) */
void	 html_escape(struct jsonw *, const char *s);

#endif
