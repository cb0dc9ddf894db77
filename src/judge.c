/* judge.c - comparing io output and call return values with the expected.
 *
 * Both inputs are hostile in part: the actual output and the canonical value
 * come from the sandbox. Everything here is therefore linear in the input,
 * allocation-free except for one key set per dict (to catch a forged dict
 * that repeats a key), and recursion stops at MAX_DEPTH levels of nesting.
 *
 * Numbers. Expected numbers are jansson integers (int64) or reals (double);
 * actual ones are decimal strings of any size ({"int"}) or float reprs
 * ({"float"}). Integers compare as normalised decimal strings (sign, no
 * leading zeros), so size never loses precision. An integer against a float
 * compares exactly, as Python does: the float must be integral and its exact
 * decimal expansion ("%.0f" is exact in glibc) must equal the digits. Only a
 * tolerance turns numbers into doubles. Float text is read with strtod, so
 * the process must keep the "C" LC_NUMERIC locale (the default).
 *
 * Reasons name where a value differs ("at [1]['a']: expected 3, got 4") and
 * show at most QUOTE_BYTES of any untrusted text, with control bytes and
 * ill-formed UTF-8 replaced by '?', so a reason is always printable UTF-8.
 */
#include "judge.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "text.h"

#define MAX_DEPTH      100               /* beyond this a value is a mismatch */
#define QUOTE_BYTES    40                /* of a line or value shown in a reason */
#define TYPE_BYTES     16                /* of a type name */
#define KEY_BYTES      24                /* of a dict key in a path */
#define QUOTED_LEN     (QUOTE_BYTES + 4) /* what quote() writes: text, "...", NUL */
#define SHOWN_LEN      64                /* one value as a reason shows it */
#define NUM_TEXT_MAX   128               /* longer number text is compared as text */
#define INT_DIGITS_MAX 310               /* more digits than any finite double has */
#define PATH_LEN       128               /* of the path shown in a reason */
#define PATH_CUT       ((size_t)-1)

/* ------------------------------------------------------------------ text */

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f';
}

static bool is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

/* Control characters as Python writes them: a tab is \t, not a '?'. */
static const char *control_escape(unsigned char ch)
{
	return ch == '\t' ? "\\t" : ch == '\r' ? "\\r" : ch == '\n' ? "\\n" : "?";
}

/* Writes at most max (<= QUOTE_BYTES) bytes of src[0..n) into dst as
 * printable UTF-8, cut between characters, with "..." when cut. */
static void quote(char dst[QUOTED_LEN], const char *src, size_t n, size_t max)
{
	size_t i = 0, o = 0;

	while (i < n) {
		size_t len = ee_utf8_char_len(src + i, n - i);
		unsigned char ch = (unsigned char)src[i];
		bool shown = len > 1 || (len == 1 && ch >= 0x20 && ch != 0x7f);
		const char *esc = shown ? NULL : control_escape(ch);
		size_t out = shown ? len : strlen(esc);
		if (o + out > max)
			break;
		memcpy(dst + o, shown ? src + i : esc, out);
		o += out;
		i += shown ? len : 1;
	}
	if (i < n) {
		memcpy(dst + o, "...", 3);
		o += 3;
	}
	dst[o] = '\0';
}

/* Drops a character that a cut left incomplete at the end of s. */
static void trim_partial_char(char *s)
{
	size_t len = strlen(s), start = len;

	while (start > 0 && ((unsigned char)s[start - 1] & 0xC0) == 0x80)
		start--;
	if (start > 0 && ee_utf8_char_len(s + start - 1, len - start + 1) == 0)
		s[start - 1] = '\0';
}

static bool clear_reason(char *why, size_t why_len)
{
	if (why && why_len > 0)
		why[0] = '\0';
	return true;
}

/* Writes the reason (when the caller wants one); returns false, the verdict
 * that always comes with a reason. */
__attribute__((format(printf, 3, 4))) static bool say(char *why, size_t why_len, const char *fmt, ...)
{
	if (why && why_len > 0) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(why, why_len, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n >= why_len)
			trim_partial_char(why);
	}
	return false;
}

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
static bool parse_decimal(const char *s, size_t n, double *ret)
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
static bool within(double actual, double expected, double tol)
{
	if (isnan(actual) || isnan(expected))
		return false;
	if (actual == expected)
		return true;
	if (!isfinite(actual) || !isfinite(expected))
		return false;
	return fabs(actual - expected) <= tol * fmax(1.0, fabs(expected));
}

