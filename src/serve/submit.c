/* submit.c - from a complete body to its records (see server_int.h): the
 * body is parsed (request.h), the request admitted only if every run fits
 * in the queue and its records' smallest size in the budget, its runs
 * submitted to the dispatcher, and each record kept as its JSON text,
 * charged as it grows, until the last is back.
 *
 * Generated tests (docs/api.md): the runs of a task with a reference
 * are a group; the request's places in the queue are held (dispatch.h)
 * while each group's reference results are looked up or made
 * (refcache.h), and its runs are submitted once every group has them, so
 * a task's error (422) is answered before any candidate runs. A group
 * whose reference sandbox could not be set up gives its runs an
 * infra-error record (reward null), never a verdict.
 *
 * Deadlines (DEADLINE_HEADER): a request's candidates may start only by
 * its deadline less its longest clock and a margin (the request is
 * answered whole). One that could not start by then is never started
 * (dispatch.h): /v1/run and /v1/batch are answered 504 at that moment,
 * while their client still waits (the runs already started end unread);
 * /get_reward, whose client needs a float for every sample, gets that
 * sample as an infrastructure error (reward null: the infra value, never a
 * punishment) and is answered when the samples that started are done,
 * which is within the deadline too. A request still waiting for its
 * tasks' reference runs at that moment is answered then the same way
 * (srv->awaiting, expire_awaiting): the reference runs go on, for the
 * cache, and its candidates never start. */
#include <jansson.h>
#include <malloc.h>
#include <math.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/loop.h"
#include "base/resource_limits.h"
#include "engine/evaluate.h"
#include "engine/reference.h"
#include "serve/dispatch.h"
#include "serve/refcache.h"
#include "serve/get_reward.h"
#include "serve/run_code.h"
#include "serve/server_int.h"
#include "verdict/record.h"

/* A lower bound of a record's text: what admission reserves for it (a test
 * is at least ~120 bytes of the record's "tests", the rest ~600). */
#define RECORD_MIN      512
#define RECORD_MIN_TEST 96

/* Tests t will have, its generated ones counted. */
static size_t tests_of(const struct ee_task *t)
{
	if (!t->gen || t->gen->added)
		return t->n_tests;
	return t->n_tests + (t->gen->inputs ? json_array_size(t->gen->inputs) : t->gen->n);
}

static size_t record_reserve(const struct ee_task *t)
{
	return RECORD_MIN + RECORD_MIN_TEST * tests_of(t);
}

/* /v1/run's answer: the record, or a 500 carrying it when its sandbox failed. */
static char *run_answer_text(json_t *rec, unsigned *code)
{
	const char *failure = json_string_value(json_object_get(rec, "sandbox_error"));

	*code = failure ? 500 : 200;
	if (!failure)
		return json_dumps(rec, JSON_FLAGS);
	char msg[300];
	snprintf(msg, sizeof(msg), "sandbox setup failed: %s", failure);
	json_t *v = json_pack("{s:s, s:n, s:O}", "error", msg, "field", "record", rec);
	char *text = v ? json_dumps(v, JSON_FLAGS) : NULL;
	json_decref(v);
	return text;
}

/* Keeps rec (taken) as its text, charging what it outgrows of its
 * reservation (or giving back what it does not use). */
static void keep_record(struct conn *c, size_t i, json_t *rec)
{
	struct ee_budget *b = &c->srv->budget;
	size_t want = record_reserve(&c->req.runs[i].task);
	char *text =
	        c->endpoint == EE_EP_RUN ? run_answer_text(rec, &c->run_code) : json_dumps(rec, JSON_FLAGS);
	size_t len = text ? strlen(text) : 0;

	json_decref(rec);
	if (text && !c->overflow && len > want && ee_budget_charge(b, NULL, len - want) == EE_BUDGET_OK) {
		c->reserved += len - want;
	} else if (text && !c->overflow && len <= want) {
		ee_budget_release(b, NULL, want - len);
		c->reserved -= want - len;
	} else {
		c->overflow = 1; /* out of memory, or over the budget: its reservation stays until the end */
		free(text);
		return;
	}
	c->texts[i] = text;
	c->lens[i] = len;
}

