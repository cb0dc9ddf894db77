/* sessions.c - the server's live interpreters (see sessions.h). */
#include "serve/sessions.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/cleanup.h"
#include "base/err.h"
#include "base/jsonfield.h"
#include "base/loop.h"
#include "engine/evaluate_int.h"
#include "engine/session.h"

#define JSON_OUT (JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(15))

struct ee_sessions_wait {
	struct entry *e; /* NULL once answered or its entry is gone */
	void (*ready)(void *ctx);
	void *ctx;
	int abandoned;
	int is_ready;
	unsigned code;
	char *text;
};

struct fork_wait;

struct entry {
	struct ee_sessions *t;
	struct entry *next;
	struct ee_session *s;
	char id[33];
	int ready; /* its setup answered */
	int ended; /* ee_session_end called or it ended by itself */
	int gone;  /* on_end came: only waiting to be freed */
	double created, last_used, idle_timeout_s, ttl_s;
	char end_why[256];             /* why it ended, for a GET or exec that follows */
	struct ee_sessions_wait *wait; /* the create or exec waiting for its answer */
	struct fork_wait *fork;        /* a copy (or the parent) of a fork not yet answered */
	int hidden;                    /* a copy whose fork is not made yet: no id to find */
};

/* A fork's answer: when every copy is ready, or at its first failure. */
struct fork_wait {
	struct ee_sessions_wait *w;
	struct entry *parent;                       /* the forked session's, until made */
	struct entry *entries[EE_SESSION_FORK_MAX]; /* [0]: the parent (its copy, once made) */
	unsigned n, pending;
	int made;
};

struct ee_sessions {
	struct ee_engine *eng;
	struct ee_sessions_config cfg;
	struct entry *list;
	unsigned live;
	unsigned held; /* sessions of other routes counted toward max_sessions (ee_sessions_hold) */
};

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int json_answer(unsigned status, json_t *v, unsigned *code, char **text, size_t *len)
{
	*code = status;
	*text = v ? json_dumps(v, JSON_OUT) : NULL;
	json_decref(v);
	*len = *text ? strlen(*text) : 0;
	return *text ? 0 : -1;
}

static int error_answer(unsigned status, const char *msg, const char *field, unsigned *code, char **text,
                        size_t *len)
{
	json_t *v = json_pack("{s:s}", "error", msg);
	if (v && field && field[0])
		json_object_set_new(v, "field", json_string(field));
	return json_answer(status, v, code, text, len);
}

/* ---- a wait ---------------------------------------------------------------- */

static void answer_wait(struct ee_sessions_wait *w, unsigned status, json_t *v)
{
	size_t len;

	if (!w) {
		json_decref(v);
		return;
	}
	w->e = NULL;
	if (w->abandoned) {
		json_decref(v);
		free(w);
		return;
	}
	if (json_answer(status, v, &w->code, &w->text, &len) < 0)
		w->code = 500;
	w->is_ready = 1;
	w->ready(w->ctx);
}

static void finish_wait(struct entry *e, unsigned status, json_t *v)
{
	struct ee_sessions_wait *w = e->wait;
	e->wait = NULL;
	answer_wait(w, status, v);
}

void ee_sessions_answer(struct ee_sessions_wait *w, unsigned *code, char **text, size_t *text_len)
{
	*code = w->code;
	*text = w->text;
	*text_len = w->text ? strlen(w->text) : 0;
	free(w);
}

void ee_sessions_abandon(struct ee_sessions_wait *w)
{
	if (!w)
		return;
	if (w->is_ready) {
		free(w->text);
		free(w);
		return;
	}
	w->abandoned = 1; /* freed by finish_wait */
}

/* ---- a fork's wait ------------------------------------------------------------ */

/* The fork is answered (or failed): its entries are on their own again. */
static void fork_release(struct fork_wait *fw)
{
	for (unsigned i = 0; i < fw->n; i++)
		if (fw->entries[i])
			fw->entries[i]->fork = NULL;
	free(fw);
}

/* A copy could not start after the fork was made: the fork fails whole
 * (its copies end, the parent too: its interpreter moved into them). */