/* -------------------------------------------------------------------- io */

static size_t rstrip(const char *s, size_t n)
{
	while (n > 0 && is_blank(s[n - 1]))
		n--;
	return n;
}

/* Splits text into lines; \r of \r\n goes with the trailing whitespace. */
struct lines {
	const char *s;
	size_t len;
	size_t pos;
};

static bool take_line(struct lines *t, const char **line, size_t *n)
{
	if (t->pos >= t->len)
		return false;
	const char *start = t->s + t->pos;
	const char *nl = memchr(start, '\n', t->len - t->pos);
	size_t raw = nl ? (size_t)(nl - start) : t->len - t->pos;
	*line = start;
	*n = rstrip(start, raw);
	t->pos += raw + 1;
	return true;
}

/* Lines up to and including the last one that is not blank. */
static size_t count_lines(const char *s, size_t len)
{
	struct lines t = { s, len, 0 };
	const char *line;
	size_t n, lines = 0, last = 0;

	while (take_line(&t, &line, &n)) {
		lines++;
		if (n > 0)
			last = lines;
	}
	return last;
}

static bool take_token(const char *s, size_t n, size_t *pos, const char **tok, size_t *tok_len)
{
	size_t i = *pos;

	while (i < n && is_blank(s[i]))
		i++;
	if (i == n)
		return false;
	size_t start = i;
	while (i < n && !is_blank(s[i]))
		i++;
	*tok = s + start;
	*tok_len = i - start;
	*pos = i;
	return true;
}

static bool tokens_equal(const char *e, size_t en, const char *a, size_t an, double tol)
{
	double x, y;

	if (en == an && memcmp(e, a, en) == 0)
		return true;
	if (!parse_decimal(e, en, &x) || !parse_decimal(a, an, &y))
		return false;
	return isfinite(x) && isfinite(y) && within(y, x, tol);
}

static bool lines_equal(const char *e, size_t en, const char *a, size_t an, double tol)
{
	size_t ep = 0, ap = 0;

	if (!(tol >= 0.0))
		return en == an && memcmp(e, a, en) == 0;
	for (;;) {
		const char *et, *at;
		size_t etl, atl;
		bool more_e = take_token(e, en, &ep, &et, &etl);
		bool more_a = take_token(a, an, &ap, &at, &atl);
		if (!more_e || !more_a)
			return more_e == more_a;
		if (!tokens_equal(et, etl, at, atl, tol))
			return false;
	}
}

static bool io_differ(char *why, size_t why_len, size_t line_no, const char *e, size_t en, const char *a,
                      size_t an)
{
	char es[QUOTED_LEN], as[QUOTED_LEN];

	quote(es, e ? e : "", en, QUOTE_BYTES);
	quote(as, a ? a : "", an, QUOTE_BYTES);
	if (!a)
		return say(why, why_len, "line %zu: expected '%s', got end of output", line_no, es);
	if (!e)
		return say(why, why_len, "line %zu: expected end of output, got '%s'", line_no, as);
	return say(why, why_len, "line %zu: expected '%s', got '%s'", line_no, es, as);
}

bool ee_judge_io(const char *expected, size_t expected_len, const char *actual, size_t actual_len,
                 double float_tol, char *why, size_t why_len)
{
	if ((!expected && expected_len) || (!actual && actual_len))
		return say(why, why_len, "missing text");

	size_t ne = count_lines(expected, expected_len), na = count_lines(actual, actual_len);
	struct lines et = { expected, expected_len, 0 }, at = { actual, actual_len, 0 };

	for (size_t i = 0; i < ne || i < na; i++) {
		const char *e = NULL, *a = NULL;
		size_t en = 0, an = 0;
		if (i < ne)
			take_line(&et, &e, &en);
		if (i < na)
			take_line(&at, &a, &an);
		if (!e || !a || !lines_equal(e, en, a, an, float_tol))
			return io_differ(why, why_len, i + 1, e, en, a, an);
	}
	return clear_reason(why, why_len);
}

