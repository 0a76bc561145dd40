/*
 * Fake shared figures for the unit tests of counters.c and the
 * diagnostics (test_counters_op.c, test_diag_window.c): two backends
 * ("one", "two"), two workers' slots and the builder's, this process
 * in slot 1.  Include after <cmocka.h>.
 */
#ifndef VMCPD_UNIT_SLOTS_H
#define VMCPD_UNIT_SLOTS_H

#include <stdlib.h>
#include <string.h>

#include "shared/config.h"
#include "shared/stats.h"
#include "worker/process/counters.h"
#include "worker/process/process.h"

static struct config		 conf;
static struct config_backend	 bes[2];
static struct worker		 w;

static int
setup(void **state)
{
	(void)state;
	memset(&conf, 0, sizeof(conf));
	memset(bes, 0, sizeof(bes));
	memset(&w, 0, sizeof(w));
	bes[0].cb_name = "one";
	bes[1].cb_name = "two";
	conf.cf_backends = bes;
	conf.cf_nbackends = 2;
	w.w_conf = &conf;
	w.w_nstats = 2;		/* two workers and the builder */
	w.w_stat_slot = 1;
	if ((w.w_stats = calloc(1, diag_stats_size(&conf, 3))) == NULL)
		return -1;
	diag_counters_init();
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	free(w.w_stats);
	return 0;
}

#endif