static void fork_fail(struct fork_wait *fw, struct entry *gone, const char *why)
{
	answer_wait(fw->w, 503,
	            json_pack("{s:s, s:s}", "error", "the fork failed: a copy could not start", "detail",
	                      why[0] ? why : "its interpreter ended"));
	for (unsigned i = 0; i < fw->n; i++) {
		struct entry *e = fw->entries[i];
		if (!e || e == gone || e->ended)
			continue;
		snprintf(e->end_why, sizeof(e->end_why), "its fork failed: a copy could not start");
		e->ended = 1;
		ee_session_end(e->s);
	}
	fork_release(fw);
}

static void fork_ready(struct fork_wait *fw)
{
	if (--fw->pending > 0)
		return;
	json_t *ids = json_array();
	for (unsigned i = 1; i < fw->n; i++)
		json_array_append_new(ids, json_string(fw->entries[i]->id));
	answer_wait(fw->w, 200,
	            json_pack("{s:s, s:s, s:o}", "id", fw->entries[0]->id, "status", "forked", "ids", ids));
	fork_release(fw);
}

/* ---- the engine session's callbacks -------------------------------------- */

static void on_answer(void *ctx, struct ee_session *s, json_t *answer)
{
	struct entry *e = ctx;
	(void)s;
	e->last_used = now_s();
	if (!e->ready && e->fork) { /* a copy's first answer: its keeper is up */
		e->ready = 1;
		json_decref(answer);
		return fork_ready(e->fork);
	}
	if (!e->ready) {
		e->ready = 1;
		const char *status = json_string_value(json_object_get(answer, "status"));
		if (status && strcmp(status, "ok") == 0) {
			json_t *v =
			        json_pack("{s:s, s:s, s:o}", "id", e->id, "status", "ready", "setup", answer);
			json_object_set_new(v, "idle_timeout_s", json_real(e->idle_timeout_s));
			json_object_set_new(v, "ttl_s", json_real(e->ttl_s));
			return finish_wait(e, 200, v);
		}
		/* The task's setup failed: no session to give. */
		snprintf(e->end_why, sizeof(e->end_why), "its setup did not answer ok");
		e->ended = 1;
		ee_session_end(e->s);
		return finish_wait(
		        e, 422,
		        json_pack("{s:s, s:o}", "error", "the session's setup failed", "setup", answer));
	}
	json_object_set_new(answer, "id", json_string(e->id));
	finish_wait(e, 200, answer);
}

static void unlink_entry(struct entry *e)
{
	struct entry **p = &e->t->list;
	while (*p && *p != e)
		p = &(*p)->next;
	if (*p)
		*p = e->next;
}

static void on_end(void *ctx, struct ee_session *s, const char *why)
{
	struct entry *e = ctx;
	(void)s;
	if (why[0] && !e->end_why[0])
		snprintf(e->end_why, sizeof(e->end_why), "%s", why);
	e->ended = e->gone = 1;
	e->t->live--;
	if (e->fork) {
		struct fork_wait *fw = e->fork;
		for (unsigned i = 0; i < fw->n; i++)
			if (fw->entries[i] == e)
				fw->entries[i] = NULL;
		if (fw->made)
			fork_fail(fw, e, e->end_why);
	}
	if (e->wait)
		finish_wait(
		        e, e->ready ? 200 : 503,
		        e->ready ? json_pack("{s:s, s:s, s:s, s:b}", "id", e->id, "status", "session_ended",
		                             "detail", e->end_why[0] ? e->end_why : "the session ended",
		                             "rolled_back", 0)
		                 : json_pack("{s:s, s:s}", "error", "the session could not start", "detail",
		                             e->end_why[0] ? e->end_why : "its interpreter ended"));
	/* Freed at once: its id answers 404 from now on (a GET right after a
	 * DELETE sees no session, as it should). */
	unlink_entry(e);
	ee_session_free(e->s);
	free(e);
}

static const struct ee_session_ops session_ops = { .on_answer = on_answer, .on_end = on_end };

/* ---- routes ---------------------------------------------------------------- */

static struct entry *find(struct ee_sessions *t, const char *id, size_t n)
{
	for (struct entry *e = t->list; e; e = e->next)
		if (!e->ended && !e->hidden && strlen(e->id) == n && memcmp(e->id, id, n) == 0)
			return e;
	return NULL;
}

