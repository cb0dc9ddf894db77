/* server.c - the HTTP front of the evaluator (see server.h). */
#include "serve/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <malloc.h>
#include <math.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "engine/engine.h"
#include "base/err.h"
#include "engine/evaluate.h"
#include "sandbox/sandbox.h"
#include "serve/auth.h"
#include "serve/budget.h"
#include "serve/dispatch.h"
#include "serve/request.h"
#include "serve/run_code.h"
#include "serve/stats.h"

#define JSON_FLAGS (JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(15))

struct ee_server {
	struct ee_loop *loop;
	const struct ee_eval_options *o;
	const struct ee_server_config *cfg;
	struct MHD_Daemon *daemon;
	struct ee_loop_fd *watch;
	struct ee_dispatch *dispatch;
	struct ee_run_code *run_code; /* POST /run_code's own queue (run_code.h) */
	struct ee_serve_stats stats;
	struct ee_budget budget; /* bytes held for every client (budget.h) */
	unsigned suspended;      /* connections waiting for records */
	unsigned answering;      /* responses queued and not yet completed */
	double eval_s_avg;       /* moving average of an evaluation's seconds */
	int draining;            /* a signal asked to stop */
	int forced;              /* signal number of a forced stop */
	struct timespec deadline;
};

/* One request, from its headers to its completion (MHD's con_cls). */
struct conn {
	struct ee_server *srv;
	struct MHD_Connection *mc;
	int endpoint;
	struct timespec arrived;
	struct ee_buf body;
	size_t received;               /* body bytes arrived, kept or not */
	struct ee_budget_share *share; /* its address's (POSTs) */
	size_t charged;                /* body, then parsed request: budget and share */
	size_t reserved;               /* records, reserved then held: budget only */
	int answered;                  /* a response was queued */
	int suspended;
	int submitting;     /* inside the submit loop: callbacks may come */
	int interrupted;    /* an evaluation ended without a verdict */
	int overflow;       /* a record outgrew the budget: the answer is a 503 */
	unsigned refused;   /* 413 or 429 decided mid-body, answered at its end */
	int refused_reason; /* 429: which cap (enum ee_budget_result) */
	size_t discarded;   /* body bytes dropped since */
	struct ee_request req;
	char **texts; /* each run's record as JSON text (/v1/run: the answer), filled by the callbacks */
	size_t *lens;
	unsigned run_code; /* /v1/run: 200, or 500 when its sandbox could not be set up */
	struct slot *slots;
	size_t pending; /* evaluations not back yet */
	int orphaned;   /* MHD completed the request first: free when pending is 0 */

	struct ee_run_code_call *call; /* /run_code: its call, until answered */
	int call_ready;
};

struct slot {
	struct conn *c;
	size_t index;
};

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double ts_s(const struct timespec *t)
{
	return (double)t->tv_sec + (double)t->tv_nsec / 1e9;
}

/* ---- answers ------------------------------------------------------------ */

struct header {
	const char *name, *value;
};

/* Queues r (its reference taken) as the answer. */
static enum MHD_Result queue(struct conn *c, unsigned code, struct MHD_Response *r, const char *type,
                             const struct header *extra)
{
	struct ee_server *srv = c->srv;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	for (; extra && extra->name; extra++)
		MHD_add_response_header(r, extra->name, extra->value);
	if (srv->draining)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	enum MHD_Result ok = MHD_queue_response(c->mc, code, r);
	MHD_destroy_response(r);
	if (ok == MHD_YES) {
		c->answered = 1;
		srv->answering++;
		ee_stats_answer(&srv->stats, c->endpoint, code);
		if (code == 200 && (c->endpoint == EE_EP_RUN || c->endpoint == EE_EP_BATCH))
			ee_stats_observe(&srv->stats.request_s[c->endpoint == EE_EP_BATCH],
			                 now_s() - ts_s(&c->arrived));
	}
	return ok;
}

/* Queues text (malloc'd; taken) as the answer. */
static enum MHD_Result answer(struct conn *c, unsigned code, char *text, size_t len, const char *type,
                              const struct header *extra)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);

	if (!r)
		free(text);
	return queue(c, code, r, type, extra);
}