/* A /v1/run or /v1/batch whose candidate could not start in time, or any
 * request whose deadline passed before its reference runs were done: its
 * answer goes now, whatever still runs. */
static int due_504(const struct conn *c)
{
	return (c->expired > 0 && c->endpoint != EE_EP_GET_REWARD) || c->gave_up;
}

/* Nothing of c is pending any more, or its 504 is due: its answer can go
 * (or c, when its connection went away and nothing is pending). */
static void settle(struct conn *c)
{
	if ((c->pending > 0 && !due_504(c)) || c->submitting)
		return;
	if (c->orphaned) {
		if (c->pending == 0)
			free_conn(c);
	} else if (c->suspended && !c->resumed) {
		/* Still counted as suspended until MHD calls on_request again
		 * (answer_records): a drain must not end in between. Once: a 504
		 * due leaves records to come before MHD calls it. */
		c->resumed = 1;
		MHD_resume_connection(c->mc);
	}
}

static void on_record(void *ctx, json_t *rec, double run_s)
{
	struct slot *slot = ctx;
	struct conn *c = slot->c;
	struct ee_server *srv = c->srv;

	if (!rec && run_s == EE_DISPATCH_EXPIRED) {
		c->expired++;
		if (c->endpoint == EE_EP_GET_REWARD) /* never started: the infra value, masked */
			keep_record(c, slot->index,
			            ee_record_sandbox_error(
			                    c->req.runs[slot->index].task.task_id,
			                    "no sandbox was free early enough to answer within the "
			                    "request's " DEADLINE_HEADER "; not run"));
	} else if (rec) {
		ee_stats_record(&srv->stats, json_string_value(json_object_get(rec, "status")));
		if (run_s > 0) {
			ee_stats_observe(&srv->stats.evaluation_s, run_s);
			srv->eval_s_avg += (run_s - srv->eval_s_avg) / 16;
		}
		keep_record(c, slot->index, rec);
	} else {
		c->interrupted = 1;
	}
	c->pending--;
	settle(c);
}

/* Reserves the smallest size of every record c's request will hold: its
 * answer must fit in the budget before anything of it runs. */
static enum MHD_Result reserve_records(struct conn *c)
{
	struct ee_server *srv = c->srv;
	size_t want = 0;

	for (size_t i = 0; i < c->req.n_runs; i++)
		want += record_reserve(&c->req.runs[i].task);
	if (want > srv->cfg->max_buffered) {
		char msg[200];
		snprintf(msg, sizeof(msg),
		         "runs: the records of %zu runs (%zu tests) need at least %zu MiB, more than this "
		         "server's --max-buffered",
		         c->req.n_runs, c->req.tests, (want >> 20) + 1);
		return refuse(c, 413, EE_REJ_TOO_LARGE, msg, "runs");
	}
	if (ee_budget_charge(&srv->budget, NULL, want) != EE_BUDGET_OK)
		return refuse(c, 429, EE_REJ_OVER_BUDGET,
		              "the server holds too many records and request bodies; retry after "
		              "Retry-After seconds",
		              NULL);
	c->reserved = want;
	return MHD_YES;
}

/* ---- generated tests ------------------------------------------------------ */

enum group_state { GROUP_WAITING, GROUP_READY, GROUP_INFRA, GROUP_FAILED };

/* The group of run i, or NULL when its task makes no generated tests. */
static struct group *group_of(const struct conn *c, size_t i)
{
	const struct ee_task_gen *gen = c->req.runs[i].task.gen;

	for (size_t g = 0; gen && g < c->n_groups; g++)
		if (c->groups[g].owner->gen == gen)
			return &c->groups[g];
	return NULL;
}