static int read_limits(const struct ee_sessions *t, const struct ee_jf *c, const json_t *body,
                       struct ee_limits *lim)
{
	static const char *const keys[] = { "memory_mb", "procs", "tmp_mb", "output_cap", "timeout_s" };
	json_t *l = NULL;
	json_int_t v;

	*lim = t->cfg.limits;
	if (ee_jf_object(c, body, "limits", 0, &l) < 0 || !l)
		return 0;
	struct ee_jf lc = ee_jf_sub(c, "limits");
	if (ee_jf_known_keys(&lc, l, keys, 5, "a session limit") < 0)
		return -1;
	v = lim->memory_mb;
	if (ee_jf_int(&lc, l, "memory_mb", 16, t->cfg.limits.memory_mb, "MiB up to the server's", &v) < 0)
		return -1;
	lim->memory_mb = (unsigned)v;
	v = lim->procs;
	if (ee_jf_int(&lc, l, "procs", 4, t->cfg.limits.procs, "processes up to the server's", &v) < 0)
		return -1;
	lim->procs = (unsigned)v;
	v = lim->tmp_mb;
	if (ee_jf_int(&lc, l, "tmp_mb", 1, t->cfg.limits.tmp_mb, "MiB up to the server's", &v) < 0)
		return -1;
	lim->tmp_mb = (unsigned)v;
	v = (json_int_t)lim->output_cap;
	if (ee_jf_int(&lc, l, "output_cap", 1024, (json_int_t)t->cfg.limits.output_cap,
	              "bytes up to the server's", &v) < 0)
		return -1;
	lim->output_cap = (size_t)v;
	static const struct ee_jf_num_rule clock = { 0.1, 1, 0, "seconds >= 0.1" };
	if (ee_jf_num(&lc, l, "timeout_s", &clock, &lim->timeout_s, NULL) < 0)
		return -1;
	if (lim->timeout_s > t->cfg.max_cell_timeout_s)
		lim->timeout_s = t->cfg.max_cell_timeout_s;
	return 0;
}

static int read_seconds(const struct ee_jf *c, const json_t *body, const char *key, double max, double *ret)
{
	static const struct ee_jf_num_rule positive = { 0, 0, 0, "seconds > 0" };
	if (ee_jf_num(c, body, key, &positive, ret, NULL) < 0)
		return -1;
	if (*ret > max)
		*ret = max; /* the server's ceiling, as limits are clamped */
	return 0;
}

/* A new entry with an id of its own, its clocks from now; not listed. */
static struct entry *entry_new(struct ee_sessions *t, double idle_timeout_s, double ttl_s)
{
	struct entry *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->t = t;
	ee_eval_random_hex(e->id);
	e->created = e->last_used = now_s();
	e->idle_timeout_s = idle_timeout_s;
	e->ttl_s = ttl_s;
	return e;
}

static int create(struct ee_sessions *t, const json_t *body, struct ee_sessions_wait *w, unsigned *code,
                  char **text, size_t *len)
{
	static const char *const keys[] = { "limits", "idle_timeout_s", "ttl_s", "files", "setup" };
	struct ee_err err = { 0 };
	struct ee_jf c = ee_jf_make(NULL, &err);
	struct ee_session_config sc = { 0 };
	json_t *files = NULL;
	ee_autofree char *setup = NULL;
	double idle = t->cfg.idle_timeout_s, ttl = t->cfg.ttl_s;

	c.root = "body";
	if (t->live + t->held >= t->cfg.max_sessions)
		return error_answer(429, "the server holds --max-sessions sessions: end one or retry later",
		                    NULL, code, text, len);
	if (ee_jf_known_keys(&c, body, keys, 5, "a session field") < 0 ||
	    read_limits(t, &c, body, &sc.limits) < 0 ||
	    read_seconds(&c, body, "idle_timeout_s", t->cfg.max_idle_timeout_s, &idle) < 0 ||
	    read_seconds(&c, body, "ttl_s", t->cfg.max_ttl_s, &ttl) < 0 ||
	    ee_jf_object(&c, body, "files", 0, &files) < 0 ||
	    ee_jf_str(&c, body, "setup", 0, NULL, &setup) < 0)
		return error_answer(400, err.msg, err.field, code, text, len);
	if (files && !json_is_object(files))
		return error_answer(400, "files: expected an object of relative paths to base64 contents",
		                    "files", code, text, len);
	struct entry *e = entry_new(t, idle, ttl);
	if (!e)
		return -1;
	sc.setup = setup;
	sc.files = files;
	sc.preload = t->cfg.preload;
	sc.n_preload = t->cfg.n_preload;
	sc.deny_imports = t->cfg.deny_imports;
	sc.life_s = ttl;
	if (ee_session_start(t->eng, &sc, &session_ops, e, &e->s, &err) < 0) {
		free(e);
		return error_answer(503, err.msg, NULL, code, text, len);
	}
	e->next = t->list;
	t->list = e;
	t->live++;
	e->wait = w;
	w->e = e;
	return 1;
}