/* --------------------------------------------------------------- numbers */

/* A number from either side. An integer is kept as sign and digits. */
struct num {
	bool is_float;
	double f;        /* is_float */
	bool neg;        /* !is_float: true only for values below zero */
	const char *dig; /* !is_float: no leading zeros, NUL-terminated */
	size_t ndig;
	char store[400]; /* digits of an int64 or of an integral double */
};

/* Sets the integer from [+-]digits s[0..n), which must be NUL-terminated. */
static bool set_integer(struct num *x, const char *s, size_t n)
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

static void num_from_expected(struct num *x, const json_t *e)
{
	if (json_is_real(e)) {
		set_float(x, json_real_value(e));
		return;
	}
	int n = snprintf(x->store, sizeof(x->store), "%" JSON_INTEGER_FORMAT, json_integer_value(e));
	set_integer(x, x->store, (size_t)n);
}

/* {"int": "<decimal>"}: strictly [+-]digits. */
static bool num_from_int_text(struct num *x, const json_t *s)
{
	return set_integer(x, json_string_value(s), json_string_length(s));
}

/* {"float": "<repr>"}: a decimal, or Python's "nan", "inf", "-inf". */
static bool num_from_float_text(struct num *x, const json_t *s)
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
	else if (!parse_decimal(t, n, &f))
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
	set_integer(&exact, exact.store, (size_t)n);
	return same_integer(i, &exact);
}

static bool num_equal(const struct num *e, const struct num *a, double tol)
{
	if (!e->is_float && !a->is_float)
		return same_integer(e, a);
	if (tol >= 0.0)
		return within(num_value(a), num_value(e), tol);
	if (e->is_float && a->is_float)
		return e->f == a->f; /* false for nan, as in Python */
	return e->is_float ? integer_equals_float(a, e->f) : integer_equals_float(e, a->f);
}

/* ------------------------------------------------------- canonical values */

enum kind {
	K_NULL,
	K_BOOL,
	K_STR,
	K_INT,
	K_FLOAT,
	K_LIST,
	K_TUPLE,
	K_DICT,
	K_SET,
	K_FROZENSET,
	K_OTHER,
	K_BAD
};

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
	{ "other", K_OTHER, JSON_STRING },
};

/* The kind of canonical value a; *inner is the tagged payload. */
static enum kind kind_of(const json_t *a, const json_t **inner)
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

	quote(q, json_string_value(s), json_string_length(s), QUOTE_BYTES);
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
	enum kind k = kind_of(a, &in);
	char q[QUOTED_LEN];

	switch (k) {
	case K_NULL:
	case K_BOOL:
		show_expected(dst, a); /* same JSON, same Python spelling */
		break;
	case K_STR: show_string(dst, a); break;
	case K_INT:
	case K_FLOAT: quote(dst, json_string_value(in), json_string_length(in), QUOTE_BYTES); break;
	case K_LIST:
	case K_TUPLE:
	case K_DICT:
	case K_SET:
	case K_FROZENSET: snprintf(dst, SHOWN_LEN, "%s of %zu", seq_names[k], json_array_size(in)); break;
	case K_OTHER:
		quote(q, json_string_value(in), json_string_length(in), TYPE_BYTES);
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
		return say(c->why, c->why_len, "at %s%s: %s", c->path, c->cut ? "..." : "", reason);
	return say(c->why, c->why_len, "%s", reason);
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

	num_from_expected(&x, e);
	bool ok = k == K_INT ? num_from_int_text(&y, in) : num_from_float_text(&y, in);
	if (!ok) {
		char q[QUOTED_LEN];
		quote(q, json_string_value(in), json_string_length(in), QUOTE_BYTES);
		return mismatch(c, "malformed canonical %s '%s'", k == K_INT ? "int" : "float", q);
	}
	return num_equal(&x, &y, c->tol) || differ(c, e, a);
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
	quote(q, k, kn, QUOTE_BYTES);
	const json_t *ev = json_object_getn(e, k, kn);
	if (!ev)
		return mismatch(c, "unexpected key '%s'", q);
	if (json_object_getn(seen, k, kn))
		return mismatch(c, "malformed canonical dict: key '%s' twice", q);
	if (json_object_setn_new_nocheck(seen, k, kn, json_null()) < 0)
		return mismatch(c, "out of memory");

	quote(step, k, kn, KEY_BYTES);
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
	enum kind k = kind_of(a, &in);

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
		return say(why, why_len, "missing value");
	return match(&c, expected, actual, 0) && clear_reason(why, why_len);
}