/* The struct whose tests run i's are: the batch's shared task, a GRPO
 * group's first label (get_reward.h), or the run's own. */
static struct ee_task *owner_of(struct conn *c, size_t i)
{
	struct ee_run *run = &c->req.runs[i];

	if (!run->shared_task)
		return &run->task;
	if (c->req.has_shared && c->req.shared.gen == run->task.gen)
		return &c->req.shared;
	for (size_t j = 0; j < i; j++)
		if (!c->req.runs[j].shared_task && c->req.runs[j].task.gen == run->task.gen)
			return &c->req.runs[j].task;
	return &run->task; /* not reached: a shared task has its owner before it */
}

/* One group per task that still has generated tests to make. */
static int make_groups(struct conn *c)
{
	c->groups = calloc(c->req.n_runs, sizeof(*c->groups));
	if (!c->groups)
		return -1;
	for (size_t i = 0; i < c->req.n_runs; i++) {
		const struct ee_task *t = &c->req.runs[i].task;
		if (!t->gen || t->gen->added || group_of(c, i))
			continue;
		c->groups[c->n_groups++] = (struct group){ .c = c, .owner = owner_of(c, i), .first = i };
	}
	return 0;
}

/* The results in: every run of g gets its generated tests (the owner's
 * tests array replaced, the copies pointed at it). */
static void group_ready(struct group *g, const struct ee_reference_job *job)
{
	struct conn *c = g->c;
	struct ee_err err = { 0 };

	if (ee_reference_job_apply(job, g->owner, c->req.runs[g->first].gen.hidden_fraction, &err) < 0) {
		g->state = GROUP_INFRA;
		snprintf(g->why, sizeof(g->why), "%s", err.msg);
		return;
	}
	for (size_t i = 0; i < c->req.n_runs; i++) {
		struct ee_task *t = &c->req.runs[i].task;
		if (t != g->owner && t->gen == g->owner->gen) {
			t->tests = g->owner->tests;
			t->n_tests = g->owner->n_tests;
		}
	}
	g->state = GROUP_READY;
}

/* A task's error: the request's answer is a 422 naming the field at fault
 * (the generator's or the reference's), of the first run whose it is. */
static void group_failed(struct group *g, int part, const char *msg)
{
	struct conn *c = g->c;
	const struct ee_run *run = &c->req.runs[g->first];
	const char *name = part == EE_REF_PART_GENERATE             ? "generate"
	                   : run->task.format == EE_FORMAT_EVALPLUS ? "canonical_solution"
	                                                            : "reference";
	char path[64];

	g->state = GROUP_FAILED;
	if (c->ref_error[0] && c->ref_error_run < g->first)
		return;
	if (c->endpoint == EE_EP_GET_REWARD)
		snprintf(path, sizeof(path), "labels[%zu]", g->first);
	else if (c->endpoint == EE_EP_BATCH && !run->batch_task)
		snprintf(path, sizeof(path), "runs[%zu].task", g->first);
	else
		snprintf(path, sizeof(path), "task");
	snprintf(c->ref_error, sizeof(c->ref_error), "%s", msg);
	snprintf(c->ref_field, sizeof(c->ref_field), "%s.%s", path, name);
	c->ref_error_run = g->first;
}

static void group_infra(struct group *g, const char *why)
{
	g->state = GROUP_INFRA;
	snprintf(g->why, sizeof(g->why), "reference run: %.200s", why);
}

static void start_runs(struct conn *c);

static void on_reference(void *ctx, const struct ee_reference_job *job, int part, const struct ee_err *err)
{
	struct group *g = ctx;
	struct conn *c = g->c;

	if (job)
		group_ready(g, job);
	else if (err && err->code == EE_ERR_USAGE)
		group_failed(g, part, err->msg);
	else if (err)
		group_infra(g, err->msg);
	else
		c->interrupted = 1; /* the server is stopping: 503 */
	if (--c->pending > 0 || c->submitting)
		return;
	if (!c->orphaned)
		start_runs(c);
	settle(c);
}