static int exec_cell(struct ee_sessions *t, struct entry *e, const json_t *body, struct ee_sessions_wait *w,
                     unsigned *code, char **text, size_t *len)
{
	static const char *const keys[] = { "code", "timeout_s", "stdin", "fetch_files" };
	static const struct ee_jf_num_rule clock = { 0.1, 1, 0, "seconds >= 0.1" };
	struct ee_err err = { 0 };
	struct ee_jf c = ee_jf_make(NULL, &err);
	const char *cell_code = NULL, *stdin_text = NULL;
	json_t *fetch = NULL;
	struct ee_cell cell = { .timeout_s = t->cfg.limits.timeout_s };

	c.root = "body";
	if (ee_jf_known_keys(&c, body, keys, 4, "a cell field") < 0 ||
	    ee_jf_str_check(&c, "code", json_object_get(body, "code"), &cell_code) < 0 ||
	    (json_object_get(body, "stdin") &&
	     ee_jf_str_check(&c, "stdin", json_object_get(body, "stdin"), &stdin_text) < 0) ||
	    ee_jf_num(&c, body, "timeout_s", &clock, &cell.timeout_s, NULL) < 0 ||
	    ee_jf_array(&c, body, "fetch_files", 0, "an array of relative paths", &fetch) < 0)
		return error_answer(400, err.msg, err.field, code, text, len);
	if (cell.timeout_s > t->cfg.max_cell_timeout_s)
		cell.timeout_s = t->cfg.max_cell_timeout_s;
	if (ee_session_busy(e->s))
		return error_answer(409, "a cell of this session is running: one at a time", NULL, code, text,
		                    len);
	cell.code = cell_code;
	cell.stdin_text = stdin_text;
	cell.fetch = fetch;
	if (ee_session_exec(e->s, &cell, &err) < 0)
		return error_answer(err.code == EE_ERR_USAGE ? 409 : 503, err.msg, NULL, code, text, len);
	e->last_used = now_s();
	e->wait = w;
	w->e = e;
	return 1;
}

static void on_forked(void *ctx, const struct ee_err *err)
{
	struct fork_wait *fw = ctx;
	struct entry *parent;

	if (err) {
		answer_wait(fw->w, err->code == EE_ERR_USAGE ? 422 : 503,
		            json_pack("{s:s, s:s}", "error", "the session could not be forked", "detail",
		                      err->msg));
		return fork_release(fw); /* the copies made end as sessions that could not start */
	}
	/* The first copy goes on as the parent, under its id: its entry
	 * takes the copy's session, and the copy's own entry goes. */
	struct entry *first = fw->entries[0];
	parent = fw->parent;
	parent->s = first->s;
	ee_session_set_ctx(parent->s, parent);
	parent->ready = 0;
	parent->fork = fw;
	parent->last_used = now_s();
	fw->entries[0] = parent;
	unlink_entry(first);
	first->t->live--;
	free(first);
	for (unsigned i = 1; i < fw->n; i++)
		if (fw->entries[i])
			fw->entries[i]->hidden = 0;
	fw->made = 1;
	if (parent->ended) /* deleted while forking: its copy goes too (the fork fails) */
		ee_session_end(parent->s);
}

static int fork_session(struct ee_sessions *t, struct entry *e, const json_t *body,
                        struct ee_sessions_wait *w, unsigned *code, char **text, size_t *len)
{
	static const char *const keys[] = { "count" };
	struct ee_err err = { 0 };
	struct ee_jf c = ee_jf_make(NULL, &err);
	json_int_t count = 1;
	struct ee_session *copies[EE_SESSION_FORK_MAX] = { 0 };
	void *ctxs[EE_SESSION_FORK_MAX];

