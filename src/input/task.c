/* task.c - a task's lifecycle: reading one from JSON in any of the
 * formats (see task.h), building one from --assert, freeing it, naming its
 * enums.
 *
 * Theory of operation: ee_task_from_json checks the value is an object,
 * tells the format (ee_task_detect, task_detect.c) unless the caller named
 * it, reads the fields every format has (the id, class) and hands the rest
 * to the format's parser (task_formats.c, formats_rl.c, formats_lcb.c); any
 * string left unset becomes "" at the end. Every field goes through jsonfield.h's getters, whose messages read
 * "where: path: expected X, got Y". On error the half-built task is freed
 * and the caller's struct stays zeroed.
 */
#include "input/task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/jsonfield.h"
#include "input/task_int.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

struct ee_jf ee_task_ctx(const char *where, struct ee_err *err)
{
	return ee_jf_make(where ? where : "input", err);
}

const char *ee_task_name_of(const char *const *names, size_t n, int i)
{
	return i >= 0 && (size_t)i < n ? names[i] : "unknown";
}

int ee_task_check_object(const struct ee_jf *c, const json_t *obj)
{
	if (json_is_object(obj))
		return 0;
	return ee_jf_fail(c, "", "expected a JSON object, got %s", obj ? ee_jf_type_name(obj) : "nothing");
}

void ee_test_init(struct ee_test *t, int kind, int hidden)
{
	t->kind = kind;
	t->hidden = hidden;
	t->tier = EE_TIER_CANONICAL;
	t->weight = 1.0;
	t->float_tol = -1.0;
}

void ee_test_free(struct ee_test *t)
{
	free(t->code);
	free(t->stdin_text);
	free(t->stdout_text);
	free(t->fn);
	free(t->method_of);
	json_decref(t->args);
	json_decref(t->expected);
	json_decref(t->kwargs);
	json_decref(t->calls);
	json_decref(t->script);
}

/* Allocates n zeroed tests, so ee_task_free can run at any point after. */
int ee_task_alloc_tests(const struct ee_jf *c, struct ee_task *t, size_t n)
{
	t->tests = calloc(n, sizeof(*t->tests));
	if (!t->tests)
		return ee_jf_oom(c);
	t->n_tests = n;
	return 0;
}

static int fill_empty(const struct ee_jf *c, char **s)
{
	return *s ? 0 : ee_jf_strdup(c, "", s);
}

/* The strings a format did not set become "". */
static int fill_defaults(const struct ee_jf *c, struct ee_task *t)
{
	if (fill_empty(c, &t->class_name) < 0 || fill_empty(c, &t->prompt) < 0 ||
	    fill_empty(c, &t->entry_point) < 0 || fill_empty(c, &t->setup) < 0)
		return -1;
	return 0;
}

/* An RL row's own id field; "task_id" wins over it, the line number
 * stands in when neither is there (docs/formats.md). */
static const char *const rl_id_keys[EE_FORMAT_COUNT] = {
	[EE_FORMAT_APPS] = "problem_id",   [EE_FORMAT_CODECONTESTS] = "name", [EE_FORMAT_LCB] = "question_id",
	[EE_FORMAT_OPENR1] = "problem_id", [EE_FORMAT_PRIME] = "problem_id",
};

static int is_rl_format(int format)
{
	return format >= EE_FORMAT_APPS && format <= EE_FORMAT_PRIME;
}

static int parse_id(const struct ee_jf *c, const json_t *obj, int format, long line, char **ret)
{
	const char *key = is_rl_format(format) ? rl_id_keys[format] : NULL;
	char text[32];

	if (!is_rl_format(format) || json_object_get(obj, "task_id"))
		return ee_jf_id(c, obj, "task_id", ret);
	if (key && json_object_get(obj, key))
		return ee_jf_id(c, obj, key, ret);
	if (line <= 0 && key)
		return ee_jf_fail(c, "task_id", "missing, and so is %s (expected a string or an integer)",
		                  key);
	if (line <= 0)
		return ee_jf_fail(c, "task_id", "missing (expected a string or an integer)");
	snprintf(text, sizeof(text), "%ld", line);
	return ee_jf_strdup(c, text, ret);
}

