/* judge_call.c - a call test's expected JSON against the returned canonical
 * value (see judge.h, ee_judge_call).
 *
 * The canonical value comes from the sandbox: the comparison is linear in
 * it, allocates only one key set per dict (to catch a forged dict that
 * repeats a key), and stops at MAX_DEPTH levels of nesting. Reasons name
 * where a value differs ("at [1]['a']: expected 3, got 4").
 */
#include "pyvalue/judge.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pyvalue/judge_int.h"

#define KEY_BYTES 24  /* of a dict key in a path */
#define SHOWN_LEN 64  /* one value as a reason shows it */
#define PATH_LEN  128 /* of the path shown in a reason */
#define PATH_CUT  ((size_t)-1)

/* Shortest %g that reads back as x, so 0.1 shows as 0.1. */
static void show_double(char dst[SHOWN_LEN], double x)
{
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(dst, SHOWN_LEN, "%.*g", prec, x);
		if (strtod(dst, NULL) == x)
			break;
	}
	/* A whole float reads as one, as Python's repr does: 2.0, not 2. */
	if (isfinite(x) && !strpbrk(dst, ".eEn"))
		strncat(dst, ".0", SHOWN_LEN - strlen(dst) - 1);
}

static void show_string(char dst[SHOWN_LEN], const json_t *s)
{
	char q[QUOTED_LEN];

	judge_quote(q, json_string_value(s), json_string_length(s), QUOTE_BYTES);
	snprintf(dst, SHOWN_LEN, "'%s'", q);
}

static void show_expected(char dst[SHOWN_LEN], const json_t *e)
{
	switch (json_typeof(e)) {
	case JSON_NULL: snprintf(dst, SHOWN_LEN, "None"); break;
	case JSON_TRUE: snprintf(dst, SHOWN_LEN, "True"); break;
	case JSON_FALSE: snprintf(dst, SHOWN_LEN, "False"); break;
	case JSON_INTEGER: snprintf(dst, SHOWN_LEN, "%" JSON_INTEGER_FORMAT, json_integer_value(e)); break;
	case JSON_REAL: show_double(dst, json_real_value(e)); break;
	case JSON_STRING: show_string(dst, e); break;
	case JSON_ARRAY: snprintf(dst, SHOWN_LEN, "list of %zu", json_array_size(e)); break;
	case JSON_OBJECT: snprintf(dst, SHOWN_LEN, "dict of %zu", json_object_size(e)); break;
	}
}

static void show_actual(char dst[SHOWN_LEN], const json_t *a)
{
	static const char *const seq_names[] = { [K_LIST] = "list",
		                                 [K_TUPLE] = "tuple",
		                                 [K_DICT] = "dict",
		                                 [K_SET] = "set",
		                                 [K_FROZENSET] = "frozenset" };
	const json_t *in;
	enum kind k = judge_kind_of(a, &in);
	char q[QUOTED_LEN];

	switch (k) {
	case K_NULL:
	case K_BOOL:
		show_expected(dst, a); /* same JSON, same Python spelling */
		break;
	case K_STR: show_string(dst, a); break;
	case K_INT:
	case K_FLOAT: judge_quote(dst, json_string_value(in), json_string_length(in), QUOTE_BYTES); break;
	case K_LIST:
	case K_TUPLE:
	case K_DICT:
	case K_SET:
	case K_FROZENSET: snprintf(dst, SHOWN_LEN, "%s of %zu", seq_names[k], json_array_size(in)); break;
	case K_COMPLEX:
	case K_TYPE: judge_show_repr(dst, SHOWN_LEN, a); break;
	case K_OTHER:
		judge_quote(q, json_string_value(in), json_string_length(in), TYPE_BYTES);
		snprintf(dst, SHOWN_LEN, "unsupported type '%s'", q);
		break;
	case K_BAD: snprintf(dst, SHOWN_LEN, "malformed canonical value"); break;
	}
}

/* State of one ee_judge_call: options, where the reason goes, and the path
 * from the root to the value being compared. */
struct ctx {
	double tol;
	char *why;
	size_t why_len;
	char path[PATH_LEN];
	size_t path_len;
	size_t cut; /* steps below the path that did not fit */
};

