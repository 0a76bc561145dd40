/*
 * libFuzzer: shared/jwt.c.  Input starting with a NUL byte is a JWKS
 * document (what an issuer's endpoint could send), with 0x01 a claims
 * set (an introspection answer's) for the claim checks; anything else is a
 * bearer token checked against a fixed JWKS (an RSA and a P-256 key;
 * the seeds hold tokens they signed).  A token that passes must have
 * been split at its last dot, with claims the policy accepts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/jwt.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char	fixed_jwks[] = "{\"keys\":[{\"kty\":\"RSA\",\"n\":\"v7xxtUvSyYbHoQ2wE2UYSGhOZzJjRHPHapuMz3cpIVc9MoiBH_umbKM1a_NnYisz36-3IvwHLSEyS5d_mDzdHbhxzqpKItqLJJ4sq3PMpWybZRP1vm2vL79uj4I4YyPH8dmtHuky_zphMtH4kSMIR_6VfYzYzO-ilwL_tYF9X5P-TFglOJAIMmcs59-ebSMAqNl3VP0MBMx4SyF4lUrHNYr7fgIVCdmhTDGHDwMcZwY2OE3AAETxqhn9s5ov3K6vJCRGufNMKf0MuksjehaluLuIW-f2-UsSTNeybgrpj5svKsg0Uz9v8QWm683ytiBDVHHbMatPp6IcYoe1ZUTJnw\",\"e\":\"AQAB\",\"kid\":\"r\",\"use\":\"sig\"},{\"kty\":\"EC\",\"x\":\"d32DWusr60D3G4zW4dSPSYDHvFGSjX-KQk54Z877jtw\",\"y\":\"x1bNZcLdXMVWMU2DSwnRmXSVJQd6ueBOMCEvkVPG4eM\",\"crv\":\"P-256\",\"kid\":\"e\",\"alg\":\"ES256\"}]}";

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct jwks	 jw;
	static int		 loaded;
	struct jwt_policy	 p = { "https://idp", "vmcp", 1800000000, 30 };
	struct jwks		 doc;
	struct jwt		 t;
	const struct jwt_key	*k;
	const char		*why;
	int64_t			 exp;
	unsigned char		*out;

	if (!loaded) {
		if (jwks_parse(fixed_jwks, strlen(fixed_jwks), &jw, &why) ==
		    -1)
			abort();
		loaded = 1;
	}
	/* 0x01: a claims set as an introspection endpoint answers one */
	if (size > 0 && data[0] == 1) {
		json_t	*c = json_loadb((const char *)data + 1, size - 1,
		    JSON_REJECT_DUPLICATES, NULL);

		if (c != NULL && jwt_check_claims(c, &p, &exp, &why) == 0 &&
		    (exp + 30 <= 1800000000 ||
		    !json_is_string(json_object_get(c, "sub"))))
			abort();
		json_decref(c);
		return 0;
	}
	if (size > 0 && data[0] == '\0') {
		if (jwks_parse((const char *)data + 1, size - 1, &doc,
		    &why) == 0) {
			if (doc.jw_nkeys == 0 || doc.jw_nkeys > JWKS_KEYS_MAX)
				abort();
			(void)jwks_find(&doc, doc.jw_keys[0].jk_kid);
			jwks_clear(&doc);
		}
		return 0;
	}
	if ((out = malloc(size * 3 / 4 + 1)) == NULL)
		abort();
	if (jwt_b64url_decode((const char *)data, size, out) >
	    (long)(size * 3 / 4))
		abort();
	free(out);
	if (jwt_parse((const char *)data, size, &t, &why) != 0)
		return 0;
	if (t.jt_kid == NULL || t.jt_alg == JWT_ALG_BAD ||
	    t.jt_inputlen >= size || data[t.jt_inputlen] != '.')
		abort();
	if ((k = jwks_find(&jw, t.jt_kid)) != NULL &&
	    jwt_verify_sig(&t, k, &why) == 0 &&
	    jwt_check_claims(t.jt_claims, &p, &exp, &why) == 0 &&
	    exp + 30 <= 1800000000)
		abort();
	jwt_clear(&t);
	return 0;
}
