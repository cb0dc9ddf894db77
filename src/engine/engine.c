/* engine.c - the runtime evaluations share (see engine.h). */
#include "engine/engine.h"

#include <jansson.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/loop.h"
#include "engine/events_log.h"
#include "engine/evaluate.h"
#include "engine/judge_host.h"
#include "harness/harness.h"
#include "sandbox/cgroup.h"
#include "sandbox/gvisor.h"
#include "sandbox/docker_run.h"
#include "sandbox/host.h"
#include "sandbox/mount.h"
#include "sandbox/sandbox.h"
#include "sandbox/seccomp.h"
#include "sandbox/worker.h"
#include "input/task.h"
#include "protocol/job.h"

struct ee_engine {
	int loop_only;
	struct ee_host host;
	struct ee_mount_plan mounts;
	struct ee_seccomp_prog seccomp;
	struct ee_harness harness;
	struct ee_loop *loop;
	struct ee_pool *pool;         /* warm workers, when the isolation is warm */
	struct ee_pool *session_pool; /* serve's sessions' warm workers, from the first session on */
	/* How to make them (ee_engine_open_sessions): n 0 when sessions start
	 * cold; failed once a start of them failed (then cold too). */
	struct ee_pool_setup session_setup;
	unsigned session_workers;
	int session_pool_failed;
	struct ee_gvisor gvisor;
	struct ee_gvisor *use_gvisor; /* --backend gvisor: &gvisor, open (its bundle
	                                 counter changes per candidate); else NULL */
	struct ee_docker docker;
	struct ee_docker *use_docker;   /* --backend docker: &docker; else NULL */
	struct ee_breaker breaker;      /* --breaker, fed every record (evaluate.c) */
	struct ee_events_log events;    /* --events */
	struct ee_tally violations;     /* of every record, by kind */
	unsigned long trips;            /* times the breaker tripped */
	struct ee_judges judges;        /* --judge separate: the long-lived judges (judge_host.h) */
	struct ee_engine_health health; /* sandbox starts (ee_engine_saw_start) */
	/* --judge split: the CPUs this process may run on (at open), and the
	 * live pairs placed on each (ee_engine_pair_cpu); n_cpus 0: none placed. */
	int cpus[EE_ENGINE_PAIR_CPUS];
	unsigned pairs[EE_ENGINE_PAIR_CPUS];
	int n_cpus;
};

/* Refused calls reach the supervisor by user notification (the tripwires),
 * natively only: under gVisor and Docker the relay loads the filter inside
 * the sentry or the container, where no listener could reach the
 * supervisor, so a refused call there fails with EPERM, uncounted. */
static unsigned seccomp_flags(const struct ee_eval_options *o)
{
	unsigned watch = EE_SECCOMP_NOTIFY | EE_SECCOMP_WATCH_WRITES;
	/* bench/write-tripwire's baseline: the same filter without watching
	 * writes (docs/record.md, "write_outside_tmp"). */
	const char *w = getenv("EXECEVAL_WRITE_TRIPWIRE");
	if (w && strcmp(w, "off") == 0)
		watch = EE_SECCOMP_NOTIFY;
	return (o->weak_limits ? EE_SECCOMP_NO_MEMFD : 0) | (o->backend != EE_BACKEND_NATIVE ? 0 : watch);
}

/* Warm workers when asked for; auto falls back to cold where warm cannot run. */
static int start_pool(struct ee_engine *eng, const struct ee_eval_options *o, unsigned workers,
                      struct ee_err *err)
{
	struct ee_err why = { 0 };

	if (o->isolation == EE_ISOLATION_COLD || o->backend != EE_BACKEND_NATIVE)
		return 0;
	/* --judge separate: a candidate holds two sandboxes at once, the
	 * candidate's and the judge's (evaluate_judge.c), each forked from a
	 * worker of its own: two workers per slot, so a judge starts from a
	 * worker's pristine copy as a candidate does and keeps nothing of the
	 * last evaluation (docs/threat-model.md, "The long-lived judge"). */
	if (o->judge == EE_JUDGE_SEPARATE)
		workers *= 2;
	if (ee_pool_supported(&eng->host, &why) < 0) {
		if (o->isolation == EE_ISOLATION_WARM) {
			*err = why;
			return -1;
		}
		fprintf(stderr, "execeval: running cold: %s\n", why.msg);
		return 0;
	}
	/* Every job of an inline pool denies the same imports (job.c): its
	 * workers install that policy once. A separate judge's jobs differ
	 * (the judge denies nothing), so its candidates install their own. */
	struct ee_pool_setup s = { .host = &eng->host,
		                   .mounts = &eng->mounts,
		                   .seccomp = &eng->seccomp,
		                   .limits = o->limits,
		                   .lint = o->lint };
	if (o->deny_imports && o->judge != EE_JUDGE_SEPARATE)
		s.deny = ee_default_denylist;
	return ee_pool_new(&s, workers, &eng->pool, err);
}

