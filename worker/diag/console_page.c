/*
 * The console's page (console.h): server-rendered HTML of /status's
 * object, which works without scripts; console.js then refreshes it
 * from /status.  Pure: no I/O, fuzzed (tests/fuzz/fuzz_console_page.c).
 * Names, descriptions and error texts come from backends and clients:
 * every text is escaped (html_escape()), every class name is one of
 * this file's own, every number is formatted here.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "proto/html.h"
#include "proto/jsonw.h"
#include "worker/diag/console.h"

/* the chart's size, CSS pixels; its points are the series' seconds */
#define CP_CHART_W	180
#define CP_CHART_H	36

static void
cp_raw(struct jsonw *jw, const char *s)
{
	jsonw_bytes(jw, s, strlen(s));
}

/* our own markup with numbers: never a text from st */
static void cp_fmt(struct jsonw *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

static void
cp_fmt(struct jsonw *jw, const char *fmt, ...)
{
	char	buf[256];
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		jsonw_bytes(jw, buf, (size_t)n < sizeof(buf) ? (size_t)n :
		    sizeof(buf) - 1);
}

static const char *
cp_str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* a text member escaped, or a dash */
static void
cp_text(struct jsonw *jw, const json_t *o, const char *key)
{
	const char *s = cp_str(o, key);

	if (s != NULL && *s != '\0')
		html_escape(jw, s);
	else
		cp_raw(jw, "&#8211;");
}

/* a number member: integers as they are, reals to 1 decimal, with a
 * unit; null or absent a dash */
static void
cp_num(struct jsonw *jw, const json_t *v, const char *unit)
{
	if (json_is_integer(v))
		cp_fmt(jw, "%lld%s", (long long)json_integer_value(v), unit);
	else if (json_is_real(v))
		cp_fmt(jw, "%.1f%s", json_real_value(v), unit);
	else
		cp_raw(jw, "&#8211;");
}

/* one of a fixed set of class names for a state's name, else "unknown" */
static const char *
cp_class(const char *state)
{
	static const char *const known[] = { "healthy", "degraded",
	    "unhealthy", "unauthenticated", "unknown", "closed", "open",
	    "half-open", "disabled", "pending", "rejected", "pinned" };
	size_t i;

	for (i = 0; state != NULL && i < sizeof(known) / sizeof(known[0]);
	    i++)
		if (strcmp(state, known[i]) == 0)
			return known[i];
	return "unknown";
}

/* a cell whose text the script refreshes: data-k names the member */
static void
cp_td(struct jsonw *jw, const char *k)
{
	cp_fmt(jw, "<td data-k=\"%s\">", k);
}

/*
 * The chart: requests a second as bars, the p99 as a line, each on its
 * own scale (the most of the window at the top); a viewBox of one unit
 * a second, stretched to CP_CHART_W.  console.js draws the same.
 */
static void
cp_chart(struct jsonw *jw, const json_t *series)
{
	const json_t	*req = json_object_get(series, "requests");
	const json_t	*p99 = json_object_get(series, "p99Ms");
	size_t		 n = json_array_size(req), i;
	double		 maxr = 0, maxp = 0, v;
	int		 first = 1;

	for (i = 0; i < n; i++) {
		if ((v = json_number_value(json_array_get(req, i))) > maxr)
			maxr = v;
		if ((v = json_number_value(json_array_get(p99, i))) > maxp)
			maxp = v;
	}
	cp_fmt(jw, "<svg class=\"chart\" width=\"%d\" height=\"%d\" "
	    "viewBox=\"0 0 %zu %d\" preserveAspectRatio=\"none\" "
	    "role=\"img\" aria-label=\"requests a second and p99 over the "
	    "last %zu s\">", CP_CHART_W, CP_CHART_H, n > 0 ? n : 1, CP_CHART_H,
	    n);
	cp_fmt(jw, "<title>peak %.0f requests/s, p99 up to %.1f ms</title>",
	    maxr, maxp);
	for (i = 0; maxr > 0 && i < n; i++) {
		v = json_number_value(json_array_get(req, i));
		if (v <= 0)
			continue;
		v = v * (CP_CHART_H - 2) / maxr;
		cp_fmt(jw, "<rect class=\"rq\" x=\"%zu\" y=\"%.1f\" width=\"1\" "
		    "height=\"%.1f\"/>", i, CP_CHART_H - v, v);
	}
	if (maxp > 0) {
		cp_raw(jw, "<polyline class=\"p99\" points=\"");
		for (i = 0; i < n; i++) {
			if (!json_is_number(json_array_get(p99, i)))
				continue;
			v = json_number_value(json_array_get(p99, i));
			cp_fmt(jw, "%s%zu.5,%.1f", first ? "" : " ", i,
			    CP_CHART_H - 1 - v * (CP_CHART_H - 2) / maxp);
			first = 0;
		}
		cp_raw(jw, "\"/>");
	}
	cp_raw(jw, "</svg>");
}

/* the forms of a backend's actions, for an admin */
static void
cp_form(struct jsonw *jw, const char *csrf, const char *action,
    const char *label, const char *backend, const char *kind,
    const char *name)
{
	cp_raw(jw, "<form method=\"post\" action=\"" CONSOLE_ACTION_PATH
	    "\"><input type=\"hidden\" name=\"csrf\" value=\"");
	html_escape(jw, csrf);
	cp_raw(jw, "\"><input type=\"hidden\" name=\"action\" value=\"");
	html_escape(jw, action);
	cp_raw(jw, "\"><input type=\"hidden\" name=\"backend\" value=\"");
	html_escape(jw, backend);
	if (kind != NULL) {
		cp_raw(jw, "\"><input type=\"hidden\" name=\"kind\" value=\"");
		html_escape(jw, kind);
		cp_raw(jw, "\"><input type=\"hidden\" name=\"name\" value=\"");
		html_escape(jw, name);
	}
	cp_raw(jw, "\"><button type=\"submit\">");
	html_escape(jw, label);
	cp_raw(jw, "</button></form>");
}

static void
cp_backend(struct jsonw *jw, const json_t *b, size_t i, const char *csrf)
{
	const json_t	*lm = json_object_get(b, "lastMinute");
	const json_t	*ls = json_object_get(b, "lists");
	const json_t	*le = json_object_get(b, "lastError");
	const json_t	*er = json_object_get(lm, "errorRate");
	const char	*name = cp_str(b, "name");

	cp_fmt(jw, "<tr data-i=\"%zu\" class=\"h-%s\"><th scope=\"row\" "
	    "data-k=\"name\">", i, cp_class(cp_str(b, "health")));
	cp_text(jw, b, "name");
	cp_raw(jw, "</th>");
	cp_td(jw, "transport");
	cp_text(jw, b, "transport");
	cp_raw(jw, "</td>");
	cp_td(jw, "mcpRevision");
	cp_text(jw, b, "mcpRevision");
	cp_fmt(jw, "</td><td data-k=\"health\"><span class=\"st %s\">",
	    cp_class(cp_str(b, "health")));
	cp_text(jw, b, "health");
	cp_fmt(jw, "</span></td><td data-k=\"breaker\"><span class=\"st "
	    "%s\">", cp_class(cp_str(b, "breaker")));
	cp_text(jw, b, "breaker");
	cp_raw(jw, "</span></td>");
	cp_td(jw, "p50");
	cp_num(jw, json_object_get(lm, "p50Ms"), " ms");
	cp_raw(jw, "</td>");
	cp_td(jw, "p99");
	cp_num(jw, json_object_get(lm, "p99Ms"), " ms");
	cp_raw(jw, "</td>");
	cp_td(jw, "errorRate");
	if (json_is_number(er))
		cp_fmt(jw, "%.1f%%", json_number_value(er) * 100);
	else
		cp_raw(jw, "&#8211;");
	cp_raw(jw, "</td>");
	cp_td(jw, "requests");
	cp_num(jw, json_object_get(lm, "requests"), "");
	cp_raw(jw, "</td>");
	cp_td(jw, "lists");
	if (json_is_object(ls)) {
		cp_num(jw, json_object_get(ls, "tools"), " / ");
		cp_num(jw, json_object_get(ls, "prompts"), " / ");
		cp_num(jw, json_object_get(ls, "resources"), "");
	} else
		cp_raw(jw, "&#8211;");
	cp_raw(jw, "</td>");
	cp_td(jw, "lastError");
	cp_text(jw, le, "message");
	cp_raw(jw, "</td>");
	cp_td(jw, "chart");
	cp_chart(jw, json_object_get(b, "series"));
	cp_raw(jw, "</td>");
	if (csrf != NULL && name != NULL) {
		cp_raw(jw, "<td class=\"act\">");
		cp_form(jw, csrf, CONSOLE_ACT_REPROBE, "Re-probe", name, NULL,
		    NULL);
		cp_form(jw, csrf, CONSOLE_ACT_DROP, "Drop sessions", name,
		    NULL, NULL);
		cp_raw(jw, "</td>");
	}
	cp_raw(jw, "</tr>\n");
}

static void
cp_backends(struct jsonw *jw, const json_t *st, const char *csrf)
{
	const json_t	*bes = json_object_get(st, "backends");
	size_t		 i;

	cp_raw(jw, "<section><h2>Backends</h2><table id=\"backends\">"
	    "<thead><tr><th scope=\"col\">Backend</th><th scope=\"col\">"
	    "Transport</th><th scope=\"col\">MCP</th><th scope=\"col\">"
	    "Health</th><th scope=\"col\">Breaker</th><th scope=\"col\" "
	    "title=\"last minute\">p50</th><th scope=\"col\" title=\"last "
	    "minute\">p99</th><th scope=\"col\" title=\"failures over "
	    "requests, last minute\">Errors</th><th scope=\"col\" "
	    "title=\"last minute\">Requests</th><th scope=\"col\" "
	    "title=\"tools / prompts / resources\">Lists</th><th "
	    "scope=\"col\">Last error</th><th scope=\"col\">Requests/s "
	    "and p99</th>");
	if (csrf != NULL)
		cp_raw(jw, "<th scope=\"col\">Actions</th>");
	cp_raw(jw, "</tr></thead>\n<tbody>\n");
	for (i = 0; i < json_array_size(bes); i++)
		cp_backend(jw, json_array_get(bes, i), i, csrf);
	cp_raw(jw, "</tbody></table></section>\n");
}

/* a column of a table of st's objects: its head, its member, a number? */
struct cp_col {
	const char	*c_head;
	const char	*c_key;
	int		 c_num;
};

/* a section's table, its head row (and a last column's, if any) */
static void
cp_table(struct jsonw *jw, const char *id, const char *title,
    const struct cp_col *cols, size_t n, const char *last)
{
	size_t i;

	cp_fmt(jw, "<section id=\"%s\"><h2>%s</h2><table><thead><tr>", id,
	    title);
	for (i = 0; i < n; i++)
		cp_fmt(jw, "<th scope=\"col\">%s</th>", cols[i].c_head);
	if (last != NULL)
		cp_fmt(jw, "<th scope=\"col\">%s</th>", last);
	cp_raw(jw, "</tr></thead>\n<tbody>\n");
}

/* an object's cells, as cols say */
static void
cp_cells(struct jsonw *jw, const json_t *o, const struct cp_col *cols,
    size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		cp_raw(jw, "<td>");
		if (cols[i].c_num)
			cp_num(jw, json_object_get(o, cols[i].c_key), "");
		else
			cp_text(jw, o, cols[i].c_key);
		cp_raw(jw, "</td>");
	}
}

