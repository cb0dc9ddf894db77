/* answer.c - the server's answers (see server_int.h): every response goes
 * through queue, which counts it; errors are {"error", "field"}; a refusal
 * carries the header its status calls for; a batch's records are streamed
 * from their texts as they are. */
#include <jansson.h>
#include <math.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/breaker.h"
#include "engine/engine.h"
#include "serve/dispatch.h"
#include "serve/get_reward.h"
#include "serve/heal.h"
#include "serve/refcache.h"
#include "serve/run_code.h"
#include "serve/server_int.h"

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
		if (code == 200 && ee_stats_times_requests(c->endpoint))
			ee_stats_observe(&srv->stats.request_s[c->endpoint], now_s() - ts_s(&c->arrived));
	}
	return ok;
}

/* Queues text (malloc'd; taken) as the answer. */
enum MHD_Result answer(struct conn *c, unsigned code, char *text, size_t len, const char *type,
                       const struct header *extra)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);

	if (!r)
		free(text);
	return queue(c, code, r, type, extra);
}

/* Answers a JSON value (taken). */
enum MHD_Result answer_json(struct conn *c, unsigned code, json_t *v, const struct header *extra)
{
	char *text = v ? json_dumps(v, JSON_FLAGS) : NULL;
	json_decref(v);
	if (!text)
		return MHD_NO;
	return answer(c, code, text, strlen(text), "application/json", extra);
}

enum MHD_Result answer_error(struct conn *c, unsigned code, const char *msg, const char *field,
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

enum MHD_Result refuse(struct conn *c, unsigned code, int reason, const char *msg, const char *field)
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

enum MHD_Result answer_health(struct conn *c)
{
	struct ee_server *srv = c->srv;
	const struct ee_breaker *b = ee_engine_breaker(srv->eng);
	if (b->tripped) /* before draining: a person must look */
		return answer_json(c, 503, json_pack("{s:s, s:s}", "status", "tripped", "reason", b->why),
		                   NULL);
	struct ee_engine_health h;
	ee_engine_health(srv->eng, &h);
	if (h.sick && !srv->draining) { /* a probe acts on it; it heals by itself if it can (heal.h) */
		ee_heal_poke(srv->heal);
		char why[400];
		snprintf(why, sizeof(why),
		         "sandboxes cannot be started: %lu starts in a row failed (last: %s)", h.failing,
		         h.why);
		return answer_json(c, 503,
		                   json_pack("{s:s, s:s, s:I}", "status", "unhealthy", "reason", why,
		                             "failed_starts_in_a_row", (json_int_t)h.failing),
		                   NULL);
	}
	json_t *v = json_pack("{s:s, s:I, s:s, s:I, s:I, s:I}", "status", srv->draining ? "draining" : "ok",
	                      "workers", (json_int_t)srv->cfg->jobs, "isolation", srv->cfg->isolation,
	                      "running", (json_int_t)ee_dispatch_running(srv->dispatch), "queued",
	                      (json_int_t)ee_dispatch_waiting(srv->dispatch), "queue_capacity",
	                      (json_int_t)srv->cfg->queue);
	return answer_json(c, srv->draining ? 503 : 200, v, NULL);
}

enum MHD_Result answer_metrics(struct conn *c)
{
	struct ee_server *srv = c->srv;
	struct ee_engine_health h;
	ee_engine_health(srv->eng, &h);
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
		.violations = ee_engine_violations(srv->eng),
		.tripped = ee_engine_breaker(srv->eng)->tripped,
		.trips = ee_engine_breaker_trips(srv->eng),
		.refcache = ee_refcache_stats(srv->refcache),
		.healthy = !h.sick,
		.starts_failing = h.failing,
		.start_failures = h.failures,
		.worker_replacements = h.replacements,
		.heal_probes = ee_heal_probes(srv->heal),
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
enum MHD_Result answer_records(struct conn *c)
{
	if (c->interrupted)
		return answer_error(c, 503, "the server stopped before this evaluation finished; retry", NULL,
		                    NULL);
	if (c->ref_error[0]) /* a task's generator or reference failed: no candidate ran */
		return answer_error(c, 422, c->ref_error, c->ref_field, NULL);
	if (c->expired && c->endpoint != EE_EP_GET_REWARD) { /* submit.c: its 504, at once */
		c->srv->stats.v1_timeouts++;
		return answer_error(c, 504,
		                    "no sandbox was free early enough to answer within this request's "
		                    "Execeval-Deadline; retry",
		                    NULL, NULL);
	}
	if (c->expired) /* /get_reward: those samples are infrastructure errors */
		c->srv->stats.get_reward_timeouts++;
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
	if (c->endpoint == EE_EP_GET_REWARD) {
		size_t len;
		char *text = ee_get_reward_answer(c->texts, c->lens, c->req.n_runs, c->records, &len);
		return text ? answer(c, 200, text, len, "application/json", NULL) : MHD_NO;
	}
	return answer_batch(c);
}

enum MHD_Result refuse_budget(struct conn *c, int over)
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