/* Without a memory cgroup --memory is only RLIMIT_AS, which the pages of
 * files (memfd, /tmp) never touch: run there only when told to, with
 * memfd_create refused and /tmp and file sizes fitted inside --memory.
 * The message fits ee_err; doctor says why the cgroup is unusable. */
static int check_memory_limit(const struct ee_host *h, struct ee_eval_options *o, struct ee_err *err)
{
	if (ee_host_has_memory_cgroup(h)) {
		o->weak_limits = 0;
		return 0;
	}
	if (!o->weak_limits)
		return ee_fail(err, EE_ERR_SANDBOX,
		               "no writable memory cgroup: --memory would be RLIMIT_AS only, which memfd "
		               "and /tmp pages escape; give execeval one (docker --cgroupns=private; "
		               "unprivileged: systemd-run --user --scope -p Delegate=yes) or pass "
		               "--weak-limits");
	ee_limits_fit_weak(&o->limits);
	return 0;
}

static int build(struct ee_engine *eng, const struct ee_engine_config *cfg, struct ee_err *err)
{
	struct ee_eval_options *o = cfg->opt;

	if (cfg->loop_only)
		return ee_loop_new(&eng->loop, err);
	if (ee_host_probe(&eng->host, err) < 0 || ee_host_usable(&eng->host, err) < 0 ||
	    check_memory_limit(&eng->host, o, err) < 0)
		return -1;
	if (o->backend == EE_BACKEND_GVISOR && o->isolation == EE_ISOLATION_WARM)
		return ee_fail(err, EE_ERR_USAGE,
		               "--isolation warm: not with --backend gvisor yet (one runsc sandbox per "
		               "candidate, cold); drop --isolation or use --backend native");
	if (o->backend == EE_BACKEND_DOCKER && o->isolation == EE_ISOLATION_WARM)
		return ee_fail(err, EE_ERR_USAGE,
		               "--isolation warm: not with --backend docker (one container per candidate, "
		               "cold); drop --isolation or use --backend native");
	ee_cgroup_sweep_stale(&eng->host);
	if (ee_mount_plan(o->limits.tmp_mb, &eng->mounts, err) < 0 ||
	    ee_harness_prepare(eng->host.python, &eng->harness, err) < 0 ||
	    ee_seccomp_compile(seccomp_flags(o), &eng->seccomp, err) < 0 || ee_loop_new(&eng->loop, err) < 0)
		return -1;
	if (o->backend == EE_BACKEND_GVISOR) {
		if (ee_gvisor_open(&eng->gvisor, o->gvisor_platform, &eng->mounts, eng->host.python, err) < 0)
			return -1;
		eng->use_gvisor = &eng->gvisor;
	}
	if (o->backend == EE_BACKEND_DOCKER) {
		if (ee_docker_open(&eng->docker, o->docker_image, err) < 0)
			return -1;
		eng->use_docker = &eng->docker;
	}
	return start_pool(eng, o, cfg->workers, err);
}

/* The CPUs a split pair may be placed on: natively, those this process
 * may run on, when there are two or more (on one there is nothing to
 * choose); under gVisor and Docker none (a CPU number inside is not the
 * host's). */
static void find_pair_cpus(struct ee_engine *eng, const struct ee_eval_options *o)
{
	cpu_set_t set;

	if (o->backend != EE_BACKEND_NATIVE || sched_getaffinity(0, sizeof(set), &set) < 0)
		return;
	for (int c = 0; c < CPU_SETSIZE && eng->n_cpus < EE_ENGINE_PAIR_CPUS; c++)
		if (CPU_ISSET(c, &set))
			eng->cpus[eng->n_cpus++] = c;
	if (eng->n_cpus < 2)
		eng->n_cpus = 0;
}

int ee_engine_pair_cpu(struct ee_engine *eng)
{
	int best = -1;

	for (int k = 0; k < eng->n_cpus; k++)
		if (best < 0 || eng->pairs[k] < eng->pairs[best])
			best = k;
	if (best < 0)
		return -1;
	eng->pairs[best]++;
	return eng->cpus[best];
}

