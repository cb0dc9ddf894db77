/* formats_rl.c - the RL code data sets' rows read as they are (task.h,
 * docs/formats.md): APPS/TACO's input_output, CodeContests' test lists,
 * verl's reward_model.ground_truth, open-r1's and Prime Intellect's
 * verification_info; and what every RL parser shares, LiveCodeBench's too
 * (formats_lcb.c).
 *
 * Every test becomes an io test (stdin -> expected stdout) or a call test
 * (arguments -> expected value), so the supervisor judges all of them; the
 * expected values never enter the sandbox. The rows carry many fields of
 * their own (statements, solutions, tags): only the ones named here are
 * read, and unknown fields are left alone. A field missing or of the wrong
 * shape is an error naming its JSON path, inside a JSON string too
 * ("input_output.outputs[2]").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/buf.h"
#include "base/cleanup.h"
#include "base/err.h"
#include "base/jsonfield.h"
#include "input/task.h"
#include "input/task_int.h"

/* An io text joined from a list of lines stays below this. */
#define TEXT_CAP (256u << 20)
#define NAME_LEN 64

/* ---- Shared ------------------------------------------------------------- */

int ee_rl_parse_json(const struct ee_jf *c, const char *field, const char *s, size_t n, json_t **ret)
{
	json_error_t e;
	char jtext[EE_JF_ERROR_TEXT];

	*ret = json_loadb(s, n, JSON_DECODE_ANY, &e);
	if (!*ret)
		return ee_jf_fail(c, field, "not JSON (column %d: %s)", e.column,
		                  ee_jf_error_text(&e, jtext));
	return 0;
}

int ee_rl_json_field(const struct ee_jf *c, const json_t *obj, const char *key, int required, json_t **ret)
{
	json_t *v = json_object_get(obj, key);
	const char *s;

	*ret = NULL;
	if (!v)
		return required ? ee_jf_fail(c, key, "missing (expected JSON, or a string of JSON)") : 0;
	if (!json_is_string(v)) {
		*ret = json_incref(v);
		return 0;
	}
	if (ee_jf_str_check(c, key, v, &s) < 0)
		return -1;
	return ee_rl_parse_json(c, key, s, json_string_length(v), ret);
}

int ee_rl_json_lines(const struct ee_jf *c, const char *field, const json_t *text, json_t **ret)
{
	const char *s, *end;
	json_t *args = json_array();

	*ret = NULL;
	if (!args)
		return ee_jf_oom(c);
	if (ee_jf_str_check(c, field, text, &s) < 0)
		goto fail;
	for (end = s + strlen(s); s < end;) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s);
		size_t blank = strspn(s, " \t\r");
		json_t *v;

		if (blank < len) {
			if (ee_rl_parse_json(c, field, s, len, &v) < 0)
				goto fail;
			if (json_array_append_new(args, v) < 0) {
				ee_jf_oom(c);
				goto fail;
			}
		}
		s += len + (nl != NULL);
	}
	*ret = args;
	return 0;
fail:
	json_decref(args);
	return -1;
}

int ee_rl_call_test(const struct ee_jf *c, struct ee_test *test, int hidden, const char *fn,
                    const char *method_of, json_t *args, json_t *expected)
{
	ee_test_init(test, EE_TEST_CALL, hidden);
	test->args = args;
	test->expected = expected;
	if (!args || !expected)
		return ee_jf_oom(c);
	if (ee_jf_strdup(c, fn, &test->fn) < 0 ||
	    (method_of && ee_jf_strdup(c, method_of, &test->method_of) < 0))
		return -1;
	return 0;
}

int ee_rl_io_test(const struct ee_jf *c, struct ee_test *test, int hidden, const char *in, const char *out)
{
	ee_test_init(test, EE_TEST_IO, hidden);
	if (ee_jf_strdup(c, in, &test->stdin_text) < 0 || ee_jf_strdup(c, out, &test->stdout_text) < 0)
		return -1;
	return 0;
}

const char *ee_rl_method_class(const json_t *obj)
{
	static const char word[] = "class Solution";
	const char *code = json_string_value(json_object_get(obj, "starter_code"));

	for (const char *p = code; p && (p = strstr(p, word)); p += sizeof(word) - 1) {
		char next = p[sizeof(word) - 1];
		int starts_line = p == code || p[-1] == '\n';
		if (starts_line && (next == ':' || next == '(' || next == ' ' || next == '\t'))
			return "Solution";
	}
	return NULL;
}

