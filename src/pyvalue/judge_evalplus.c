/* judge_evalplus.c - EvalPlus's comparison of a returned value with the
 * reference's, for EvalPlus's rows and generated tests (see judge.h,
 * ee_judge_evalplus).
 *
 * EvalPlus (evalplus/eval/__init__.py, unsafe_execute) passes an output
 * that == the expected value. Else it applies a tolerance only when the
 * task's atol is not 0 or the expected value is a float or a non-empty
 * list or tuple of floats (which get atol 1e-6), and then only to an output
 * of the expected value's own type and length that numpy's
 * allclose(out, exp, rtol=1e-7, atol) finds close. numpy's part is
 * restated here: both values as arrays of one rectangular shape of numbers
 * (bool, int of at most 64 bits, float, complex), each element
 * |out - exp| <= atol + rtol * |exp| when both are finite, equal when not.
 * What numpy cannot make such an array of (str, None, dict, set, a ragged
 * list, an int past 64 bits) fails, as numpy's exception fails it there.
 * One difference, on purpose: numpy would broadcast two different shapes
 * into each other ([[1.0], [2.0]] against [[1.0, 1.0], [2.0, 2.0]]); here
 * the shapes must be the same.
 */
#include "pyvalue/judge.h"

#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pyvalue/judge_int.h"

#define EVALPLUS_RTOL       1e-7 /* numpy's allclose default, which EvalPlus states */
#define EVALPLUS_FLOAT_ATOL 1e-6 /* EvalPlus's atol for floats when the task's is 0 */

static bool is_sequence(enum kind k)
{
	return k == K_LIST || k == K_TUPLE;
}

/* EvalPlus's is_floats: a float, or a non-empty list or tuple of floats. */
static bool is_floats(const json_t *v)
{
	const json_t *in, *x, *unused;
	enum kind k = judge_kind_of(v, &in);
	size_t i;

	if (k == K_FLOAT)
		return true;
	if (!is_sequence(k) || json_array_size(in) == 0)
		return false;
	json_array_foreach (in, i, x)
		if (judge_kind_of(x, &unused) != K_FLOAT)
			return false;
	return true;
}

/* Python's type name of a canonical value, for a reason. */
static void type_name(const json_t *v, char *dst, size_t size)
{
	static const char *const names[] = {
		[K_NULL] = "NoneType",   [K_BOOL] = "bool",
		[K_STR] = "str",         [K_INT] = "int",
		[K_FLOAT] = "float",     [K_LIST] = "list",
		[K_TUPLE] = "tuple",     [K_DICT] = "dict",
		[K_SET] = "set",         [K_FROZENSET] = "frozenset",
		[K_COMPLEX] = "complex", [K_TYPE] = "type",
	};
	const json_t *in;
	enum kind k = judge_kind_of(v, &in);
	char q[QUOTED_LEN];

	if (k == K_OTHER) {
		judge_quote(q, json_string_value(in), json_string_length(in), TYPE_BYTES);
		snprintf(dst, size, "%s", q);
	} else
		snprintf(dst, size, "%s", k < K_OTHER ? names[k] : "malformed value");
}

/* An int numpy holds as a number: int64 or uint64, not an object. */
static bool fits_64_bits(const struct num *x)
{
	const char *max = x->neg ? "9223372036854775808" : "18446744073709551615";
	size_t n = strlen(max);

	return x->ndig < n || (x->ndig == n && memcmp(x->dig, max, n) <= 0);
}

/* A leaf of numpy's numeric array as a complex (a real's imaginary part 0). */
static bool leaf_number(const json_t *v, double complex *ret)
{
	const json_t *in;
	enum kind k = judge_kind_of(v, &in);
	struct num x;
	double re, im;

	switch (k) {
	case K_BOOL: *ret = json_is_true(v) ? 1.0 : 0.0; return true;
	case K_INT:
		if (!judge_num_from_int_text(&x, in) || !fits_64_bits(&x))
			return false;
		*ret = strtod(x.dig, NULL) * (x.neg ? -1.0 : 1.0);
		return true;
	case K_FLOAT:
		if (!judge_num_from_float_text(&x, in))
			return false;
		*ret = x.f;
		return true;
	case K_COMPLEX:
		if (!judge_complex_of(in, &re, &im))
			return false;
		{
			/* A complex is laid out as double[2] (C11 6.2.5): exact for
			 * inf and nan parts, where re + im * I is not, and CMPLX is
			 * not in every compiler's complex.h. */
			double parts[2] = { re, im };
			memcpy(ret, parts, sizeof(parts));
		}
		return true;
	default: return false;
	}
}

