/*
 * Legacy client session records (session.c).
 */
#ifndef VMCPD_SESSION_H
#define VMCPD_SESSION_H

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
struct sockaddr;
struct store;
struct store_limit;

/* session.c: Legacy client session records in the store */
#define SESSION_ID_LEN	43	/* 256 random bits, base64url */

struct session_backend {
	char	*sb_name;
	char	*sb_sid;	/* backend's Mcp-Session-Id, NULL if none */
	char	*sb_version;	/* negotiated with the backend */
};

struct session {
	char			 s_id[SESSION_ID_LEN + 1];
	char			*s_version;	/* negotiated with the client */
	json_t			*s_client_caps;
	json_t			*s_client_info;
	char			*s_owner;	/* "iss\0sub" binding; "" anon */
	char			*s_log_level;	/* logging/setLevel, or NULL */
	json_t			*s_subs;	/* subscribed resource URIs */
	int			 s_initialized;	/* notifications/initialized */
	uint64_t		 s_created_ms;
	uint64_t		 s_seen_ms;
	uint64_t		 s_max_ms;	/* absolute expiry */
	uint64_t		 s_rstamp;	/* the Redis record's version
						 * this copy is, 0: none */
	struct session_backend	*s_backends;
	size_t			 s_nbackends;
	/* session_copy()'s one block: the backends' array and every
	 * string above, freed by session_str_free() only if not in it */
	char			*s_pack;
	size_t			 s_packlen;
};

int	 session_mint_id(char out[SESSION_ID_LEN + 1]);
int	 session_encode(const struct session *, char **buf, size_t *len);
int	 session_decode(const char *buf, size_t len, struct session *);
void	 session_clear(struct session *);
void	 session_str_free(struct session *, char *);
int	 session_holds_backends(const struct session *);
/* STORE_NOTFOUND (1) if absent or expired */
int	 session_load(struct store *, const char *id, uint64_t now_ms,
	    struct session *);
int	 session_save(struct store *, const struct session *, uint64_t ttl_ms,
	    uint64_t now_ms);
struct store_limit;
int	 session_create(struct store *, const struct session *,
	    uint64_t ttl_ms, uint64_t now_ms, const struct store_limit *);
#define SESSION_GROUP_MAX	64	/* "v6 prefix/64" and a NUL */
int	 session_client_group(const struct sockaddr *, socklen_t, char *,
	    size_t);
uint64_t session_copy_stamp(struct store *, const char *id, uint64_t now_ms);
void	 session_copy_gone(struct store *, const char *id, uint64_t now_ms);
int	 session_put_copy(struct store *, const struct session *,
	    uint64_t ttl_ms, uint64_t now_ms);
int	 session_delete(struct store *, const char *id);
void	 session_cache_free(void);
uint64_t session_expiry(const struct session *, uint64_t ttl_ms);
struct session_backend *session_backend_get(struct session *,
	    const char *name);
int	 session_backend_set(struct session *, const char *name,
	    const char *sid, const char *version);

#endif
