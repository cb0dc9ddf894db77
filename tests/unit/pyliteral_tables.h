/* pyliteral_tables.h - what the tests of the literal reader, the assert
 * shape and Python's == share: the tables of pyliteral_cases.h, generated
 * from Python itself (tests/unit/pyliteral_ref.py): what literal_eval reads,
 * what it refuses, what `expected == actual` says, which asserts have the
 * shape. */
#ifndef PYLITERAL_TABLES_H
#define PYLITERAL_TABLES_H

#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "pyvalue/pyliteral.h"

struct lit_case {
	const char *src;
	const char *canonical; /* Python's value, canonical JSON */
	int has_set;           /* set order may differ: compare with == only */
};

struct pyeq_case {
	const char *expected_src;
	const char *actual; /* canonical JSON of the actual value */
	int want;
	int other; /* Python says equal, strict mode says no ("other") */
};

struct shape_case {
	const char *code;
	int converts;
};

#include "pyliteral_cases.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static inline json_t *load(const char *text)
{
	json_error_t e;
	json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
	cr_assert(v, "bad JSON in the table: %s (%s)", text, e.text);
	return v;
}

static inline json_t *parse(const char *src)
{
	return ee_pyliteral_parse(src, strlen(src));
}

#endif
