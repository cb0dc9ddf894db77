/* run_code.c - SandboxFusion's POST /run_code: the route's own FIFO, a
 * call's life from submit to answer, calls started on idle sandboxes (see
 * run_code.h; its request is run_code_request.c's, its answer
 * run_code_answer.c's, coalescing run_code_group.c's). */
#include "serve/run_code.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "base/text.h"
#include "engine/evaluate.h"
#include "sandbox/sandbox.h"
#include "serve/budget.h"
#include "serve/dispatch.h"
#include "serve/run_code_int.h"
#include "serve/stats.h"
#include "verdict/events.h"
#include "verdict/record.h"

double ee_rc_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

size_t ee_run_code_default_queue(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	double mib = pages > 0 && size > 0 ? (double)pages * (double)size / (1 << 20) : 0;
	double n = mib / 4;

	return n < 256 ? 256 : n > 16384 ? 16384 : (size_t)n;
}

int ee_run_code_new(struct ee_dispatch *d, const struct ee_eval_options *o, struct ee_budget *budget,
                    struct ee_serve_stats *stats, const struct ee_run_code_config *cfg,
                    struct ee_run_code **ret, struct ee_err *err)
{
	struct ee_run_code *rc = calloc(1, sizeof(*rc));

	if (!rc)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	*rc = (struct ee_run_code){ .d = d, .o = o, .budget = budget, .stats = stats, .cfg = *cfg };
	if (!rc->cfg.queue)
		rc->cfg.queue = ee_run_code_default_queue();
	if (!rc->cfg.jobs)
		rc->cfg.jobs = 1;
	*ret = rc;
	return 0;
}

size_t ee_run_code_waiting(const struct ee_run_code *rc)
{
	return rc->waiting;
}

size_t ee_run_code_capacity(const struct ee_run_code *rc)
{
	return rc->cfg.queue;
}

void ee_rc_call_free(struct ee_run_code_call *call)
{
	if (call->charged)
		ee_budget_release(call->rc->budget, NULL, call->charged);
	ee_task_free(&call->task);
	free(call->program);
	free(call->facts.out);
	free(call->facts.err);
	json_decref(call->facts.files);
	json_decref(call->verdict);
	free(call->text);
	free(call);
}

/* The call's answer is there: to its connection, or dropped with it. */
static void finish(struct ee_run_code_call *call, unsigned code, char *text, size_t len)
{
	call->state = EE_RC_READY;
	call->code = code;
	call->text = text;
	call->len = len;
	if (call->charged) {
		ee_budget_release(call->rc->budget, NULL, call->charged);
		call->charged = 0;
	}
	if (call->abandoned)
		ee_rc_call_free(call);
	else
		call->ready(call->ctx);
}

void ee_run_code_answer(struct ee_run_code_call *call, unsigned *code, char **text, size_t *len)
{
	*code = call->code;
	*text = call->text;
	*len = call->len;
	call->text = NULL;
	ee_rc_call_free(call);
}

/* ---- running ------------------------------------------------------------ */

static void on_outcome(void *ctx, const struct ee_sandbox_outcome *out, const struct ee_stream *s)
{
	struct ee_run_code_call *call = ctx;
	struct ee_rc_facts *f = &call->facts;
	const struct ee_test_result *r = s->tests.results ? &s->tests.results[0] : NULL;

	f->have = 1;
	f->out = ee_text_sanitize(out->out.data ? out->out.data : "", out->out.len, SIZE_MAX, NULL);
	f->err = ee_text_sanitize(out->err.data ? out->err.data : "", out->err.len, SIZE_MAX, NULL);
	f->out_len = out->out.len;
	f->err_len = out->err.len;
	f->out_total = out->out_total;
	f->err_total = out->err_total;
	f->end = out->end;
	f->have_status = out->have_status;
	f->status = out->status;
	f->wall_ms = out->wall_ms;
	if (r && r->have_exit_code) {
		f->have_exit_code = 1;
		f->exit_code = r->exit_code;
	}
	if (r && r->files)
		f->files = json_incref(r->files);
}

