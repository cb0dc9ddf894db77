/* evaluate.h - one candidate, from program text to result record.
 *
 * Builds the job (job.h), starts a sandbox on the engine's loop, validates
 * the event stream as it arrives (events.h), answers the gate, and when the
 * sandbox is gone hands the finished record (record.h, which decides the
 * verdict with score.h) to the caller's callback. Many evaluations can share one
 * engine (engine/engine.h: the host, sandbox parts and loop); each owns its
 * state until the callback has run. The options are configuration only.
 */
#ifndef EE_EVALUATE_H
#define EE_EVALUATE_H

#include <jansson.h>
#include <stddef.h>

#include "base/resource_limits.h"
#include "engine/breaker.h"
#include "input/task.h"
#include "verdict/reward.h"

struct ee_engine;
struct ee_err;
struct ee_sandbox_outcome;
struct ee_stream;
struct ee_task;

enum ee_scan_mode { EE_SCAN_OFF, EE_SCAN_REPORT, EE_SCAN_BLOCK };

/* Where assert, program and unittest tests run: in the candidate's own
 * interpreter (inline), or in a second one reaching the candidate through
 * relayed calls (separate, --judge split, the default: issue 17,
 * evaluate_judge.c). */
enum ee_judge_mode { EE_JUDGE_INLINE, EE_JUDGE_SEPARATE };

/* Lint findings' severities, in order; --lint-severity picks the threshold. */
enum ee_severity { EE_SEV_LOW, EE_SEV_MEDIUM, EE_SEV_HIGH };

/* How candidates are started (worker.h): a fresh interpreter each (cold), a
 * fork of a warm worker (warm), or warm where the host allows it (auto). */
enum ee_isolation { EE_ISOLATION_AUTO, EE_ISOLATION_COLD, EE_ISOLATION_WARM };

/* What isolates a candidate: the native sandbox, or gVisor's runsc
 * (sandbox/gvisor.h). The platforms are runsc's (ee_gvisor_platform). */
enum ee_backend { EE_BACKEND_NATIVE, EE_BACKEND_GVISOR, EE_BACKEND_DOCKER };
enum { EE_GVISOR_PLATFORM_PTRACE, EE_GVISOR_PLATFORM_KVM };

struct ee_eval_options {
	struct ee_limits limits;         /* the command line's; a task's own override them */
	int deny_imports;                /* the import denylist is on */
	int drain_output;                /* output past the cap is read and dropped, the record
	                                   * says output_truncated (--humaneval-compat); else a kill,
	                                   * "output overflow" */
	int scan;                        /* enum ee_scan_mode */
	int run_hidden_on_fail;          /* run hidden tests even when a public one failed */
	int isolation;                   /* enum ee_isolation, as asked for */
	int backend;                     /* enum ee_backend */
	int gvisor_platform;             /* EE_GVISOR_PLATFORM_*, with the gvisor backend */
	int lint;                        /* run the lint phase (--lint) */
	int lint_severity;               /* enum ee_severity: lint fails at or above it */
	int judge;                       /* --judge: enum ee_judge_mode (separate: evaluate_judge.c) */
	int strict_asserts;              /* --strict-asserts: the loader converts literal asserts
	                                   * (ee_task_strict_asserts); evaluation itself ignores it */
	int mbpp_challenge;              /* --mbpp-challenge: the loader adds MBPP's challenge_test_list
	                                   * as hidden tests (EE_TASK_MBPP_CHALLENGE) */
	int task_format;                 /* --format: enum ee_task_format the loader forces
	                                   * (EE_FORMAT_AUTO: detected per task) */
	int weak_limits;                 /* --weak-limits and no memory cgroup: RLIMIT_AS stands in,
	                                   * limits fitted by ee_limits_fit_weak (ee_engine_open) */
	double test_timeout_s;           /* --test-timeout: each io and call test's clock (0: off),
	                                   * clamped to the candidate's timeout */
	struct ee_reward reward;         /* --reward: the record's reward (zero: binary) */
	struct ee_breaker_spec breaker;  /* --breaker (n 0: off): the engine keeps the breaker */
	const char *events_path;         /* --events FILE (NULL: off): the engine's lifecycle log */
	const char *docker_image;        /* --image (docker-command; NULL: EE_DOCKER_IMAGE_DEFAULT) */
	struct ee_task_rules task_rules; /* --compare, --max-tests, --test-pick: the loader
	                                  * applies them (ee_task_apply_rules); evaluation ignores them */
	unsigned long long seed;         /* --seed: generated tests' inputs (engine/reference.h);
	                                  * --seed random has drawn it already */
	double hidden_fraction;          /* --hidden-fraction: of each task's generated tests, hidden */
	double time_floor_s;             /* --time-floor (0: not given), and */
	double time_factor;              /* --time-factor (0: not given); both 0: calibration off;
	                                  * ee_eval_calibration fills the other's default */
};

