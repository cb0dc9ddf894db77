/* session.c - a live interpreter across cells (see session.h).
 *
 * Theory of operation. The session is one cold native sandbox whose job
 * has role "session": its harness (session.py) is the keeper, pid 2,
 * which forks the session's state and, per cell, the state forks the
 * cell. Only the keeper writes the result channel and reads the gate:
 *
 *   supervisor -> gate:   {"do":"cell","code","stdin","fetch"} | {"do":"stop","why"}
 *   keeper -> result:     hello, out {stream,text}, answer {answer}, lost {why}
 *
 * each a netstring; events carry the job's nonce and a sequence number,
 * checked here as for a candidate (a broken stream ends the session).
 * The clocks are this side's: a cell's own timer sends "stop" when it
 * runs out (the keeper kills the cell and rolls the session back), and
 * the sandbox's wall clock, armed for the cell plus a grace, ends the
 * whole session if the keeper does not answer by then. Between cells the
 * sandbox's clock is stopped. What the keeper reports of a cell it ended
 * is mapped to a status here, where the cause is known: our stop
 * (timeout), the output cap, an OOM kill counted by the cgroup (memory
 * limit), else a crash.
 */
#include "engine/session.h"
#include "engine/session_int.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/cleanup.h"
#include "base/err.h"
#include "base/loop.h"
#include "engine/engine.h"
#include "engine/evaluate_int.h"
#include "protocol/job.h"
#include "protocol/netstring.h"
#include "sandbox/cgroup.h"
#include "sandbox/sandbox.h"
#include "sandbox/worker.h"
#include "verdict/score.h"

void session_end_with(struct ee_session *s, const char *why)
{
	if (!s->why[0])
		snprintf(s->why, sizeof(s->why), "%s", why);
	ee_sandbox_kill(s->sb);
}

/* ---- the cell's clock ---------------------------------------------------- */

static void arm_cell_timer(struct ee_session *s, double seconds)
{
	struct itimerspec it = { 0 };
	if (seconds > 0) {
		it.it_value.tv_sec = (time_t)seconds;
		it.it_value.tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9);
		if (!it.it_value.tv_sec && !it.it_value.tv_nsec)
			it.it_value.tv_nsec = 1;
	}
	(void)timerfd_settime(s->timer_fd, 0, &it, NULL);
}

