/* job.c - the job the harness reads from fd 3 (docs/protocol.md). */
#include "harness/harness.h"
#include "job.h"

#include <stdlib.h>
#include <string.h>

#include "task.h"

const char *const ee_default_denylist[] = {
	"os.system",          "os.popen", "subprocess", "_posixsubprocess", "socket", "_socket",
	"requests",           "urllib",   "ctypes",     "_ctypes",          "shutil", "http.client",
	"asyncio.subprocess", NULL,
};

/* A strict program's calls as the job holds them: arguments only. */
static json_t *job_calls(const json_t *calls)
{
	json_t *out = json_array(), *c;
	size_t i;

	json_array_foreach (calls, i, c) {
		json_t *o = json_pack("{s:O, s:O}", "args", json_object_get(c, "args"), "kwargs",
		                      json_object_get(c, "kwargs"));
		if (!o || json_array_append_new(out, o) < 0) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

static json_t *job_test(const struct ee_test *t, size_t index)
{
	json_t *o = json_pack("{s:I, s:s, s:s}", "index", (json_int_t)index, "kind",
	                      ee_test_kind_name(t->kind), "visibility", t->hidden ? "hidden" : "public");
	if (!o)
		return NULL;
	int rc = 0;
	if (t->strict && t->calls) /* a check program become calls; expected values stay */
		rc = json_object_set_new(o, "kind", json_string("calls")) |
		     json_object_set_new(o, "fn", json_string(t->fn)) |
		     json_object_set_new(o, "calls", job_calls(t->calls)) |
		     json_object_set_new(o, "strict", json_true());
	else if (t->strict) /* an assert become a call; its code holds the expected value */
		rc = json_object_set_new(o, "kind", json_string("call")) |
		     json_object_set_new(o, "fn", json_string(t->fn)) | json_object_set(o, "args", t->args) |
		     json_object_set(o, "kwargs", t->kwargs) | json_object_set_new(o, "strict", json_true());
	else if (t->kind == EE_TEST_IO)
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

char *ee_job_build(const struct ee_job_spec *spec, size_t *len)
{
	const struct ee_task *task = spec->task;
	json_t *tests = json_array(), *deny = json_array();
	static const char *const scan_names[] = { "off", "report", "block" };

	for (size_t i = 0; tests && i < task->n_tests; i++)
		json_array_append_new(tests, job_test(&task->tests[i], i));
	for (size_t i = 0; deny && spec->deny_imports && ee_default_denylist[i]; i++)
		json_array_append_new(deny, json_string(ee_default_denylist[i]));
	json_t *job = json_pack("{s:i, s:s, s:s, s:o, s:o, s:s, s:b, s:I}", "v", 1, "nonce", spec->nonce,
	                        "setup", task->setup ? task->setup : "", "tests", tests, "deny_imports", deny,
	                        "scan", scan_names[spec->scan], "gate", spec->gate, "io_output_cap",
	                        (json_int_t)spec->io_output_cap);
	if (job && spec->lint && json_object_set_new(job, "lint", json_string(ee_lint_py)) < 0) {
		json_decref(job);
		return NULL;
	}
	if (!job || set_program(job, spec->program) < 0) {
		json_decref(job);
		return NULL;
	}
	char *text = json_dumps(job, JSON_COMPACT);
	json_decref(job);
	if (text)
		*len = strlen(text);
	return text;
}
