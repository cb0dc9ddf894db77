/* test_jsonfield.c - the field-reading helper (jsonfield.h): the message
 * shape "<where>: <path>: <message>", err->field, each getter's accept and
 * refuse cases, unknown keys with the nearest name, and cuts that never
 * split a UTF-8 character. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "results/compare.h"
#include "base/err.h"
#include "base/jsonfield.h"
#include "base/text.h"

#include "leakcheck.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static json_t *parse(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);

	cr_assert_not_null(j, "bad fixture %s: %s", text, e.text);
	return j;
}

/* The whole message is valid UTF-8: no cut inside a character. */
static void expect_utf8(const char *s)
{
	cr_expect_lt(ee_utf8_first_bad(s, strlen(s)), 0, "not UTF-8: %s", s);
}

Test(jsonfield, message_shape_and_field)
{
	struct ee_err err = { 0 };
	struct ee_jf top = ee_jf_make("t.jsonl:3", &err);
	struct ee_jf sub = ee_jf_sub(&top, "tests[2]");

	cr_expect_eq(ee_jf_fail(&sub, "kind", "bad %d", 7), -1);
	cr_expect_str_eq(err.msg, "t.jsonl:3: tests[2].kind: bad 7");
	cr_expect_str_eq(err.field, "tests[2].kind");
	cr_expect_eq(err.code, EE_ERR_USAGE);

	ee_jf_fail(&top, "", "whole line");
	cr_expect_str_eq(err.msg, "t.jsonl:3: whole line");
	cr_expect_str_eq(err.field, "");

	struct ee_jf body = ee_jf_make(NULL, &err);
	body.root = "body";
	ee_jf_fail(&body, "", "not an object");
	cr_expect_str_eq(err.msg, "body: not an object");
	ee_jf_fail(&body, "runs", "empty");
	cr_expect_str_eq(err.msg, "runs: empty");
}

Test(jsonfield, bad_shows_the_value_cut)
{
	struct ee_err err = { 0 };
	struct ee_jf c = ee_jf_make("s.json", &err);
	json_t *v = json_string("0123456789012345678901234567890123456789xyz");

	ee_jf_bad(&c, "score", "a number", v);
	cr_expect_str_eq(
	        err.msg,
	        "s.json: score: expected a number, got \"012345678901234567890123456789012345678...");
	ee_jf_bad(&c, "score", "a number", NULL);
	cr_expect_str_eq(err.msg, "s.json: score: missing");
	json_decref(v);
	no_leaks();
}

/* 38 ASCII bytes then "é": compact JSON puts the é at bytes 39-40, across
 * the 40-byte cut. */
Test(jsonfield, show_never_splits_a_character)
{
	char out[EE_JF_SHOW_BYTES + 4];
	json_t *v = json_string("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xc3\xa9zzz");

	ee_jf_show(v, out, sizeof(out));
	expect_utf8(out);
	cr_expect_str_eq(out, "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...");
	json_decref(v);
}

Test(jsonfield, long_message_cut_at_a_character)
{
	struct ee_err err = { 0 };
	struct ee_jf c = ee_jf_make("w", &err);
	char detail[400];

	memset(detail, 'a', sizeof(detail));
	for (size_t i = 1; i + 1 < sizeof(detail); i += 2)
		memcpy(detail + i, "\xc3\xa9", 2); /* "aéééé..." */
	detail[sizeof(detail) - 1] = '\0';
	ee_jf_fail(&c, "k", "%s", detail);
	expect_utf8(err.msg);
	cr_expect_gt(strlen(err.msg), sizeof(err.msg) - 4);
}

