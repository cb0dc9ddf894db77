/* judge_pyeq.c - Python's == between two canonical values, for strict
 * asserts (see judge.h, ee_judge_pyeq and ee_judge_pykey).
 *
 * Dicts and sets compare through keys that equal values share (pykey), so a
 * comparison is linear in its input; recursion stops at MAX_DEPTH.
 */
#include "pyvalue/judge.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "pyvalue/judge_int.h"

#define KEY_CAP (4u << 20) /* bytes of one hashable value's key */

static bool is_number_kind(enum kind k)
{
	return k == K_BOOL || k == K_INT || k == K_FLOAT;
}

/* bool, int or float as a struct num (True is the integer 1). */
static bool num_from_canonical(struct num *x, const json_t *v, enum kind k, const json_t *in)
{
	if (k == K_BOOL) {
		snprintf(x->store, sizeof(x->store), "%d", json_is_true(v) ? 1 : 0);
		return judge_num_set_integer(x, x->store, 1);
	}
	return k == K_INT ? judge_num_from_int_text(x, in) : judge_num_from_float_text(x, in);
}

static int key_int(struct ee_buf *out, const struct num *x)
{
	if (ee_buf_append(out, x->neg ? "I-" : "I", x->neg ? 2 : 1) < 0 ||
	    ee_buf_append(out, x->dig, x->ndig) < 0)
		return -1;
	return ee_buf_append(out, ";", 1);
}

/* Equal numbers share a key: integral floats take the integer's, a complex
 * whose imaginary part is 0 its real part's. */
static int key_number(struct ee_buf *out, const json_t *v, enum kind k, const json_t *in)
{
	struct num x, whole;
	char text[80];
	double re, im;

	if (k == K_COMPLEX) {
		if (!judge_complex_of(in, &re, &im) || isnan(re) || isnan(im))
			return -1;
		if (im != 0.0) {
			int n = snprintf(text, sizeof(text), "C%a,%a;", re == 0.0 ? 0.0 : re, im);
			return ee_buf_append(out, text, (size_t)n);
		}
		x.is_float = true;
		x.f = re;
	} else if (!num_from_canonical(&x, v, k, in))
		return -1;
	if (!x.is_float)
		return key_int(out, &x);
	if (isnan(x.f))
		return -1; /* equal to nothing, not even itself */
	if (isfinite(x.f) && x.f == trunc(x.f)) {
		int n = snprintf(whole.store, sizeof(whole.store), "%.0f", x.f);
		if (n < 0 || (size_t)n >= sizeof(whole.store) ||
		    !judge_num_set_integer(&whole, whole.store, (size_t)n))
			return -1;
		return key_int(out, &whole);
	}
	int n = snprintf(text, sizeof(text), "F%a;", x.f);
	return ee_buf_append(out, text, (size_t)n);
}

static int pykey(const json_t *v, struct ee_buf *out, int depth)
{
	const json_t *in;
	enum kind k = judge_kind_of(v, &in);
	char head[32];

	if (depth > MAX_DEPTH)
		return -1;
	if (is_number_kind(k) || k == K_COMPLEX)
		return key_number(out, v, k, in);
	if (k == K_NULL)
		return ee_buf_append(out, "N", 1);
	if (k == K_STR || k == K_TYPE) {
		const json_t *text = k == K_STR ? v : in;
		int n = snprintf(head, sizeof(head), "%c%zu:", k == K_STR ? 'S' : 'Y',
		                 json_string_length(text));
		if (ee_buf_append(out, head, (size_t)n) < 0)
			return -1;
		return ee_buf_append(out, json_string_value(text), json_string_length(text));
	}
	if (k != K_TUPLE)
		return -1; /* unhashable, "other" (never equal here) or malformed */
	if (ee_buf_append(out, "T(", 2) < 0)
		return -1;
	for (size_t i = 0; i < json_array_size(in); i++)
		if (pykey(json_array_get(in, i), out, depth + 1) < 0)
			return -1;
	return ee_buf_append(out, ")", 1);
}

int ee_judge_pykey(const json_t *v, struct ee_buf *out)
{
	return v && out ? pykey(v, out, 0) : -1;
}

static bool pyeq(const json_t *e, const json_t *a, int depth);

/* Maps the key of every expected element to its index; NULL when one is
 * unhashable or two are equal (pyliteral.c never produces either). */
static json_t *index_keys(const json_t *items, bool pairs)
{
	json_t *index = json_object();
	struct ee_buf key;

	ee_buf_init(&key, KEY_CAP);
	for (size_t i = 0; index && i < json_array_size(items); i++) {
		const json_t *item = json_array_get(items, i);
		if (pairs)
			item = json_is_array(item) && json_array_size(item) == 2 ? json_array_get(item, 0)
			                                                         : NULL;
		ee_buf_reset(&key);
		if (!item || pykey(item, &key, 0) < 0 || json_object_getn(index, key.data, key.len) ||
		    json_object_setn_new_nocheck(index, key.data, key.len, json_integer((json_int_t)i)) < 0) {
			json_decref(index);
			index = NULL;
		}
	}
	ee_buf_free(&key);
	return index;
}