void ee_rc_on_record(void *ctx, json_t *rec, double run_s)
{
	struct ee_run_code_call *call = ctx;
	const char *failure = json_string_value(json_object_get(rec, "sandbox_error"));
	json_t *v;
	size_t len;

	(void)run_s;
	int starved = !failure && json_is_true(json_object_get(rec, "infra_error"));
	if (!rec) { /* a forced stop: no outcome to give */
		v = json_pack("{s:s, s:n}", "error", "the server stopped before this program finished; retry",
		              "field");
		char *text = ee_rc_dump(v, &len);
		finish(call, 503, text, len);
		return;
	}
	ee_stats_record(call->rc->stats, json_string_value(json_object_get(rec, "status")));
	if (starved) { /* twice: the host's, not a TimeLimitExceeded of the program's */
		v = ee_run_code_sandbox_error("the host starved the program of CPU twice: its timeout is "
		                              "the busy machine's, not the program's; retry");
	} else if (failure || !call->facts.have) {
		char msg[300];
		/* The engine's own words, never the program. */
		snprintf(msg, sizeof(msg), "sandbox setup failed: %.250s", failure ? failure : "no outcome");
		v = ee_run_code_sandbox_error(msg);
	} else {
		v = ee_rc_ran_answer(rec, &call->facts, call->program);
	}
	json_decref(rec);
	char *text = ee_rc_dump(v, &len);
	finish(call, text ? 200 : 500, text, len);
}

/* A sandbox is idle and no /v1 evaluation waits for it. */
static int idle(const struct ee_run_code *rc)
{
	return ee_dispatch_running(rc->d) < rc->cfg.jobs && ee_dispatch_waiting(rc->d) == 0;
}

static struct ee_run_code_call *pop(struct ee_run_code *rc)
{
	struct ee_run_code_call *call = rc->head;

	rc->head = call->next;
	if (!rc->head)
		rc->tail = NULL;
	call->next = NULL;
	rc->waiting--;
	return call;
}

static void expire(struct ee_run_code *rc, struct ee_run_code_call *call)
{
	size_t len;
	char *text = NULL;
	unsigned code;

	ee_rc_answer_504(rc, &code, &text, &len,
	                 "no sandbox was free early enough to answer within this request's deadline "
	                 "(compile_timeout + run_timeout + 10 s, or --run-code-deadline); retry");
	finish(call, 504, text, len);
}

static void start(struct ee_run_code *rc, struct ee_run_code_call *call)
{
	struct ee_limits lim;

	ee_eval_limits(rc->o, &call->task, &lim);
	struct ee_candidate cand = {
		.task = &call->task,
		.program = call->program,
		.sample = -1,
		.keep_output = lim.output_cap,
		.on_outcome = on_outcome,
		.outcome_ctx = call,
	};
	call->state = EE_RC_RUNNING;
	ee_stats_observe(&rc->stats->run_code_wait_s, ee_rc_now() - call->arrived);
	if (ee_dispatch_submit(rc->d, &cand, ee_rc_on_record, call) < 0)
		ee_rc_on_record(call, ee_record_sandbox_error("run_code", "the dispatcher refused it"), 0);
}

static void pump(void *ctx)
{
	struct ee_run_code *rc = ctx;

	while (rc->head && idle(rc)) {
		struct ee_run_code_call *call = pop(rc);
		if (ee_rc_now() > call->deadline)
			expire(rc, call);
		else if (call->solo || rc->cfg.coalesce < 2 || rc->o->backend != EE_BACKEND_NATIVE ||
		         !ee_rc_start_group(rc, call))
			start(rc, call);
	}
}

