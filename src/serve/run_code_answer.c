/* run_code_answer.c - /run_code's answers in SandboxFusion's shapes: a
 * program that ran, a SandboxError, a 422, a 504 (see run_code_int.h). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "sandbox/sandbox.h"
#include "serve/run_code_int.h"
#include "serve/stats.h"

#define JSON_FLAGS (JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(15))

char *ee_rc_dump(json_t *v, size_t *len)
{
	char *text = v ? json_dumps(v, JSON_FLAGS) : NULL;
	json_decref(v);
	*len = text ? strlen(text) : 0;
	return text;
}

json_t *ee_run_code_invalid(const char *field, const char *msg)
{
	return json_pack("{s:s, s:s, s:[{s:[s,s], s:s, s:s}]}", "error", msg, "field", field, "detail", "loc",
	                 "body", field, "msg", msg, "type", "value_error");
}

int ee_rc_refuse_422(unsigned *code, char **text, size_t *len, const char *field, const char *msg)
{
	*code = 422;
	*text = ee_rc_dump(ee_run_code_invalid(field, msg), len);
	return *text ? 0 : -1;
}

json_t *ee_run_code_sandbox_error(const char *msg)
{
	return json_pack("{s:s, s:s, s:n, s:n, s:n, s:{}, s:{s:s, s:s}}", "status", "SandboxError", "message",
	                 msg, "compile_result", "run_result", "executor_pod_name", "files", "execeval",
	                 "status", "error", "detail", msg);
}

int ee_rc_answer_504(struct ee_run_code *rc, unsigned *code, char **text, size_t *len, const char *msg)
{
	rc->stats->run_code_timeouts++;
	*code = 504;
	*text = ee_rc_dump(json_pack("{s:s, s:n, s:s}", "error", msg, "field", "detail", msg), len);
	return *text ? 0 : -1;
}

static int detail_is(const char *detail, const char *what)
{
	return detail && strcmp(detail, what) == 0;
}

/* The return code SandboxFusion would report, from the record and the
 * facts: a limit's kill is -9, a signal N -N, else the exit code. */
static long return_code(const char *status, const char *detail, const struct ee_rc_facts *f)
{
	if (detail_is(detail, "memory limit") || detail_is(detail, "output overflow") ||
	    detail_is(detail, "process limit") || detail_is(detail, "cpu limit") ||
	    detail_is(detail, "file size limit"))
		return -9;
	if (f->have_exit_code)
		return f->exit_code;
	if (status && strcmp(status, "syntax_error") == 0)
		return 1;
	if (f->have_status && WIFSIGNALED(f->status))
		return -(long)WTERMSIG(f->status);
	if (f->have_status && WIFEXITED(f->status) && WEXITSTATUS(f->status) != 0)
		return WEXITSTATUS(f->status);
	return 1; /* it never reported: the harness was stopped (a blocked scan, a violation) */
}

static json_t *text_or_empty(const char *s)
{
	json_t *v = json_string(s ? s : "");
	return v ? v : json_string("");
}

/* What python3 prints for a program that does not compile, as far as the
 * record knows it: the line (the syntax phase's "line") and its text,
 * stripped as python3 strips it, then the error (detail less "syntax
 * error: "); no caret: the column is not kept. */
static json_t *syntax_stderr(const json_t *rec, const char *program, const char *message)
{
	const json_t *phases = json_object_get(rec, "phases");
	json_int_t line = json_integer_value(json_object_get(json_array_get(phases, 0), "line"));
	const char *p = program ? program : "";
	char text[1200];
	int n = 0;

	for (json_int_t i = 1; i < line && p; i++) {
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	if (line > 0 && p) {
		p += strspn(p, " \t\f");
		int len = (int)strcspn(p, "\r\n");
		n = snprintf(text, sizeof(text), "  File \"<candidate>\", line %lld\n    %.*s\n",
		             (long long)line, len < 400 ? len : 400, p);
	}
	snprintf(text + n, sizeof(text) - (size_t)n, "%.600s\n", message);
	return text_or_empty(text);
}

/* The 200 answer for a program that ran. */
json_t *ee_rc_ran_answer(const json_t *rec, const struct ee_rc_facts *f, const char *program)
{
	const char *status = json_string_value(json_object_get(rec, "status"));
	const char *detail = json_string_value(json_object_get(rec, "detail"));
	int timeout = status && strcmp(status, "timeout") == 0;
	long rc = return_code(status, detail, f);
	int overflow = f->end == EE_END_OUTPUT_OVERFLOW;
	int out_cut = f->out_total > f->out_len || (overflow && f->out_total >= f->err_total);
	int err_cut = f->err_total > f->err_len || (overflow && f->err_total > f->out_total);
	json_t *err = text_or_empty(f->err);

	/* A program that never compiled says why on stderr, as python3 would. */
	const char *prefix = "syntax error: ";
	if (status && strcmp(status, "syntax_error") == 0 && json_string_length(err) == 0 && detail) {
		json_decref(err);
		int parse = strncmp(detail, prefix, strlen(prefix)) == 0;
		err = parse ? syntax_stderr(rec, program, detail + strlen(prefix))
		            : syntax_stderr(NULL, NULL, detail);
	}
	json_t *run = json_pack("{s:s, s:f, s:o, s:o, s:o}", "status",
	                        timeout ? "TimeLimitExceeded" : "Finished", "execution_time",
	                        f->wall_ms / 1000.0, "return_code", timeout ? json_null() : json_integer(rc),
	                        "stdout", text_or_empty(f->out), "stderr", err);
	json_t *facts =
	        json_pack("{s:s?, s:O?, s:O?, s:O?, s:b, s:b, s:O*}", "status", status, "detail",
	                  json_object_get(rec, "detail"), "resources", json_object_get(rec, "resources"),
	                  "sandbox_id", json_object_get(rec, "sandbox_id"), "stdout_truncated", out_cut,
	                  "stderr_truncated", err_cut, "coalesced", json_object_get(rec, "coalesced"));
	int ok = !timeout && rc == 0;
	return json_pack("{s:s, s:s, s:n, s:o?, s:n, s:o, s:o?}", "status", ok ? "Success" : "Failed",
	                 "message", "", "compile_result", "run_result", run, "executor_pod_name", "files",
	                 f->files ? json_incref(f->files) : json_object(), "execeval", facts);
}