int ee_rl_entry_point(const struct ee_jf *c, struct ee_task *t, const char *fn, const char *method_of)
{
	if (t->entry_point)
		return 0;
	return ee_jf_strdup(c, method_of ? method_of : fn, &t->entry_point);
}

int ee_rl_case_texts(const struct ee_jf *c, const json_t *tc, const char **in, const char **out)
{
	if (!json_object_get(tc, "input"))
		return ee_jf_fail(c, "input", "missing (expected a string)");
	if (!json_object_get(tc, "output"))
		return ee_jf_fail(c, "output", "missing (expected a string)");
	if (ee_jf_str_check(c, "input", json_object_get(tc, "input"), in) < 0 ||
	    ee_jf_str_check(c, "output", json_object_get(tc, "output"), out) < 0)
		return -1;
	return 0;
}

/* The name of key[i] in buf. */
static const char *elem(const char *key, size_t i, char *buf)
{
	return ee_jf_elem(key, i, buf, NAME_LEN);
}

/* An io text: a string, or a list of strings joined with "\n" (as APPS's
 * harness joins them). A copy in *ret. */
static int io_text(const struct ee_jf *c, const char *field, const json_t *v, char **ret)
{
	ee_autobuf struct ee_buf b;
	ee_buf_init(&b, TEXT_CAP);
	const char *s;
	size_t i;
	json_t *line;

	if (json_is_string(v))
		return ee_jf_str_check(c, field, v, &s) < 0 ? -1 : ee_jf_strdup(c, s, ret);
	if (!json_is_array(v))
		return ee_jf_bad(c, field, "a string or a list of strings", v);
	json_array_foreach (v, i, line) {
		char name[NAME_LEN + 8];
		snprintf(name, sizeof(name), "%s[%zu]", field, i);
		if (ee_jf_str_check(c, name, line, &s) < 0)
			return -1;
		if ((i && ee_buf_append(&b, "\n", 1) < 0) || ee_buf_append(&b, s, strlen(s)) < 0)
			return b.oom ? ee_jf_oom(c) : ee_jf_fail(c, field, "longer than %u bytes", TEXT_CAP);
	}
	return ee_jf_strdup(c, b.data ? b.data : "", ret);
}

/* The tests of {"inputs", "outputs", "fn_name"?} (APPS, TACO, verl):
 * without fn_name io tests; with it call tests, an input being either the
 * argument list (APPS: its output then a one-element list holding the
 * return value, unwrapped as APPS's harness accepts it) or newline-separated
 * JSON arguments (verl: its output then the JSON of the return value). */
static int inputs_outputs(const struct ee_jf *c, const json_t *io, const char *method_of, struct ee_task *t)
{
	json_t *ins, *outs;
	ee_autofree char *fn = NULL;

	if (!json_is_object(io))
		return ee_jf_bad(c, "", "an object with inputs and outputs", io);
	if (ee_jf_array(c, io, "inputs", 1, "a non-empty array", &ins) < 0 ||
	    ee_jf_array(c, io, "outputs", 1, "a non-empty array", &outs) < 0)
		return -1;
	if (json_object_get(io, "fn_name") && !json_is_null(json_object_get(io, "fn_name")) &&
	    ee_jf_name(c, io, "fn_name", &fn) < 0)
		return -1;
	if (json_array_size(ins) != json_array_size(outs))
		return ee_jf_fail(c, "outputs", "%zu outputs for %zu inputs", json_array_size(outs),
		                  json_array_size(ins));
	if (ee_task_alloc_tests(c, t, json_array_size(ins)) < 0 ||
	    (fn && ee_rl_entry_point(c, t, fn, method_of) < 0))
		return -1;
	for (size_t i = 0; i < t->n_tests; i++) {
		char in_name[NAME_LEN], out_name[NAME_LEN];
		const json_t *in = json_array_get(ins, i), *out = json_array_get(outs, i);
		ee_autofree char *in_text = NULL, *out_text = NULL;
		json_t *args = NULL, *want = NULL;

		elem("inputs", i, in_name);
		elem("outputs", i, out_name);
		if (!fn) {
			if (io_text(c, in_name, in, &in_text) < 0 ||
			    io_text(c, out_name, out, &out_text) < 0 ||
			    ee_rl_io_test(c, &t->tests[i], 0, in_text, out_text) < 0)
				return -1;
			continue;
		}
		if (json_is_array(in)) {
			args = json_incref((json_t *)in);
			want = json_is_array(out) && json_array_size(out) == 1 ? json_array_get(out, 0)
			                                                       : (json_t *)out;
			json_incref(want);
		} else {
			if (!json_is_string(in))
				return ee_jf_bad(c, in_name, "an argument list or a string of JSON lines",
				                 in);
			if (ee_rl_json_lines(c, in_name, in, &args) < 0)
				return -1;
			if (!json_is_string(out))
				want = json_incref((json_t *)out);
			else if (ee_rl_parse_json(c, out_name, json_string_value(out),
			                          json_string_length(out), &want) < 0) {
				json_decref(args);
				return -1;
			}
		}
		if (ee_rl_call_test(c, &t->tests[i], 0, fn, method_of, args, want) < 0)
			return -1;
	}
	return 0;
}

