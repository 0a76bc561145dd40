/*
 * The audit line writer (worker/auth/audit_line.c, proto/jsonw.c) on any
 * bytes: a string jsonw writes is what json_dumps() writes for it
 * (JSON_ENSURE_ASCII), refused exactly when json_stringn() refuses it;
 * and a line built from fields cut out of the input is one line, which
 * jansson reads back to those fields, or none when a required one is
 * not UTF-8.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "proto/jsonw.h"
#include "worker/auth/audit.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define NFIELDS	8

/* s (len bytes) as jansson writes it */
static void
check_string(struct jsonw *jw, const char *s, size_t len)
{
	json_t	*v = json_stringn(s, len);
	char	*d;
	int	 rc;

	jsonw_reset(jw);
	rc = jsonw_strn(jw, NULL, s, len);
	if ((v == NULL) != (rc == -1))
		abort();
	if (v == NULL) {
		if (jw->jw_len != 0)
			abort();
		return;
	}
	d = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_ENSURE_ASCII);
	if (d == NULL || strcmp(d, jw->jw_buf) != 0 || strlen(d) !=
	    jw->jw_len)
		abort();
	free(d);
	json_decref(v);
}

/* member key of obj (under parent, if any) is s, or absent if s is not
 * UTF-8 */
static void
check_member(json_t *ev, const char *parent, const char *sub,
    const char *key, const char *s)
{
	json_t	*o = json_object_get(ev, parent), *v;
	json_t	*want = json_string(s);

	if (sub != NULL)
		o = json_object_get(o, sub);
	v = json_object_get(o, key);
	if ((want == NULL) != (v == NULL) || (want != NULL &&
	    !json_equal(v, want)))
		abort();
	json_decref(want);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct jsonw	 jw;
	struct audit_line	 al;
	char			*f[NFIELDS], *buf, *p, *bar;
	json_t			*ev, *t;
	size_t			 i;
	int			 required_ok;

	check_string(&jw, (const char *)data, size);
	/* fields cut at each 0x00 (C strings, as the writer's are) */
	if ((buf = malloc(size + 1)) == NULL)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	for (i = 0, p = buf; i < NFIELDS; i++) {
		f[i] = p;
		if ((bar = memchr(p, '\0', (size_t)(buf + size - p))) != NULL &&
		    bar < buf + size)
			p = bar + 1;
		else
			p = buf + size;
	}
	memset(&al, 0, sizeof(al));
	al.al_id = "0c6b0a5e-3f7e-4d52-9a1e-2b9f8c7d6e5f";
	al.al_type = "mcp_tool_call";
	al.al_when = "2026-01-02T03:04:05.000006Z";
	al.al_outcome = "success";
	al.al_component = "vmcpd";
	al.al_source_type = "network";
	al.al_source_value = "127.0.0.1";
	al.al_source_extra = 1;
	al.al_ua = f[0];
	al.al_reqid = f[1];
	al.al_user = f[2];
	al.al_user_id = f[3];
	al.al_method = f[4];
	al.al_name = f[5];
	al.al_backend = f[6];
	al.al_data = f[7];
	al.al_datalen = strlen(f[7]);
	al.al_target_type = "tool";
	al.al_duration_ms = (long long)size - 100;
	al.al_status = 200;
	t = json_string(al.al_method);
	required_ok = t != NULL;
	json_decref(t);
	jsonw_reset(&jw);
	if (audit_line_write(&jw, &al) == -1) {
		if (required_ok && !jw.jw_failed)
			abort();
		goto done;
	}
	if (!required_ok || memchr(jw.jw_buf, '\n', jw.jw_len - 1) != NULL ||
	    jw.jw_buf[jw.jw_len - 1] != '\n')
		abort();
	if ((ev = json_loadb(jw.jw_buf, jw.jw_len, 0, NULL)) == NULL)
		abort();
	check_member(ev, "source", "extra", "user_agent", al.al_ua);
	check_member(ev, "source", "extra", "request_id", al.al_reqid);
	check_member(ev, "subjects", NULL, "user", al.al_user);
	check_member(ev, "subjects", NULL, "user_id", al.al_user_id);
	check_member(ev, "target", NULL, "method", al.al_method);
	check_member(ev, "target", NULL, "name", al.al_name);
	check_member(ev, "metadata", "extra", "backend_name", al.al_backend);
	check_member(ev, "data", NULL, "request", al.al_data);
	if (json_integer_value(json_object_get(json_object_get(json_object_get(
	    ev, "metadata"), "extra"), "duration_ms")) != al.al_duration_ms ||
	    strcmp(json_string_value(json_object_get(ev, "outcome")),
	    "success") != 0 || json_object_size(ev) != 9 + (json_object_get(
	    ev, "data") != NULL))
		abort();
	json_decref(ev);
done:
	free(buf);
	return 0;
}
