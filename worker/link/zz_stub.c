/* TEMPORARY: stubs until i30-store and i30-web land; not committed */
#include <stdio.h>
#include <string.h>
#include "shared/config.h"
#include "shared/link_rec.h"
#include "worker/link/link.h"
#include "worker/state/link_store.h"
void link_count(struct worker *w, enum link_count c) { (void)w; (void)c; }
int link_credential(struct worker *w, const struct config_backend *be, const char *scope, char *authz, size_t len, char *why, size_t whylen) { (void)w;(void)scope;(void)authz;(void)len; snprintf(why, whylen, "backend %s: no link", be->cb_name); return -1; }
static int sget(struct worker *w, const char *s, const char *b, link_get_cb cb, void *a) { (void)w;(void)s;(void)b; cb(a, 1, NULL); return 0; }
static int sput(struct worker *w, const char *s, const struct link_rec *r, link_done_cb cb, void *a) { (void)w;(void)s;(void)r; cb(a, 0); return 0; }
static int sdel(struct worker *w, const char *s, const char *b, link_done_cb cb, void *a) { (void)w;(void)s;(void)b; cb(a, 0); return 0; }
static int scput(struct worker *w, const struct consent_rec *r, link_done_cb cb, void *a) { (void)w;(void)r; cb(a, 0); return 0; }
static int scget(struct worker *w, const char *id, consent_get_cb cb, void *a) { (void)w;(void)id; cb(a, 1, NULL); return 0; }
static void scancel(void *a) { (void)a; }
static const struct link_store stub = { sget, sput, sdel, scput, scget, scget, scancel };
const struct link_store *link_store = &stub;