/* ---- APPS / TACO -------------------------------------------------------- */

int ee_task_parse_apps(const struct ee_jf *c, const json_t *obj, unsigned opts, struct ee_task *t)
{
	json_t *io;
	struct ee_jf sub = ee_jf_sub(c, "input_output");

	if (ee_rl_json_field(c, obj, "input_output", 1, &io) < 0)
		return -1;
	int rc = inputs_outputs(&sub, io, ee_rl_method_class(obj), t);
	json_decref(io);
	return rc;
}

/* ---- CodeContests ------------------------------------------------------- */

static const char *const cc_keys[] = { "public_tests", "private_tests", "generated_tests" };

/* The lists of key (may be absent): {"input": [...], "output": [...]}. */
static int cc_lists(const struct ee_jf *c, const json_t *set, const char *key, json_t **ins, json_t **outs)
{
	struct ee_jf sub = ee_jf_sub(c, key);

	*ins = *outs = NULL;
	if (!set)
		return 0;
	if (!json_is_object(set))
		return ee_jf_bad(c, key, "an object with input and output lists", set);
	if (ee_jf_array(&sub, set, "input", 0, "an array of strings", ins) < 0 ||
	    ee_jf_array(&sub, set, "output", 0, "an array of strings", outs) < 0)
		return -1;
	if (json_array_size(*ins) != json_array_size(*outs))
		return ee_jf_fail(&sub, "output", "%zu outputs for %zu inputs", json_array_size(*outs),
		                  json_array_size(*ins));
	return 0;
}

int ee_task_parse_codecontests(const struct ee_jf *c, const json_t *obj, unsigned opts, struct ee_task *t)
{
	json_t *sets[3] = { NULL, NULL, NULL }, *ins[3], *outs[3];
	size_t total = 0, n = 0;
	int rc = -1;

	for (size_t k = 0; k < 3; k++) {
		if (ee_rl_json_field(c, obj, cc_keys[k], 0, &sets[k]) < 0 ||
		    cc_lists(c, sets[k], cc_keys[k], &ins[k], &outs[k]) < 0)
			goto out;
		total += json_array_size(ins[k]);
	}
	if (total == 0) {
		ee_jf_fail(c, "public_tests",
		           "no tests (public_tests, private_tests and generated_tests are empty)");
		goto out;
	}
	if (ee_task_alloc_tests(c, t, total) < 0)
		goto out;
	for (size_t k = 0; k < 3; k++) {
		struct ee_jf sub = ee_jf_sub(c, cc_keys[k]);
		for (size_t i = 0; i < json_array_size(ins[k]); i++) {
			char in_name[NAME_LEN], out_name[NAME_LEN];
			const char *in, *expect;
			if (ee_jf_str_check(&sub, elem("input", i, in_name), json_array_get(ins[k], i), &in) <
			            0 ||
			    ee_jf_str_check(&sub, elem("output", i, out_name), json_array_get(outs[k], i),
			                    &expect) < 0 ||
			    ee_rl_io_test(c, &t->tests[n++], k > 0, in, expect) < 0)
				goto out;
		}
	}
	rc = 0;
out:
	for (size_t k = 0; k < 3; k++)
		json_decref(sets[k]);
	return rc;
}