	c.root = "body";
	if (ee_jf_known_keys(&c, body, keys, 1, "a fork field") < 0 ||
	    ee_jf_int(&c, body, "count", 1, EE_SESSION_FORK_MAX - 1, "copies", &count) < 0)
		return error_answer(400, err.msg, err.field, code, text, len);
	if (ee_session_busy(e->s))
		return error_answer(409, "a cell of this session is running: fork it between cells", NULL,
		                    code, text, len);
	if (t->live + t->held + (unsigned)count > t->cfg.max_sessions)
		return error_answer(429, "the server holds --max-sessions sessions: end one or retry later",
		                    NULL, code, text, len);
	struct fork_wait *fw = calloc(1, sizeof(*fw));
	if (!fw)
		return -1;
	fw->n = fw->pending = (unsigned)count + 1;
	for (unsigned i = 0; i < fw->n; i++) {
		struct entry *x = entry_new(t, e->idle_timeout_s, e->ttl_s);
		if (!x)
			break;
		x->hidden = 1;
		x->fork = fw;
		x->next = t->list;
		t->list = x;
		t->live++;
		fw->entries[i] = x;
		ctxs[i] = x;
	}
	int rc = -1;
	if (fw->entries[fw->n - 1])
		rc = ee_session_fork(e->s, fw->n, &session_ops, ctxs, on_forked, fw, copies, &err);
	else
		ee_fail(&err, EE_ERR_SANDBOX, "out of memory");
	for (unsigned i = 0; i < fw->n; i++) {
		struct entry *x = fw->entries[i];
		if (!x)
			continue;
		x->s = copies[i];
		if (!x->s) { /* never made: nothing will end it */
			unlink_entry(x);
			t->live--;
			free(x);
			fw->entries[i] = NULL;
		}
	}
	if (rc < 0) {
		fork_release(fw); /* those made end as sessions that could not start */
		return error_answer(err.code == EE_ERR_USAGE ? 422 : 503, err.msg, NULL, code, text, len);
	}
	fw->parent = e;
	fw->w = w;
	return 1;
}

static int describe(struct entry *e, unsigned *code, char **text, size_t *len)
{
	long peak_kb;
	double cpu_ms;
	double now = now_s();

	ee_session_usage(e->s, &peak_kb, &cpu_ms);
	json_t *v =
	        json_pack("{s:s, s:s, s:I, s:f, s:f, s:f, s:f}", "id", e->id, "state",
	                  !e->ready               ? "starting"
	                  : ee_session_busy(e->s) ? "running"
	                                          : "idle",
	                  "cells", (json_int_t)ee_session_cells(e->s), "age_s", now - e->created, "idle_s",
	                  now - e->last_used, "idle_timeout_s", e->idle_timeout_s, "ttl_s", e->ttl_s);
	json_object_set_new(v, "memory_peak_kb", peak_kb >= 0 ? json_integer(peak_kb) : json_null());
	json_object_set_new(v, "cpu_ms", cpu_ms >= 0 ? json_real(cpu_ms) : json_null());
	return json_answer(200, v, code, text, len);
}

