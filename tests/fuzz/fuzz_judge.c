/* fuzz_judge.c - both judges on hostile input.
 *
 * Input: two parts split at the first NUL byte. ee_judge_io compares them as
 * texts (and each with itself: always a match), under every rule of
 * ee_judge_io_by too. When both parse as JSON,
 * ee_judge_call compares them, and the first is also compared with its own
 * canonical form, built here, which must match unless it nests deeper than
 * the judge's limit. Every reason must be printable UTF-8. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pyvalue/judge.h"
#include "base/text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define JUDGE_MAX_DEPTH 100

static void check_reason(const char *why)
{
	size_t n = strlen(why);

	for (size_t i = 0; i < n;) {
		size_t len = ee_utf8_char_len(why + i, n - i);
		if (len == 0 || (len == 1 && (unsigned char)why[i] < 0x20))
			abort();
		i += len;
	}
}

/* The canonical form the harness would send for plain JSON v; *depth
 * receives the most containers any value in v sits in (a scalar or an empty
 * container is a leaf). NULL on allocation failure. */
static json_t *canonical(const json_t *v, int *depth)
{
	char num[64];
	json_t *out = NULL, *items;
	const char *key;
	json_t *val;
	int d = 0;

	*depth = 0;
	switch (json_typeof(v)) {
	case JSON_NULL:
	case JSON_TRUE:
	case JSON_FALSE:
	case JSON_STRING: return json_deep_copy(v);
	case JSON_INTEGER:
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return json_pack("{ss}", "int", num);
	case JSON_REAL:
		snprintf(num, sizeof(num), "%.17g", json_real_value(v));
		return json_pack("{ss}", "float", num);
	case JSON_ARRAY:
		items = json_array();
		for (size_t i = 0; items && i < json_array_size(v); i++) {
			json_array_append_new(items, canonical(json_array_get(v, i), &d));
			if (d + 1 > *depth)
				*depth = d + 1;
		}
		out = json_pack("{so}", "list", items);
		break;
	case JSON_OBJECT:
		items = json_array();
		json_object_foreach ((json_t *)v, key, val) {
			json_t *pair = json_pack("[so]", key, canonical(val, &d));
			json_array_append_new(items, pair);
			if (d + 1 > *depth)
				*depth = d + 1;
		}
		out = json_pack("{so}", "dict", items);
		break;
	}
	return out;
}

static void judge_json(const char *a, size_t an, const char *b, size_t bn)
{
	json_t *ja = json_loadb(a, an, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	json_t *jb = json_loadb(b, bn, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	char why[256];

	if (ja && jb) {
		ee_judge_call(ja, jb, -1.0, why, sizeof(why));
		check_reason(why);
		ee_judge_call(ja, jb, 1e-6, why, sizeof(why));
		check_reason(why);
	}
	if (ja) {
		int depth;
		json_t *canon = canonical(ja, &depth);
		if (canon) {
			bool same = ee_judge_call(ja, canon, -1.0, why, sizeof(why));
			check_reason(why);
			if (same != (depth <= JUDGE_MAX_DEPTH))
				abort();
			json_decref(canon);
		}
	}
	json_decref(ja);
	json_decref(jb);
}

/* Every comparison rule: a printable reason, and each text matches itself. */
static void judge_rules(const char *a, size_t an, const char *b, size_t bn)
{
	static const char *const rules[] = { "exact", "rstrip:ci", "tokens", "numeric",
		                             "numeric:abs=0,rel=0,ci" };
	char why[256];

	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		struct ee_compare c;
		if (ee_compare_parse(rules[i], &c, NULL, 0) < 0)
			abort();
		ee_judge_io_by(&c, a, an, b, bn, -1.0, why, sizeof(why));
		check_reason(why);
		if (!ee_judge_io_by(&c, a, an, a, an, 1e-6, why, sizeof(why)))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	const char *nul = memchr(s, '\0', size);
	size_t an = nul ? (size_t)(nul - s) : size / 2;
	const char *b = s + an + (nul ? 1 : 0);
	size_t bn = size - (size_t)(b - s);
	char why[256];

	ee_judge_io(s, an, b, bn, -1.0, why, sizeof(why));
	check_reason(why);
	ee_judge_io(s, an, b, bn, 1e-6, why, sizeof(why));
	check_reason(why);
	if (!ee_judge_io(s, an, s, an, -1.0, why, sizeof(why)) ||
	    !ee_judge_io(b, bn, b, bn, 1e-6, why, sizeof(why)))
		abort(); /* every text matches itself */
	judge_rules(s, an, b, bn);
	judge_json(s, an, b, bn);
	return 0;
}
