/*
 * The store's private header: the only file in the tree that includes
 * <lmdb.h>, included by shared/store*.c alone (and the store's unit
 * test, which writes a file as an older vmcpd did).  Everything outside
 * the store sees store.h, in which no LMDB type appears.
 */
#ifndef VMCPD_STORE_LMDB_H
#define VMCPD_STORE_LMDB_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include <lmdb.h>

#include "shared/store.h"
#include "shared/store_sweep.h"

#define STORE_EXP_NAME	"expiry"
#define STORE_CNT_BIT	(1U << (STORE_NDB + 1))	/* s_missing: "counts" */

struct store {
	MDB_env		*s_env;
	MDB_dbi		 s_dbi[STORE_NDB];
	MDB_dbi		 s_exp;
	MDB_dbi		 s_cnt;
	unsigned int	 s_missing;	/* RDONLY: bit per absent db */
	unsigned int	 s_psize;
	uint64_t	 s_map_open;	/* the map's size once opened */
	MDB_txn		*s_rtxn;	/* reusable read txn, reset when idle */
	int		 s_flags;
	pid_t		 s_pid;		/* the opener (no env survives fork) */
};

/* store.c: errors, transactions, argument checks, the map's room */
void	store_set_errno(int);
int	store_txn_begin(struct store *, unsigned int, MDB_txn **,
	    const char *);
int	store_rtxn_begin(struct store *, MDB_txn **, const char *);
void	store_rtxn_end(struct store *);
int	store_commit(MDB_txn *, const char *);
int	store_check(struct store *, enum store_db, const void *, size_t,
	    int);
int	store_writable(const struct store *);
int	store_missing(const struct store *, unsigned int);
int	store_room(struct store *);
int	store_map_grow(struct store *);
void	store_log_full(const char *, enum store_db);
int	store_map_adopt(struct store *);

/* store_write.c: a record's write and its reaping, in a caller's txn */
int	store_reap_txn(struct store *, MDB_txn *, unsigned int,
	    const void *, size_t, const MDB_val *, const struct store_rec *);
int	store_reap_close_txn(struct store *, MDB_txn *, unsigned int,
	    const void *, size_t, const MDB_val *, const struct store_rec *,
	    uint64_t);
int	store_put_txn(struct store *, MDB_txn *, enum store_db,
	    const void *, size_t, const void *, size_t, uint64_t, uint64_t,
	    uint16_t, const void *, size_t, int, const char *);
/* commit a write txn whose work returned rc (else abort it): 0 done, 1
 * the map was grown (do it again, once), -1 failed (logged, errno) */
int	store_end_write(struct store *, MDB_txn *, int, int *,
	    enum store_db, const char *);

/* store_scan.c: due index entries swept in a caller's txn; whether a
 * live record's key starts with a prefix */
int	store_sweep_txn(struct store *, MDB_txn *, unsigned int,
	    unsigned int, uint64_t, size_t, struct store_sweep *);
int	store_prefix_any_txn(struct store *, MDB_txn *, enum store_db,
	    const void *, size_t, uint64_t, int *);

/* store_count.c: a group's count in a caller's txn */
int	store_cnt_get(struct store *, MDB_txn *, unsigned int, const void *,
	    size_t, uint64_t *);
int	store_cnt_add(struct store *, MDB_txn *, unsigned int, const void *,
	    size_t, int);

#endif /* VMCPD_STORE_LMDB_H */