int ee_sessions_request(struct ee_sessions *t, const char *method, const char *path, const char *body,
                        size_t blen, void (*ready)(void *ctx), void *ctx, struct ee_sessions_wait **wait,
                        unsigned *code, char **text, size_t *text_len)
{
	int post = strcmp(method, "POST") == 0;
	const char *id = path[0] == '/' ? path + 1 : path;
	const char *slash = strchr(id, '/');
	size_t id_len = slash ? (size_t)(slash - id) : strlen(id);
	const char *action = slash ? slash + 1 : "";
	ee_autodecref json_t *doc = NULL;
	struct entry *e = NULL;

	*wait = NULL;
	if (path[0] && path[0] != '/')
		return error_answer(404, "no such endpoint", NULL, code, text, text_len);
	if (id_len) {
		e = find(t, id, id_len);
		if (!e)
			return error_answer(404, "no such session (it ended, or never was)", NULL, code, text,
			                    text_len);
		if (!e->ready)
			return error_answer(409, "the session is still starting", NULL, code, text, text_len);
	}
	if (post) {
		json_error_t jerr;
		char buf[EE_JF_ERROR_TEXT];
		doc = json_loadb(body ? body : "", blen, JSON_REJECT_DUPLICATES, &jerr);
		if (!json_is_object(doc))
			return error_answer(
			        400, doc ? "body: expected a JSON object" : ee_jf_error_text(&jerr, buf),
			        NULL, code, text, text_len);
	}
	struct ee_sessions_wait *w = calloc(1, sizeof(*w));
	if (!w)
		return -1;
	w->ready = ready;
	w->ctx = ctx;
	int rc;
	if (!id_len && post)
		rc = create(t, doc, w, code, text, text_len);
	else if (e && post && strcmp(action, "exec") == 0)
		rc = exec_cell(t, e, doc, w, code, text, text_len);
	else if (e && post && strcmp(action, "fork") == 0)
		rc = fork_session(t, e, doc, w, code, text, text_len);
	else if (e && !action[0] && strcmp(method, "GET") == 0)
		rc = describe(e, code, text, text_len);
	else if (e && !action[0] && strcmp(method, "DELETE") == 0) {
		e->ended = 1;
		ee_session_end(e->s);
		rc = json_answer(200, json_pack("{s:s, s:s}", "id", id_len ? e->id : "", "status", "deleted"),
		                 code, text, text_len);
	} else
		rc = error_answer(id_len ? 405 : 405,
		                  "use POST /v1/sessions, POST /v1/sessions/{id}/exec, POST "
		                  "/v1/sessions/{id}/fork, GET or DELETE /v1/sessions/{id}",
		                  NULL, code, text, text_len);
	if (rc == 1)
		*wait = w;
	else
		free(w);
	return rc;
}

/* ---- life -------------------------------------------------------------------- */

long ee_sessions_tick(struct ee_sessions *t)
{
	double now = now_s(), next = -1;

	for (struct entry *e = t->list, *n; e; e = n) {
		n = e->next;
		if (e->ended || !e->ready)
			continue;
		double idle_end = ee_session_busy(e->s) ? -1 : e->last_used + e->idle_timeout_s;
		double ttl_end = e->created + e->ttl_s;
		const char *why = NULL;
		if (now >= ttl_end)
			why = "its ttl_s passed";
		else if (idle_end >= 0 && now >= idle_end)
			why = "it was idle for idle_timeout_s";
		if (why) {
			snprintf(e->end_why, sizeof(e->end_why), "%s", why);
			e->ended = 1;
			ee_session_end(e->s);
			continue;
		}
		double due = idle_end >= 0 && idle_end < ttl_end ? idle_end : ttl_end;
		if (next < 0 || due < next)
			next = due;
	}
	return next < 0 ? -1 : (long)((next - now) * 1000) + 1;
}

void ee_sessions_end_all(struct ee_sessions *t)
{
	for (struct entry *e = t->list; e; e = e->next)
		if (!e->ended) {
			snprintf(e->end_why, sizeof(e->end_why), "the server is shutting down");
			e->ended = 1;
			ee_session_end(e->s);
		}
}

int ee_sessions_hold(struct ee_sessions *t)
{
	if (t->live + t->held >= t->cfg.max_sessions)
		return -1;
	t->held++;
	return 0;
}

void ee_sessions_unhold(struct ee_sessions *t)
{
	if (t->held > 0)
		t->held--;
}

unsigned ee_sessions_live(const struct ee_sessions *t)
{
	return t ? t->live + ee_session_holders() : 0;
}

int ee_sessions_new(struct ee_engine *eng, const struct ee_sessions_config *cfg, struct ee_sessions **ret,
                    struct ee_err *err)
{
	struct ee_sessions *t = calloc(1, sizeof(*t));
	if (!t)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	t->eng = eng;
	t->cfg = *cfg;
	*ret = t;
	return 0;
}

void ee_sessions_free(struct ee_sessions *t, struct ee_loop *loop)
{
	struct ee_err err = { 0 };

	if (!t)
		return;
	ee_sessions_end_all(t);
	while (ee_sessions_live(t) > 0 && ee_loop_wait(loop, 100, &err) == 0)
		;
	free(t);
}