static void
cp_table_end(struct jsonw *jw, size_t rows, size_t n, const char *none)
{
	if (rows == 0)
		cp_fmt(jw, "<tr><td colspan=\"%zu\">%s</td></tr>\n", n, none);
	cp_raw(jw, "</tbody></table></section>\n");
}

#define CP_NCOLS(c)	(sizeof(c) / sizeof((c)[0]))

/* the decision's cell: an admin's forms, else how to decide */
static void
cp_pin_decision(struct jsonw *jw, const json_t *c, const char *csrf)
{
	const char	*be = cp_str(c, "backend"), *kind = cp_str(c, "kind");
	const char	*name = cp_str(c, "name");

	if (be == NULL || kind == NULL || name == NULL) {
		cp_raw(jw, "<td></td>");
		return;
	}
	if (csrf != NULL) {
		cp_raw(jw, "<td class=\"act\">");
		cp_form(jw, csrf, CONSOLE_ACT_APPROVE, "Approve", be, kind,
		    name);
		cp_form(jw, csrf, CONSOLE_ACT_REJECT, "Reject", be, kind, name);
		cp_raw(jw, "</td>");
		return;
	}
	cp_raw(jw, "<td><code>vmcpctl pins");
	if (strcmp(kind, "tool") == 0) {
		cp_raw(jw, " approve ");
		html_escape(jw, be);
		cp_raw(jw, " ");
		html_escape(jw, name);
	}
	cp_raw(jw, "</code></td>");
}