/* Answers a JSON value (taken). */
static enum MHD_Result answer_json(struct conn *c, unsigned code, json_t *v, const struct header *extra)
{
	char *text = v ? json_dumps(v, JSON_FLAGS) : NULL;
	json_decref(v);
	if (!text)
		return MHD_NO;
	return answer(c, code, text, strlen(text), "application/json", extra);
}

static enum MHD_Result answer_error(struct conn *c, unsigned code, const char *msg, const char *field,
                                    const struct header *extra)
{
	json_t *v = json_pack("{s:s, s:o}", "error", msg, "field",
	                      field && field[0] ? json_string(field) : json_null());
	return answer_json(c, code, v, extra);
}

/* Seconds until the queue has likely room again: the work ahead of a new
 * request, spread over the sandboxes; at least 1, at most 60. */
static unsigned retry_after(const struct ee_server *srv)
{
	double ahead = (double)(ee_dispatch_waiting(srv->dispatch) + ee_dispatch_running(srv->dispatch));
	double s = ceil(ahead * srv->eval_s_avg / (double)srv->cfg->jobs);
	return s < 1 ? 1 : s > 60 ? 60 : (unsigned)s;
}

static enum MHD_Result refuse(struct conn *c, unsigned code, int reason, const char *msg, const char *field)
{
	char seconds[16];
	struct header retry[] = { { MHD_HTTP_HEADER_RETRY_AFTER, seconds }, { NULL, NULL } };
	struct header auth[] = { { MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer" }, { NULL, NULL } };
	const struct header *extra = NULL;

	c->srv->stats.rejected[reason]++;
	snprintf(seconds, sizeof(seconds), "%u", retry_after(c->srv));
	if (code == 429 || code == 503)
		extra = retry;
	else if (code == 401)
		extra = auth;
	return answer_error(c, code, msg, field, extra);
}

static enum MHD_Result answer_health(struct conn *c)
{
	struct ee_server *srv = c->srv;
	json_t *v = json_pack("{s:s, s:I, s:s, s:I, s:I, s:I}", "status", srv->draining ? "draining" : "ok",
	                      "workers", (json_int_t)srv->cfg->jobs, "isolation", srv->cfg->isolation,
	                      "running", (json_int_t)ee_dispatch_running(srv->dispatch), "queued",
	                      (json_int_t)ee_dispatch_waiting(srv->dispatch), "queue_capacity",
	                      (json_int_t)srv->cfg->queue);
	return answer_json(c, srv->draining ? 503 : 200, v, NULL);
}

static enum MHD_Result answer_metrics(struct conn *c)
{
	struct ee_server *srv = c->srv;
	struct ee_serve_gauges g = {
		.queue_depth = ee_dispatch_waiting(srv->dispatch),
		.queue_capacity = srv->cfg->queue,
		.running = ee_dispatch_running(srv->dispatch),
		.workers = srv->cfg->jobs,
		.draining = srv->draining,
		.buffered = srv->budget.held,
		.buffered_capacity = srv->budget.total,
		.run_code_depth = ee_run_code_waiting(srv->run_code),
		.run_code_capacity = ee_run_code_capacity(srv->run_code),
	};
	size_t len;
	char *text = ee_stats_render(&srv->stats, &g, &len);
	if (!text)
		return MHD_NO;
	return answer(c, 200, text, len, "text/plain; version=0.0.4; charset=utf-8", NULL);
}

/* A batch's answer, {"records": [...]}, sent from its records' texts as
 * they are (no copy of the whole); each text is freed, and its bytes given
 * back to the budget, once sent. Owned by its response. */
struct stream {
	struct ee_server *srv;
	char **texts;
	size_t *lens, n;
	size_t piece, off; /* the next byte: piece (head, text, ",", ..., tail) at off */
	size_t charged;    /* of the budget, for the texts not yet freed */
};

static const char stream_head[] = "{\"records\":[", stream_tail[] = "]}";

/* Piece k of 2n + 1: the head, then texts with "," between, then the tail. */
static const char *stream_piece(const struct stream *st, size_t k, size_t *len)
{
	if (k == 0 || k == 2 * st->n) {
		*len = k == 0 ? sizeof(stream_head) - 1 : sizeof(stream_tail) - 1;
		return k == 0 ? stream_head : stream_tail;
	}
	if (k % 2 == 0) {
		*len = 1;
		return ",";
	}
	*len = st->lens[(k - 1) / 2];
	return st->texts[(k - 1) / 2];
}

static void stream_drop_text(struct stream *st, size_t i)
{
	ee_budget_release(&st->srv->budget, NULL, st->lens[i]);
	st->charged -= st->lens[i] < st->charged ? st->lens[i] : st->charged;
	free(st->texts[i]);
	st->texts[i] = NULL;
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream *st = cls;
	size_t done = 0;

	(void)pos;
	while (done < max && st->piece <= 2 * st->n) {
		size_t len;
		const char *p = stream_piece(st, st->piece, &len);
		size_t take = len - st->off < max - done ? len - st->off : max - done;
		memcpy(buf + done, p + st->off, take);
		done += take;
		st->off += take;
		if (st->off == len) {
			if (st->piece % 2 == 1)
				stream_drop_text(st, (st->piece - 1) / 2);
			st->piece++;
			st->off = 0;
		}
	}
	return done ? (ssize_t)done : MHD_CONTENT_READER_END_OF_STREAM;
}

static void stream_free(void *cls)
{
	struct stream *st = cls;

	for (size_t i = 0; i < st->n; i++)
		free(st->texts[i]);
	ee_budget_release(&st->srv->budget, NULL, st->charged);
	free(st->texts);
	free(st->lens);
	free(st);
}

/* Moves c's record texts, and their charge, into a response. */
static enum MHD_Result answer_batch(struct conn *c)
{
	struct stream *st = calloc(1, sizeof(*st));
	uint64_t size = sizeof(stream_head) - 1 + sizeof(stream_tail) - 1 + c->req.n_runs - 1;

