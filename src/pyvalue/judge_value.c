/* judge_value.c - the values both sides send: numbers and canonical kinds
 * (see judge_int.h).
 *
 * Expected numbers are jansson integers (int64) or reals (double); actual
 * ones are decimal strings of any size ({"int"}) or float reprs ({"float"}).
 * Integers compare as normalised decimal strings (sign, no leading zeros), so
 * size never loses precision. An integer against a float compares exactly,
 * as Python does: the float must be integral and its exact decimal expansion
 * ("%.0f" is exact in glibc) must equal the digits. Only a tolerance turns
 * numbers into doubles. Float text is read with strtod, so the process must
 * keep the "C" LC_NUMERIC locale (the default).
 */
#include "pyvalue/judge_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NUM_TEXT_MAX   128 /* longer number text is compared as text */
#define INT_DIGITS_MAX 310 /* more digits than any finite double has */

static bool is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

/* --------------------------------------------------------------- numbers */

/* [+-]digits[.digits][e[+-]digits], digits on at least one side of '.'. */
static bool is_decimal(const char *s, size_t n)
{
	size_t i = 0, digits = 0, exp_digits = 0;

	if (i < n && (s[i] == '+' || s[i] == '-'))
		i++;
	for (; i < n && is_digit(s[i]); i++)
		digits++;
	if (i < n && s[i] == '.')
		for (i++; i < n && is_digit(s[i]); i++)
			digits++;
	if (digits == 0)
		return false;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		for (; i < n && is_digit(s[i]); i++)
			exp_digits++;
		if (exp_digits == 0)
			return false;
	}
	return i == n;
}

/* Reads s[0..n) as a decimal number (strictly: no hex, inf or nan). */
bool judge_parse_decimal(const char *s, size_t n, double *ret)
{
	char buf[NUM_TEXT_MAX];

	if (n >= sizeof(buf) || !is_decimal(s, n))
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	*ret = strtod(buf, NULL);
	return true;
}

/* |actual - expected| <= tol * max(1, |expected|), finite values only. */
bool judge_within(double actual, double expected, double tol)
{
	if (isnan(actual) || isnan(expected))
		return false;
	if (actual == expected)
		return true;
	if (!isfinite(actual) || !isfinite(expected))
		return false;
	return fabs(actual - expected) <= tol * fmax(1.0, fabs(expected));
}

/* Sets the integer from [+-]digits s[0..n), which must be NUL-terminated. */
bool judge_num_set_integer(struct num *x, const char *s, size_t n)
{
	size_t i = 0;

	x->is_float = false;
	x->neg = n > 0 && s[0] == '-';
	if (n > 0 && (s[0] == '-' || s[0] == '+'))
		i++;
	if (i == n)
		return false;
	for (size_t j = i; j < n; j++)
		if (!is_digit(s[j]))
			return false;
	while (i + 1 < n && s[i] == '0')
		i++;
	x->dig = s + i;
	x->ndig = n - i;
	if (x->ndig == 1 && x->dig[0] == '0')
		x->neg = false; /* -0 is 0 */
	return true;
}

static void set_float(struct num *x, double f)
{
	x->is_float = true;
	x->f = f;
}

void judge_num_from_expected(struct num *x, const json_t *e)
{
	if (json_is_real(e)) {
		set_float(x, json_real_value(e));
		return;
	}
	int n = snprintf(x->store, sizeof(x->store), "%" JSON_INTEGER_FORMAT, json_integer_value(e));
	judge_num_set_integer(x, x->store, (size_t)n);
}

/* {"int": "<decimal>"}: strictly [+-]digits. */
bool judge_num_from_int_text(struct num *x, const json_t *s)
{
	return judge_num_set_integer(x, json_string_value(s), json_string_length(s));
}

/* {"float": "<repr>"}: a decimal, or Python's "nan", "inf", "-inf". */
bool judge_num_from_float_text(struct num *x, const json_t *s)
{
	const char *t = json_string_value(s);
	size_t n = json_string_length(s);
	double f;

	if (n == 3 && memcmp(t, "nan", 3) == 0)
		f = NAN;
	else if (n == 3 && memcmp(t, "inf", 3) == 0)
		f = INFINITY;
	else if (n == 4 && memcmp(t, "-inf", 4) == 0)
		f = -INFINITY;
	else if (!judge_parse_decimal(t, n, &f))
		return false;
	set_float(x, f);
	return true;
}