/* EvalPlus's defaults of the calibrated limits: a floor of 1 s, 4 x the
 * reference (evalplus.evaluate's min_time_limit, gt_time_limit_factor). */
#define EE_TIME_FLOOR_DEFAULT_S 1.0
#define EE_TIME_FACTOR_DEFAULT  4.0

/* The calibration o asks for under a candidate timeout of timeout_s (the
 * cap): factor 0 when neither --time-floor nor --time-factor was given. */
struct ee_calibration ee_eval_calibration(const struct ee_eval_options *o, double timeout_s);
/* The same from a floor and a factor (0: not given) as the options hold them. */
struct ee_calibration ee_calibration_of(double floor_s, double factor, double timeout_s);

/* A candidate's own calibrated limits (serve's request fields), in the
 * options' terms: time_floor_s and time_factor, 0 when not given. */
struct ee_time_rule {
	double floor_s, factor;
};

struct ee_candidate {
	const struct ee_task *task;           /* borrowed until the callback */
	const char *program;                  /* copied at start */
	const char *model;                    /* NULL: absent from the record */
	long sample;                          /* index, -1: absent */
	const json_t *extra;                  /* fields copied into the record, or NULL */
	int no_code_block;                    /* --extract fenced found no block */
	const char *extraction;               /* how program was found (extract.h); NULL: absent */
	const char *shard;                    /* "I/N" of eval --shard (copied at start); NULL: absent */
	size_t keep_output;                   /* bytes of stdout and of stderr kept; 0: the record's */
	const struct ee_reward *reward;       /* a request's own (copied at start); NULL: the options' */
	const struct ee_time_rule *time_rule; /* a request's own (copied at start); NULL: the options' */
	/* Called just before the record's callback, with the sandbox's outcome
	 * and the event stream (both borrowed for the call), when the sandbox
	 * ran (not when it could not be set up, nor when interrupted); NULL:
	 * none. serve's /run_code reads a script's whole output there. */
	void (*on_outcome)(void *ctx, const struct ee_sandbox_outcome *out, const struct ee_stream *s);
	void *outcome_ctx;
	int keep_values; /* the stream keeps each call's value (trusted code only: reference.c) */
	int trusted;     /* reference.c's own runs: a task whose generated tests are not made yet */
};

/* Receives the record (a new reference the callback owns), or NULL when the
 * evaluation was interrupted by a signal to execeval (no verdict exists: a
 * record would make --resume skip a candidate that was never judged). */
typedef void (*ee_record_cb)(void *ctx, json_t *record);

/* o is borrowed until the callback (a warm worker's loss starts the
 * candidate again with it). */
int ee_eval_start(struct ee_engine *eng, const struct ee_eval_options *o, const struct ee_candidate *c,
                  ee_record_cb cb, void *ctx, struct ee_err *err);

/* The record of a candidate whose sandbox could not be made at all
 * (ee_eval_start failed with EE_ERR_SANDBOX): its infrastructure error,
 * with its sample's key. NULL when out of memory. */
json_t *ee_candidate_sandbox_error(const struct ee_candidate *c, const char *msg);

/* Merges a task's limits over o's and clamps them. */
void ee_eval_limits(const struct ee_eval_options *o, const struct ee_task *t, struct ee_limits *ret);

#endif