/* Looks up (or starts) every group's results; those found are applied now. */
static void prepare(struct conn *c)
{
	struct ee_server *srv = c->srv;

	c->submitting = 1;
	for (size_t i = 0; i < c->n_groups; i++) {
		struct group *g = &c->groups[i];
		const struct ee_run *first = &c->req.runs[g->first];
		const struct ee_reference_job *job = NULL;
		struct ee_err err = { 0 };

		int timed = 0; /* any of its runs asks for calibrated limits */
		for (size_t r = g->first; r < c->req.n_runs; r++)
			if (c->req.runs[r].task.gen == first->task.gen)
				timed |= c->req.runs[r].gen.time.floor_s > 0 ||
				         c->req.runs[r].gen.time.factor > 0;
		c->pending++;
		int rc = ee_refcache_get(srv->refcache, &first->task, first->gen.seed, timed, on_reference, g,
		                         &job, &err);
		if (rc == 1)
			continue;
		c->pending--;
		if (rc == 0)
			group_ready(g, job);
		else
			group_infra(g, err.msg);
	}
	c->submitting = 0;
}

/* The held places go back (the request will not use them). */
static void give_back(struct conn *c, size_t n)
{
	ee_dispatch_unreserve(c->srv->dispatch, n);
	c->held -= n < c->held ? n : c->held;
}

/* The latest moment c's candidates may start: its deadline less its
 * longest clock and the margin; INFINITY without a deadline. */
static double latest_start(const struct conn *c)
{
	double clock = 0;

	if (c->deadline_s <= 0)
		return INFINITY;
	for (size_t i = 0; i < c->req.n_runs; i++) {
		struct ee_limits lim;
		ee_eval_limits(c->srv->o, &c->req.runs[i].task, &lim);
		clock = lim.timeout_s > clock ? lim.timeout_s : clock;
	}
	return ts_s(&c->arrived) + c->deadline_s - clock - DEADLINE_MARGIN_S;
}

/* Every group is settled: the runs go into their held places, but for
 * those of a group without results (an infra-error record each); none
 * when a task failed (the 422) or the server is stopping (503). */
static void start_runs(struct conn *c)
{
	struct ee_server *srv = c->srv;

	unawait(c);
	if (ee_loop_interrupted(srv->loop))
		c->interrupted = 1;
	if (c->interrupted || c->ref_error[0] || c->gave_up) {
		give_back(c, c->held);
		return;
	}
	c->submitting = 1;
	for (size_t i = 0; i < c->req.n_runs; i++) {
		struct ee_run *run = &c->req.runs[i];
		const struct group *g = group_of(c, i);
		struct ee_candidate cand = {
			.task = &run->task,
			.program = run->program,
			.model = run->model,
			.sample = run->sample,
			.no_code_block = run->no_code_block,
			.extraction = run->extraction,
			.reward = run->has_reward ? &run->reward : NULL,
			.time_rule = &run->gen.time,
		};
		c->slots[i] = (struct slot){ c, i };
		if (g && g->state == GROUP_INFRA) {
			give_back(c, 1);
			ee_stats_record(&srv->stats, NULL);
			keep_record(c, i, ee_record_sandbox_error(run->task.task_id, g->why));
			continue;
		}
		c->pending++;
		c->held--;
		if (ee_dispatch_submit_reserved(srv->dispatch, &cand, c->latest, on_record, &c->slots[i]) <
		    0) {
			c->pending--;
			ee_stats_record(&srv->stats, NULL);
			keep_record(c, i, ee_record_sandbox_error(run->task.task_id, "out of memory"));
		}
	}
	c->submitting = 0;
}

/* Admits every run of c's request or none (their places held in the
 * queue); answers at once when nothing is left pending, else suspends the
 * connection until the last record (settle). */
