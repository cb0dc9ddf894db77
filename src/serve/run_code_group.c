/* run_code_group.c - /run_code's coalescing: waiting requests of one
 * program run in one warm sandbox, each in a process of its own (harness
 * apart.py), each answered as a sandbox of its own would be (see
 * run_code_int.h). */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "base/text.h"
#include "engine/evaluate.h"
#include "sandbox/sandbox.h"
#include "serve/dispatch.h"
#include "serve/run_code_int.h"
#include "serve/stats.h"
#include "verdict/events.h"
#include "verdict/record.h"
#include "verdict/score.h"

/* Waiting requests of one program run in one sandbox (harness apart.py). */
struct group {
	struct ee_run_code *rc;
	struct ee_task task; /* one apart script test per call, in order */
	struct ee_run_code_call **calls;
	size_t n;
};

/* Requests one sandbox runs in turn (harness apart.py); each one's fork,
 * reap and cleanup on the group's clock. A request starts in the group
 * only within GROUP_RELEASE_S of the group's first: a slow or hanging
 * program's requests then go on side by side in sandboxes of their own
 * rather than in turn behind it, and none waits in a group longer than
 * that for its turn. */
#define GROUP_MAX       16
#define APART_SLACK_S   0.5
#define GROUP_RELEASE_S 2.0

/* Where a request waits, with its deadline: at the head, to run alone
 * (its answer is a sandbox of its own's to give, or its group's sandbox
 * never gave one). Its client's clock has run since it arrived. */
static void requeue_alone(struct ee_run_code *rc, struct ee_run_code_call *call)
{
	rc->stats->run_code_reruns++;
	call->solo = 1;
	call->state = EE_RC_WAITING;
	call->next = rc->head;
	rc->head = call;
	if (!rc->tail)
		rc->tail = call;
	rc->waiting++;
	if (rc->waiting == 1 || call->deadline < rc->earliest)
		rc->earliest = call->deadline;
}

/* What a test run apart reported, with its verdict as a sandbox of its own
 * would decide it: into call->facts and call->verdict; nothing when it is
 * to run again alone (not run, ended by a signal or os._exit, past the
 * cap, an idle timeout: apart.py; a refused fork: whose it was is the
 * single sandbox's to say). */
static void take_apart(struct ee_run_code_call *call, const struct ee_test_result *r, int pids_hit)
{
	const json_t *a = r->apart;
	const json_t *out = json_object_get(a, "stdout"), *err = json_object_get(a, "stderr");
	const json_t *wall = json_object_get(a, "wall_ms"), *cpu = json_object_get(a, "cpu_ms");
	const json_t *rss = json_object_get(a, "rss_kb");

	if (!json_is_object(a) || json_is_true(json_object_get(a, "rerun")) || !json_is_string(out) ||
	    !json_is_string(err) || !json_is_number(wall) || !json_is_number(cpu) || !json_is_integer(rss))
		return;
	int timeout = json_is_true(json_object_get(a, "timeout"));
	struct ee_test_outcome t = { .state = r->state,
		                     .weight = 1.0,
		                     .exited = r->exited,
		                     .denied = r->denied,
		                     .message = r->message };
	struct ee_verdict_in in = {
		.done = 1, .timed_out = timeout, .pids_limit_hit = pids_hit, .tests = &t, .n_tests = 1
	};
	struct ee_verdict v;
	ee_verdict_decide(&in, &v);
	if (pids_hit && v.status != EE_PASS && v.status != EE_TIMEOUT)
		return;
	size_t out_len, err_len;
	char *o = ee_base64_decode(json_string_value(out), json_string_length(out), &out_len);
	char *e = ee_base64_decode(json_string_value(err), json_string_length(err), &err_len);
	struct ee_rc_facts *f = &call->facts;
	if (o && e) {
		f->out = ee_text_sanitize(o, out_len, SIZE_MAX, NULL);
		f->err = ee_text_sanitize(e, err_len, SIZE_MAX, NULL);
	}
	free(o);
	free(e);
	if (!f->out || !f->err)
		return;
	f->out_len = f->out_total = out_len;
	f->err_len = f->err_total = err_len;
	f->end = EE_END_RAN;
	f->wall_ms = json_number_value(wall);
	f->have_exit_code = r->have_exit_code;
	f->exit_code = r->exit_code;
	call->verdict =
	        json_pack("{s:s, s:s?, s:{s:f, s:f, s:O}}", "status", ee_status_name(v.status), "detail",
	                  v.detail[0] ? v.detail : NULL, "resources", "wall_ms", json_number_value(wall),
	                  "cpu_ms", json_number_value(cpu), "peak_rss_kb", rss);
	f->have = call->verdict != NULL;
}

static void group_outcome(void *ctx, const struct ee_sandbox_outcome *out, const struct ee_stream *s)
{
	struct group *g = ctx;

	for (size_t i = 0; i < g->n && s->tests.results; i++)
		take_apart(g->calls[i], &s->tests.results[i], out->cg.pids_max_hits > 0);
}

static void group_free(struct group *g)
{
	ee_task_free(&g->task);
	free(g->calls);
	free(g);
}

static void group_record(void *ctx, json_t *rec, double run_s)
{
	struct group *g = ctx;
	struct ee_run_code *rc = g->rc;
	int failed = !rec || json_object_get(rec, "sandbox_error");
	json_int_t answered = 0; /* by this sandbox: the others run again alone */

	for (size_t i = 0; rec && !failed && i < g->n; i++)
		answered += g->calls[i]->verdict != NULL;
	for (size_t i = 0; i < g->n; i++) {
		struct ee_run_code_call *call = g->calls[i];
		if (!rec || (call->verdict && !failed)) {
			if (rec) {
				json_object_set(call->verdict, "sandbox_id",
				                json_object_get(rec, "sandbox_id"));
				json_object_set_new(call->verdict, "coalesced", json_integer(answered));
				rc->stats->run_code_coalesced++;
			}
			ee_rc_on_record(call, call->verdict ? json_incref(call->verdict) : NULL, run_s);
		} else if (call->abandoned)
			ee_rc_call_free(call);
		else
			requeue_alone(rc, call);
	}
	json_decref(rec);
	group_free(g);
}

