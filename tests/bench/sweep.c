/*
 * sweep: how fast the keeper's sweep removes expired sessions, and how
 * long a worker's write waits meanwhile (issue 11: >= 20,000 expired
 * sessions a second at 100k, no stall of serving).
 *
 *   make -f tests/bench/Makefile build/bench/sweep
 *   build/bench/sweep [records]         (default 100000)
 *
 * Records like a session (600 bytes, each rewritten once as by
 * notifications/initialized) are stored to expire; a child process
 * writes a record at a time (a worker creating sessions) while the
 * parent sweeps them as master/keeper.c does: batches of 256 index
 * entries, a pause of 1 ms between them.  It prints the sweep rate and
 * the child's write latencies during the sweep.  A measurement, not a
 * test: the figures depend on the machine.
 */
#include <sys/mman.h>
#include <sys/wait.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shared/log.h"
#include "shared/store.h"
#include "shared/store_sweep.h"

#define SWEEP_BATCH	256		/* as KEEPER_SWEEP_BATCH */
#define LAT_MAX		200000

static uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void
latencies(const char *when, uint64_t *lat, size_t m)
{
	qsort(lat, m, sizeof(*lat), cmp_u64);
	printf("a writer's store_put %s: %zu writes, p50 %llu us, p99 %llu "
	    "us, max %llu us\n", when, m, (unsigned long long)lat[m / 2],
	    (unsigned long long)lat[m * 99 / 100],
	    (unsigned long long)lat[m - 1]);
}

/* the child: writes until told to stop, latencies into shared memory */
static void
writer(const char *dir, volatile int *stop, uint64_t *lat, size_t *nlat)
{
	struct store	*st;
	char		 key[32], val[600];
	uint64_t	 t0;
	size_t		 i = 0;

	memset(val, 'w', sizeof(val));
	if (store_open(&st, dir, 1ULL << 30, 64, 0) == -1)
		_exit(1);
	while (!*stop && i < LAT_MAX) {
		(void)snprintf(key, sizeof(key), "w%08zu", i);
		t0 = now_us();
		if (store_put(st, STORE_SESSIONS, key, strlen(key), val,
		    sizeof(val), store_now_ms() + 3600000, store_now_ms()) != 0)
			_exit(2);
		lat[i++] = now_us() - t0;
		*nlat = i;
		usleep(100);	/* ~10k sessions/s at most */
	}
	store_close(st);
	_exit(0);
}

int
main(int argc, char *argv[])
{
	struct store		*st;
	const struct timespec	 pause = { 0, 1000000 };
	struct store_sweep	 ss;
	char			 dir[] = "/tmp/vmcpd-sweep.XXXXXX", key[64];
	char			 val[600], cmd[128];
	uint64_t		 exp, t0, t1, *lat;
	size_t			 n = argc > 1 ? strtoul(argv[1], NULL, 10) :
				    100000, i, swept = 0, entries = 0, txns = 0;
	size_t			*nlat;
	volatile int		*stop;
	void			*shm;
	pid_t			 pid;
	int			 status;

	log_init(1, "sweep");
	if (n == 0 || mkdtemp(dir) == NULL)
		return 1;
	shm = mmap(NULL, (2 + LAT_MAX) * sizeof(uint64_t),
	    PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED)
		return 1;
	stop = shm;
	nlat = (size_t *)((char *)shm + sizeof(uint64_t));
	lat = (uint64_t *)((char *)shm + 2 * sizeof(uint64_t));

	if (store_open(&st, dir, 1ULL << 30, 64, 0) == -1)
		return 1;
	memset(val, 's', sizeof(val));
	exp = store_now_ms() + 2000;
	t0 = now_us();
	for (i = 0; i < n; i++) {
		(void)snprintf(key, sizeof(key), "%043zu", i);
		if (store_put(st, STORE_SESSIONS, key, strlen(key), val,
		    sizeof(val), exp - 1000, store_now_ms()) != 0 ||
		    store_put(st, STORE_SESSIONS, key, strlen(key), val,
		    sizeof(val), exp, store_now_ms()) != 0)
			return 1;
	}
	t1 = now_us();
	printf("stored %zu records (each rewritten once) in %.2f s\n", n,
	    (double)(t1 - t0) / 1e6);
	while (store_now_ms() <= exp)
		usleep(10000);

	if ((pid = fork()) == -1)
		return 1;
	if (pid == 0)
		writer(dir, stop, lat, nlat);
	usleep(500000);		/* the writer alone first */
	i = *nlat;
	t0 = now_us();
	do {
		if (store_sweep(st, store_now_ms(), SWEEP_BATCH, &ss) == -1)
			return 1;
		swept += ss.ss_deleted;
		entries += ss.ss_entries;
		txns++;
		if (ss.ss_more)
			(void)nanosleep(&pause, NULL);	/* as the keeper */
	} while (ss.ss_more);
	t1 = now_us();
	*stop = 1;
	(void)waitpid(pid, &status, 0);

	printf("swept %zu expired records (%zu index entries met) in %zu "
	    "txns, %.3f s: %.0f records/s\n", swept, entries, txns,
	    (double)(t1 - t0) / 1e6, swept / ((double)(t1 - t0) / 1e6));
	if (i > 1 && *nlat > i + 1) {
		latencies("before the sweep", lat, i);
		latencies("during the sweep", lat + i, *nlat - i);
	}
	store_close(st);
	(void)snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 0 ? 0 : 1;
}