__attribute__((format(printf, 2, 3))) static bool mismatch(struct ctx *c, const char *fmt, ...)
{
	char reason[192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if (c->path_len || c->cut)
		return judge_say(c->why, c->why_len, "at %s%s: %s", c->path, c->cut ? "..." : "", reason);
	return judge_say(c->why, c->why_len, "%s", reason);
}

static bool differ(struct ctx *c, const json_t *e, const json_t *a)
{
	char es[SHOWN_LEN], as[SHOWN_LEN];

	show_expected(es, e);
	show_actual(as, a);
	return mismatch(c, "expected %s, got %s", es, as);
}

/* Appends a step such as [3] or ['key'] to the path; returns what
 * path_pop needs. A step that does not fit is left out, and so are those
 * below it; the reason then shows "..." for them. */
__attribute__((format(printf, 2, 3))) static size_t path_push(struct ctx *c, const char *fmt, ...)
{
	size_t old = c->path_len, room = sizeof(c->path) - old;
	va_list ap;

	if (c->cut) {
		c->cut++;
		return PATH_CUT;
	}
	va_start(ap, fmt);
	int n = vsnprintf(c->path + old, room, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= room) {
		c->path[old] = '\0';
		c->cut++;
		return PATH_CUT;
	}
	c->path_len = old + (size_t)n;
	return old;
}

static void path_pop(struct ctx *c, size_t old)
{
	if (old == PATH_CUT) {
		c->cut--;
		return;
	}
	c->path_len = old;
	c->path[old] = '\0';
}

static bool match(struct ctx *c, const json_t *e, const json_t *a, int depth);

static bool match_number(struct ctx *c, const json_t *e, const json_t *a, enum kind k, const json_t *in)
{
	struct num x, y;

	judge_num_from_expected(&x, e);
	bool ok = k == K_INT ? judge_num_from_int_text(&y, in) : judge_num_from_float_text(&y, in);
	if (!ok) {
		char q[QUOTED_LEN];
		judge_quote(q, json_string_value(in), json_string_length(in), QUOTE_BYTES);
		return mismatch(c, "malformed canonical %s '%s'", k == K_INT ? "int" : "float", q);
	}
	return judge_num_equal(&x, &y, c->tol) || differ(c, e, a);
}

/* A complex result equals a number as Python's == finds it: imaginary 0. */
static bool match_complex(struct ctx *c, const json_t *e, const json_t *a, const json_t *in)
{
	struct num x;
	double re, im;

	judge_num_from_expected(&x, e);
	if (!judge_complex_of(in, &re, &im))
		return mismatch(c, "malformed canonical complex");
	return judge_complex_equals_num(re, im, &x, c->tol) || differ(c, e, a);
}

static bool match_array(struct ctx *c, const json_t *e, const json_t *a, const json_t *items, int depth)
{
	if (json_array_size(items) != json_array_size(e))
		return differ(c, e, a);
	for (size_t i = 0; i < json_array_size(e); i++) {
		size_t old = path_push(c, "[%zu]", i);
		bool ok = match(c, json_array_get(e, i), json_array_get(items, i), depth + 1);
		path_pop(c, old);
		if (!ok)
			return false;
	}
	return true;
}

/* One [key, value] pair of a canonical dict against the expected object;
 * seen holds the keys met so far, since a forged dict may repeat one. */
static bool match_pair(struct ctx *c, const json_t *e, const json_t *pair, json_t *seen, int depth)
{
	if (!json_is_array(pair) || json_array_size(pair) != 2)
		return mismatch(c, "malformed canonical dict entry");

	const json_t *key = json_array_get(pair, 0);
	char q[QUOTED_LEN], step[QUOTED_LEN], ks[SHOWN_LEN];
	if (!json_is_string(key)) {
		show_actual(ks, key);
		return mismatch(c, "expected str keys, got key %s", ks);
	}
	const char *k = json_string_value(key);
	size_t kn = json_string_length(key);
	judge_quote(q, k, kn, QUOTE_BYTES);
	const json_t *ev = json_object_getn(e, k, kn);
	if (!ev)
		return mismatch(c, "unexpected key '%s'", q);
	if (json_object_getn(seen, k, kn))
		return mismatch(c, "malformed canonical dict: key '%s' twice", q);
	if (json_object_setn_new_nocheck(seen, k, kn, json_null()) < 0)
		return mismatch(c, "out of memory");

	judge_quote(step, k, kn, KEY_BYTES);
	size_t old = path_push(c, "['%s']", step);
	bool ok = match(c, ev, json_array_get(pair, 1), depth + 1);
	path_pop(c, old);
	return ok;
}

/* Same size and every pair's key distinct and present: the key sets match. */
static bool match_dict(struct ctx *c, const json_t *e, const json_t *a, const json_t *pairs, int depth)
{
	if (json_array_size(pairs) != json_object_size(e))
		return differ(c, e, a);

	json_t *seen = json_object();
	if (!seen)
		return mismatch(c, "out of memory");
	bool ok = true;
	for (size_t i = 0; ok && i < json_array_size(pairs); i++)
		ok = match_pair(c, e, json_array_get(pairs, i), seen, depth);
	json_decref(seen);
	return ok;
}

static bool match(struct ctx *c, const json_t *e, const json_t *a, int depth)
{
	const json_t *in;
	enum kind k = judge_kind_of(a, &in);

	if (depth > MAX_DEPTH)
		return mismatch(c, "nesting deeper than %d", MAX_DEPTH);
	switch (json_typeof(e)) {
	case JSON_NULL:
		if (k == K_NULL)
			return true;
		break;
	case JSON_TRUE:
	case JSON_FALSE:
		if (k == K_BOOL && json_typeof(a) == json_typeof(e))
			return true;
		break;
	case JSON_INTEGER:
	case JSON_REAL:
		if (k == K_INT || k == K_FLOAT)
			return match_number(c, e, a, k, in);
		if (k == K_COMPLEX)
			return match_complex(c, e, a, in);
		break;
	case JSON_STRING:
		if (k == K_STR && json_string_length(a) == json_string_length(e) &&
		    memcmp(json_string_value(a), json_string_value(e), json_string_length(e)) == 0)
			return true;
		break;
	case JSON_ARRAY:
		if (k == K_LIST || k == K_TUPLE)
			return match_array(c, e, a, in, depth);
		break;
	case JSON_OBJECT:
		if (k == K_DICT)
			return match_dict(c, e, a, in, depth);
		break;
	}
	return differ(c, e, a);
}

bool ee_judge_call(const json_t *expected, const json_t *actual, double float_tol, char *why, size_t why_len)
{
	struct ctx c = { .tol = float_tol, .why = why, .why_len = why_len };

	if (!expected || !actual)
		return judge_say(why, why_len, "missing value");
	return match(&c, expected, actual, 0) && judge_clear_reason(why, why_len);
}