/* --------------------------------------------------- Python's == (strict) */

#define KEY_CAP  (4u << 20) /* bytes of one hashable value's key */
#define REPR_CAP 100        /* bytes of one value shown in a reason */

static bool is_number_kind(enum kind k)
{
	return k == K_BOOL || k == K_INT || k == K_FLOAT;
}

/* bool, int or float as a struct num (True is the integer 1). */
static bool num_from_canonical(struct num *x, const json_t *v, enum kind k, const json_t *in)
{
	if (k == K_BOOL) {
		snprintf(x->store, sizeof(x->store), "%d", json_is_true(v) ? 1 : 0);
		return set_integer(x, x->store, 1);
	}
	return k == K_INT ? num_from_int_text(x, in) : num_from_float_text(x, in);
}

static int key_int(struct ee_buf *out, const struct num *x)
{
	if (ee_buf_append(out, x->neg ? "I-" : "I", x->neg ? 2 : 1) < 0 ||
	    ee_buf_append(out, x->dig, x->ndig) < 0)
		return -1;
	return ee_buf_append(out, ";", 1);
}

/* Equal numbers share a key: integral floats take the integer's. */
static int key_number(struct ee_buf *out, const json_t *v, enum kind k, const json_t *in)
{
	struct num x, whole;
	char text[64];

	if (!num_from_canonical(&x, v, k, in))
		return -1;
	if (!x.is_float)
		return key_int(out, &x);
	if (isnan(x.f))
		return -1; /* equal to nothing, not even itself */
	if (isfinite(x.f) && x.f == trunc(x.f)) {
		int n = snprintf(whole.store, sizeof(whole.store), "%.0f", x.f);
		if (n < 0 || (size_t)n >= sizeof(whole.store) || !set_integer(&whole, whole.store, (size_t)n))
			return -1;
		return key_int(out, &whole);
	}
	int n = snprintf(text, sizeof(text), "F%a;", x.f);
	return ee_buf_append(out, text, (size_t)n);
}