	if (!st)
		return MHD_NO;
	*st = (struct stream){ c->srv, c->texts, c->lens, c->req.n_runs, 0, 0, c->reserved };
	c->texts = NULL;
	c->lens = NULL;
	c->reserved = 0;
	for (size_t i = 0; i < st->n; i++)
		size += st->lens[i];
	struct MHD_Response *r =
	        MHD_create_response_from_callback(size, 64 * 1024, stream_read, st, stream_free);
	if (!r)
		stream_free(st);
	return queue(c, 200, r, "application/json", NULL);
}

/* The records are all back: the request's answer. */
static enum MHD_Result answer_records(struct conn *c)
{
	if (c->interrupted)
		return answer_error(c, 503, "the server stopped before this evaluation finished; retry", NULL,
		                    NULL);
	if (c->overflow)
		return refuse(
		        c, 503, EE_REJ_OVER_BUDGET,
		        "the records outgrew the server's --max-buffered; retry, or send fewer runs or tests",
		        NULL);
	if (c->endpoint == EE_EP_RUN) {
		char *text = c->texts[0];
		c->texts[0] = NULL;
		return answer(c, c->run_code, text, c->lens[0], "application/json", NULL);
	}
	return answer_batch(c);
}

/* ---- budget and pace -------------------------------------------------- */

/* Whether the body has fallen under body_min_rate: after the grace, the
 * bytes arrived must keep up with rate x (time since the headers - grace). */
static int too_slow(const struct conn *c)
{
	const struct ee_server_config *cfg = c->srv->cfg;
	double late = now_s() - ts_s(&c->arrived) - cfg->body_grace_s;

	return late > 0 && (double)c->received < cfg->body_min_rate * late;
}

/* The connection's idle timeout, cut to when the body would fall under
 * the minimum rate without another byte: libmicrohttpd then closes it,
 * so a silent trickler is cut as well as a slow one. */
static void pace(struct conn *c)
{
	const struct ee_server_config *cfg = c->srv->cfg;
	double due = cfg->body_grace_s + (double)c->received / cfg->body_min_rate;
	double left = ceil(due - (now_s() - ts_s(&c->arrived)));
	unsigned t = left < 1 ? 1 : left > 86400 ? 86400 : (unsigned)left;

	if (cfg->idle_timeout_s && t > cfg->idle_timeout_s)
		t = cfg->idle_timeout_s;
	MHD_set_connection_option(c->mc, MHD_CONNECTION_OPTION_TIMEOUT, t);
}

/* The client's address, numeric ("127.0.0.1", "::1"). */
static void client_address(struct MHD_Connection *mc, char *buf, size_t size)
{
	const union MHD_ConnectionInfo *info =
	        MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = info ? info->client_addr : NULL;

	snprintf(buf, size, "unknown");
	if (sa && sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf, (socklen_t)size);
	else if (sa && sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, buf, (socklen_t)size);
}

static int join_share(struct conn *c)
{
	char address[INET6_ADDRSTRLEN];

	client_address(c->mc, address, sizeof(address));
	c->share = ee_budget_join(&c->srv->budget, address);
	return c->share ? 0 : -1;
}

static enum MHD_Result refuse_budget(struct conn *c, int over)
{
	if (c->endpoint == EE_EP_RUN_CODE) /* its clients retry a 504 only (run_code.h) */
		return answer_error(c, 504, "too many request bodies held; retry", NULL, NULL);
	if (over == EE_BUDGET_SHARE)
		return refuse(c, 429, EE_REJ_OVER_BUDGET,
		              "this client address holds its share of the server's memory "
		              "(--max-buffered-per-ip); retry later",
		              NULL);
	return refuse(c, 429, EE_REJ_OVER_BUDGET, "too many request bodies held; retry later", NULL);
}

/* Drops the body read so far; the request is answered code at its end. */
static void refuse_body(struct conn *c, unsigned code, int reason)
{
	c->refused = code;
	c->refused_reason = reason;
	ee_buf_free(&c->body);
	ee_budget_release(&c->srv->budget, c->share, c->charged);
	c->charged = 0;
}

/* ---- evaluations -------------------------------------------------------- */

static void free_conn(struct conn *c)
{
	struct ee_server *srv = c->srv;

	ee_budget_release(&srv->budget, c->share, c->charged);
	ee_budget_release(&srv->budget, NULL, c->reserved);
	ee_budget_leave(&srv->budget, c->share);
	ee_buf_free(&c->body);
	for (size_t i = 0; c->texts && i < c->req.n_runs; i++)
		free(c->texts[i]);
	free(c->texts);
	free(c->lens);
	free(c->slots);
	ee_request_free(&c->req);
	free(c);
}

/* A lower bound of a record's text: what admission reserves for it (a test
 * is at least ~120 bytes of the record's "tests", the rest ~600). */
#define RECORD_MIN      512
#define RECORD_MIN_TEST 96

static size_t record_reserve(const struct ee_task *t)
{
	return RECORD_MIN + RECORD_MIN_TEST * t->n_tests;
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

static void on_record(void *ctx, json_t *rec, double run_s)
{
	struct slot *slot = ctx;
	struct conn *c = slot->c;
	struct ee_server *srv = c->srv;

	if (rec) {
		ee_stats_record(&srv->stats, json_string_value(json_object_get(rec, "status")));
		if (run_s > 0) {
			ee_stats_observe(&srv->stats.evaluation_s, run_s);
			srv->eval_s_avg += (run_s - srv->eval_s_avg) / 16;
		}
		keep_record(c, slot->index, rec);
	} else {
		c->interrupted = 1;
	}
	if (--c->pending > 0 || c->submitting)
		return;
	if (c->orphaned) {
		free_conn(c);
	} else if (c->suspended) {
		/* Still counted as suspended until MHD calls on_request again
		 * (answer_records): a drain must not end in between. */
		MHD_resume_connection(c->mc);
	}
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

/* Admits every run of c's request or none; answers at once when none is left
 * pending (all failed to start), else suspends the connection. */
static enum MHD_Result submit(struct conn *c)
{
	struct ee_server *srv = c->srv;
	size_t n = c->req.n_runs;

	if (ee_dispatch_room(srv->dispatch) < n)
		return refuse(c, 429, EE_REJ_QUEUE_FULL, "the queue is full; retry after Retry-After seconds",
		              NULL);
	if (reserve_records(c) != MHD_YES || c->answered)
		return c->answered ? MHD_YES : MHD_NO;
	c->texts = calloc(n, sizeof(*c->texts));
	c->lens = calloc(n, sizeof(*c->lens));
	c->slots = calloc(n, sizeof(*c->slots));
	if (!c->texts || !c->lens || !c->slots)
		return MHD_NO;
	c->submitting = 1;
	for (size_t i = 0; i < n; i++) {
		struct ee_run *run = &c->req.runs[i];
		struct ee_candidate cand = {
			.task = &run->task,
			.program = run->program,
			.model = run->model,
			.sample = run->sample,
			.no_code_block = run->no_code_block,
			.extraction = run->extraction,
		};
		c->slots[i] = (struct slot){ c, i };
		c->pending++;
		if (ee_dispatch_submit(srv->dispatch, &cand, on_record, &c->slots[i]) < 0)
			abort(); /* room was checked above, on this thread */
	}
	c->submitting = 0;
	if (c->pending == 0)
		return answer_records(c);
	c->suspended = 1;
	srv->suspended++;
	MHD_suspend_connection(c->mc);
	return MHD_YES;
}

/* ---- /run_code (run_code.h) -------------------------------------------- */

static void run_code_ready(void *ctx)
{
	struct conn *c = ctx;

	c->call_ready = 1;
	if (c->suspended)
		MHD_resume_connection(c->mc); /* answered when MHD calls on_request again */
}

static enum MHD_Result run_code_answer(struct conn *c)
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

static enum MHD_Result on_body_complete(struct conn *c)
{
	struct ee_server *srv = c->srv;
	struct ee_err err = { 0 };

	if (srv->draining)
		return refuse(c, 503, EE_REJ_DRAINING, "the server is shutting down", NULL);
	if (c->endpoint == EE_EP_RUN_CODE)
		return run_code_body(c);
	int kind = c->endpoint == EE_EP_BATCH ? EE_REQUEST_BATCH : EE_REQUEST_RUN;
	struct ee_request_rules rules = { srv->cfg->queue,
		                          srv->cfg->extract,
		                          &srv->o->limits,
		                          srv->o->strict_asserts,
		                          srv->cfg->max_tests_per_task,
		                          srv->cfg->max_request_tests,
		                          srv->cfg->max_body_values,
		                          srv->o->mbpp_challenge ? (int)EE_TASK_MBPP_CHALLENGE : 0 };
	int rc = ee_request_parse(c->body.data ? c->body.data : "", c->body.len, kind, &rules, &c->req, &err);
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

/* ---- requests ----------------------------------------------------------- */

static int is_method(const char *method, const char *want)
{
	return strcmp(method, want) == 0;
}

/* Routing and everything decidable from the headers. Returns MHD_YES with
 * c->answered set when it answered, MHD_YES otherwise (read the body). */
static enum MHD_Result on_headers(struct conn *c, const char *method)
{
	struct ee_server *srv = c->srv;
	int post = c->endpoint == EE_EP_RUN || c->endpoint == EE_EP_BATCH || c->endpoint == EE_EP_RUN_CODE;
	int get_ok = is_method(method, "GET") || is_method(method, "HEAD");

	if (c->endpoint == EE_EP_OTHER)
		return answer_error(c, 404,
		                    "no such endpoint (POST /v1/run, POST /v1/batch, POST /run_code, "
		                    "GET /healthz, GET /metrics, GET /v1/ping)",
		                    NULL, NULL);
	if (post ? !is_method(method, "POST") : !get_ok) {
		struct header allow[] = { { MHD_HTTP_HEADER_ALLOW, post ? "POST" : "GET, HEAD" },
			                  { NULL, NULL } };
		return answer_error(c, 405, post ? "use POST" : "use GET", NULL, allow);
	}
	/* GETs are answered on the next call: a response queued with the
	 * headers makes libmicrohttpd close the connection (it cannot know
	 * no body follows), and clients polling /healthz keep theirs open. */
	if (c->endpoint == EE_EP_HEALTHZ || c->endpoint == EE_EP_PING)
		return MHD_YES;
	if (srv->cfg->token &&
	    !ee_token_check(srv->cfg->token, MHD_lookup_connection_value(c->mc, MHD_HEADER_KIND,
	                                                                 MHD_HTTP_HEADER_AUTHORIZATION)))
		return refuse(c, 401, EE_REJ_UNAUTHORIZED, "missing or wrong bearer token", NULL);
	if (c->endpoint == EE_EP_METRICS)
		return MHD_YES;
	if (srv->draining)
		return refuse(c, 503, EE_REJ_DRAINING, "the server is shutting down", NULL);

	const char *length =
	        MHD_lookup_connection_value(c->mc, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	unsigned long long declared = length ? strtoull(length, NULL, 10) : 0;
	if (declared > srv->cfg->max_body)
		return refuse(c, 413, EE_REJ_TOO_LARGE, "the body is larger than the server's --max-body",
		              NULL);
	/* Nothing is charged for a declared length: a client that declares
	 * 16 MiB and sends a byte holds a byte. A full queue or budget is
	 * answered after the body (an answer queued now would close the
	 * connection, and a batch that can never fit deserves its 413). */
	if (join_share(c) < 0)
		return MHD_NO;
	pace(c);
	return MHD_YES;
}

/* A body without Content-Length (chunked) can only be refused once it has
 * been read: libmicrohttpd queues no answer mid-body. Its excess is counted
 * and dropped, up to DISCARD_MAX, then the connection is cut. */
#define DISCARD_MAX (64u << 20)

static enum MHD_Result on_upload(struct conn *c, const char *data, size_t n)
{
	struct ee_server *srv = c->srv;

	c->received += n;
	if (too_slow(c)) {
		srv->stats.rejected[EE_REJ_TOO_SLOW]++;
		return MHD_NO; /* closes it: no answer can be queued mid-body */
	}
	pace(c);
	if (c->refused) {
		c->discarded += n;
		return c->discarded > DISCARD_MAX ? MHD_NO : MHD_YES;
	}
	if (c->body.len + n > srv->cfg->max_body) {
		refuse_body(c, 413, EE_REJ_TOO_LARGE);
		return MHD_YES;
	}
	int over = ee_budget_charge(&srv->budget, c->share, n);
	if (over != EE_BUDGET_OK) {
		refuse_body(c, 429, over);
		return MHD_YES;
	}
	c->charged += n;
	if (ee_buf_append(&c->body, data, n) < 0)
		return MHD_NO;
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *mc, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size,
                                  void **con_cls)
{
	struct ee_server *srv = cls;
	struct conn *c = *con_cls;

	if (!c) {
		if (!(c = calloc(1, sizeof(*c))))
			return MHD_NO;
		c->srv = srv;
		c->mc = mc;
		c->endpoint = ee_endpoint_of(url);
		clock_gettime(CLOCK_MONOTONIC, &c->arrived);
		ee_buf_init(&c->body, srv->cfg->max_body);
		*con_cls = c;
		return on_headers(c, method);
	}
	if (c->answered) {
		*upload_size = 0; /* the rest of a refused body is read and dropped */
		return MHD_YES;
	}
	if (*upload_size) {
		size_t n = *upload_size;
		*upload_size = 0;
		return on_upload(c, upload, n);
	}
	if (c->endpoint == EE_EP_HEALTHZ)
		return answer_health(c);
	if (c->endpoint == EE_EP_METRICS)
		return answer_metrics(c);
	if (c->endpoint == EE_EP_PING) /* SandboxFusion's liveness probe */
		return answer(c, 200, strdup("\"pong\""), 6, "application/json", NULL);
	if (c->call && c->call_ready) /* resumed: /run_code's answer is there */
		return run_code_answer(c);
	if (c->share) /* the body is in: back to the idle timeout */
		MHD_set_connection_option(mc, MHD_CONNECTION_OPTION_TIMEOUT, srv->cfg->idle_timeout_s);
	if (c->refused == 413)
		return refuse(c, 413, EE_REJ_TOO_LARGE, "the body is larger than the server's --max-body",
		              NULL);
	if (c->refused == 429)
		return refuse_budget(c, c->refused_reason);
	if (c->texts) { /* resumed: every record is back */
		if (c->suspended) {
			c->suspended = 0;
			srv->suspended--;
		}
		return answer_records(c);
	}
	return on_body_complete(c);
}

static void on_completed(void *cls, struct MHD_Connection *mc, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
	struct ee_server *srv = cls;
	struct conn *c = *con_cls;

	if (!c)
		return;
	*con_cls = NULL;
	if (c->answered)
		srv->answering--;
	/* MHD closed a POST whose body stopped short: the minimum rate (pace). */
	if (toe == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED && c->share && !c->answered && !c->req.n_runs)
		srv->stats.rejected[EE_REJ_TOO_SLOW]++;
	if (c->call) {
		if (c->suspended)
			srv->suspended--;
		ee_run_code_abandon(c->call);
		c->call = NULL;
	}
	if (c->pending > 0) {
		c->orphaned = 1; /* its evaluations still run; on_record frees it */
		return;
	}
	free_conn(c);
}

/* ---- life --------------------------------------------------------------- */

static void on_http(void *ctx)
{
	struct ee_server *srv = ctx;
	MHD_run(srv->daemon);
}

/* Stops accepting; accepted work goes on. */
static void start_drain(struct ee_server *srv, int signo)
{
	srv->draining = 1;
	clock_gettime(CLOCK_MONOTONIC, &srv->deadline);
	srv->deadline.tv_sec += (time_t)srv->cfg->grace_s;
	srv->deadline.tv_nsec += (long)((srv->cfg->grace_s - floor(srv->cfg->grace_s)) * 1e9);
	if (srv->deadline.tv_nsec >= 1000000000L) {
		srv->deadline.tv_sec++;
		srv->deadline.tv_nsec -= 1000000000L;
	}
	int fd = MHD_quiesce_daemon(srv->daemon);
	if (fd >= 0)
		close(fd);
	if (srv->cfg->log)
		srv->cfg->log("signal %d: draining: %u running, %zu queued; new connections refused", signo,
		              ee_dispatch_running(srv->dispatch), ee_dispatch_waiting(srv->dispatch));
}

/* Kills what runs and drops what waits: their requests get 503. */
static void force_stop(struct ee_server *srv, int signo, const char *why)
{
	if (srv->cfg->log)
		srv->cfg->log("%s: killing %u running, dropping %zu queued", why,
		              ee_dispatch_running(srv->dispatch), ee_dispatch_waiting(srv->dispatch));
	ee_dispatch_drop_waiting(srv->dispatch);
	ee_run_code_drop_waiting(srv->run_code);
	ee_loop_interrupt(srv->loop, signo);
}

static int on_signal(void *ctx, int signo)
{
	struct ee_server *srv = ctx;

	if (!srv->draining) {
		start_drain(srv, signo);
		return 1;
	}
	if (!srv->forced) {
		srv->forced = signo;
		force_stop(srv, signo, "second signal");
	}
	return 1;
}

static int finished(const struct ee_server *srv)
{
	return srv->draining && ee_dispatch_waiting(srv->dispatch) == 0 &&
	       ee_dispatch_running(srv->dispatch) == 0 && srv->suspended == 0 && srv->answering == 0;
}

/* Milliseconds epoll may sleep: MHD's next timeout, and the grace deadline. */
static int wait_ms(const struct ee_server *srv)
{
	MHD_UNSIGNED_LONG_LONG mhd;
	long long ms = MHD_get_timeout(srv->daemon, &mhd) == MHD_YES ? (long long)mhd : -1;

	if (srv->draining) {
		double left = ts_s(&srv->deadline) - now_s();
		long long grace_ms = left > 0 ? (long long)(left * 1000) + 1 : 0;
		if (ms < 0 || grace_ms < ms)
			ms = grace_ms;
		if (ms > 100 || ms < 0)
			ms = 100; /* the last answers' completion is noticed by polling */
	}
	/* /run_code's next deadline: its 504 is due then (run_code.h). */
	long due = ee_run_code_next_ms(srv->run_code);
	if (due >= 0 && (ms < 0 || due < ms))
		ms = due;
	return ms > 60000 || ms < 0 ? 60000 : (int)ms;
}

int ee_server_run(struct ee_server *srv, struct ee_err *err)
{
	int grace_over = 0;

	ee_loop_on_signal(srv->loop, on_signal, srv);
	while (!finished(srv)) {
		ee_run_code_tick(srv->run_code); /* 504s due: resumed before MHD runs */
		MHD_run(srv->daemon);
		if (finished(srv))
			break;
		if (ee_loop_wait(srv->loop, wait_ms(srv), err) < 0)
			return -1;
		if (srv->draining && !srv->forced && !grace_over && now_s() >= ts_s(&srv->deadline)) {
			grace_over = 1;
			force_stop(srv, SIGTERM, "grace period over");
		}
	}
	ee_loop_on_signal(srv->loop, NULL, NULL);
	return srv->forced;
}

int ee_server_new(struct ee_engine *eng, const struct ee_eval_options *o, const struct ee_server_config *cfg,
                  struct ee_server **ret, struct ee_err *err)
{
	struct ee_server *srv = calloc(1, sizeof(*srv));

	if (!srv)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	struct ee_loop *loop = ee_engine_loop(eng);

	srv->loop = loop;
	srv->o = o;
	srv->cfg = cfg;
	srv->eval_s_avg = 0.05;
	ee_budget_init(&srv->budget, cfg->max_buffered, cfg->max_buffered_per_ip);
	if (ee_dispatch_new(eng, o, cfg->jobs, cfg->queue, &srv->dispatch, err) < 0) {
		free(srv);
		return -1;
	}
	struct ee_run_code_config rc_cfg = { cfg->run_code_deadline_s, cfg->run_code_queue, cfg->jobs };
	if (ee_run_code_new(srv->dispatch, o, &srv->budget, &srv->stats, &rc_cfg, &srv->run_code, err) < 0) {
		ee_server_free(srv);
		return -1;
	}
	unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_TURBO;
	if (cfg->addr.sa.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	srv->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, srv, MHD_OPTION_SOCK_ADDR,
	                               (const struct sockaddr *)&cfg->addr.sa, MHD_OPTION_CONNECTION_LIMIT,
	                               cfg->max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
	                               cfg->max_connections_per_ip, MHD_OPTION_CONNECTION_TIMEOUT,
	                               cfg->idle_timeout_s, MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
	                               MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)1024, MHD_OPTION_END);
	if (!srv->daemon) {
		char where[80];
		ee_listen_format((const struct sockaddr *)&cfg->addr.sa, where, sizeof(where));
		ee_fail_errno(err, EE_ERR_SANDBOX,
		              "cannot listen on %s (in use? another address with --listen)", where);
		ee_server_free(srv);
		return -1;
	}
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_EPOLL_FD);
	if (!info || ee_loop_add_fd(loop, info->epoll_fd, on_http, srv, &srv->watch, err) < 0) {
		if (!info)
			ee_fail(err, EE_ERR_SANDBOX, "libmicrohttpd has no epoll fd");
		ee_server_free(srv);
		return -1;
	}
	*ret = srv;
	return 0;
}

void ee_server_address(const struct ee_server *srv, char *buf, size_t size)
{
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_LISTEN_FD);
	struct sockaddr_storage sa;
	socklen_t len = sizeof(sa);

	if (info && getsockname(info->listen_fd, (struct sockaddr *)&sa, &len) == 0)
		ee_listen_format((const struct sockaddr *)&sa, buf, size);
	else
		ee_listen_format((const struct sockaddr *)&srv->cfg->addr.sa, buf, size);
}

void ee_server_free(struct ee_server *srv)
{
	if (!srv)
		return;
	ee_loop_remove_fd(srv->watch);
	if (srv->daemon)
		MHD_stop_daemon(srv->daemon);
	ee_run_code_free(srv->run_code);
	ee_dispatch_free(srv->dispatch);
	ee_budget_free(&srv->budget);
	free(srv);
}
