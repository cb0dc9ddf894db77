/* resource_limits.h - the resource limits of one evaluation, from one initializer.
 *
 * ee_limits_default() is the only source of defaults (docs/contract.md: timeout 3 s,
 * memory 512 MB, 64 processes, 256 KiB of output); ee_limits_clamp() brings
 * any user-given value into its documented range, so zero never silently
 * means "unlimited".
 */
#ifndef EE_RESOURCE_LIMITS_H
#define EE_RESOURCE_LIMITS_H

#include <stddef.h>

/* The ranges ee_limits_clamp brings user-given limits into (the CLI says
 * when it did: cli_clamp_limits). */
#define EE_TIMEOUT_MIN_S  0.1
#define EE_TIMEOUT_MAX_S  30.0 /* the longest wall clock any sandbox may have */
#define EE_MEMORY_MB_MIN  16u
#define EE_MEMORY_MB_MAX  65536u
#define EE_PROCS_MIN      2u /* the sandbox's init counts */
#define EE_PROCS_MAX      4096u
#define EE_OUTPUT_CAP_MIN ((size_t)1024)
#define EE_OUTPUT_CAP_MAX ((size_t)64 << 20)
#define EE_TMP_MB_MIN     1u
#define EE_TMP_MB_MAX     4096u

struct ee_limits {
	double timeout_s;    /* wall clock, [0.1, EE_TIMEOUT_MAX_S] */
	unsigned memory_mb;  /* cgroup memory (no swap), [16, 65536] */
	unsigned procs;      /* cgroup pids, [2, 4096] */
	size_t output_cap;   /* stdout + stderr bytes, [1024, 64 MiB] */
	unsigned tmp_mb;     /* size of the private /tmp, [1, 4096] */
	unsigned open_files; /* RLIMIT_NOFILE */
	unsigned file_mb;    /* RLIMIT_FSIZE */
	/* RLIMIT_CPU is timeout_s + 2 s (soft) for one evaluation. A process
	 * that judges one evaluation after another (the long-lived judge)
	 * gets this hard limit instead, its life's, and moves its soft limit
	 * per evaluation itself (judge.py); 0 for any other process. */
	unsigned cpu_life_s;
};

/* RLIMIT_CPU's soft and hard limits for lim (seconds). */
void ee_limits_cpu(const struct ee_limits *lim, unsigned long long *soft, unsigned long long *hard);

void ee_limits_default(struct ee_limits *lim);
void ee_limits_clamp(struct ee_limits *lim);

/* The fallback without a memory cgroup (--weak-limits): nothing counts the
 * pages of files, so the private /tmp and file size x open files each fit
 * inside memory_mb (lowering tmp_mb, then file_mb, then open_files). */
void ee_limits_fit_weak(struct ee_limits *lim);

#endif