static enum MHD_Result submit(struct conn *c)
{
	struct ee_server *srv = c->srv;
	size_t n = c->req.n_runs;

	if (ee_dispatch_reserve(srv->dispatch, n) < 0)
		return refuse(c, 429, EE_REJ_QUEUE_FULL, "the queue is full; retry after Retry-After seconds",
		              NULL);
	c->held = n;
	if (reserve_records(c) != MHD_YES || c->answered)
		return c->answered ? MHD_YES : MHD_NO; /* free_conn gives the places back */
	c->texts = calloc(n, sizeof(*c->texts));
	c->lens = calloc(n, sizeof(*c->lens));
	c->slots = calloc(n, sizeof(*c->slots));
	if (!c->texts || !c->lens || !c->slots || make_groups(c) < 0)
		return MHD_NO;
	c->latest = latest_start(c);
	prepare(c);
	if (c->pending == 0) {
		start_runs(c);
		if (c->pending == 0 || due_504(c))
			return answer_records(c);
	} else if (c->latest < INFINITY) { /* its reference runs may outlast its deadline */
		c->await_next = srv->awaiting;
		srv->awaiting = c;
		c->listed = 1;
	}
	c->suspended = 1;
	srv->suspended++;
	MHD_suspend_connection(c->mc);
	return MHD_YES;
}

void unawait(struct conn *c)
{
	if (!c->listed)
		return;
	for (struct conn **p = &c->srv->awaiting; *p; p = &(*p)->await_next)
		if (*p == c) {
			*p = c->await_next;
			break;
		}
	c->listed = 0;
}

/* c's deadline passed while its reference runs went on: none of its
 * candidates will start (start_runs), and it is answered now. */
static void give_up(struct conn *c)
{
	unawait(c);
	c->gave_up = 1;
	c->expired = c->req.n_runs;
	for (size_t i = 0; c->endpoint == EE_EP_GET_REWARD && i < c->req.n_runs; i++)
		keep_record(c, i,
		            ee_record_sandbox_error(c->req.runs[i].task.task_id,
		                                    "its task's reference runs were not done early enough to "
		                                    "answer within the request's " DEADLINE_HEADER
		                                    "; not run"));
	settle(c);
}

void expire_awaiting(struct ee_server *srv)
{
	double now = now_s();

	for (struct conn *c = srv->awaiting, *next; c; c = next) {
		next = c->await_next;
		if (now > c->latest)
			give_up(c);
	}
}

long awaiting_next_ms(const struct ee_server *srv)
{
	double now = now_s(), next = INFINITY;

	for (const struct conn *c = srv->awaiting; c; c = c->await_next)
		next = c->latest < next ? c->latest : next;
	if (next == INFINITY)
		return -1;
	return next <= now ? 0 : (long)ceil((next - now) * 1000);
}

/* ---- /run_code (run_code.h) -------------------------------------------- */

static void run_code_ready(void *ctx)
{
	struct conn *c = ctx;

	c->call_ready = 1;
	if (c->suspended)
		MHD_resume_connection(c->mc); /* answered when MHD calls on_request again */
}

enum MHD_Result run_code_answer(struct conn *c)
{
	unsigned code;
	char *text;
	size_t len;

	if (c->suspended) {
		c->suspended = 0;
		c->srv->suspended--;
	}
	ee_run_code_answer(c->call, &code, &text, &len);
	c->call = NULL;
	return text ? answer(c, code, text, len, "application/json", NULL) : MHD_NO;
}

/* Its body is queued as a call (or answered at once); the connection waits. */
static enum MHD_Result run_code_body(struct conn *c)
{
	struct ee_server *srv = c->srv;
	unsigned code = 0;
	char *text = NULL;
	size_t len = 0;
	int rc = ee_run_code_submit(srv->run_code, c->body.data ? c->body.data : "", c->body.len,
	                            run_code_ready, c, &c->call, &code, &text, &len);