/* Dicts (pairs) or sets: same size, and each actual element (key) equals a
 * distinct expected one, whose value then must equal too. */
static bool pyeq_unordered(const json_t *e, const json_t *a, bool pairs, int depth)
{
	size_t n = json_array_size(e);
	struct ee_buf key;
	bool ok = n == json_array_size(a);

	if (!ok)
		return false;
	json_t *index = index_keys(e, pairs);
	bool *used = calloc(n + 1, sizeof(*used));
	ee_buf_init(&key, KEY_CAP);
	ok = index && used;
	for (size_t i = 0; ok && i < n; i++) {
		const json_t *item = json_array_get(a, i), *val = NULL;
		if (pairs) {
			ok = json_is_array(item) && json_array_size(item) == 2;
			val = ok ? json_array_get(item, 1) : NULL;
			item = ok ? json_array_get(item, 0) : NULL;
		}
		ee_buf_reset(&key);
		const json_t *at =
		        ok && pykey(item, &key, 0) == 0 ? json_object_getn(index, key.data, key.len) : NULL;
		size_t j = at ? (size_t)json_integer_value(at) : n;
		ok = at && !used[j];
		if (ok)
			used[j] = true;
		if (ok && pairs)
			ok = pyeq(json_array_get(json_array_get(e, j), 1), val, depth + 1);
	}
	ee_buf_free(&key);
	free(used);
	json_decref(index);
	return ok;
}

/* A complex against a number or a complex, as Python's complex.__eq__. */
static bool pyeq_complex(const json_t *e, enum kind ek, const json_t *ei, const json_t *a, enum kind ak,
                         const json_t *ai)
{
	double re1, im1, re2, im2;
	struct num x;

	if (ek == K_COMPLEX && ak == K_COMPLEX)
		return judge_complex_of(ei, &re1, &im1) && judge_complex_of(ai, &re2, &im2) &&
		       judge_complex_equal(re1, im1, re2, im2, -1.0);
	if (ek == K_COMPLEX)
		return judge_complex_of(ei, &re1, &im1) && num_from_canonical(&x, a, ak, ai) &&
		       judge_complex_equals_num(re1, im1, &x, -1.0);
	return judge_complex_of(ai, &re2, &im2) && num_from_canonical(&x, e, ek, ei) &&
	       judge_complex_equals_num(re2, im2, &x, -1.0);
}

static bool pyeq(const json_t *e, const json_t *a, int depth)
{
	const json_t *ei, *ai;
	enum kind ek = judge_kind_of(e, &ei), ak = judge_kind_of(a, &ai);

	if (depth > MAX_DEPTH || ek == K_BAD || ak == K_BAD || ek == K_OTHER || ak == K_OTHER)
		return false;
	if ((ek == K_COMPLEX && (is_number_kind(ak) || ak == K_COMPLEX)) ||
	    (ak == K_COMPLEX && is_number_kind(ek)))
		return pyeq_complex(e, ek, ei, a, ak, ai);
	if (is_number_kind(ek) && is_number_kind(ak)) {
		struct num x, y;
		return num_from_canonical(&x, e, ek, ei) && num_from_canonical(&y, a, ak, ai) &&
		       judge_num_equal(&x, &y, -1.0);
	}
	bool sets = (ek == K_SET || ek == K_FROZENSET) && (ak == K_SET || ak == K_FROZENSET);
	if (ek != ak && !sets)
		return false;
	switch (ek) {
	case K_NULL: return true;
	case K_STR:
	case K_TYPE: /* builtin types: one object per name */
		if (ek == K_TYPE) {
			e = ei;
			a = ai;
		}
		return json_string_length(e) == json_string_length(a) &&
		       memcmp(json_string_value(e), json_string_value(a), json_string_length(e)) == 0;
	case K_LIST:
	case K_TUPLE:
		if (json_array_size(ei) != json_array_size(ai))
			return false;
		for (size_t i = 0; i < json_array_size(ei); i++)
			if (!pyeq(json_array_get(ei, i), json_array_get(ai, i), depth + 1))
				return false;
		return true;
	case K_DICT: return pyeq_unordered(ei, ai, true, depth);
	case K_SET:
	case K_FROZENSET: return pyeq_unordered(ei, ai, false, depth);
	default: return false;
	}
}

bool ee_judge_pyeq(const json_t *expected, const json_t *actual, char *why, size_t why_len)
{
	char es[REPR_CAP + 8], as[REPR_CAP + 8];

	if (!expected || !actual)
		return judge_say(why, why_len, "missing value");
	if (pyeq(expected, actual, 0))
		return judge_clear_reason(why, why_len);
	judge_show_repr(es, sizeof(es), expected);
	judge_show_repr(as, sizeof(as), actual);
	return judge_say(why, why_len, "expected %s, got %s", es, as);
}
