/* stats.c - counting and the Prometheus exposition (see stats.h). */
#include "serve/stats.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/tally.h"
#include "serve/refcache.h"
#include "verdict/violations.h"

static const char *const endpoint_names[EE_EP_COUNT] = {
	"/v1/run",     "/v1/batch",        "/healthz",     "/metrics",     "/run_code", "/v1/ping",
	"/get_reward", "/v1/admin/resume", "/v1/sessions", "/run_jupyter", "other"
};
static const unsigned codes[EE_HTTP_CODES - 1] = {
	200, 400, 401, 404, 405, 408, 413, 422, 429, 500, 503, 504
};
static const char *const status_names[EE_STATUSES] = { "pass", "assertion_fail", "syntax_error", "timeout",
	                                               "error" };
static const char *const reject_names[EE_REJ_COUNT] = { "queue_full",  "too_large", "unauthorized",
	                                                "bad_request", "draining",  "over_budget",
	                                                "too_slow",    "tripped" };
/* Seconds: a trivial warm candidate takes ~5 ms, the longest timeout 30 s. */
static const double bounds[EE_BUCKETS] = { 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
	                                   1,     2.5,  5,     10,   30,  60,   120 };

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

int ee_endpoint_of(const char *path)
{
	for (int i = 0; i < EE_EP_OTHER; i++)
		if (strcmp(path, endpoint_names[i]) == 0)
			return i;
	if (strncmp(path, "/v1/sessions/", 13) == 0)
		return EE_EP_SESSIONS;
	return EE_EP_OTHER;
}

static size_t code_index(unsigned code)
{
	for (size_t i = 0; i < COUNT(codes); i++)
		if (codes[i] == code)
			return i;
	return COUNT(codes);
}

void ee_stats_answer(struct ee_serve_stats *s, int endpoint, unsigned code)
{
	s->requests[endpoint][code_index(code)]++;
}

int ee_stats_times_requests(int endpoint)
{
	return endpoint == EE_EP_RUN || endpoint == EE_EP_BATCH || endpoint == EE_EP_GET_REWARD;
}

void ee_stats_observe(struct ee_histogram *h, double seconds)
{
	h->count++;
	h->sum += seconds;
	for (size_t i = 0; i < EE_BUCKETS; i++)
		if (seconds <= bounds[i])
			h->buckets[i]++;
}

void ee_stats_record(struct ee_serve_stats *s, const char *status)
{
	if (!status) {
		s->sandbox_failures++;
		return;
	}
	for (size_t i = 0; i < EE_STATUSES; i++)
		if (strcmp(status, status_names[i]) == 0)
			s->evaluations[i]++;
}

struct out {
	struct ee_buf b;
	int failed;
};

__attribute__((format(printf, 2, 3))) static void put(struct out *o, const char *fmt, ...)
{
	char line[256];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line) || ee_buf_append(&o->b, line, (size_t)n) < 0)
		o->failed = 1;
}