/* an admin's approve-all, once for each backend with a pending change
 * (the changes come in key order: a backend's together) */
static void
cp_pins_all(struct jsonw *jw, const json_t *ch, const char *csrf,
    size_t ncols)
{
	const char	*be, *last = NULL, *state;
	size_t		 i;

	if (csrf == NULL)
		return;
	for (i = 0; i < json_array_size(ch); i++) {
		be = cp_str(json_array_get(ch, i), "backend");
		state = cp_str(json_array_get(ch, i), "state");
		if (be == NULL || state == NULL ||
		    strcmp(state, "pending") != 0 ||
		    (last != NULL && strcmp(be, last) == 0))
			continue;
		last = be;
		cp_fmt(jw, "<tr><td colspan=\"%zu\" class=\"act\">", ncols);
		cp_form(jw, csrf, CONSOLE_ACT_APPROVE_ALL, "Approve all", be,
		    NULL, NULL);
		cp_raw(jw, " the pending changes of ");
		html_escape(jw, be);
		cp_raw(jw, "</td></tr>\n");
	}
}

/* pins: { pending, changes: [{ backend, kind, name, state, since,
 * pinned, new }] } */
static void
cp_pins(struct jsonw *jw, const json_t *st, const char *csrf)
{
	static const struct cp_col cols[] = { { "Backend", "backend", 0 },
	    { "Kind", "kind", 0 }, { "Name", "name", 0 },
	    { "State", "state", 0 }, { "Since", "since", 0 } };
	const json_t	*pins = json_object_get(st, "pins");
	const json_t	*ch = json_object_get(pins, "changes"), *c;
	size_t		 i;

	if (!json_is_object(pins))
		return;
	cp_table(jw, "pins", "Pending pinned changes", cols, CP_NCOLS(cols),
	    "Definition</th><th scope=\"col\">Decision");
	for (i = 0; i < json_array_size(ch); i++) {
		c = json_array_get(ch, i);
		cp_fmt(jw, "<tr class=\"p-%s\">",
		    cp_class(cp_str(c, "state")));
		cp_cells(jw, c, cols, CP_NCOLS(cols));
		/* the texts an operator decides on, side by side */
		cp_raw(jw, "<td><details><summary>pinned / new</summary>"
		    "<div class=\"defs\"><pre>");
		cp_text(jw, c, "pinned");
		cp_raw(jw, "</pre><pre>");
		cp_text(jw, c, "new");
		cp_raw(jw, "</pre></div></details></td>");
		cp_pin_decision(jw, c, csrf);
		cp_raw(jw, "</tr>\n");
	}
	cp_pins_all(jw, ch, csrf, CP_NCOLS(cols) + 2);
	cp_table_end(jw, json_array_size(ch), CP_NCOLS(cols) + 2, "None.");
}