static int pykey(const json_t *v, struct ee_buf *out, int depth)
{
	const json_t *in;
	enum kind k = kind_of(v, &in);
	char head[32];

	if (depth > MAX_DEPTH)
		return -1;
	if (is_number_kind(k))
		return key_number(out, v, k, in);
	if (k == K_NULL)
		return ee_buf_append(out, "N", 1);
	if (k == K_STR) {
		int n = snprintf(head, sizeof(head), "S%zu:", json_string_length(v));
		if (ee_buf_append(out, head, (size_t)n) < 0)
			return -1;
		return ee_buf_append(out, json_string_value(v), json_string_length(v));
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

static bool pyeq(const json_t *e, const json_t *a, int depth)
{
	const json_t *ei, *ai;
	enum kind ek = kind_of(e, &ei), ak = kind_of(a, &ai);

	if (depth > MAX_DEPTH || ek == K_BAD || ak == K_BAD || ek == K_OTHER || ak == K_OTHER)
		return false;
	if (is_number_kind(ek) && is_number_kind(ak)) {
		struct num x, y;
		return num_from_canonical(&x, e, ek, ei) && num_from_canonical(&y, a, ak, ai) &&
		       num_equal(&x, &y, -1.0);
	}
	bool sets = (ek == K_SET || ek == K_FROZENSET) && (ak == K_SET || ak == K_FROZENSET);
	if (ek != ak && !sets)
		return false;
	switch (ek) {
	case K_NULL: return true;
	case K_STR:
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

/* ---- Python-style repr of a canonical value, cut at REPR_CAP bytes ---- */

static void put(struct ee_buf *b, const char *s, size_t n)
{
	ee_buf_append_some(b, s, n);
}

static void puts_(struct ee_buf *b, const char *s)
{
	put(b, s, strlen(s));
}

static void repr_str(struct ee_buf *b, const char *s, size_t n)
{
	char esc[8];

	put(b, "'", 1);
	for (size_t i = 0; i < n && b->len < b->cap; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '\\' || ch == '\'') {
			esc[0] = '\\';
			esc[1] = (char)ch;
			put(b, esc, 2);
		} else if (ch < 0x20 || ch == 0x7f) {
			const char *c = control_escape(ch);
			if (c[1])
				puts_(b, c);
			else {
				snprintf(esc, sizeof(esc), "\\x%02x", ch);
				puts_(b, esc);
			}
		} else {
			put(b, s + i, 1);
		}
	}
	put(b, "'", 1);
}

static void repr(struct ee_buf *b, const json_t *v, int depth);

static void repr_items(struct ee_buf *b, const json_t *items, bool pairs, int depth)
{
	for (size_t i = 0; i < json_array_size(items) && b->len < b->cap; i++) {
		const json_t *item = json_array_get(items, i);
		if (i)
			puts_(b, ", ");
		if (pairs && json_is_array(item) && json_array_size(item) == 2) {
			repr(b, json_array_get(item, 0), depth + 1);
			puts_(b, ": ");
			repr(b, json_array_get(item, 1), depth + 1);
		} else {
			repr(b, item, depth + 1);
		}
	}
}

static void repr(struct ee_buf *b, const json_t *v, int depth)
{
	const json_t *in;
	enum kind k = kind_of(v, &in);
	char q[QUOTED_LEN];
	size_t n = in && json_is_array(in) ? json_array_size(in) : 0;

	if (depth > MAX_DEPTH || b->len >= b->cap)
		return puts_(b, "...");
	switch (k) {
	case K_NULL: return puts_(b, "None");
	case K_BOOL: return puts_(b, json_is_true(v) ? "True" : "False");
	case K_STR: return repr_str(b, json_string_value(v), json_string_length(v));
	case K_INT:
	case K_FLOAT:
		quote(q, json_string_value(in), json_string_length(in), QUOTE_BYTES);
		return puts_(b, q);
	case K_LIST:
		puts_(b, "[");
		repr_items(b, in, false, depth);
		return puts_(b, "]");
	case K_TUPLE:
		puts_(b, "(");
		repr_items(b, in, false, depth);
		return puts_(b, n == 1 ? ",)" : ")");
	case K_DICT:
		puts_(b, "{");
		repr_items(b, in, true, depth);
		return puts_(b, "}");
	case K_SET:
	case K_FROZENSET:
		if (n == 0)
			return puts_(b, k == K_SET ? "set()" : "frozenset()");
		puts_(b, k == K_SET ? "{" : "frozenset({");
		repr_items(b, in, false, depth);
		return puts_(b, k == K_SET ? "}" : "})");
	case K_OTHER:
		quote(q, json_string_value(in), json_string_length(in), TYPE_BYTES);
		puts_(b, "<unsupported type '");
		puts_(b, q);
		return puts_(b, "'>");
	case K_BAD: return puts_(b, "<malformed canonical value>");
	}
}

/* The repr into dst, cut between characters with "..." when too long. */
static void show_repr(char *dst, size_t size, const json_t *v)
{
	struct ee_buf b;

	ee_buf_init(&b, REPR_CAP);
	repr(&b, v, 0);
	if (b.oom) { /* a part left out would read as the value */
		snprintf(dst, size, "<out of memory>");
		return ee_buf_free(&b);
	}
	bool cut = b.len >= b.cap;
	snprintf(dst, size, "%.*s", (int)b.len, b.data ? b.data : "");
	if (cut) {
		trim_partial_char(dst);
		strncat(dst, "...", size - strlen(dst) - 1);
	}
	ee_buf_free(&b);
}

bool ee_judge_pyeq(const json_t *expected, const json_t *actual, char *why, size_t why_len)
{
	char es[REPR_CAP + 8], as[REPR_CAP + 8];

	if (!expected || !actual)
		return say(why, why_len, "missing value");
	if (pyeq(expected, actual, 0))
		return clear_reason(why, why_len);
	show_repr(es, sizeof(es), expected);
	show_repr(as, sizeof(as), actual);
	return say(why, why_len, "expected %s, got %s", es, as);
}
