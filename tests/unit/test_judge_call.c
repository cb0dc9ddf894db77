/* test_judge_call.c - call return-value comparison (judge.h,
 * ee_judge_call). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pyvalue/judge.h"

#define S(x)  x, sizeof(x) - 1
#define EXACT (-1.0)

/* -------------------------------------------------------------- call */

struct call_case {
	const char *name;
	const char *expected; /* plain JSON */
	const char *actual;   /* canonical JSON */
	double tol;
	bool want;
	const char *why;
};

static const struct call_case call_cases[] = {
	/* None and bool */
	{ "null", "null", "null", EXACT, true, NULL },
	{ "null vs false", "null", "false", EXACT, false, "expected None, got False" },
	{ "true", "true", "true", EXACT, true, NULL },
	{ "false", "false", "false", EXACT, true, NULL },
	{ "true vs false", "true", "false", EXACT, false, "expected True, got False" },
	{ "bool is not int", "true", "{\"int\":\"1\"}", EXACT, false, "expected True, got 1" },
	{ "int is not bool", "1", "true", EXACT, false, "expected 1, got True" },
	{ "zero is not false", "0", "false", EXACT, false, "got False" },
	{ "null vs int", "null", "{\"int\":\"0\"}", EXACT, false, "expected None, got 0" },
	/* integers */
	{ "int", "3", "{\"int\":\"3\"}", EXACT, true, NULL },
	{ "negative int", "-3", "{\"int\":\"-3\"}", EXACT, true, NULL },
	{ "minus zero", "0", "{\"int\":\"-0\"}", EXACT, true, NULL },
	{ "leading zeros", "7", "{\"int\":\"007\"}", EXACT, true, NULL },
	{ "plus sign", "5", "{\"int\":\"+5\"}", EXACT, true, NULL },
	{ "sign matters", "5", "{\"int\":\"-5\"}", EXACT, false, "expected 5, got -5" },
	{ "int differs", "3", "{\"int\":\"4\"}", EXACT, false, "expected 3, got 4" },
	{ "int64 max", "9223372036854775807", "{\"int\":\"9223372036854775807\"}", EXACT, true, NULL },
	{ "int64 min", "-9223372036854775808", "{\"int\":\"-9223372036854775808\"}", EXACT, true, NULL },
	{ "one past int64", "9223372036854775807", "{\"int\":\"9223372036854775808\"}", EXACT, false,
	  "expected 9223372036854775807, got 9223372036854775808" },
	{ "big int", "9223372036854775807", "{\"int\":\"99999999999999999999999999999\"}", EXACT, false,
	  "got 99999999999999999999999999999" },
	{ "huge int shown cut", "1",
	  "{\"int\":\"123456789012345678901234567890123456789012345678901234567890\"}", EXACT, false,
	  "got 1234567890123456789012345678901234567890..." },
	{ "int with dot", "3", "{\"int\":\"3.0\"}", EXACT, false, "malformed canonical int '3.0'" },
	{ "int empty", "3", "{\"int\":\"\"}", EXACT, false, "malformed canonical int" },
	{ "int sign only", "3", "{\"int\":\"-\"}", EXACT, false, "malformed canonical int" },
	{ "int with space", "3", "{\"int\":\" 3\"}", EXACT, false, "malformed canonical int" },
	{ "int as number", "3", "{\"int\":3}", EXACT, false, "malformed canonical value" },
	/* int against float: by value, exactly */
	{ "3 == 3.0", "3", "{\"float\":\"3.0\"}", EXACT, true, NULL },
	{ "3.0 == 3", "3.0", "{\"int\":\"3\"}", EXACT, true, NULL },
	{ "3.5 != 3", "3.5", "{\"int\":\"3\"}", EXACT, false, "expected 3.5, got 3" },
	{ "3 != 3.5", "3", "{\"float\":\"3.5\"}", EXACT, false, "expected 3, got 3.5" },
	{ "1e20 == 10**20", "1e20", "{\"int\":\"100000000000000000000\"}", EXACT, true, NULL },
	{ "1e20 != 10**20 + 1", "1e20", "{\"int\":\"100000000000000000001\"}", EXACT, false,
	  "expected 1e+20" },
	{ "2**53 + 1 != float 2**53", "9007199254740993", "{\"float\":\"9007199254740992.0\"}", EXACT, false,
	  "expected 9007199254740993" },
	{ "2**53 == float 2**53", "9007199254740992", "{\"float\":\"9007199254740992.0\"}", EXACT, true,
	  NULL },
	{ "int vs inf", "2", "{\"float\":\"inf\"}", EXACT, false, "got inf" },
	{ "int vs nan", "2", "{\"float\":\"nan\"}", EXACT, false, "got nan" },
	/* floats */
	{ "0.1", "0.1", "{\"float\":\"0.1\"}", EXACT, true, NULL },
	{ "0.1 vs 0.1+0.2-0.2", "0.1", "{\"float\":\"0.10000000000000003\"}", EXACT, false,
	  "expected 0.1, got 0.10000000000000003" },
	{ "zero signs", "0.0", "{\"float\":\"-0.0\"}", EXACT, true, NULL },
	{ "exponent repr", "1e16", "{\"float\":\"1e+16\"}", EXACT, true, NULL },
	{ "small repr", "1.5e-07", "{\"float\":\"1.5e-07\"}", EXACT, true, NULL },
	{ "nan equals nothing", "1.0", "{\"float\":\"nan\"}", EXACT, false, "got nan" },
	{ "-inf", "-1.0", "{\"float\":\"-inf\"}", EXACT, false, "got -inf" },
	{ "float hex", "8.0", "{\"float\":\"0x1p3\"}", EXACT, false, "malformed canonical float" },
	{ "float NaN spelling", "1.0", "{\"float\":\"NaN\"}", EXACT, false, "malformed canonical float" },
	{ "float bad exponent", "1.0", "{\"float\":\"1e\"}", EXACT, false, "malformed canonical float" },
	{ "float trailing space", "1.0", "{\"float\":\"1.0 \"}", EXACT, false, "malformed canonical float" },
	/* tolerance */
	{ "float within tol", "0.1", "{\"float\":\"0.10000001\"}", 1e-6, true, NULL },
	{ "float relative tol", "100.0", "{\"float\":\"100.00001\"}", 1e-6, true, NULL },
	{ "float outside tol", "0.1", "{\"float\":\"0.2\"}", 1e-6, false, "expected 0.1, got 0.2" },
	{ "int expected, float within tol", "3", "{\"float\":\"3.0000001\"}", 1e-6, true, NULL },
	{ "float expected, int within tol", "2.9999999", "{\"int\":\"3\"}", 1e-6, true, NULL },
	{ "ints stay exact under tol", "3", "{\"int\":\"4\"}", 0.5, false, "expected 3, got 4" },
	{ "nan under tol", "1.0", "{\"float\":\"nan\"}", 1.0, false, "got nan" },
	{ "inf under tol", "1.0", "{\"float\":\"inf\"}", 1e9, false, "got inf" },
	{ "huge int under tol", "1e300",
	  "{\"int\":\"1000000000000000000000000000000000000000000000000000000000000000000000000"
	  "0000000000000000000000000000000000000000000000000000000000000000000000000000000000"
	  "0000000000000000000000000000000000000000000000000000000000000000000000000000000000"
	  "0000000000000000000000000000000000000000000000000000000000000000000000000000000000"
	  "0000000000000000000000000000000000000000000000000000000000000000000000000000000000\"}",
	  0.1, false, "expected 1e+300" },
	/* strings */
	{ "str", "\"abc\"", "\"abc\"", EXACT, true, NULL },
	{ "empty str", "\"\"", "\"\"", EXACT, true, NULL },
	{ "str differs", "\"abc\"", "\"abd\"", EXACT, false, "expected 'abc', got 'abd'" },
	{ "str NUL inside", "\"a\\u0000b\"", "\"a\\u0000c\"", EXACT, false, "expected 'a?b', got 'a?c'" },
	{ "str NUL equal", "\"a\\u0000b\"", "\"a\\u0000b\"", EXACT, true, NULL },
	{ "str prefix", "\"ab\"", "\"abc\"", EXACT, false, "got 'abc'" },
	{ "str vs int", "\"3\"", "{\"int\":\"3\"}", EXACT, false, "expected '3', got 3" },
	/* sequences */
	{ "list", "[1, 2]", "{\"list\":[{\"int\":\"1\"},{\"int\":\"2\"}]}", EXACT, true, NULL },
	{ "tuple", "[1, 2]", "{\"tuple\":[{\"int\":\"1\"},{\"int\":\"2\"}]}", EXACT, true, NULL },
	{ "empty list", "[]", "{\"list\":[]}", EXACT, true, NULL },
	{ "nested", "[[1], []]", "{\"list\":[{\"tuple\":[{\"int\":\"1\"}]},{\"list\":[]}]}", EXACT, true,
	  NULL },
	{ "list shorter", "[1, 2]", "{\"list\":[{\"int\":\"1\"}]}", EXACT, false,
	  "expected list of 2, got list of 1" },
	{ "list element", "[1, 2]", "{\"list\":[{\"int\":\"1\"},{\"int\":\"3\"}]}", EXACT, false,
	  "at [1]: expected 2, got 3" },
	{ "nested path", "[[0, [5]]]",
	  "{\"list\":[{\"list\":[{\"int\":\"0\"},{\"tuple\":[{\"int\":\"6\"}]}]}]}", EXACT, false,
	  "at [0][1][0]: expected 5, got 6" },
	{ "list vs dict", "[]", "{\"dict\":[]}", EXACT, false, "expected list of 0, got dict of 0" },
	{ "bare array", "[1]", "[{\"int\":\"1\"}]", EXACT, false, "malformed canonical value" },
	{ "list of text", "[1]", "{\"list\":\"1\"}", EXACT, false, "malformed canonical value" },
	/* dicts */
	{ "dict any order", "{\"a\": 1, \"b\": [true]}",
	  "{\"dict\":[[\"b\",{\"list\":[true]}],[\"a\",{\"int\":\"1\"}]]}", EXACT, true, NULL },
	{ "empty dict", "{}", "{\"dict\":[]}", EXACT, true, NULL },
	{ "dict size", "{\"a\": 1}", "{\"dict\":[]}", EXACT, false, "expected dict of 1, got dict of 0" },
	{ "dict other key", "{\"a\": 1}", "{\"dict\":[[\"b\",{\"int\":\"1\"}]]}", EXACT, false,
	  "unexpected key 'b'" },
	{ "dict repeated key", "{\"a\": 1, \"b\": 2}",
	  "{\"dict\":[[\"a\",{\"int\":\"1\"}],[\"a\",{\"int\":\"1\"}]]}", EXACT, false, "key 'a' twice" },
	{ "dict value", "{\"a\": 1}", "{\"dict\":[[\"a\",{\"int\":\"2\"}]]}", EXACT, false,
	  "at ['a']: expected 1, got 2" },
	{ "dict int key", "{\"1\": 2}", "{\"dict\":[[{\"int\":\"1\"},{\"int\":\"2\"}]]}", EXACT, false,
	  "expected str keys, got key 1" },
	{ "dict short entry", "{\"a\": 1}", "{\"dict\":[[\"a\"]]}", EXACT, false,
	  "malformed canonical dict entry" },
	{ "dict long entry", "{\"a\": 1}", "{\"dict\":[[\"a\",{\"int\":\"1\"},3]]}", EXACT, false,
	  "malformed canonical dict entry" },
	{ "dict entry not a list", "{\"a\": 1}", "{\"dict\":[\"a\"]}", EXACT, false,
	  "malformed canonical dict entry" },
	{ "dict as object", "{\"a\": 1}", "{\"dict\":{\"a\":{\"int\":\"1\"}}}", EXACT, false,
	  "malformed canonical value" },
	{ "dict vs list", "{}", "{\"list\":[]}", EXACT, false, "expected dict of 0, got list of 0" },
	{ "object is not tagged", "{\"int\": \"3\"}", "{\"int\":\"3\"}", EXACT, false,
	  "expected dict of 1, got 3" },
	/* complex (a number by Python's ==: imaginary part 0) and builtin types */
	{ "complex real", "2", "{\"complex\":[\"2.0\",\"0.0\"]}", EXACT, true, NULL },
	{ "complex real -0j", "2.5", "{\"complex\":[\"2.5\",\"-0.0\"]}", EXACT, true, NULL },
	{ "complex big int exact", "1152921504606846977", "{\"complex\":[\"1.152921504606847e+18\",\"0.0\"]}",
	  EXACT, false, "expected 1152921504606846977, got (1.152921504606847e+18+0j)" },
	{ "complex imag", "1", "{\"complex\":[\"1.0\",\"2.0\"]}", EXACT, false, "expected 1, got (1+2j)" },
	{ "complex within tol", "1", "{\"complex\":[\"1.0000001\",\"1e-09\"]}", 1e-6, true, NULL },
	{ "complex nan", "1", "{\"complex\":[\"nan\",\"0.0\"]}", EXACT, false, "got (nan+0j)" },
	{ "complex vs list", "[1]", "{\"complex\":[\"0.0\",\"1.0\"]}", EXACT, false, "got 1j" },
	{ "complex malformed", "1", "{\"complex\":[\"1\"]}", EXACT, false, "malformed canonical complex" },
	{ "type", "\"int\"", "{\"type\":\"int\"}", EXACT, false, "expected 'int', got <class 'int'>" },
	/* other and malformed */
	{ "other", "1", "{\"other\":\"set\"}", EXACT, false, "got unsupported type 'set'" },
	{ "other vs null", "null", "{\"other\":\"NoneType\"}", EXACT, false, "unsupported type" },
	{ "other too large", "[]", "{\"other\":\"too large\"}", EXACT, false,
	  "unsupported type 'too large'" },
	{ "other not text", "1", "{\"other\":5}", EXACT, false, "malformed canonical value" },
	{ "long type name cut between characters", "1",
	  "{\"other\":\"\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\"}", EXACT, false,
	  "unsupported type '\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9...'" },
	{ "long key cut in path", "{\"abcdefghijklmnopqrstuvwxyz\": 1}",
	  "{\"dict\":[[\"abcdefghijklmnopqrstuvwxyz\",{\"int\":\"2\"}]]}", EXACT, false,
	  "at ['abcdefghijklmnopqrstuvwx...']: expected 1, got 2" },
	{ "bare number", "1", "1", EXACT, false, "expected 1, got malformed canonical value" },
	{ "bare real", "1.5", "1.5", EXACT, false, "malformed canonical value" },
	{ "empty object", "1", "{}", EXACT, false, "malformed canonical value" },
	{ "two tags", "1", "{\"int\":\"1\",\"float\":\"1.0\"}", EXACT, false, "malformed canonical value" },
	{ "unknown tag", "1", "{\"bogus\":\"1\"}", EXACT, false, "malformed canonical value" },
	{ "malformed deep", "[{\"k\": [1]}]",
	  "{\"list\":[{\"dict\":[[\"k\",{\"list\":[{\"num\":\"1\"}]}]]}]}", EXACT, false,
	  "at [0]['k'][0]: expected 1, got malformed canonical value" },
};