static int parse_task(const struct ee_jf *c, const json_t *obj, int format, long line, struct ee_task *t)
{
	static int (*const parsers[])(const struct ee_jf *, const json_t *, unsigned, struct ee_task *) = {
		[EE_FORMAT_NATIVE] = ee_task_parse_native,
		[EE_FORMAT_HUMANEVAL] = ee_task_parse_humaneval,
		[EE_FORMAT_MBPP] = ee_task_parse_mbpp,
		[EE_FORMAT_APPS] = ee_task_parse_apps,
		[EE_FORMAT_CODECONTESTS] = ee_task_parse_codecontests,
		[EE_FORMAT_VERL] = ee_task_parse_verl,
		[EE_FORMAT_LCB] = ee_task_parse_lcb,
		[EE_FORMAT_OPENR1] = ee_task_parse_openr1,
		[EE_FORMAT_PRIME] = ee_task_parse_prime,
		[EE_FORMAT_EVALPLUS] = ee_task_parse_evalplus,
	};

	if (ee_task_check_object(c, obj) < 0)
		return -1;
	unsigned opts = format > 0 ? (unsigned)format & ~EE_TASK_FORMAT_MASK : 0;
	if (format > 0)
		format &= (int)EE_TASK_FORMAT_MASK;
	if (format == EE_FORMAT_AUTO && (format = ee_task_detect(obj)) < 0)
		return ee_jf_fail(c, "",
		                  "cannot tell the format: expected 'tests' (native), "
		                  "'test'+'entry_point' (HumanEval), 'test_list' (MBPP) or an RL data "
		                  "set's tests (--format; docs/formats.md)");
	if (format < 0 || format >= (int)COUNT(parsers) || !parsers[format])
		return ee_jf_fail(c, "", "unknown task format %d", format);
	t->format = format;
	/* An RL row's tests first: with no id of its own, what its format
	 * lacks says more than the missing id. */
	if (is_rl_format(format) && parsers[format](c, obj, opts, t) < 0)
		return -1;
	if (parse_id(c, obj, format, line, &t->task_id) < 0 ||
	    ee_jf_str(c, obj, "class", 0, NULL, &t->class_name) < 0 ||
	    (!is_rl_format(format) && parsers[format](c, obj, opts, t) < 0) ||
	    ee_task_read_compare(c, obj, t) < 0)
		return -1;
	return fill_defaults(c, t);
}

int ee_task_from_row(const json_t *obj, int format, const char *where, long line, struct ee_task *ret,
                     struct ee_err *err)
{
	struct ee_jf c = ee_task_ctx(where, err);
	struct ee_task t = { 0 };

	memset(ret, 0, sizeof(*ret));
	if (parse_task(&c, obj, format, line, &t) < 0) {
		ee_task_free(&t);
		return -1;
	}
	*ret = t;
	return 0;
}

int ee_task_from_json(const json_t *obj, int format, const char *where, struct ee_task *ret,
                      struct ee_err *err)
{
	return ee_task_from_row(obj, format, where, 0, ret, err);
}

int ee_task_from_asserts(const char *const *asserts, size_t n, struct ee_task *ret, struct ee_err *err)
{
	struct ee_jf c = ee_task_ctx("--assert", err);
	struct ee_task t = { .format = EE_FORMAT_NATIVE };

	memset(ret, 0, sizeof(*ret));
	if (n == 0)
		return ee_fail(err, EE_ERR_USAGE, "--assert: expected at least one assertion, got none");
	if (ee_jf_strdup(&c, "run", &t.task_id) < 0 || ee_task_alloc_tests(&c, &t, n) < 0)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		ee_test_init(&t.tests[i], EE_TEST_ASSERT, 0);
		if (!asserts[i]) {
			ee_fail(err, EE_ERR_USAGE, "--assert: assertion %zu is missing", i + 1);
			goto fail;
		}
		if (ee_jf_strdup(&c, asserts[i], &t.tests[i].code) < 0)
			goto fail;
	}
	if (fill_defaults(&c, &t) < 0)
		goto fail;
	*ret = t;
	return 0;
fail:
	ee_task_free(&t);
	return -1;
}

void ee_task_free(struct ee_task *t)
{
	if (!t)
		return;
	for (size_t i = 0; t->tests && i < t->n_tests; i++)
		ee_test_free(&t->tests[i]);
	free(t->tests);
	free(t->task_id);
	free(t->class_name);
	free(t->prompt);
	free(t->entry_point);
	free(t->setup);
	ee_task_gen_free(t);
	memset(t, 0, sizeof(*t));
}