/* rateLimits: [{ bucket, tool, tokens, max }], the buckets near empty */
static void
cp_limits(struct jsonw *jw, const json_t *st)
{
	static const struct cp_col cols[] = { { "Bucket", "bucket", 0 },
	    { "Tool", "tool", 0 }, { "Tokens left", "tokens", 1 },
	    { "Of", "max", 1 } };
	const json_t	*rl = json_object_get(st, "rateLimits");
	size_t		 i;

	if (!json_is_array(rl))
		return;
	cp_table(jw, "limits", "Rate-limit buckets near empty", cols,
	    CP_NCOLS(cols), NULL);
	for (i = 0; i < json_array_size(rl); i++) {
		cp_raw(jw, "<tr>");
		cp_cells(jw, json_array_get(rl, i), cols, CP_NCOLS(cols));
		cp_raw(jw, "</tr>\n");
	}
	cp_table_end(jw, json_array_size(rl), CP_NCOLS(cols), "None.");
}

/* the recent denials' rows (console.js rebuilds the same) */
static void
cp_denials(struct jsonw *jw, const json_t *st)
{
	static const struct cp_col cols[] = { { "At", "at", 0 },
	    { "Status", "status", 1 }, { "User", "user", 0 },
	    { "Method", "method", 0 }, { "Name", "name", 0 },
	    { "Backend", "backend", 0 } };
	const json_t	*dn = json_object_get(st, "denials");
	size_t		 i;

	cp_table(jw, "denials", "Recent denials", cols, CP_NCOLS(cols), NULL);
	for (i = 0; i < json_array_size(dn); i++) {
		cp_raw(jw, "<tr>");
		cp_cells(jw, json_array_get(dn, i), cols, CP_NCOLS(cols));
		cp_raw(jw, "</tr>\n");
	}
	cp_table_end(jw, json_array_size(dn), CP_NCOLS(cols), "None (the "
	    "audit log records them when it is on).");
}