long ee_run_code_next_ms(const struct ee_run_code *rc)
{
	double now = ee_rc_now();

	if (!rc->head)
		return -1;
	return rc->earliest <= now ? 0 : (long)ceil((rc->earliest - now) * 1000);
}

void ee_run_code_tick(struct ee_run_code *rc)
{
	double now = ee_rc_now(), next = INFINITY;

	pump(rc);
	if (!rc->head || now < rc->earliest)
		return;
	struct ee_run_code_call *last = NULL;
	for (struct ee_run_code_call **p = &rc->head; *p;) {
		struct ee_run_code_call *call = *p;
		if (now <= call->deadline) {
			next = call->deadline < next ? call->deadline : next;
			last = call;
			p = &call->next;
			continue;
		}
		*p = call->next;
		rc->waiting--;
		call->next = NULL;
		expire(rc, call);
	}
	rc->tail = last;
	rc->earliest = next;
}

int ee_run_code_submit(struct ee_run_code *rc, const char *body, size_t len, ee_run_code_ready ready,
                       void *ctx, struct ee_run_code_call **ret, unsigned *code, char **text,
                       size_t *text_len)
{
	json_error_t jerr;
	/* A raw NUL byte is not JSON, though jansson skips one between tokens. */
	json_t *req = memchr(body, '\0', len) ? NULL : json_loadb(body, len, 0, &jerr);

	if (!req)
		return ee_rc_refuse_422(code, text, text_len, "body", "the body is not JSON");
	struct ee_run_code_call *call = calloc(1, sizeof(*call));
	if (!call) {
		json_decref(req);
		return -1;
	}
	call->rc = rc;
	call->ready = ready;
	call->ctx = ctx;
	int r = ee_rc_read_request(rc, req, call, code, text, text_len);
	size_t cost = len + sizeof(*call);
	json_decref(req);
	if (r != 0) {
		ee_rc_call_free(call);
		return r < 0 ? -1 : 0;
	}
	ee_dispatch_on_idle(rc->d, pump, rc);
	if (rc->waiting >= rc->cfg.queue || ee_budget_charge(rc->budget, NULL, cost) != EE_BUDGET_OK) {
		ee_rc_call_free(call);
		return ee_rc_answer_504(
		        rc, code, text, text_len,
		        "the /run_code queue is full (--run-code-queue, --max-buffered); retry");
	}
	call->charged = cost;
	call->state = EE_RC_WAITING;
	if (rc->tail)
		rc->tail->next = call;
	else
		rc->head = call;
	rc->tail = call;
	rc->waiting++;
	if (rc->waiting == 1 || call->deadline < rc->earliest)
		rc->earliest = call->deadline;
	*ret = call;
	pump(rc);
	return 1;
}

void ee_run_code_abandon(struct ee_run_code_call *call)
{
	struct ee_run_code *rc = call->rc;

	if (call->state == EE_RC_READY) {
		ee_rc_call_free(call);
		return;
	}
	if (call->state == EE_RC_RUNNING) {
		call->abandoned = 1; /* freed when its record comes (finish) */
		return;
	}
	for (struct ee_run_code_call **p = &rc->head; *p; p = &(*p)->next)
		if (*p == call) {
			*p = call->next;
			rc->waiting--;
			break;
		}
	rc->tail = rc->head;
	while (rc->tail && rc->tail->next)
		rc->tail = rc->tail->next;
	ee_rc_call_free(call);
}

void ee_run_code_drop_waiting(struct ee_run_code *rc)
{
	while (rc->head) {
		struct ee_run_code_call *call = pop(rc);
		size_t len;
		char *text = ee_rc_dump(
		        json_pack("{s:s, s:n}", "error", "the server is shutting down", "field"), &len);
		finish(call, 503, text, len);
	}
}

void ee_run_code_free(struct ee_run_code *rc)
{
	if (!rc)
		return;
	ee_dispatch_on_idle(rc->d, NULL, NULL);
	free(rc);
}
