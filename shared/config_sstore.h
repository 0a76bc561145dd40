/*
 * vmcpd.yaml's sessionStorage (config.h, config_sstore.c): LMDB, or
 * Redis for state shared across nodes.
 */
#ifndef VMCPD_CONFIG_SSTORE_H
#define VMCPD_CONFIG_SSTORE_H

#include <stddef.h>
#include <stdint.h>

/*
 * sessionStorage: where the records that must outlive a host live
 * (docs/ARCHITECTURE.md, Beyond one host).  lmdb (or the reference's
 * memory): this host's store only.
 */
enum config_sstore_provider {
	CONFIG_SSTORE_LMDB = 0,
	CONFIG_SSTORE_REDIS
};

struct config_sstore {
	enum config_sstore_provider css_provider;
	char			*css_host;	/* address, numeric or name */
	uint16_t		 css_port;	/* default 6379 */
	unsigned int		 css_db;	/* SELECT, 0 */
	char			*css_prefix;	/* keyPrefix */
	char			*css_password;	/* THV_SESSION_REDIS_PASSWORD;
						 * never logged */
	char			*css_namespace;	/* VMCP_NAMESPACE, "local" */
	/* sealKeyFile: the key the nodes seal exchanged tokens with in
	 * Redis (shared/seal.h); never logged, printed or dumped */
	char			*css_seal_key_file;
	uint8_t			 css_seal_key[32];
	int			 css_have_seal_key;
};

/* a Redis address: "host:port", "[v6]:port", "host" (6379): 0 or -1 */
int	config_sstore_address(const char *, char **host, uint16_t *port);
/* a seal key file's content: 32 bytes, 64 hex digits or base64 of 32
 * bytes (a final newline allowed): 0, or -1 */
int	config_sstore_key_decode(const char *, size_t, uint8_t key[32]);

#endif /* VMCPD_CONFIG_SSTORE_H */