/* the figures above the tables */
static void
cp_summary(struct jsonw *jw, const json_t *st)
{
	cp_raw(jw, "<dl id=\"summary\"><div><dt>Sessions</dt><dd "
	    "data-k=\"sessions\">");
	cp_num(jw, json_object_get(st, "sessions"), "");
	cp_raw(jw, "</dd></div><div><dt>Principals</dt><dd "
	    "data-k=\"principals\">");
	cp_num(jw, json_object_get(st, "principals"), "");
	cp_fmt(jw, "</dd></div><div><dt>Workers</dt><dd data-k=\"workers\">"
	    "%zu</dd></div>", json_array_size(json_object_get(st,
	    "workers")));
	if (json_is_object(json_object_get(st, "pins"))) {
		cp_raw(jw, "<div><dt>Pending pins</dt><dd data-k=\"pins\">");
		cp_num(jw, json_object_get(json_object_get(st, "pins"),
		    "pending"), "");
		cp_raw(jw, "</dd></div>");
	}
	cp_raw(jw, "</dl>\n");
}

int
console_page_render(struct jsonw *jw, const json_t *st, const char *csrf,
    int login)
{
	cp_raw(jw, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta "
	    "charset=\"utf-8\"><meta name=\"viewport\" content=\"width="
	    "device-width, initial-scale=1\"><title>");
	cp_text(jw, st, "name");
	cp_raw(jw, " &#8211; vmcpd console</title><link rel=\"stylesheet\" "
	    "href=\"/console.css\"><script src=\"/console.js\" defer>"
	    "</script></head>\n<body");
	cp_fmt(jw, " data-generation=\"%lld\"", (long long)json_integer_value(
	    json_object_get(st, "generation")));
	cp_raw(jw, "><header><h1>");
	cp_text(jw, st, "name");
	cp_raw(jw, "</h1><p class=\"meta\">vmcpd ");
	cp_text(jw, st, "version");
	cp_raw(jw, " &#183; generation ");
	cp_num(jw, json_object_get(st, "generation"), "");
	cp_raw(jw, " &#183; <span data-k=\"now\">");
	cp_text(jw, st, "now");
	cp_raw(jw, "</span> &#183; <span id=\"live\">not refreshed</span>");
	if (csrf != NULL)
		cp_raw(jw, " &#183; admin");
	else if (login)
		cp_raw(jw, " &#183; <a href=\"" CONSOLE_LOGIN_PATH "\">Log in "
		    "to act</a>");
	else
		cp_raw(jw, " &#183; read-only");
	cp_raw(jw, "</p></header>\n<main>\n");
	cp_summary(jw, st);
	cp_backends(jw, st, csrf);
	cp_pins(jw, st, csrf);
	cp_limits(jw, st);
	cp_denials(jw, st);
	cp_raw(jw, "</main></body></html>\n");
	return jw->jw_failed ? -1 : 0;
}