Test(jsonfield, getters)
{
	struct ee_err err = { 0 };
	struct ee_jf c = ee_jf_make("x:1", &err);
	json_t *o = parse("{\"s\": \"hi\", \"e\": \"\", \"n\": 2.5, \"i\": 7, \"b\": true, \"k\": \"io\","
	                  " \"a\": [1], \"z\": [], \"o\": {}, \"id\": 12}");
	static const char *const kinds[] = { "assert", "io" };
	static const struct ee_jf_num_rule pos = { 0, 0, 0, "a number > 0" };
	char *s = NULL;
	double d = -1;
	int has = 0, b = 0, k = -1;
	json_int_t i = -1;
	json_t *arr, *obj;

	cr_expect_eq(ee_jf_str(&c, o, "s", 1, NULL, &s), 0);
	cr_expect_str_eq(s, "hi");
	free(s);
	cr_expect_eq(ee_jf_str(&c, o, "nope", 0, "dflt", &s), 0);
	cr_expect_str_eq(s, "dflt");
	free(s);
	cr_expect_eq(ee_jf_str(&c, o, "nope", 1, NULL, &s), -1);
	cr_expect_str_eq(err.msg, "x:1: nope: missing (expected a string)");
	cr_expect_eq(ee_jf_str(&c, o, "n", 1, NULL, &s), -1);
	cr_expect_str_eq(err.msg, "x:1: n: expected a string, got number");
	cr_expect_eq(ee_jf_name(&c, o, "e", &s), -1);
	cr_expect_str_eq(err.msg, "x:1: e: expected a name, got an empty string");
	free(s);
	cr_expect_eq(ee_jf_id(&c, o, "id", &s), 0);
	cr_expect_str_eq(s, "12");
	free(s);

	cr_expect_eq(ee_jf_num(&c, o, "n", &pos, &d, &has), 0);
	cr_expect(d == 2.5 && has == 1);
	cr_expect_eq(ee_jf_num(&c, o, "s", &pos, &d, NULL), -1);
	cr_expect_str_eq(err.msg, "x:1: s: expected a number > 0, got string");

	cr_expect_eq(ee_jf_int(&c, o, "i", 0, 10, "an integer in [0, 10]", &i), 0);
	cr_expect_eq(i, 7);
	cr_expect_eq(ee_jf_int(&c, o, "i", 0, 5, "an integer in [0, 5]", &i), -1);
	cr_expect_str_eq(err.msg, "x:1: i: expected an integer in [0, 5], got 7");
	cr_expect_eq(ee_jf_int(&c, o, "n", 0, 5, "an integer in [0, 5]", &i), -1);
	cr_expect_str_eq(err.msg, "x:1: n: expected an integer in [0, 5], got number");

	cr_expect_eq(ee_jf_bool(&c, o, "b", &b), 0);
	cr_expect_eq(b, 1);
	cr_expect_eq(ee_jf_bool(&c, o, "i", &b), -1);
	cr_expect_str_eq(err.msg, "x:1: i: expected a boolean, got number");

	cr_expect_eq(ee_jf_enum(&c, o, "k", kinds, COUNT(kinds), -1, &k), 0);
	cr_expect_eq(k, 1);
	cr_expect_eq(ee_jf_enum(&c, o, "s", kinds, COUNT(kinds), -1, &k), -1);
	cr_expect_str_eq(err.msg, "x:1: s: expected one of assert, io, got \"hi\"");
	cr_expect_eq(ee_jf_enum(&c, o, "nope", kinds, COUNT(kinds), 0, &k), 0);
	cr_expect_eq(k, 0);

	cr_expect_eq(ee_jf_array(&c, o, "a", 1, "a non-empty array", &arr), 0);
	cr_expect_eq(ee_jf_array(&c, o, "z", 1, "a non-empty array", &arr), -1);
	cr_expect_str_eq(err.msg, "x:1: z: expected a non-empty array, got an empty array");
	cr_expect_eq(ee_jf_object(&c, o, "o", 1, &obj), 0);
	cr_expect_eq(ee_jf_object(&c, o, "a", 1, &obj), -1);
	cr_expect_str_eq(err.msg, "x:1: a: expected an object, got array");
	cr_expect_eq(ee_jf_object(&c, o, "nope", 0, &obj), 0);
	cr_expect_null(obj);
	json_decref(o);
	no_leaks();
}

Test(jsonfield, unknown_keys_name_the_nearest)
{
	struct ee_err err = { 0 };
	struct ee_jf c = ee_jf_make("t:1", &err);
	static const char *const keys[] = { "kind", "visibility", "weight" };
	json_t *near = parse("{\"kind\": 1, \"visiblity\": 2}");
	json_t *far = parse("{\"zzzzzz\": 1}");
	json_t *odd = parse("{\"a b\": 1}");

	cr_expect_eq(ee_jf_known_keys(&c, near, keys, COUNT(keys), "a test"), -1);
	cr_expect_str_eq(err.msg, "t:1: visiblity: unknown key in a test; did you mean 'visibility'?");
	cr_expect_eq(ee_jf_known_keys(&c, far, keys, COUNT(keys), "a test"), -1);
	cr_expect_str_eq(err.msg,
	                 "t:1: zzzzzz: unknown key in a test; expected one of kind, visibility, weight");
	cr_expect_eq(ee_jf_known_keys(&c, odd, keys, COUNT(keys), "a test"), -1);
	cr_expect_str_eq(err.field, "\"a b\"");
	json_decref(near);
	json_decref(far);
	json_decref(odd);
}

/* compare's field paths: a class name cut at 48 bytes stays whole
 * characters (it was cut at a byte before jsonfield). */
Test(jsonfield, compare_class_path_never_splits_a_character)
{
	struct ee_err err = { 0 };
	char name[64], text[256];

	memset(name, 'c', 47);
	memcpy(name + 47, "\xc3\xa9x", 4); /* é across byte 48 */
	snprintf(text, sizeof(text), "{\"statuses\": {}, \"classes\": {\"%s\": 5}}", name);
	json_t *j = parse(text);
	cr_expect_eq(ee_compare_check_summary(j, "s.json", &err), -1);
	expect_utf8(err.msg);
	expect_utf8(err.field);
	json_decref(j);
}

/* compare's shown value: cut at whole characters too. */
Test(jsonfield, compare_shown_value_never_splits_a_character)
{
	struct ee_err err = { 0 };
	json_t *j = parse(
	        "{\"statuses\": {}, \"samples\": \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xc3\xa9zz\"}");

	cr_expect_eq(ee_compare_check_summary(j, "s.json", &err), -1);
	expect_utf8(err.msg);
	cr_expect(strstr(err.msg, "samples: expected an integer >= 0, got \"aaaa") != NULL, "%s", err.msg);
	json_decref(j);
}

/* jansson quotes the input near a fault, newline and all: the message must
 * stay one line (fuzz_task found an APPS row whose nested input_output did
 * this). */
Test(jsonfield, error_text_is_one_line)
{
	json_error_t e;
	char text[EE_JF_ERROR_TEXT];

	cr_assert_null(json_loads("\"\\\n\tb\"", JSON_DECODE_ANY, &e));
	cr_assert(strchr(e.text, '\n') != NULL, "jansson no longer quotes the newline: %s", e.text);
	ee_jf_error_text(&e, text);
	cr_expect_null(strchr(text, '\n'), "%s", text);
	cr_expect_null(strchr(text, '\t'), "%s", text);
	cr_expect(strstr(text, "\\n") != NULL, "%s", text);
}