static bool is_finite(double complex z)
{
	return isfinite(creal(z)) && isfinite(cimag(z));
}

/* numpy's isclose(a, e) on two elements. */
static bool is_close(double complex a, double complex e, double atol)
{
	if (is_finite(a) && is_finite(e))
		return cabs(a - e) <= atol + EVALPLUS_RTOL * cabs(e);
	return a == e; /* inf equals the same inf; nan nothing */
}

/* The shape numpy gives e, followed through first elements; its
 * rectangularity is checked by the walk that uses it. -1 when deeper
 * than MAX_DEPTH. */
static int shape_of(const json_t *e, size_t dims[MAX_DEPTH])
{
	const json_t *in;
	int n = 0;

	while (is_sequence(judge_kind_of(e, &in))) {
		if (n == MAX_DEPTH)
			return -1;
		dims[n++] = json_array_size(in);
		if (json_array_size(in) == 0)
			break;
		e = json_array_get(in, 0);
	}
	return n;
}

/* Both values have the shape dims[d..ndim) and every pair of elements is
 * close. A list and a tuple are alike inside, as they are to numpy. */
static bool all_close(const json_t *e, const json_t *a, const size_t *dims, int d, int ndim, double atol)
{
	const json_t *ei, *ai;
	double complex x, y;

	if (d == ndim)
		return leaf_number(e, &x) && leaf_number(a, &y) && is_close(y, x, atol);
	if (!is_sequence(judge_kind_of(e, &ei)) || !is_sequence(judge_kind_of(a, &ai)) ||
	    json_array_size(ei) != dims[d] || json_array_size(ai) != dims[d])
		return false;
	for (size_t i = 0; i < dims[d]; i++)
		if (!all_close(json_array_get(ei, i), json_array_get(ai, i), dims, d + 1, ndim, atol))
			return false;
	return true;
}

static bool differ(const json_t *e, const json_t *a, bool types, char *why, size_t why_len)
{
	char es[REPR_CAP + 8], as[REPR_CAP + 8], et[QUOTED_LEN], at[QUOTED_LEN];

	judge_show_repr(es, sizeof(es), e);
	judge_show_repr(as, sizeof(as), a);
	if (!types)
		return judge_say(why, why_len, "expected %s, got %s", es, as);
	type_name(e, et, sizeof(et));
	type_name(a, at, sizeof(at));
	return judge_say(why, why_len, "expected %s, got %s (%s, not %s)", es, as, at, et);
}

bool ee_judge_evalplus(const json_t *expected, const json_t *actual, double atol, char *why, size_t why_len)
{
	const json_t *ei, *ai;
	size_t dims[MAX_DEPTH];

	if (!expected || !actual)
		return judge_say(why, why_len, "missing value");
	if (ee_judge_pyeq(expected, actual, NULL, 0))
		return judge_clear_reason(why, why_len);
	if (!(atol > 0) && is_floats(expected))
		atol = EVALPLUS_FLOAT_ATOL;
	if (!(atol > 0)) /* an int, a str, ...: == or nothing */
		return differ(expected, actual, false, why, why_len);
	/* EvalPlus's type(out) == type(exp): a bool is not an int, a float not an int */
	enum kind ek = judge_kind_of(expected, &ei), ak = judge_kind_of(actual, &ai);
	if (ek != ak)
		return differ(expected, actual, true, why, why_len);
	int ndim = shape_of(expected, dims);
	if (ndim < 0 || !all_close(expected, actual, dims, 0, ndim, atol))
		return differ(expected, actual, false, why, why_len);
	return judge_clear_reason(why, why_len);
}