static json_t *parse(const char *text)
{
	json_error_t jerr;
	json_t *j = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
	cr_assert_not_null(j, "test JSON '%s': %s", text, jerr.text);
	return j;
}

Test(judge, call_table)
{
	for (size_t i = 0; i < sizeof(call_cases) / sizeof(call_cases[0]); i++) {
		const struct call_case *tc = &call_cases[i];
		json_t *e = parse(tc->expected), *a = parse(tc->actual);
		char why[256] = "untouched";
		bool got = ee_judge_call(e, a, tc->tol, why, sizeof(why));
		cr_expect_eq(got, tc->want, "%s: got %d (%s)", tc->name, got, why);
		if (tc->want)
			cr_expect_str_eq(why, "", "%s: reason cleared on a match", tc->name);
		else
			cr_expect_not_null(strstr(why, tc->why), "%s: reason '%s'", tc->name, why);
		json_decref(e);
		json_decref(a);
	}
}

Test(judge, call_missing_values_fail)
{
	json_t *v = json_null();
	char why[64];

	cr_expect_not(ee_judge_call(NULL, v, EXACT, why, sizeof(why)));
	cr_expect_str_eq(why, "missing value");
	cr_expect_not(ee_judge_call(v, NULL, EXACT, NULL, 0));
}

