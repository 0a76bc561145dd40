/*
 * What the codecs answer a consent with (link.h): the URL-mode
 * elicitation's params, the tool result and the text for a client that
 * declared no URL mode.  Pure: the codecs' tests link it alone.
 */
#include <stdio.h>

#include <jansson.h>

#include "shared/link_rec.h"
#include "worker/link/link.h"

json_t *
link_consent_elicit(const char *backend, const char *id, const char *url)
{
	char	 msg[LINK_NAME_MAX + 100];
	json_t	*e;

	(void)snprintf(msg, sizeof(msg), LINK_CONSENT_FMT, backend);
	if ((e = json_pack("{s:s, s:s, s:s}", "mode", "url", "message", msg,
	    "url", url)) != NULL && id != NULL &&
	    json_object_set_new(e, "elicitationId", json_string(id)) == -1) {
		json_decref(e);
		e = NULL;
	}
	return e;
}

void
link_consent_text(const char *backend, const char *url, char *buf,
    size_t len)
{
	(void)snprintf(buf, len, LINK_CONSENT_TEXT_FMT, backend, url);
}

json_t *
link_consent_result(const char *backend, const char *url)
{
	char text[LINK_URL_MAX + LINK_NAME_MAX + 200];

	link_consent_text(backend, url, text, sizeof(text));
	return json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text",
	    "text", text, "isError", 1);
}

int
link_caps_url(const json_t *caps)
{
	return json_is_object(json_object_get(json_object_get(caps,
	    "elicitation"), "url"));
}
