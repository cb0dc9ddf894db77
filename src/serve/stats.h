/* stats.h - what the server counts, and its Prometheus text (GET /metrics).
 *
 * Counters and histograms live in one plain struct updated on the loop's
 * thread; gauges (queue depth, running) are read when rendering. Label values
 * come from fixed tables only (endpoints, codes, statuses, reasons): a client
 * cannot create new series by sending odd paths.
 */
#ifndef EE_SERVE_STATS_H
#define EE_SERVE_STATS_H

#include <stddef.h>

struct ee_refcache_stats;
struct ee_tally;

enum ee_endpoint {
	EE_EP_RUN,
	EE_EP_BATCH,
	EE_EP_HEALTHZ,
	EE_EP_METRICS,
	EE_EP_RUN_CODE,     /* SandboxFusion's POST /run_code (run_code.h) */
	EE_EP_PING,         /* and its GET /v1/ping */
	EE_EP_GET_REWARD,   /* OpenRLHF's POST /get_reward (get_reward.h) */
	EE_EP_ADMIN_RESUME, /* POST /v1/admin/resume: the circuit breaker starts over */
	EE_EP_SESSIONS,     /* /v1/sessions and below (sessions.h) */
	EE_EP_RUN_JUPYTER,  /* SandboxFusion's POST /run_jupyter (run_jupyter.h) */
	EE_EP_OTHER,
	EE_EP_COUNT
};
enum ee_reject {
	EE_REJ_QUEUE_FULL,
	EE_REJ_TOO_LARGE,
	EE_REJ_UNAUTHORIZED,
	EE_REJ_BAD_REQUEST,
	EE_REJ_DRAINING,
	EE_REJ_OVER_BUDGET, /* 429: --max-buffered or an address's share of it is held */
	EE_REJ_TOO_SLOW,    /* a body slower than --body-min-rate: closed */
	EE_REJ_TRIPPED,     /* 503: the circuit breaker tripped (engine/breaker.h) */
	EE_REJ_COUNT
};

#define EE_HTTP_CODES 13 /* 200 400 401 404 405 408 413 422 429 500 503 504, other */
#define EE_STATUSES   5
#define EE_BUCKETS    14

struct ee_histogram {
	unsigned long long count, buckets[EE_BUCKETS]; /* buckets[i]: observations <= bound i */
	double sum;
};

struct ee_serve_stats {
	unsigned long long requests[EE_EP_COUNT][EE_HTTP_CODES];
	unsigned long long evaluations[EE_STATUSES]; /* by status */
	unsigned long long sandbox_failures;
	unsigned long long rejected[EE_REJ_COUNT];
	struct ee_histogram request_s[EE_EP_COUNT]; /* by endpoint; kept for the evaluating ones */
	struct ee_histogram evaluation_s;
	/* /run_code's own queue (run_code.h): waits from arrival to the
	 * sandbox's start, and 504s (could not start before its deadline). */
	struct ee_histogram run_code_wait_s;
	unsigned long long run_code_timeouts;
	/* Requests with an Execeval-Deadline whose candidates could not all
	 * start in time (dispatch.h): /v1/run and /v1/batch answered 504,
	 * /get_reward answered with those samples as infrastructure errors. */
	unsigned long long v1_timeouts, get_reward_timeouts;
	/* answered from a sandbox that ran several (run_code.h), run again alone */
	unsigned long long run_code_coalesced, run_code_reruns;
};

struct ee_serve_gauges {
	size_t queue_depth, queue_capacity;
	unsigned running, workers;
	int draining;
	size_t buffered, buffered_capacity; /* bytes held for clients (budget.h), --max-buffered */

	size_t run_code_depth, run_code_capacity; /* /run_code's own queue */

	/* The engine's tripwires: violations by kind (a bounded table, its
	 * names from the syscall table and violations.h), the breaker. */
	const struct ee_tally *violations;
	int tripped;
	unsigned long trips;

	const struct ee_refcache_stats *refcache; /* generated tests' reference results, or NULL */

	/* The engine's health (engine.h, struct ee_engine_health). */
	int healthy;
	unsigned long starts_failing, start_failures, worker_replacements;
	unsigned long heal_probes; /* trivial candidates a sick server ran (heal.h) */
};

/* The endpoint a path counts under. */
int ee_endpoint_of(const char *path);

void ee_stats_answer(struct ee_serve_stats *s, int endpoint, unsigned code);

/* 1 for the endpoints that evaluate (/v1/run, /v1/batch, /get_reward):
 * their request durations are a histogram in /metrics. */
int ee_stats_times_requests(int endpoint);
void ee_stats_observe(struct ee_histogram *h, double seconds);
/* Counts a record's status ("pass", ...) or a sandbox failure (no status). */
void ee_stats_record(struct ee_serve_stats *s, const char *status);

/* The exposition text, malloc'd (NUL-terminated); NULL when out of memory. */
char *ee_stats_render(const struct ee_serve_stats *s, const struct ee_serve_gauges *g, size_t *ret_len);

#endif
