/* resource_limits.c - defaults and ranges of resource limits (see resource_limits.h). */
#include "base/resource_limits.h"

void ee_limits_default(struct ee_limits *lim)
{
	lim->timeout_s = 3.0;
	lim->memory_mb = 512;
	lim->procs = 64;
	lim->output_cap = 262144;
	lim->tmp_mb = 64;
	lim->open_files = 256;
	lim->file_mb = 64;
}

void ee_limits_cpu(const struct ee_limits *lim, unsigned long long *soft, unsigned long long *hard)
{
	/* A second past the wall clock, so a spinning candidate is normally
	 * a timeout; SIGXCPU ("cpu limit") catches CPU burnt in parallel by
	 * several threads. */
	*soft = (unsigned long long)lim->timeout_s + 2;
	*hard = lim->cpu_life_s > *soft ? lim->cpu_life_s : *soft + 1;
}

#define CLAMP(v, lo, hi) ((v) < (lo) ? (lo) : (v) > (hi) ? (hi) : (v))

void ee_limits_clamp(struct ee_limits *lim)
{
	/* NaN compares false both ways: treat it as the default. */
	if (!(lim->timeout_s == lim->timeout_s))
		lim->timeout_s = 3.0;
	lim->timeout_s = CLAMP(lim->timeout_s, EE_TIMEOUT_MIN_S, EE_TIMEOUT_MAX_S);
	lim->memory_mb = CLAMP(lim->memory_mb, EE_MEMORY_MB_MIN, EE_MEMORY_MB_MAX);
	/* The sandbox's init counts: 1 would fail every start (a host's
	 * failure by every sign, issue 34), 2 is the candidate alone. */
	lim->procs = CLAMP(lim->procs, EE_PROCS_MIN, EE_PROCS_MAX);
	lim->output_cap = CLAMP(lim->output_cap, EE_OUTPUT_CAP_MIN, EE_OUTPUT_CAP_MAX);
	lim->tmp_mb = CLAMP(lim->tmp_mb, EE_TMP_MB_MIN, EE_TMP_MB_MAX);
	lim->open_files = CLAMP(lim->open_files, 16u, 4096u);
	lim->file_mb = CLAMP(lim->file_mb, 1u, 4096u);
}

void ee_limits_fit_weak(struct ee_limits *lim)
{
	/* With memfd_create refused every file a candidate writes lives in
	 * its /tmp: the two bounds cover the same pages, so each fits alone. */
	if (lim->tmp_mb > lim->memory_mb)
		lim->tmp_mb = lim->memory_mb;
	unsigned per_file = lim->memory_mb / lim->open_files;
	if (lim->file_mb > per_file)
		lim->file_mb = per_file ? per_file : 1;
	if ((unsigned long)lim->file_mb * lim->open_files > lim->memory_mb)
		lim->open_files = lim->memory_mb / lim->file_mb; /* >= 16: memory_mb >= 16 */
}