Test(judge, call_dict_key_with_nul)
{
	/* jansson's parser refuses NUL in keys; the API does not. */
	json_t *e = json_object();
	json_object_setn_new(e, "a\0b", 3, json_integer(1));
	json_t *pair = json_pack("[s%,{ss}]", "a\0b", (size_t)3, "int", "1");
	json_t *a = json_pack("{s:[o]}", "dict", pair);
	cr_assert_not_null(a);
	cr_expect(ee_judge_call(e, a, EXACT, NULL, 0));

	json_t *pair2 = json_pack("[s%,{ss}]", "a\0c", (size_t)3, "int", "1");
	json_t *a2 = json_pack("{s:[o]}", "dict", pair2);
	char why[128];
	cr_expect_not(ee_judge_call(e, a2, EXACT, why, sizeof(why)));
	cr_expect_str_eq(why, "unexpected key 'a?c'");
	json_decref(a2);
	json_decref(a);
	json_decref(e);
}

/* depth levels of [...] around 1, plain and canonical. */
static void nest(int depth, json_t **ret_e, json_t **ret_a)
{
	json_t *e = json_integer(1), *a = json_pack("{ss}", "int", "1");
	for (int i = 0; i < depth; i++) {
		e = json_pack("[o]", e);
		a = json_pack("{s:[o]}", "list", a);
	}
	cr_assert(e && a);
	*ret_e = e;
	*ret_a = a;
}