void ee_engine_pair_cpu_done(struct ee_engine *eng, int cpu)
{
	for (int k = 0; cpu >= 0 && k < eng->n_cpus; k++)
		if (eng->cpus[k] == cpu && eng->pairs[k] > 0) {
			eng->pairs[k]--;
			return;
		}
}

int ee_engine_open(const struct ee_engine_config *cfg, struct ee_engine **ret, struct ee_err *err)
{
	struct ee_engine *eng = calloc(1, sizeof(*eng));

	*ret = NULL;
	if (!eng)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	eng->loop_only = cfg->loop_only;
	eng->harness.code_fd = -1;
	find_pair_cpus(eng, cfg->opt);
	eng->events.fd = -1;
	if (ee_breaker_init(&eng->breaker, &cfg->opt->breaker, err) < 0 ||
	    ee_events_log_open(&eng->events, cfg->opt->events_path, err) < 0 || build(eng, cfg, err) < 0) {
		ee_engine_close(eng);
		return -1;
	}
	*ret = eng;
	return 0;
}

void ee_engine_close(struct ee_engine *eng)
{
	if (!eng)
		return;
	if (eng->loop)
		ee_judges_close(&eng->judges, eng->loop);
	ee_pool_free(eng->pool);
	ee_pool_free(eng->session_pool);
	ee_gvisor_close(&eng->gvisor);
	ee_breaker_free(&eng->breaker);
	ee_events_log_close(&eng->events);
	ee_loop_free(eng->loop);
	ee_harness_release(&eng->harness);
	ee_seccomp_free(&eng->seccomp);
	free(eng);
}

int ee_engine_open_sessions(struct ee_engine *eng, const struct ee_eval_options *o,
                            const char *const *preload, unsigned workers, struct ee_err *err)
{
	struct ee_err why = { 0 };

	(void)err;
	if (eng->loop_only || eng->session_workers || workers == 0 || o->backend != EE_BACKEND_NATIVE ||
	    o->isolation == EE_ISOLATION_COLD)
		return 0;
	if (ee_pool_supported(&eng->host, &why) < 0)
		return 0; /* cold, as the candidates (said once already) */
	/* Every session's job denies what a candidate's does (session.c): its
	 * workers install that policy once, after the preloads. Made at the
	 * first session (ee_engine_session_pool): a server that never gets
	 * one holds no worker for them. */
	eng->session_setup = (struct ee_pool_setup){ .host = &eng->host,
		                                     .mounts = &eng->mounts,
		                                     .seccomp = &eng->seccomp,
		                                     .limits = o->limits,
		                                     .preload = preload };
	if (o->deny_imports)
		eng->session_setup.deny = ee_default_denylist;
	eng->session_workers = workers;
	return 0;
}

struct ee_pool *ee_engine_session_pool(struct ee_engine *eng)
{
	struct ee_err err = { 0 };

	if (eng->session_pool || !eng->session_workers || eng->session_pool_failed)
		return eng->session_pool;
	/* The workers warm up while the first session's start waits for one
	 * (worker.c: a claim awaits READY on the loop). */
	if (ee_pool_new(&eng->session_setup, eng->session_workers, &eng->session_pool, &err) < 0) {
		eng->session_pool_failed = 1;
		eng->session_pool = NULL;
		fprintf(stderr, "execeval: sessions run cold: their warm workers could not start: %s\n",
		        err.msg);
	}
	return eng->session_pool;
}

struct ee_judges *ee_engine_judges(struct ee_engine *eng)
{
	return &eng->judges;
}

struct ee_breaker *ee_engine_breaker(struct ee_engine *eng)
{
	return &eng->breaker;
}

struct ee_events_log *ee_engine_events(struct ee_engine *eng)
{
	return &eng->events;
}

const struct ee_tally *ee_engine_violations(const struct ee_engine *eng)
{
	return &eng->violations;
}

unsigned long ee_engine_breaker_trips(const struct ee_engine *eng)
{
	return eng->trips;
}

void ee_engine_saw_record(struct ee_engine *eng, const json_t *rec)
{
	const char *kind;
	json_t *n;

	ee_events_log_ended(&eng->events, rec);
	json_object_foreach ((json_t *)json_object_get(rec, "violations"), kind, n)
		if (json_is_integer(n) && json_integer_value(n) > 0)
			ee_tally_add(&eng->violations, kind, (unsigned long)json_integer_value(n));
	if (ee_breaker_feed(&eng->breaker, rec)) {
		eng->trips++;
		ee_events_log_tripped(&eng->events, eng->breaker.why);
	}
}