	ee_buf_free(&c->body);
	ee_budget_release(&srv->budget, c->share, c->charged);
	c->charged = 0;
	if (rc < 0)
		return MHD_NO;
	if (rc == 0)
		return text ? answer(c, code, text, len, "application/json", NULL) : MHD_NO;
	if (c->call_ready)
		return run_code_answer(c);
	c->suspended = 1;
	srv->suspended++;
	MHD_suspend_connection(c->mc);
	return MHD_YES;
}

/* DEADLINE_HEADER into c->deadline_s: absent, 0; else seconds, a plain
 * decimal number > 0 and at most DEADLINE_MAX_S. -1 (err says why) for
 * anything else. */
static int read_deadline(struct conn *c, struct ee_err *err)
{
	const char *v = MHD_lookup_connection_value(c->mc, MHD_HEADER_KIND, DEADLINE_HEADER);
	char *end = NULL;
	double s = v && v[0] && strspn(v, "0123456789.") == strlen(v) ? strtod(v, &end) : NAN;

	c->deadline_s = 0;
	if (!v)
		return 0;
	if (!end || *end || !isfinite(s) || s <= 0 || s > DEADLINE_MAX_S) {
		ee_fail(err, EE_ERR_USAGE,
		        DEADLINE_HEADER
		        ": expected the seconds the client waits for the answer, a number > 0 "
		        "and at most %g, got \"%.40s\"",
		        DEADLINE_MAX_S, v);
		snprintf(err->field, sizeof(err->field), "%s", DEADLINE_HEADER);
		ee_request_printable(err);
		return -1;
	}
	c->deadline_s = s;
	return 0;
}

enum MHD_Result on_body_complete(struct conn *c)
{
	struct ee_server *srv = c->srv;
	struct ee_err err = { 0 };

	if (srv->draining)
		return refuse(c, 503, EE_REJ_DRAINING, "the server is shutting down", NULL);
	if (c->endpoint == EE_EP_RUN_CODE)
		return run_code_body(c);
	if (read_deadline(c, &err) < 0) {
		ee_buf_free(&c->body);
		return refuse(c, 400, EE_REJ_BAD_REQUEST, err.msg, err.field);
	}
	int kind = c->endpoint == EE_EP_BATCH ? EE_REQUEST_BATCH : EE_REQUEST_RUN;
	struct ee_request_rules rules = { srv->cfg->queue,
		                          srv->cfg->extract,
		                          &srv->o->limits,
		                          srv->o->strict_asserts,
		                          srv->cfg->max_tests_per_task,
		                          srv->cfg->max_request_tests,
		                          srv->cfg->max_body_values,
		                          srv->o->mbpp_challenge ? (int)EE_TASK_MBPP_CHALLENGE : 0,
		                          &srv->o->task_rules,
		                          srv->o };
	const char *body = c->body.data ? c->body.data : "";
	int rc = c->endpoint == EE_EP_GET_REWARD
	                 ? ee_get_reward_parse(body, c->body.len, &rules, &c->req, &c->records, &err)
	                 : ee_request_parse(body, c->body.len, kind, &rules, &c->req, &err);
	ee_buf_free(&c->body);
	ee_budget_release(&srv->budget, c->share, c->charged);
	if (c->charged > (1u << 20))
		malloc_trim(0); /* give a large body's parse back to the system, not only to malloc */
	c->charged = 0;
	if (rc == -2)
		return refuse(c, 413, EE_REJ_TOO_LARGE, err.msg, err.field);
	if (rc < 0)
		return refuse(c, 400, EE_REJ_BAD_REQUEST, err.msg, err.field);
	/* The parsed request is held until its answer: charged like its body. */
	size_t cost = ee_request_cost(&c->req);
	int over = ee_budget_charge(&srv->budget, c->share, cost);
	if (over != EE_BUDGET_OK)
		return refuse_budget(c, over);
	c->charged = cost;
	return submit(c);
}