static int send_gate(struct ee_session *s, json_t *msg)
{
	ee_autofree char *text = json_dumps(msg, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(msg);
	if (!text)
		return -1;
	size_t n = strlen(text);
	ee_autofree char *frame = malloc(n + 32);
	if (!frame)
		return -1;
	int len = snprintf(frame, n + 32, "%zu:%s,", n, text);
	return ee_sandbox_gate(s->sb, frame, (size_t)len, 0);
}

/* At the cell's timeout, before the stop: did it wait for a CPU most of
 * its clock and get little (the host's doing, as for a candidate,
 * evaluate.c)? Only the cell's threads count: the session's older ones
 * waited over its whole life. */
static void judge_starved(struct ee_session *s)
{
	struct ee_cgroup_stats st;
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	double wall_ms = (double)(now.tv_sec - s->cell_t0.tv_sec) * 1e3 +
	                 (double)(now.tv_nsec - s->cell_t0.tv_nsec) / 1e6;
	ee_sandbox_cgroup_now(s->sb, &st);
	double cpu_ms = st.cpu_usec >= 0 && s->cpu_before_usec >= 0
	                        ? (double)(st.cpu_usec - s->cpu_before_usec) / 1e3
	                        : -1;
	double waited_ms = s->born_since >= 0 ? ee_sandbox_runq_wait_ms(s->sb, s->born_since) : -1;
	s->starved = ee_verdict_starved(wall_ms, cpu_ms, waited_ms);
	s->starved_cpu_ms = cpu_ms;
}

static void on_cell_timer(void *ctx)
{
	struct ee_session *s = ctx;
	uint64_t n;
	if (read(s->timer_fd, &n, sizeof(n)) != (ssize_t)sizeof(n) || s->phase != PH_CELL || s->stop_why[0])
		return;
	judge_starved(s);
	snprintf(s->stop_why, sizeof(s->stop_why), "timeout");
	if (send_gate(s, json_pack("{s:s, s:s}", "do", "stop", "why", "timeout")) < 0)
		session_end_with(s, "the session's cell could not be stopped");
}

/* ---- answers -------------------------------------------------------------- */

static long oom_kills_now(const struct ee_session *s)
{
	struct ee_cgroup_stats st;
	ee_sandbox_cgroup_now(s->sb, &st);
	return st.oom_kills;
}

/* A cell the keeper ended: what ended it, as this side knows it. */
static const char *ended_status(struct ee_session *s, const char *detail)
{
	long oom = oom_kills_now(s);
	if (s->stop_why[0])
		return "timeout";
	if (detail && strcmp(detail, "output overflow") == 0)
		return "output_overflow";
	if (oom > 0 && oom > s->oom_before)
		return "memory_limit";
	return "crashed";
}

static json_t *output_text(const struct ee_buf *b)
{
	return json_stringn_nocheck(b->data ? b->data : "", b->len);
}

static void answer_cell(struct ee_session *s, json_t *kept)
{
	json_t *a = json_object();
	const char *status = json_string_value(json_object_get(kept, "status"));
	const char *detail = json_string_value(json_object_get(kept, "detail"));
	int ended = status && strcmp(status, "ended") == 0;
	int starved = 0;
	char starved_detail[64];

	if (ended) {
		status = ended_status(s, detail);
		starved = s->starved && strcmp(status, "timeout") == 0;
		if (starved) {
			snprintf(starved_detail, sizeof(starved_detail), "timeout (starved: %.0f ms of CPU)",
			         s->starved_cpu_ms);
			detail = starved_detail;
		} else if (strcmp(status, "timeout") == 0)
			detail = "timeout";
		else if (strcmp(status, "memory_limit") == 0)
			detail = "memory limit";
	} else if (!status || (strcmp(status, "ok") != 0 && strcmp(status, "error") != 0)) {
		json_decref(a);
		session_end_with(s, "protocol violation: a cell's answer without a status");
		return;
	}
	json_object_set_new(a, "status", json_string(status));
	json_object_set_new(a, "detail", detail ? json_string(detail) : json_null());
	/* The host starved it: rolled back as any timeout, but not the cell's doing. */
	json_object_set_new(a, "infra_error", json_boolean(starved));
	static const char *const kept_keys[] = { "result",      "error",        "cpu_ms", "duration_ms",
		                                 "rolled_back", "tmp_restored", "files" };
	for (size_t i = 0; i < sizeof(kept_keys) / sizeof(kept_keys[0]); i++) {
		json_t *v = json_object_get(kept, kept_keys[i]);
		if (v)
			json_object_set(a, kept_keys[i], v);
	}
	json_object_set_new(a, "stdout", output_text(&s->out));
	json_object_set_new(a, "stderr", output_text(&s->err));
	json_object_set_new(a, "cell", json_integer((json_int_t)s->cells));

	int setup = s->phase == PH_SETUP;
	s->phase = PH_READY;
	s->stop_why[0] = '\0';
	s->starved = 0;
	arm_cell_timer(s, 0);
	ee_sandbox_rearm(s->sb, 0);
	ee_buf_reset(&s->out);
	ee_buf_reset(&s->err);
	if (setup)
		json_object_set_new(a, "setup", json_true());
	s->ops->on_answer(s->ctx, s, a);
}

/* ---- the keeper's events -------------------------------------------------- */

static int start_cell(struct ee_session *s, const char *code, const char *stdin_text, double timeout_s,
                      const json_t *fetch)
{
	json_t *msg = json_pack("{s:s, s:s, s:s}", "do", "cell", "code", code, "stdin",
	                        stdin_text ? stdin_text : "");
	if (!msg)
		return -1;
	if (fetch)
		json_object_set(msg, "fetch", (json_t *)fetch);
	struct ee_cgroup_stats st;
	ee_sandbox_cgroup_now(s->sb, &st);
	s->oom_before = st.oom_kills;
	s->cpu_before_usec = st.cpu_usec;
	s->born_since = ee_cgroup_ticks_now();
	clock_gettime(CLOCK_MONOTONIC, &s->cell_t0);
	s->stop_why[0] = '\0';
	s->starved = 0;
	if (send_gate(s, msg) < 0)
		return -1;
	arm_cell_timer(s, timeout_s);
	ee_sandbox_rearm(s->sb, (timeout_s + SESSION_STOP_GRACE_S) * 1000.0);
	return 0;
}

static void on_hello(struct ee_session *s)
{
	if (s->phase != PH_STARTING)
		return session_end_with(s, "protocol violation: hello out of turn");
	s->phase = PH_SETUP;
	if (s->setup && s->setup[0]) {
		if (start_cell(s, s->setup, NULL, s->limits.timeout_s, NULL) < 0)
			session_end_with(s, "the setup could not be sent");
		return;
	}
	json_t *none = json_pack("{s:s, s:b, s:n, s:n}", "status", "ok", "rolled_back", 0, "result", "error");
	answer_cell(s, none);
	json_decref(none);
}

static void on_event(struct ee_session *s, const char *payload, size_t len)
{
	json_error_t jerr;
	ee_autodecref json_t *ev = json_loadb(payload, len, JSON_REJECT_DUPLICATES, &jerr);
	const char *nonce = json_string_value(json_object_get(ev, "nonce"));
	json_t *seq = json_object_get(ev, "seq");
	const char *kind = json_string_value(json_object_get(ev, "ev"));

	if (!json_is_object(ev) || !nonce || strcmp(nonce, s->nonce) != 0 || !json_is_integer(seq) ||
	    (unsigned long)json_integer_value(seq) != s->seq || !kind)
		return session_end_with(s, "protocol violation: a bad event on the session's result channel");
	s->seq++;
	if (strcmp(kind, "hello") == 0)
		return on_hello(s);
	if (strcmp(kind, "out") == 0) {
		const char *stream = json_string_value(json_object_get(ev, "stream"));
		json_t *text = json_object_get(ev, "text");
		if (!stream || !json_is_string(text) || (s->phase != PH_CELL && s->phase != PH_SETUP))
			return session_end_with(s, "protocol violation: output out of turn");
		struct ee_buf *b = strcmp(stream, "stderr") == 0 ? &s->err : &s->out;
		(void)ee_buf_append_some(b, json_string_value(text), json_string_length(text));
		return;
	}
	if (strcmp(kind, "answer") == 0) {
		json_t *a = json_object_get(ev, "answer");
		if (!json_is_object(a) || (s->phase != PH_CELL && s->phase != PH_SETUP))
			return session_end_with(s, "protocol violation: an answer out of turn");
		return answer_cell(s, a);
	}
	if (strcmp(kind, "lost") == 0) {
		const char *why = json_string_value(json_object_get(ev, "why"));
		return session_end_with(s, why ? why : "the session's interpreter was lost");
	}
	session_end_with(s, "protocol violation: an unknown event");
}

static void on_result(void *ctx, struct ee_sandbox *sb, const char *p, size_t n)
{
	struct ee_session *s = ctx;
	struct ee_err err = { 0 };
	const char *payload;
	size_t len;
	int rc = 0;

	(void)sb;
	if (s->why[0])
		return;
	if (ee_ns_feed(&s->ns, p, n, &err) < 0)
		return session_end_with(s, "protocol violation: the session's result channel");
	while (!s->why[0] && (rc = ee_ns_next(&s->ns, &payload, &len, &err)) == 1)
		on_event(s, payload, len);
	if (rc < 0)
		session_end_with(s, "protocol violation: a broken frame on the session's result channel");
}

static void on_done(void *ctx, struct ee_sandbox *sb)
{
	struct ee_session *s = ctx;
	const struct ee_sandbox_outcome *o = ee_sandbox_outcome(sb);

	if (!s->why[0]) {
		if (o->setup_failed)
			snprintf(s->why, sizeof(s->why), "the session's sandbox could not be set up: %.200s",
			         o->setup_err.msg);
		else if (o->end == EE_END_TIMEOUT)
			snprintf(s->why, sizeof(s->why), "its cell did not stop within %.0f s of its timeout",
			         SESSION_STOP_GRACE_S);
		else if (o->interrupted)
			snprintf(s->why, sizeof(s->why), "the server is shutting down");
		else
			snprintf(s->why, sizeof(s->why), "the session's interpreter ended%s%.*s",
			         o->err.len ? ": " : "", (int)(o->err.len > 200 ? 200 : o->err.len),
			         o->err.data ? o->err.data : "");
	}
	s->phase = PH_ENDED;
	arm_cell_timer(s, 0);
	session_family_drop(s);
	s->ops->on_end(s->ctx, s, s->ended_by_owner ? "" : s->why);
}

/* ---- the job and the start ------------------------------------------------ */

static char *session_job(const struct ee_session_config *cfg, const char *nonce, size_t *len)
{
	ee_autodecref json_t *job = json_pack("{s:i, s:s, s:s, s:I}", "v", 1, "role", "session", "nonce",
	                                      nonce, "output_cap", (json_int_t)cfg->limits.output_cap);
	json_t *deny = json_array(), *preload = json_array();
	for (size_t i = 0; cfg->deny_imports && ee_default_denylist[i]; i++)
		json_array_append_new(deny, json_string(ee_default_denylist[i]));
	for (size_t i = 0; i < cfg->n_preload; i++)
		json_array_append_new(preload, json_string(cfg->preload[i]));
	json_object_set_new(job, "deny_imports", deny);
	json_object_set_new(job, "preload", preload);
	json_object_set_new(job, "files", cfg->files ? json_deep_copy(cfg->files) : json_object());
	char *text = json_dumps(job, JSON_COMPACT | JSON_ENSURE_ASCII);
	*len = text ? strlen(text) : 0;
	return text;
}

static const struct ee_sandbox_ops sandbox_ops = { .on_result = on_result, .on_done = on_done };

/* What every session starts with: its loop, decoder, buffers, nonce and
 * cell timer. */
static int session_init(struct ee_session *s, struct ee_engine *eng, const struct ee_limits *limits,
                        const struct ee_session_ops *ops, void *ctx, struct ee_err *err)
{
	s->eng = eng;
	s->ops = ops;
	s->ctx = ctx;
	s->loop = ee_engine_loop(eng);
	s->limits = *limits;
	s->timer_fd = -1;
	ee_ns_init(&s->ns, SESSION_MAX_FRAME, SIZE_MAX / 2);
	ee_buf_init(&s->out, limits->output_cap);
	ee_buf_init(&s->err, limits->output_cap);
	ee_eval_random_hex(s->nonce);
	s->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (s->timer_fd < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "timerfd_create");
	return ee_loop_add_fd(s->loop, s->timer_fd, EE_LOOP_READABLE, on_cell_timer, s, &s->timer_watch, err);
}

int ee_session_start(struct ee_engine *eng, const struct ee_session_config *cfg,
                     const struct ee_session_ops *ops, void *ctx, struct ee_session **ret, struct ee_err *err)
{
	struct ee_session *s = calloc(1, sizeof(*s));
	size_t job_len = 0;
	ee_autofree char *job = NULL;
	struct ee_sandbox_config sc = { 0 };

	*ret = NULL;
	if (!s)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	if (session_init(s, eng, &cfg->limits, ops, ctx, err) < 0)
		goto fail;
	if ((cfg->setup && !(s->setup = strdup(cfg->setup))) || !(job = session_job(cfg, s->nonce, &job_len)))
		goto fail_oom;
	if (ee_engine_sandbox_config(eng, &sc, err) < 0)
		goto fail;
	/* Native: a sandbox of its own with its own cgroup and uid and a
	 * harness that lives as long as the session. Forked, detached, from
	 * a warm worker of the sessions' pool when one is idle (its preloads
	 * imported already, its pages shared with every other session); else
	 * cold, a fresh interpreter that imports them. */
	struct ee_pool *pool = ee_engine_session_pool(eng);
	sc.session_pool = pool && ee_pool_has_idle(pool) ? pool : NULL;
	sc.pool = NULL;
	sc.gvisor = NULL;
	sc.docker = NULL;
	s->limits.cpu_life_s = cfg->life_s > 0 ? (unsigned)cfg->life_s + 60 : 0;
	sc.limits = &s->limits;
	sc.job = job;
	sc.job_len = job_len;
	sc.keep_output = SESSION_KEEP_OUTPUT;
	sc.drain_output = 1;
	sc.start_allowance_s = SESSION_START_ALLOWANCE_S;
	if (ee_sandbox_start(s->loop, &sc, &sandbox_ops, s, &s->sb, err) < 0) {
		ee_engine_saw_start(eng, err);
		goto fail;
	}
	ee_sandbox_park(s->sb, 1); /* the server's, not an evaluation's: ee_loop_run does not wait for it */
	ee_engine_saw_start(eng, NULL);
	*ret = s;
	return 0;
fail_oom:
	ee_fail(err, EE_ERR_SANDBOX, "out of memory");
fail:
	ee_session_free(s);
	return -1;
}

int session_new_copy(struct ee_session *from, const struct ee_session_ops *ops, void *ctx,
                     struct ee_session **ret, struct ee_err *err)
{
	struct ee_session *s = calloc(1, sizeof(*s));
	struct ee_sandbox_config sc = { 0 };

	*ret = NULL;
	if (!s)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	if (session_init(s, from->eng, &from->limits, ops, ctx, err) < 0 ||
	    ee_engine_sandbox_config(from->eng, &sc, err) < 0)
		goto fail;
	s->is_copy = 1;
	sc.copy = 1; /* launch_copy.c: made by the fork's helper, adopted */
	sc.session_pool = sc.pool = NULL;
	sc.gvisor = NULL;
	sc.docker = NULL;
	sc.limits = &s->limits;
	sc.job = "{}"; /* unread: a copy's keeper has its job in the state's memory */
	sc.job_len = 2;
	sc.keep_output = SESSION_KEEP_OUTPUT;
	sc.drain_output = 1;
	sc.start_allowance_s = SESSION_START_ALLOWANCE_S;
	if (ee_sandbox_start(s->loop, &sc, &sandbox_ops, s, &s->sb, err) < 0)
		goto fail;
	ee_sandbox_park(s->sb, 1);
	*ret = s;
	return 0;
fail:
	ee_session_free(s);
	return -1;
}

int ee_session_exec(struct ee_session *s, const struct ee_cell *cell, struct ee_err *err)
{
	if (s->phase == PH_CELL || s->phase == PH_SETUP || s->phase == PH_STARTING)
		return ee_fail(err, EE_ERR_USAGE, "a cell of this session is running");
	if (s->phase == PH_FORKING)
		return ee_fail(err, EE_ERR_USAGE, "the session is being forked");
	if (s->phase != PH_READY || s->why[0])
		return ee_fail(err, EE_ERR_USAGE, "the session has ended");
	s->phase = PH_CELL;
	s->cells++;
	if (start_cell(s, cell->code, cell->stdin_text, cell->timeout_s, cell->fetch) < 0) {
		session_end_with(s, "a cell could not be sent to the session");
		return ee_fail(err, EE_ERR_SANDBOX, "a cell could not be sent to the session");
	}
	return 0;
}

int ee_session_busy(const struct ee_session *s)
{
	return s->phase != PH_READY;
}

unsigned ee_session_cells(const struct ee_session *s)
{
	return s->cells;
}

void ee_session_usage(const struct ee_session *s, long *peak_kb, double *cpu_ms)
{
	struct ee_cgroup_stats st;
	ee_sandbox_cgroup_now(s->sb, &st);
	*peak_kb = st.peak_kb;
	*cpu_ms = st.cpu_usec >= 0 ? (double)st.cpu_usec / 1e3 : -1;
}

void ee_session_end(struct ee_session *s)
{
	if (s->phase == PH_ENDED)
		return;
	s->ended_by_owner = 1;
	if (s->phase == PH_FORKING) { /* its fork's helper traces it: ended when it is done */
		s->end_after_fork = 1;
		return;
	}
	session_end_with(s, "deleted");
}

void ee_session_free(struct ee_session *s)
{
	if (!s)
		return;
	if (s->forking)
		session_fork_orphan(s);
	ee_loop_remove_fd(s->timer_watch);
	if (s->timer_fd >= 0)
		close(s->timer_fd);
	ee_sandbox_free(s->sb);
	ee_ns_free(&s->ns);
	ee_buf_free(&s->out);
	ee_buf_free(&s->err);
	free(s->setup);
	free(s);
}