struct depth_case {
	int depth;
	bool want;
};

static const struct depth_case depth_cases[] = {
	{ 1, true }, { 50, true }, { 100, true }, { 101, false }, { 150, false }, { 1000, false },
};

Test(judge, call_depth_limit)
{
	for (size_t i = 0; i < sizeof(depth_cases) / sizeof(depth_cases[0]); i++) {
		json_t *e, *a;
		char why[256];
		nest(depth_cases[i].depth, &e, &a);
		bool got = ee_judge_call(e, a, EXACT, why, sizeof(why));
		cr_expect_eq(got, depth_cases[i].want, "depth %d: %s", depth_cases[i].depth, why);
		if (!depth_cases[i].want)
			cr_expect_not_null(strstr(why, "nesting deeper than 100"), "%s", why);
		json_decref(e);
		json_decref(a);
	}
}

Test(judge, call_long_path_is_cut)
{
	json_t *e, *a;
	char why[512];

	nest(80, &e, &a);
	/* break the innermost value: the path is 80 steps long */
	json_t *inner = a;
	for (int i = 0; i < 80; i++)
		inner = json_array_get(json_object_get(inner, "list"), 0);
	json_object_set_new(inner, "int", json_string("2"));
	cr_expect_not(ee_judge_call(e, a, EXACT, why, sizeof(why)));
	cr_expect_not_null(strstr(why, "...: expected 1, got 2"), "%s", why);
	cr_expect_lt(strlen(why), 256);
	json_decref(e);
	json_decref(a);
}

Test(judge, call_reason_buffer_optional_and_bounded)
{
	json_t *e = json_integer(3), *a = json_pack("{ss}", "int", "4");
	char why[9];

	cr_expect_not(ee_judge_call(e, a, EXACT, NULL, 0));
	cr_expect_not(ee_judge_call(e, a, EXACT, why, sizeof(why)));
	cr_expect_str_eq(why, "expected");
	json_decref(e);
	json_decref(a);
}
