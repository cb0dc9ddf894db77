/* evaluate.c - one candidate from program text to record (see evaluate.h). */
#include "evaluate.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>

#include "err.h"
#include "events.h"
#include "harness/harness.h"
#include "sandbox/host.h"
#include "sandbox/sandbox.h"
#include "score.h"
#include "task.h"
#include "text.h"

#define RECORD_TEXT_CHARS 8000
#define KEEP_OUTPUT_BYTES (4 * RECORD_TEXT_CHARS + 4)

const char *const ee_default_denylist[] = {
	"os.system",          "os.popen", "subprocess", "_posixsubprocess", "socket", "_socket",
	"requests",           "urllib",   "ctypes",     "_ctypes",          "shutil", "http.client",
	"asyncio.subprocess", NULL,
};

struct ee_eval {
	struct ee_stream stream;
	struct ee_limits limits;
	const struct ee_task *task;
	char *model;
	long sample;
	json_t *extra;
	int no_code_block;
	char sandbox_id[33];
	char started_at[32];
	ee_record_cb cb;
	void *ctx;
};

static void random_hex(char out[33])
{
	unsigned char raw[16];
	size_t got = 0;

	while (got < sizeof(raw)) {
		ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);
		if (n > 0)
			got += (size_t)n;
		else if (errno != EINTR)
			abort(); /* no entropy: better no verdict than a guessable nonce */
	}
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
}

static void iso_now(char out[32])
{
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	size_t n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, 32 - n, ".%03dZ", (int)(ts.tv_nsec / 1000000) % 1000);
}

void ee_eval_limits(const struct ee_eval_options *o, const struct ee_task *t, struct ee_limits *ret)
{
	*ret = o->limits;
	if (t->limits.has_timeout)
		ret->timeout_s = t->limits.timeout_s;
	if (t->limits.has_memory)
		ret->memory_mb = t->limits.memory_mb;
	if (t->limits.has_procs)
		ret->procs = t->limits.procs;
	if (t->limits.has_output_cap)
		ret->output_cap = t->limits.output_cap;
	ee_limits_clamp(ret);
}

/* ---- the job ------------------------------------------------------------ */

