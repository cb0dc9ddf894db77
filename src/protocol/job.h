/* job.h - the job the harness reads from fd 3 (docs/protocol.md).
 *
 * The job holds the program, the task's setup and its public tests without the
 * expected values of io and call tests (those never enter the sandbox), the
 * import denylist, the scan mode, the gate flag and the io output cap. A
 * program that is not valid UTF-8 goes as code_b64, so Python's own rules
 * for source bytes apply inside.
 */
#ifndef EE_JOB_H
#define EE_JOB_H

#include <stddef.h>

struct ee_calibration;
struct ee_task;
struct ee_test;

/* The default import denylist (module names and dotted attributes). */
extern const char *const ee_default_denylist[];

/* Whose job (--judge separate, docs/protocol.md "Separate judge"). */
enum ee_job_role {
	EE_JOB_INLINE, /* today's: the program and its tests in one interpreter */
	EE_JOB_SERVE,  /* the candidate's side: the program, then calls; no tests, no setup */
	EE_JOB_JUDGE   /* the judge's side: setup and tests, no candidate code */
};

struct ee_job_spec {
	const struct ee_task *task; /* borrowed */
	const char *program;
	const char *nonce; /* 32 hex characters */
	int deny_imports;  /* send ee_default_denylist, else an empty list */
	int scan;          /* enum ee_scan_mode */
	int gate;          /* ask the supervisor before hidden tests */
	size_t io_output_cap;
	int lint;                         /* run the lint phase (lint.py travels in the job) */
	long test_timeout_ms;             /* --test-timeout: each clocked test's own (0: none) */
	const struct ee_calibration *cal; /* --time-factor's limits, or NULL (off) */
	int role;                         /* enum ee_job_role */
	/* --judge separate's inline runs of a mixed task (docs/protocol.md,
	 * "Mixed tasks"): only the tests the supervisor judges (io, call,
	 * strict: ee_test_judged_by_supervisor), never the judge's assert,
	 * program and unittest code; the import phase runs as it would have
	 * with them ("import_phase"). */
	int supervisors_only;
	/* Role judge only: the CPU it shares with its candidate, which it pins
	 * itself to ("cpu"; docs/protocol.md), or -1. */
	int cpu;
};

/* The job as compact JSON (public tests only: hidden ones follow the gate) (malloc'd, owned by the caller), *ret_len its
 * length; NULL when out of memory or the task holds invalid UTF-8. */
char *ee_job_build(const struct ee_job_spec *spec, size_t *ret_len);

/* The gate's opening as the harness reads it on fd 5: 'c', then a netstring
 * of {"tests": [the hidden tests, as the job's]} (malloc'd, owned by the
 * caller), *ret_len its length; NULL when out of memory. */
char *ee_job_hidden(const struct ee_task *task, long test_timeout_ms, const struct ee_calibration *cal,
                    size_t *ret_len);

/* ee_job_hidden for a job built with supervisors_only: the hidden tests
 * the supervisor judges, when supervisors_only. */
char *ee_job_hidden_of(const struct ee_task *task, int supervisors_only, long test_timeout_ms,
                       const struct ee_calibration *cal, size_t *ret_len);

/* The stdin of each /run_code request the task runs apart (its script's
 * "apart"), one after the other, for the gate: the job gives each one's
 * length only, and the harness reads each at its request's turn, so a
 * request's program never finds a later one's in its memory (harness
 * apart.py). *out malloc'd (owned by the caller), *len its length; *out
 * NULL and *len 0 when there is nothing to send (no test apart: every
 * other task), without allocating. -1 when out of memory. */
int ee_job_apart_stdins(const struct ee_task *task, char **out, size_t *len);

/* Whether --test-timeout clocks test t: io tests (not a /run_code script,
 * which has its own clock) and call tests, not converted asserts. */
int ee_job_test_clocked(const struct ee_test *t);

/* Whether strict test index's expected literal (any, for a strict program)
 * appears, whitespace and quote style aside, in test code the sandbox holds
 * while the test runs: the setup and the code of unconverted assert,
 * program and unittest tests (public ones; hidden ones too when the test
 * is hidden). 0 for a test that is not strict. */
int ee_job_expected_visible(const struct ee_task *task, size_t index);

#endif