static void head(struct out *o, const char *name, const char *type, const char *help)
{
	put(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void histogram(struct out *o, const char *name, const char *labels, const struct ee_histogram *h)
{
	const char *sep = labels[0] ? "," : "";
	for (size_t i = 0; i < EE_BUCKETS; i++)
		put(o, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, labels, sep, bounds[i], h->buckets[i]);
	put(o, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels, sep, h->count);
	if (labels[0]) {
		put(o, "%s_sum{%s} %.6f\n", name, labels, h->sum);
		put(o, "%s_count{%s} %llu\n", name, labels, h->count);
	} else {
		put(o, "%s_sum %.6f\n%s_count %llu\n", name, h->sum, name, h->count);
	}
}

static void requests(struct out *o, const struct ee_serve_stats *s)
{
	head(o, "execeval_http_requests_total", "counter", "HTTP requests answered, by endpoint and code.");
	for (int e = 0; e < EE_EP_COUNT; e++)
		for (size_t c = 0; c < EE_HTTP_CODES; c++) {
			if (!s->requests[e][c])
				continue;
			char code[8];
			if (c < COUNT(codes))
				snprintf(code, sizeof(code), "%u", codes[c]);
			else
				snprintf(code, sizeof(code), "other");
			put(o, "execeval_http_requests_total{endpoint=\"%s\",code=\"%s\"} %llu\n",
			    endpoint_names[e], code, s->requests[e][c]);
		}
}

static void gauge(struct out *o, const char *name, const char *help, unsigned long long v)
{
	head(o, name, "gauge", help);
	put(o, "%s %llu\n", name, v);
}

static void counter(struct out *o, const char *name, const char *help, unsigned long long v)
{
	head(o, name, "counter", help);
	put(o, "%s %llu\n", name, v);
}

/* The queue of each route: /v1 (run, batch and /get_reward share the
 * dispatcher's, which refuses with 429 and makes no request wait past the
 * deadline its client sent: Execeval-Deadline) and /run_code (its own, with
 * deadlines: 504). Timeouts count /get_reward apart: its answer is a 200
 * whose late samples are infrastructure errors, not a 504. */
static void routes(struct out *o, const struct ee_serve_stats *s, const struct ee_serve_gauges *g)
{
	head(o, "execeval_route_queue_depth", "gauge", "Requests waiting for a sandbox, by route.");
	put(o, "execeval_route_queue_depth{route=\"/v1\"} %zu\n", g->queue_depth);
	put(o, "execeval_route_queue_depth{route=\"/run_code\"} %zu\n", g->run_code_depth);
	head(o, "execeval_route_queue_capacity", "gauge", "Requests that may wait, by route.");
	put(o, "execeval_route_queue_capacity{route=\"/v1\"} %zu\n", g->queue_capacity);
	put(o, "execeval_route_queue_capacity{route=\"/run_code\"} %zu\n", g->run_code_capacity);
	head(o, "execeval_route_timeouts_total", "counter",
	     "Requests that could not start before their deadline, by route: answered 504 (/get_reward: "
	     "a 200, its late samples infrastructure errors).");
	put(o, "execeval_route_timeouts_total{route=\"/v1\"} %llu\n", s->v1_timeouts);
	put(o, "execeval_route_timeouts_total{route=\"/get_reward\"} %llu\n", s->get_reward_timeouts);
	put(o, "execeval_route_timeouts_total{route=\"/run_code\"} %llu\n", s->run_code_timeouts);
	head(o, "execeval_route_queue_wait_seconds", "histogram",
	     "From a request's arrival to its sandbox's start, by route (/run_code only).");
	histogram(o, "execeval_route_queue_wait_seconds", "route=\"/run_code\"", &s->run_code_wait_s);
	counter(o, "execeval_run_code_coalesced_total",
	        "/run_code requests answered from a sandbox that ran several requests of their program.",
	        s->run_code_coalesced);
	counter(o, "execeval_run_code_reruns_total",
	        "/run_code requests of such a sandbox run again in a sandbox of their own.",
	        s->run_code_reruns);
}

/* Sandbox starts (engine.h): what /healthz's 503 "unhealthy" is made of. */
static void health(struct out *o, const struct ee_serve_gauges *g)
{
	gauge(o, "execeval_healthy",
	      "0 while sandbox starts keep failing (GET /healthz answers 503), else 1.",
	      (unsigned long long)g->healthy);
	gauge(o, "execeval_sandbox_start_failures_in_a_row",
	      "Sandbox starts failed since the last that succeeded.", g->starts_failing);
	counter(o, "execeval_sandbox_start_failures_total",
	        "Sandbox starts that failed (each candidate's retry on a fresh worker counts too).",
	        g->start_failures);
	counter(o, "execeval_worker_replacements_total",
	        "Warm workers made again, with fresh cgroups: one died, hung, failed a start or was retired.",
	        g->worker_replacements);
	counter(o, "execeval_heal_probes_total",
	        "Trivial candidates run by GET /healthz while unhealthy, to see whether sandboxes start "
	        "again.",
	        g->heal_probes);
}

/* docs/threat-model.md, "Tripwires"; docs/events.md has alert rules. */
static void tripwires(struct out *o, const struct ee_serve_gauges *g)
{
	head(o, "execeval_violations_total", "counter",
	     "What candidates tried and were refused (refused system calls, denied imports, limits hit), "
	     "by kind and class.");
	for (unsigned i = 0; g->violations && i < g->violations->n; i++) {
		const char *kind = g->violations->v[i].name;
		put(o, "execeval_violations_total{kind=\"%s\",class=\"%s\"} %lu\n", kind,
		    ee_violation_class(kind), g->violations->v[i].count);
	}
	gauge(o, "execeval_breaker_tripped", "1 while the circuit breaker is tripped (--breaker).",
	      (unsigned long long)g->tripped);
	head(o, "execeval_breaker_trips_total", "counter", "Times the circuit breaker tripped.");
	put(o, "execeval_breaker_trips_total %lu\n", g->trips);
}

/* Generated tests' reference results (refcache.h): one run per key. */
static void references(struct out *o, const struct ee_refcache_stats *r)
{
	head(o, "execeval_reference_cache_lookups_total", "counter",
	     "Lookups of a task's reference results (generated tests), by outcome: hit (made), join "
	     "(in flight), miss (started).");
	put(o, "execeval_reference_cache_lookups_total{outcome=\"hit\"} %llu\n", r->hits);
	put(o, "execeval_reference_cache_lookups_total{outcome=\"join\"} %llu\n", r->joins);
	put(o, "execeval_reference_cache_lookups_total{outcome=\"miss\"} %llu\n", r->misses);
	counter(o, "execeval_reference_runs_total",
	        "Reference jobs run (generator, reference check, reference outputs): one per key missed.",
	        r->runs);
	counter(o, "execeval_reference_sandboxes_total", "Sandboxes of those jobs.", r->sandboxes);
	counter(o, "execeval_reference_failures_total",
	        "Reference jobs that ended in an error (the task's: 422; the host's: infra_error).",
	        r->failures);
	counter(o, "execeval_reference_cache_evictions_total",
	        "Reference results dropped to stay within --reference-cache.", r->evictions);
	gauge(o, "execeval_reference_cache_bytes", "Bytes of reference results kept.", r->bytes);
	gauge(o, "execeval_reference_cache_entries", "Reference results kept.", r->entries);
	gauge(o, "execeval_reference_cache_capacity_bytes", "The server's --reference-cache.", r->capacity);
}

char *ee_stats_render(const struct ee_serve_stats *s, const struct ee_serve_gauges *g, size_t *ret_len)
{
	struct out o = { .failed = 0 };

	ee_buf_init(&o.b, 1u << 20);
	requests(&o, s);
	head(&o, "execeval_evaluations_total", "counter", "Evaluations finished, by record status.");
	for (size_t i = 0; i < EE_STATUSES; i++)
		put(&o, "execeval_evaluations_total{status=\"%s\"} %llu\n", status_names[i],
		    s->evaluations[i]);
	head(&o, "execeval_sandbox_failures_total", "counter",
	     "Evaluations whose sandbox could not be set up (no verdict).");
	put(&o, "execeval_sandbox_failures_total %llu\n", s->sandbox_failures);
	head(&o, "execeval_rejected_total", "counter", "Requests refused before evaluation, by reason.");
	for (size_t i = 0; i < EE_REJ_COUNT; i++)
		put(&o, "execeval_rejected_total{reason=\"%s\"} %llu\n", reject_names[i], s->rejected[i]);
	gauge(&o, "execeval_queue_depth", "Evaluations waiting for a sandbox.", g->queue_depth);
	gauge(&o, "execeval_queue_capacity", "Evaluations that may wait.", g->queue_capacity);
	gauge(&o, "execeval_evaluations_running", "Evaluations in a sandbox now.", g->running);
	gauge(&o, "execeval_workers", "Sandboxes that run at once (-j).", g->workers);
	gauge(&o, "execeval_buffered_bytes",
	      "Bytes held for clients: bodies arrived, parsed requests, records awaiting their answer.",
	      g->buffered);
	gauge(&o, "execeval_buffered_capacity_bytes", "The server's --max-buffered.", g->buffered_capacity);
	gauge(&o, "execeval_draining", "1 after SIGTERM: finishing accepted work, refusing new.",
	      (unsigned long long)g->draining);
	head(&o, "execeval_request_duration_seconds", "histogram",
	     "From a request's arrival to its answer, for answered evaluations.");
	for (int ep = 0; ep < EE_EP_COUNT; ep++)
		if (ee_stats_times_requests(ep)) {
			char label[64];
			snprintf(label, sizeof(label), "endpoint=\"%s\"", endpoint_names[ep]);
			histogram(&o, "execeval_request_duration_seconds", label, &s->request_s[ep]);
		}
	head(&o, "execeval_evaluation_duration_seconds", "histogram",
	     "One evaluation, from its sandbox's start to its record.");
	histogram(&o, "execeval_evaluation_duration_seconds", "", &s->evaluation_s);
	health(&o, g);
	routes(&o, s, g);
	tripwires(&o, g);
	if (g->refcache)
		references(&o, g->refcache);
	if (o.failed) {
		ee_buf_free(&o.b);
		return NULL;
	}
	*ret_len = o.b.len;
	return o.b.data; /* ee_buf keeps it NUL-terminated */
}