static json_t *job_test(const struct ee_test *t, size_t index)
{
	json_t *o = json_pack("{s:I, s:s, s:s}", "index", (json_int_t)index, "kind",
	                      ee_test_kind_name(t->kind), "visibility", t->hidden ? "hidden" : "public");
	if (!o)
		return NULL;
	int rc = 0;
	if (t->kind == EE_TEST_IO)
		rc = json_object_set_new(o, "stdin", json_string(t->stdin_text ? t->stdin_text : ""));
	else if (t->kind == EE_TEST_CALL)
		rc = json_object_set_new(o, "fn", json_string(t->fn)) |
		     json_object_set(o, "args", t->args ? t->args : json_array());
	else
		rc = json_object_set_new(o, "code", json_string(t->code));
	/* Expected values (io stdout, call expected) never enter the sandbox. */
	if (rc) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Base64 of p[0..n), NUL-terminated, malloc'd. */
static char *base64(const unsigned char *p, size_t n)
{
	static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = malloc(4 * ((n + 2) / 3) + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) |
		             (i + 2 < n ? p[i + 2] : 0);
		*o++ = digits[v >> 18 & 63];
		*o++ = digits[v >> 12 & 63];
		*o++ = i + 1 < n ? digits[v >> 6 & 63] : '=';
		*o++ = i + 2 < n ? digits[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

/* The program as "code", or as "code_b64" when it is not valid UTF-8: the
 * harness then compiles the bytes, and Python decides (a coding
 * declaration, or a SyntaxError) exactly as for a file. */
static int set_program(json_t *job, const char *program)
{
	size_t len = strlen(program);
	json_t *text = json_stringn(program, len);
	if (text)
		return json_object_set_new(job, "code", text);
	char *b64 = base64((const unsigned char *)program, len);
	int rc = b64 ? json_object_set_new(job, "code_b64", json_string(b64)) : -1;
	free(b64);
	return rc;
}

static char *build_job(const struct ee_eval_options *o, const struct ee_task *task, const char *program,
                       const char *nonce, const struct ee_limits *lim, int gate, size_t *len)
{
	json_t *tests = json_array(), *deny = json_array();
	static const char *const scan_names[] = { "off", "report", "block" };

	for (size_t i = 0; tests && i < task->n_tests; i++)
		json_array_append_new(tests, job_test(&task->tests[i], i));
	for (size_t i = 0; deny && o->deny_imports && ee_default_denylist[i]; i++)
		json_array_append_new(deny, json_string(ee_default_denylist[i]));
	json_t *job =
	        json_pack("{s:i, s:s, s:s, s:o, s:o, s:s, s:b, s:I}", "v", 1, "nonce", nonce, "setup",
	                  task->setup ? task->setup : "", "tests", tests, "deny_imports", deny, "scan",
	                  scan_names[o->scan], "gate", gate, "io_output_cap", (json_int_t)lim->output_cap);
	if (!job || set_program(job, program) < 0) {
		json_decref(job);
		return NULL;
	}
	char *text = json_dumps(job, JSON_COMPACT);
	json_decref(job);
	if (text)
		*len = strlen(text);
	return text;
}

/* ---- the record --------------------------------------------------------- */

static const char *phase_name(int state)
{
	static const char *const names[] = { "not_run", "ok", "fail", "skipped" };
	return names[state];
}

static const char *test_state_name(int state)
{
	static const char *const names[] = { "not_run", "pass", "fail", "skipped" };
	return names[state];
}

static json_t *ms_value(double ms)
{
	return ms < 0 ? json_null() : json_real(round(ms * 1000.0) / 1000.0);
}

static json_t *text_value(const char *p, size_t len)
{
	char *clean = ee_text_sanitize(p ? p : "", p ? len : 0, RECORD_TEXT_CHARS, NULL);
	json_t *v = clean ? json_string(clean) : json_string("");
	free(clean);
	return v;
}

static json_t *opt_text(const char *p)
{
	return p ? text_value(p, strlen(p)) : json_null();
}

static json_t *phase_json(const char *name, const struct ee_phase_result *p)
{
	json_t *o = json_pack("{s:s, s:s}", "name", name, "status", phase_name(p->state));
	if (p->duration_ms >= 0)
		json_object_set_new(o, "duration_ms", ms_value(p->duration_ms));
	if (p->message)
		json_object_set_new(o, "message", opt_text(p->message));
	if (p->line > 0)
		json_object_set_new(o, "line", json_integer(p->line));
	return o;
}

static json_t *tests_phase(const struct ee_eval *ev, int hidden)
{
	const struct ee_task *t = ev->task;
	unsigned passed = 0, total = 0, skipped = 0, ran = 0;

	for (size_t i = 0; i < t->n_tests; i++) {
		if (t->tests[i].hidden != hidden)
			continue;
		int st = ev->stream.tests[i].state;
		total++;
		passed += st == EE_T_PASS;
		skipped += st == EE_T_SKIPPED;
		ran += st == EE_T_PASS || st == EE_T_FAIL;
	}
	const char *status = total == 0 || skipped == total ? "skipped"
	                     : ran < total && passed == ran ? "not_run"
	                     : passed == total              ? "ok"
	                                                    : "fail";
	return json_pack("{s:s, s:s, s:I, s:I}", "name", hidden ? "hidden" : "public", "status", status,
	                 "passed", (json_int_t)passed, "total", (json_int_t)total);
}

static json_t *phases_json(const struct ee_eval *ev)
{
	json_t *a = json_array();
	json_array_append_new(a, phase_json("syntax", &ev->stream.syntax));
	json_t *scan = phase_json("scan", &ev->stream.scan);
	json_object_set(scan, "findings", ev->stream.findings);
	json_array_append_new(a, scan);
	json_array_append_new(a, phase_json("import", &ev->stream.import));
	json_array_append_new(a, tests_phase(ev, 0));
	json_array_append_new(a, tests_phase(ev, 1));
	return a;
}

static json_t *tests_json(const struct ee_eval *ev)
{
	json_t *a = json_array();
	for (size_t i = 0; i < ev->task->n_tests; i++) {
		const struct ee_test *t = &ev->task->tests[i];
		const struct ee_test_result *r = &ev->stream.tests[i];
		json_array_append_new(
		        a, json_pack("{s:I, s:s, s:s, s:s, s:s, s:f, s:o, s:o}", "index", (json_int_t)i,
		                     "kind", ee_test_kind_name(t->kind), "visibility",
		                     t->hidden ? "hidden" : "public", "tier", ee_tier_name(t->tier), "status",
		                     test_state_name(r->state), "weight", t->weight, "duration_ms",
		                     ms_value(r->duration_ms), "message", opt_text(r->message)));
	}
	return a;
}

/* {"canonical": {"passed": 2, "total": 3}, ...}: tiers present in the task. */
static json_t *tiers_json(const struct ee_eval *ev)
{
	json_t *o = json_object();
	for (size_t i = 0; o && i < ev->task->n_tests; i++) {
		const char *tier = ee_tier_name(ev->task->tests[i].tier);
		json_t *t = json_object_get(o, tier);
		if (!t) {
			t = json_pack("{s:i, s:i}", "passed", 0, "total", 0);
			json_object_set_new(o, tier, t);
		}
		json_object_set_new(t, "total",
		                    json_integer(json_integer_value(json_object_get(t, "total")) + 1));
		if (ev->stream.tests[i].state == EE_T_PASS)
			json_object_set_new(
			        t, "passed",
			        json_integer(json_integer_value(json_object_get(t, "passed")) + 1));
	}
	return o;
}

static void fill_verdict_in(const struct ee_eval *ev, const struct ee_sandbox_outcome *out,
                            struct ee_test_outcome *tests, struct ee_verdict_in *in)
{
	const struct ee_stream *s = &ev->stream;

	memset(in, 0, sizeof(*in));
	in->timed_out = out->timed_out;
	in->output_overflow = out->output_overflow;
	in->oom_killed = out->cg.oom_kills > 0 || s->memory_error;
	in->pids_limit_hit = out->cg.pids_max_hits > 0;
	in->have_status = out->have_status;
	in->status = out->status;
	in->protocol_error = s->violation;
	in->done = s->done;
	if (s->syntax.state == EE_PH_FAIL)
		in->syntax_error = s->syntax.message ? s->syntax.message : "invalid syntax";
	if (s->scan.state == EE_PH_FAIL)
		in->scan_block = s->scan_block;
	in->import_failed = s->import.state == EE_PH_FAIL;
	in->import_exit = s->import_exit;
	in->import_setup = s->import_setup;
	in->import_denied = s->import_denied;
	in->import_message = s->import.message ? s->import.message : "the module raised";
	for (size_t k = 0; k < ev->task->n_tests; k++) {
		size_t i = s->order[k];
		const struct ee_test_result *r = &s->tests[i];
		tests[k] = (struct ee_test_outcome){ .state = r->state,
			                             .weight = ev->task->tests[i].weight,
			                             .index = (int)i,
			                             .exited = r->exited,
			                             .overflow = r->overflow,
			                             .denied = r->denied,
			                             .message = r->message };
	}
	in->tests = tests;
	in->n_tests = ev->task->n_tests;
}

static json_t *resources_json(const struct ee_sandbox_outcome *out)
{
	json_t *r = json_pack("{s:o, s:o, s:o}", "wall_ms", ms_value(out->wall_ms), "cpu_ms",
	                      ms_value(out->cpu_ms), "peak_rss_kb",
	                      out->maxrss_kb < 0 ? json_null() : json_integer(out->maxrss_kb));
	if (out->cg.peak_kb >= 0)
		json_object_set_new(r, "peak_memory_kb", json_integer(out->cg.peak_kb));
	return r;
}

static json_t *build_record(struct ee_eval *ev, const struct ee_sandbox_outcome *out)
{
	struct ee_test_outcome *tests = calloc(ev->task->n_tests + 1, sizeof(*tests));
	struct ee_verdict_in in;
	struct ee_verdict v;
	char finished[32];

	if (!tests)
		return NULL;
	fill_verdict_in(ev, out, tests, &in);
	ee_verdict_decide(&in, &v);
	free(tests);
	if (ev->no_code_block && v.status != EE_PASS) {
		v.status = EE_ERROR;
		snprintf(v.detail, sizeof(v.detail), "no code block");
	}
	iso_now(finished);

	json_t *rec = json_object();
	json_object_set_new(rec, "task_id", json_string(ev->task->task_id));
	if (ev->sample >= 0)
		json_object_set_new(rec, "sample", json_integer(ev->sample));
	if (ev->model)
		json_object_set_new(rec, "model", json_string(ev->model));
	if (ev->task->class_name && ev->task->class_name[0])
		json_object_set_new(rec, "class", json_string(ev->task->class_name));
	json_object_set_new(rec, "status", json_string(ee_status_name(v.status)));
	json_object_set_new(rec, "detail", v.status == EE_PASS ? json_null() : opt_text(v.detail));
	json_object_set_new(rec, "score", json_real(v.score));
	json_object_set_new(rec, "passed", json_integer(v.passed));
	json_object_set_new(rec, "total", json_integer(v.total));
	json_object_set_new(rec, "reward", json_integer(v.reward));
	json_object_set_new(rec, "phases", phases_json(ev));
	json_object_set_new(rec, "tests", tests_json(ev));
	json_object_set_new(rec, "tiers", tiers_json(ev));
	json_object_set_new(rec, "stdout", text_value(out->out.data, out->out.len));
	json_object_set_new(rec, "stderr", text_value(out->err.data, out->err.len));
	json_object_set_new(rec, "resources", resources_json(out));
	json_object_set_new(rec, "sandbox_id", json_string(ev->sandbox_id));
	json_object_set_new(rec, "started_at", json_string(ev->started_at));
	json_object_set_new(rec, "finished_at", json_string(finished));
	json_object_set_new(rec, "execeval_version", json_string(EE_VERSION));
	/* Unknown sample fields are kept, but never over the record's own. */
	const char *key;
	json_t *val;
	if (ev->extra)
		json_object_foreach(ev->extra, key, val) if (!json_object_get(rec, key))
		        json_object_set(rec, key, val);
	return rec;
}

/* ---- sandbox callbacks -------------------------------------------------- */

static void on_result(void *ctx, struct ee_sandbox *sb, const char *p, size_t n)
{
	struct ee_eval *ev = ctx;

	if (ee_stream_feed(&ev->stream, p, n))
		ee_sandbox_gate(sb, (char)ev->stream.gate_answer);
	if (ev->stream.violation)
		ee_sandbox_kill(sb);
}

static void free_eval(struct ee_eval *ev)
{
	ee_stream_free(&ev->stream);
	free(ev->model);
	json_decref(ev->extra);
	free(ev);
}

static void on_done(void *ctx, struct ee_sandbox *sb)
{
	struct ee_eval *ev = ctx;
	const struct ee_sandbox_outcome *out = ee_sandbox_outcome(sb);
	json_t *rec = NULL;

	ee_stream_finish(&ev->stream);
	if (out->setup_failed) {
		rec = json_pack("{s:s, s:s, s:s}", "task_id", ev->task->task_id, "sandbox_error",
		                out->setup_err.msg, "execeval_version", EE_VERSION);
	} else {
		rec = build_record(ev, out);
	}
	ev->cb(ev->ctx, rec);
	ee_sandbox_free(sb);
	free_eval(ev);
}

static const struct ee_sandbox_ops ops = { on_result, on_done };

int ee_eval_start(struct ee_loop *loop, const struct ee_eval_options *o, const struct ee_candidate *c,
                  ee_record_cb cb, void *ctx, struct ee_err *err)
{
	struct ee_eval *ev = calloc(1, sizeof(*ev));
	char nonce[33];
	struct ee_sandbox *sb;

	if (!ev)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	ev->task = c->task;
	ev->model = c->model ? strdup(c->model) : NULL;
	ev->sample = c->sample;
	ev->extra = c->extra ? json_deep_copy(c->extra) : NULL;
	ev->no_code_block = c->no_code_block;
	ev->cb = cb;
	ev->ctx = ctx;
	random_hex(nonce);
	random_hex(ev->sandbox_id);
	iso_now(ev->started_at);
	ee_eval_limits(o, c->task, &ev->limits);

	size_t n_hidden = 0;
	for (size_t i = 0; i < c->task->n_tests; i++)
		n_hidden += c->task->tests[i].hidden;
	int gate = n_hidden > 0 && !o->run_hidden_on_fail;
	if (ee_stream_init(&ev->stream, c->task, nonce, gate, o->run_hidden_on_fail) < 0) {
		free_eval(ev);
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	}
	size_t job_len = 0;
	char *job = build_job(o, c->task, c->program, nonce, &ev->limits, gate, &job_len);
	if (!job) {
		free_eval(ev);
		return ee_fail(err, EE_ERR_USAGE,
		               "task %s: cannot encode the job (invalid UTF-8 in the task?)",
		               c->task->task_id);
	}
	struct ee_sandbox_config cfg = {
		.host = o->host,
		.limits = &ev->limits,
		.mounts = o->mounts,
		.seccomp = o->seccomp,
		.argv = o->harness->argv,
		.code_fd = o->harness->code_fd,
		.job = job,
		.job_len = job_len,
		.keep_output = KEEP_OUTPUT_BYTES,
	};
	int rc = ee_sandbox_start(loop, &cfg, &ops, ev, &sb, err);
	free(job);
	if (rc < 0)
		free_eval(ev);
	return rc;
}