/* The group's task: one apart script test per call, each with the clock
 * and the CPU limit a sandbox of its own would have; their sum (and the
 * slack) the sandbox's clock. */
static int group_task(struct group *g)
{
	struct ee_task *t = &g->task;
	const struct ee_task *one = &g->calls[0]->task;
	struct ee_limits lim;
	unsigned long long cpu_soft, cpu_hard;

	ee_eval_limits(g->rc->o, one, &lim);
	ee_limits_cpu(&lim, &cpu_soft, &cpu_hard);
	json_t *script = json_pack("{s:{}, s:[], s:i, s:b, s:I, s:[I,I], s:I}", "files", "fetch", "fetch_cap",
	                           (int)EE_RC_FETCH_CAP, "apart", 1, "timeout_ms",
	                           (json_int_t)ceil(lim.timeout_s * 1000), "cpu_limit", (json_int_t)cpu_soft,
	                           (json_int_t)cpu_hard, "release_ms", (json_int_t)(GROUP_RELEASE_S * 1000));

	int rc = script && ee_rc_script_task(t, g->n) == 0 ? 0 : -1;
	for (size_t i = 0; rc == 0 && i < g->n; i++)
		rc = ee_rc_script_test(&t->tests[i], script, g->calls[i]->task.tests[0].stdin_text);
	json_decref(script);
	if (rc < 0)
		return -1;
	/* Each request's clock and slack, and never more than a sandbox's
	 * clock; what starts before the release fits in that (ee_rc_start_group). */
	double clock = (double)g->n * (lim.timeout_s + APART_SLACK_S);
	t->limits = one->limits;
	t->limits.timeout_s = clock < EE_TIMEOUT_MAX_S ? clock : EE_TIMEOUT_MAX_S;
	return 0;
}

static int same_run(const struct ee_run_code_call *a, const struct ee_run_code_call *b)
{
	const struct ee_task_limits *x = &a->task.limits, *y = &b->task.limits;

	return !b->solo && a->hash == b->hash && x->timeout_s == y->timeout_s &&
	       x->has_memory == y->has_memory && x->memory_mb == y->memory_mb &&
	       strcmp(a->program, b->program) == 0;
}

/* The waiting requests of first's program and limits that are still in
 * time, out of the FIFO behind first, up to max in all. */
static size_t take_alike(struct ee_run_code *rc, struct ee_run_code_call *first,
                         struct ee_run_code_call **calls, size_t max)
{
	double now = ee_rc_now();
	size_t n = 0;

	calls[n++] = first;
	for (struct ee_run_code_call **p = &rc->head; *p && n < max;) {
		struct ee_run_code_call *call = *p;
		/* It may start as late as the group's release: still in time then. */
		if (call->deadline < now + GROUP_RELEASE_S || !same_run(first, call)) {
			p = &call->next;
			continue;
		}
		*p = call->next;
		call->next = NULL;
		rc->waiting--;
		calls[n++] = call;
	}
	rc->tail = rc->head;
	while (rc->tail && rc->tail->next)
		rc->tail = rc->tail->next;
	return n;
}

/* first and the requests like it, in one sandbox: 1 when it started (or
 * they went back to wait alone), 0 when first has none like it. */
int ee_rc_start_group(struct ee_run_code *rc, struct ee_run_code_call *first)
{
	struct ee_limits lim;
	ee_eval_limits(rc->o, &first->task, &lim);
	/* The last request to start (by the release) ends within a sandbox's clock. */
	if (GROUP_RELEASE_S + lim.timeout_s + APART_SLACK_S > EE_TIMEOUT_MAX_S)
		return 0;
	size_t max = rc->cfg.coalesce < GROUP_MAX ? rc->cfg.coalesce : GROUP_MAX;
	if (max < 2)
		return 0;
	struct ee_run_code_call *calls[GROUP_MAX];
	size_t n = take_alike(rc, first, calls, max);
	struct group *g = n > 1 ? calloc(1, sizeof(*g)) : NULL;

	if (n < 2)
		return 0;
	if (g) {
		g->rc = rc;
		g->n = n;
		g->calls = malloc(n * sizeof(*g->calls));
	}
	if (!g || !g->calls || (memcpy(g->calls, calls, n * sizeof(*calls)), group_task(g) < 0)) {
		if (g)
			group_free(g);
		for (size_t i = n; i-- > 0;) /* out of memory: each alone, in order */
			requeue_alone(rc, calls[i]);
		return 1;
	}
	struct ee_candidate cand = {
		/* the group's output cap is each request's */
		.task = &g->task,
		.program = first->program,
		.sample = -1,
		.keep_output = lim.output_cap,
		.on_outcome = group_outcome,
		.outcome_ctx = g,
	};
	for (size_t i = 0; i < n; i++) {
		calls[i]->state = EE_RC_RUNNING;
		ee_stats_observe(&rc->stats->run_code_wait_s, ee_rc_now() - calls[i]->arrived);
	}
	if (ee_dispatch_submit(rc->d, &cand, group_record, g) < 0)
		group_record(g, ee_record_sandbox_error("run_code", "the dispatcher refused it"), 0);
	return 1;
}