static double num_value(const struct num *x)
{
	if (x->is_float)
		return x->f;
	/* Past DBL_MAX (309 digits) the value is inf; deciding that here also
	 * keeps a forged million-digit integer away from strtod. */
	double v = x->ndig > INT_DIGITS_MAX ? INFINITY : strtod(x->dig, NULL);
	return x->neg ? -v : v;
}

static bool same_integer(const struct num *a, const struct num *b)
{
	return a->neg == b->neg && a->ndig == b->ndig && memcmp(a->dig, b->dig, a->ndig) == 0;
}

/* Python's int == float: exact, so the float must be integral. */
static bool integer_equals_float(const struct num *i, double f)
{
	struct num exact;

	if (!isfinite(f) || f != trunc(f))
		return false;
	int n = snprintf(exact.store, sizeof(exact.store), "%.0f", f);
	if (n < 0 || (size_t)n >= sizeof(exact.store))
		return false; /* cannot happen: |f| < 2^1024 has 309 digits */
	judge_num_set_integer(&exact, exact.store, (size_t)n);
	return same_integer(i, &exact);
}

bool judge_num_equal(const struct num *e, const struct num *a, double tol)
{
	if (!e->is_float && !a->is_float)
		return same_integer(e, a);
	if (tol >= 0.0)
		return judge_within(num_value(a), num_value(e), tol);
	if (e->is_float && a->is_float)
		return e->f == a->f; /* false for nan, as in Python */
	return e->is_float ? integer_equals_float(a, e->f) : integer_equals_float(e, a->f);
}

bool judge_complex_of(const json_t *in, double *re, double *im)
{
	struct num r, i;
	const json_t *a = json_array_get(in, 0), *b = json_array_get(in, 1);

	if (json_array_size(in) != 2 || !json_is_string(a) || !json_is_string(b) ||
	    !judge_num_from_float_text(&r, a) || !judge_num_from_float_text(&i, b))
		return false;
	*re = r.f;
	*im = i.f;
	return true;
}

bool judge_complex_equals_num(double re, double im, const struct num *x, double tol)
{
	struct num real;

	set_float(&real, re);
	if (tol >= 0.0)
		return judge_within(im, 0.0, tol) && judge_num_equal(x, &real, tol);
	return im == 0.0 && judge_num_equal(x, &real, -1.0);
}

bool judge_complex_equal(double re1, double im1, double re2, double im2, double tol)
{
	if (tol >= 0.0)
		return judge_within(re2, re1, tol) && judge_within(im2, im1, tol);
	return re1 == re2 && im1 == im2; /* false for nan, as in Python */
}

/* ------------------------------------------------------- canonical values */

/* The tagged forms of docs/protocol.md: one key, a value of one type. */
static const struct {
	const char *tag;
	enum kind kind;
	json_type type;
} tags[] = {
	{ "int", K_INT, JSON_STRING },
	{ "float", K_FLOAT, JSON_STRING },
	{ "list", K_LIST, JSON_ARRAY },
	{ "tuple", K_TUPLE, JSON_ARRAY },
	{ "dict", K_DICT, JSON_ARRAY },
	{ "set", K_SET, JSON_ARRAY },
	{ "frozenset", K_FROZENSET, JSON_ARRAY },
	{ "complex", K_COMPLEX, JSON_ARRAY },
	{ "type", K_TYPE, JSON_STRING },
	{ "other", K_OTHER, JSON_STRING },
};

/* The kind of canonical value a; *inner is the tagged payload. */
enum kind judge_kind_of(const json_t *a, const json_t **inner)
{
	*inner = NULL;
	switch (json_typeof(a)) {
	case JSON_NULL: return K_NULL;
	case JSON_TRUE:
	case JSON_FALSE: return K_BOOL;
	case JSON_STRING: return K_STR;
	case JSON_OBJECT: break;
	default: return K_BAD; /* bare numbers and arrays are not canonical */
	}
	if (json_object_size(a) != 1)
		return K_BAD;
	for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
		const json_t *v = json_object_get(a, tags[i].tag);
		if (v) {
			*inner = v;
			return json_typeof(v) == tags[i].type ? tags[i].kind : K_BAD;
		}
	}
	return K_BAD;
}
