/* engine.h - what every evaluation of one process shares, built once.
 *
 * An engine probes the host (and refuses one that cannot hold a sandbox),
 * sweeps the cgroups a killed execeval left behind, plans the mounts,
 * prepares the harness, compiles the seccomp program, makes the event loop
 * every sandbox runs on and, for warm isolation, starts the warm workers.
 * Evaluations (evaluate.h, scheduler.h, the server) take the engine plus
 * their options (struct ee_eval_options: configuration only).
 *
 * Lifecycle: ee_engine_open, then any number of evaluations on its loop,
 * then ee_engine_close (kills the workers, frees everything; accepts NULL).
 * The engine owns everything it built; the accessors' pointers are borrowed
 * until ee_engine_close. Errors: ee_err, EE_ERR_SANDBOX for the host.
 */
#ifndef EE_ENGINE_H
#define EE_ENGINE_H

#include <jansson.h>

#include "base/tally.h"

struct ee_err;
struct ee_eval_options;
struct ee_harness;
struct ee_host;
struct ee_loop;
struct ee_breaker;
struct ee_events_log;
struct ee_sandbox_config;

struct ee_engine;
struct ee_judges;

struct ee_engine_config {
	/* Read (limits, weak_limits, isolation, lint) and fitted to the host:
	 * with a writable memory cgroup weak_limits is cleared; without one
	 * the host is refused unless weak_limits, and then opt->limits are
	 * fitted to the fallback (ee_limits_fit_weak). Not kept. */
	struct ee_eval_options *opt;
	unsigned workers; /* candidates at once: warm workers to start when opt->isolation
	                   * asks for warm (twice as many under --judge separate) */
	/* The loop alone: no host probe, no sandbox (code that runs no
	 * candidate, as the scheduler's unit test); evaluations then fail. */
	int loop_only;
};

/* Warm isolation starts cfg->workers workers (2 x under --judge separate:
 * the judge's sandbox is forked from a worker of its own); auto falls back
 * to cold, with a note on stderr, where the host cannot run them. */
int ee_engine_open(const struct ee_engine_config *cfg, struct ee_engine **ret, struct ee_err *err);
void ee_engine_close(struct ee_engine *eng);

struct ee_loop *ee_engine_loop(const struct ee_engine *eng);
/* The circuit breaker (opt->breaker; breaker.h), fed every record the
 * engine builds; and the lifecycle log (opt->events_path; events_log.h). */
struct ee_breaker *ee_engine_breaker(struct ee_engine *eng);
struct ee_events_log *ee_engine_events(struct ee_engine *eng);
/* Every violation of every record since the engine opened, by kind
 * (verdict/violations.h), and how many times the breaker tripped. */
const struct ee_tally *ee_engine_violations(const struct ee_engine *eng);
unsigned long ee_engine_breaker_trips(const struct ee_engine *eng);
/* A record the engine built (evaluate.c): to the events log, the breaker
 * and the violation counters. */
void ee_engine_saw_record(struct ee_engine *eng, const json_t *rec);
/* Sandbox starts, the engine's health (serve's /healthz and /metrics):
 * EE_ENGINE_SICK_AFTER failed in a row (each failed start was already
 * retried on a freshly made warm worker, evaluate.c) make the engine sick,
 * said once on stderr, until a start succeeds (said once too). */
#define EE_ENGINE_SICK_AFTER 3
struct ee_engine_health {
	int sick;
	unsigned long failing;      /* starts failed in a row now */
	unsigned long failures;     /* starts failed since the engine opened */
	unsigned long replacements; /* warm workers made again (worker.h) */
	char why[256];              /* the last failure's message, "" before any */
};
/* A sandbox started (failed NULL: it ran its payload) or not (failed says
 * why); an interrupted one is not reported. */
void ee_engine_saw_start(struct ee_engine *eng, const struct ee_err *failed);
void ee_engine_health(const struct ee_engine *eng, struct ee_engine_health *ret);
/* A person looked (serve's POST /v1/admin/resume): the breaker starts over. */
void ee_engine_resume(struct ee_engine *eng);
/* Warm workers that fork sessions (engine/session.h), each session a
 * detached sandbox of its own, with preload (NULL-ended, borrowed until
 * ee_engine_close) imported at their warm-up: serve calls it once. It only
 * says how to make them: they start at the first session
 * (ee_engine_session_pool). Where warm cannot run (not root, --isolation
 * cold, another backend) sessions start cold and this does nothing. */
int ee_engine_open_sessions(struct ee_engine *eng, const struct ee_eval_options *o,
                            const char *const *preload, unsigned workers, struct ee_err *err);
/* The sessions' warm workers, started at the first call (their warm-up
 * then runs while that session's start waits for one); NULL when
 * sessions start cold, or when the workers could not start (said once on
 * stderr; from then on cold). */
struct ee_pool *ee_engine_session_pool(struct ee_engine *eng);
/* --judge split: the CPU a pair's two sides share (each pins itself to
 * it: the judge by its job's "cpu", the candidate by its go's; so a relayed
 * call's four hops wake processes on one CPU rather than an idle other
 * one, docs/protocol.md), the one the fewest live pairs share; -1 when
 * there is nothing to choose (one CPU, not the native backend). Each
 * taken is given back once, with ee_engine_pair_cpu_done (-1: nothing). */
#define EE_ENGINE_PAIR_CPUS 64
int ee_engine_pair_cpu(struct ee_engine *eng);
void ee_engine_pair_cpu_done(struct ee_engine *eng, int cpu);
/* --judge separate's long-lived judges (judge_host.h), ended at close. */
struct ee_judges *ee_engine_judges(struct ee_engine *eng);
/* NULL for a loop-only engine. */
const struct ee_host *ee_engine_host(const struct ee_engine *eng);
const struct ee_harness *ee_engine_harness(const struct ee_engine *eng);
/* Candidates are forked from warm workers (else cold). */
int ee_engine_warm(const struct ee_engine *eng);
/* Candidates run under gVisor (--backend gvisor). */
int ee_engine_gvisor(const struct ee_engine *eng);
/* "gvisor", "docker", or NULL for the native backend (the record's "backend"). */
const char *ee_engine_backend(const struct ee_engine *eng);

/* Fills cfg's host, mounts, seccomp, harness and pool: -1 (err filled)
 * for a loop-only engine, which runs no sandbox. */
int ee_engine_sandbox_config(const struct ee_engine *eng, struct ee_sandbox_config *cfg, struct ee_err *err);

/* The proof that matters (doctor, serve's start-up): one trivial candidate
 * through the engine's real sandbox with o's options. 0 when it passed,
 * *wall_ms its wall time; else -1, err (EE_ERR_SANDBOX) saying why. */
int ee_engine_check(struct ee_engine *eng, const struct ee_eval_options *o, double *wall_ms,
                    struct ee_err *err);

#endif