/* ---- verl --------------------------------------------------------------- */

static int assert_cases(const struct ee_jf *c, const json_t *list, struct ee_task *t)
{
	if (!json_is_array(list) || json_array_size(list) == 0)
		return ee_jf_bad(c, "assert_case", "a non-empty array of strings", list);
	if (ee_task_alloc_tests(c, t, json_array_size(list)) < 0)
		return -1;
	for (size_t i = 0; i < t->n_tests; i++) {
		char name[NAME_LEN];
		const char *code;
		ee_test_init(&t->tests[i], EE_TEST_ASSERT, 0);
		if (ee_jf_str_check(c, elem("assert_case", i, name), json_array_get(list, i), &code) < 0 ||
		    ee_jf_strdup(c, code, &t->tests[i].code) < 0)
			return -1;
	}
	return 0;
}

int ee_task_parse_verl(const struct ee_jf *c, const json_t *obj, unsigned opts, struct ee_task *t)
{
	json_t *rm, *truth;
	struct ee_jf rm_c = ee_jf_sub(c, "reward_model");

	if (ee_jf_object(c, obj, "reward_model", 1, &rm) < 0 ||
	    ee_rl_json_field(&rm_c, rm, "ground_truth", 1, &truth) < 0)
		return -1;
	struct ee_jf sub = ee_jf_sub(&rm_c, "ground_truth");
	int rc;
	if (!json_is_object(truth))
		rc = ee_jf_bad(&sub, "", "an object (inputs and outputs, or assert_case)", truth);
	else if (json_object_get(truth, "assert_case"))
		rc = assert_cases(&sub, json_object_get(truth, "assert_case"), t);
	else
		rc = inputs_outputs(&sub, truth, ee_rl_method_class(obj), t);
	json_decref(truth);
	return rc;
}

/* ---- open-r1 ------------------------------------------------------------ */

/* verification_info as an object, a new reference. */
static int verification_info(const struct ee_jf *c, const json_t *obj, json_t **ret)
{
	if (ee_rl_json_field(c, obj, "verification_info", 1, ret) < 0)
		return -1;
	if (json_is_object(*ret))
		return 0;
	ee_jf_bad(c, "verification_info", "an object", *ret);
	json_decref(*ret);
	*ret = NULL;
	return -1;
}

static int python_only(const struct ee_jf *c, const json_t *info)
{
	const json_t *v = json_object_get(info, "language");
	const char *lang;

	if (!v || json_is_null(v))
		return 0;
	if (ee_jf_str_check(c, "language", v, &lang) < 0)
		return -1;
	if (strcasecmp(lang, "python") == 0 || strcasecmp(lang, "python3") == 0 ||
	    strcasecmp(lang, "py") == 0)
		return 0;
	return ee_jf_bad(c, "language", "python (execeval runs Python only)", v);
}

static int openr1_case(const struct ee_jf *parent, const json_t *tc, size_t i, struct ee_test *test)
{
	char name[NAME_LEN];
	struct ee_jf c = ee_jf_sub(parent, elem("test_cases", i, name));
	const json_t *type;
	const char *in, *out, *type_s = "stdin_stdout";

	if (!json_is_object(tc))
		return ee_jf_bad(parent, name, "an object", tc);
	type = json_object_get(tc, "type");
	if (type && ee_jf_str_check(&c, "type", type, &type_s) < 0)
		return -1;
	if (strcmp(type_s, "stdin_stdout") != 0)
		return ee_jf_bad(&c, "type", "\"stdin_stdout\"", type);
	if (ee_rl_case_texts(&c, tc, &in, &out) < 0)
		return -1;
	return ee_rl_io_test(&c, test, 0, in, out);
}

int ee_task_parse_openr1(const struct ee_jf *c, const json_t *obj, unsigned opts, struct ee_task *t)
{
	json_t *info, *cases;
	struct ee_jf sub = ee_jf_sub(c, "verification_info");
	int rc = -1;

	if (verification_info(c, obj, &info) < 0)
		return -1;
	if (python_only(&sub, info) < 0 ||
	    ee_jf_array(&sub, info, "test_cases", 1, "a non-empty array of objects", &cases) < 0 ||
	    ee_task_alloc_tests(c, t, json_array_size(cases)) < 0)
		goto out;
	for (size_t i = 0; i < t->n_tests; i++)
		if (openr1_case(&sub, json_array_get(cases, i), i, &t->tests[i]) < 0)
			goto out;
	rc = 0;
out:
	json_decref(info);
	return rc;
}