void ee_engine_saw_start(struct ee_engine *eng, const struct ee_err *failed)
{
	struct ee_engine_health *h = &eng->health;

	if (!failed) {
		if (h->sick)
			fprintf(stderr,
			        "execeval: sandboxes start again (after %lu failed starts in a row)\n",
			        h->failing);
		h->sick = 0;
		h->failing = 0;
		return;
	}
	h->failures++;
	h->failing++;
	snprintf(h->why, sizeof(h->why), "%s", failed->msg);
	if (!h->sick && h->failing >= EE_ENGINE_SICK_AFTER) {
		/* Once, not per candidate: a server keeps answering (with errors)
		 * and its /healthz says 503 until a start succeeds. */
		h->sick = 1;
		fprintf(stderr,
		        "execeval: sandboxes cannot be started: %lu starts in a row failed (last: %s); "
		        "`execeval doctor` says what the host lacks\n",
		        h->failing, h->why);
	}
}

void ee_engine_health(const struct ee_engine *eng, struct ee_engine_health *ret)
{
	*ret = eng->health;
	ret->replacements = ee_pool_replacements(eng->pool);
}

void ee_engine_resume(struct ee_engine *eng)
{
	if (eng->breaker.tripped)
		ee_events_log_resumed(&eng->events);
	ee_breaker_reset(&eng->breaker);
}

struct ee_loop *ee_engine_loop(const struct ee_engine *eng)
{
	return eng->loop;
}

const struct ee_host *ee_engine_host(const struct ee_engine *eng)
{
	return eng->loop_only ? NULL : &eng->host;
}

const struct ee_harness *ee_engine_harness(const struct ee_engine *eng)
{
	return &eng->harness;
}

int ee_engine_gvisor(const struct ee_engine *eng)
{
	return eng->use_gvisor != NULL;
}

const char *ee_engine_backend(const struct ee_engine *eng)
{
	return eng->use_gvisor ? "gvisor" : eng->use_docker ? "docker" : NULL;
}

int ee_engine_warm(const struct ee_engine *eng)
{
	return eng->pool != NULL;
}

int ee_engine_sandbox_config(const struct ee_engine *eng, struct ee_sandbox_config *cfg, struct ee_err *err)
{
	if (eng->loop_only)
		return ee_fail(err, EE_ERR_SANDBOX, "internal: this engine runs no sandbox (loop only)");
	cfg->host = &eng->host;
	cfg->mounts = &eng->mounts;
	cfg->seccomp = &eng->seccomp;
	cfg->argv = eng->harness.argv;
	cfg->code_fd = eng->harness.code_fd;
	cfg->pool = eng->pool;
	cfg->gvisor = eng->use_gvisor;
	cfg->docker = eng->use_docker;
	return 0;
}

static void keep_record(void *ctx, json_t *record)
{
	*(json_t **)ctx = record;
}

int ee_engine_check(struct ee_engine *eng, const struct ee_eval_options *o, double *wall_ms,
                    struct ee_err *err)
{
	static const char *const asserts[] = { "assert add(1, 2) == 3" };
	struct ee_task task = { 0 };
	json_t *rec = NULL;
	int rc = -1;

	if (ee_task_from_asserts(asserts, 1, &task, err) < 0 ||
	    (o->strict_asserts && ee_task_strict_asserts(&task, err) < 0)) {
		ee_task_free(&task);
		return -1;
	}
	struct ee_candidate cand = { .task = &task,
		                     .program = "def add(a, b):\n    return a + b\n",
		                     .sample = -1 };
	int sig = ee_eval_start(eng, o, &cand, keep_record, &rec, err) < 0 ? -1 : ee_loop_run(eng->loop, err);
	if (sig > 0) {
		ee_fail(err, EE_ERR_SANDBOX, "interrupted by signal %d", sig);
	} else if (sig == 0) {
		const char *status = json_string_value(json_object_get(rec, "status"));
		const char *why = json_string_value(json_object_get(rec, "sandbox_error"));
		if (!why)
			why = json_string_value(json_object_get(rec, "detail"));
		if (status && strcmp(status, "pass") == 0) {
			*wall_ms = json_number_value(
			        json_object_get(json_object_get(rec, "resources"), "wall_ms"));
			rc = 0;
		} else {
			ee_fail(err, EE_ERR_SANDBOX, "a trivial candidate did not pass: %s",
			        why      ? why
			        : status ? status
			                 : "no record");
		}
	}
	json_decref(rec);
	ee_task_free(&task);
	return rc;
}