/* ---- Prime Intellect ---------------------------------------------------- */

/* Element i of list, a string holding JSON, parsed. */
static int json_elem(const struct ee_jf *c, const json_t *list, const char *key, size_t i, json_t **ret)
{
	char name[NAME_LEN];
	const char *s;

	elem(key, i, name);
	if (ee_jf_str_check(c, name, json_array_get(list, i), &s) < 0)
		return -1;
	return ee_rl_parse_json(c, name, s, strlen(s), ret);
}

/* Test i: without fn the decoded input and output are the texts of an io
 * test; with fn the input is the argument list (or JSON lines) and the
 * output the return value. */
static int prime_test(const struct ee_jf *c, const json_t *ins, const json_t *outs, size_t i, const char *fn,
                      const char *method_of, struct ee_test *test)
{
	char name[NAME_LEN];
	json_t *in = NULL, *out = NULL, *args = NULL;
	const char *in_s, *out_s;
	int rc = -1;

	if (json_elem(c, ins, "test_case_inputs", i, &in) < 0 ||
	    json_elem(c, outs, "test_case_outputs", i, &out) < 0)
		goto done;
	if (!fn) {
		if (ee_jf_str_check(c, elem("test_case_inputs", i, name), in, &in_s) < 0 ||
		    ee_jf_str_check(c, elem("test_case_outputs", i, name), out, &out_s) < 0)
			goto done;
		rc = ee_rl_io_test(c, test, 0, in_s, out_s);
		goto done;
	}
	if (json_is_array(in))
		args = json_incref(in);
	else if (!json_is_string(in)) {
		ee_jf_bad(c, elem("test_case_inputs", i, name), "the JSON of an argument list", in);
		goto done;
	} else if (ee_rl_json_lines(c, elem("test_case_inputs", i, name), in, &args) < 0)
		goto done;
	rc = ee_rl_call_test(c, test, 0, fn, method_of, args, out);
	out = NULL;
done:
	json_decref(in);
	json_decref(out);
	return rc;
}

static const struct ee_jf_num_rule positive = { 0, 0, 0, "a number > 0" };

int ee_task_parse_prime(const struct ee_jf *c, const json_t *obj, unsigned opts, struct ee_task *t)
{
	json_t *info, *ins, *outs;
	struct ee_jf sub = ee_jf_sub(c, "verification_info");
	ee_autofree char *fn = NULL;
	const char *method_of = ee_rl_method_class(obj);
	double timeout = 0;
	int rc = -1;

	if (verification_info(c, obj, &info) < 0)
		return -1;
	if (python_only(&sub, info) < 0 ||
	    ee_jf_array(&sub, info, "test_case_inputs", 1, "a non-empty array of JSON strings", &ins) < 0 ||
	    ee_jf_array(&sub, info, "test_case_outputs", 1, "a non-empty array of JSON strings", &outs) < 0 ||
	    ee_jf_num(&sub, info, "timeout", &positive, &timeout, NULL) < 0)
		goto out;
	/* fn_name null or "" means stdin tests, as the data set writes them. */
	const json_t *fv = json_object_get(info, "fn_name");
	if (fv && !json_is_null(fv) && !(json_is_string(fv) && json_string_length(fv) == 0) &&
	    ee_jf_name(&sub, info, "fn_name", &fn) < 0)
		goto out;
	if (json_array_size(ins) != json_array_size(outs)) {
		ee_jf_fail(&sub, "test_case_outputs", "%zu outputs for %zu inputs", json_array_size(outs),
		           json_array_size(ins));
		goto out;
	}
	if (ee_task_alloc_tests(c, t, json_array_size(ins)) < 0 ||
	    (fn && ee_rl_entry_point(c, t, fn, method_of) < 0))
		goto out;
	for (size_t i = 0; i < t->n_tests; i++)
		if (prime_test(&sub, ins, outs, i, fn, method_of, &t->tests[i]) < 0)
			goto out;
	rc = 0;
out:
	json_decref(info);
	return rc;
}
