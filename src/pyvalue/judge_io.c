/* judge_io.c - comparing an io test's output with the expected text under
 * the test's rule (see judge.h, ee_judge_io_by).
 *
 * The rule is chosen once, here, by its name: each rule is one function
 * (bytes, lines or tokens) and the token-level choice (text, a test's
 * float_tol, numeric tolerances) is a small struct the line and token walks
 * share. The actual output comes from the sandbox: everything here is
 * linear in it and allocation-free.
 */
#include "pyvalue/judge.h"

#include <math.h>
#include <string.h>

#include "pyvalue/judge_int.h"

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f';
}

static bool is_space(char ch)
{
	return is_blank(ch) || ch == '\n';
}

static char fold(char ch, bool ci)
{
	return ci && ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch;
}

static bool text_equal(const char *e, size_t en, const char *a, size_t an, bool ci)
{
	if (en != an)
		return false;
	if (!ci)
		return memcmp(e, a, en) == 0;
	for (size_t i = 0; i < en; i++)
		if (fold(e[i], true) != fold(a[i], true))
			return false;
	return true;
}

static size_t rstrip(const char *s, size_t n)
{
	while (n > 0 && is_blank(s[n - 1]))
		n--;
	return n;
}

/* ---- tokens ------------------------------------------------------------- */

/* How two tokens compare: as text, numbers within a test's float_tol
 * (lines and tokens), or numbers within numeric's tolerances. */
enum tok_mode { TOK_TEXT, TOK_FLOAT_TOL, TOK_NUMERIC };

struct tok_rule {
	enum tok_mode mode;
	bool ci;
	double tol;              /* TOK_FLOAT_TOL */
	double abs_tol, rel_tol; /* TOK_NUMERIC */
};

static bool take_token(const char *s, size_t n, size_t *pos, bool (*sep)(char), const char **tok,
                       size_t *tok_len)
{
	size_t i = *pos;

	while (i < n && sep(s[i]))
		i++;
	if (i == n)
		return false;
	size_t start = i;
	while (i < n && !sep(s[i]))
		i++;
	*tok = s + start;
	*tok_len = i - start;
	*pos = i;
	return true;
}

/* [+-]digits: its sign and its digits without leading zeros ("-0" is 0). */
static bool integer_token(const char *s, size_t n, bool *neg, const char **dig, size_t *ndig)
{
	size_t i = n > 0 && (s[0] == '+' || s[0] == '-') ? 1 : 0;

	if (i == n)
		return false;
	for (size_t j = i; j < n; j++)
		if (s[j] < '0' || s[j] > '9')
			return false;
	while (i + 1 < n && s[i] == '0')
		i++;
	*dig = s + i;
	*ndig = n - i;
	*neg = s[0] == '-' && !(*ndig == 1 && **dig == '0');
	return true;
}

/* numeric: an integer expected only by that integer (a float near it
 * would let 24.000009 pass for a count of 24); a float expected (a '.' or
 * an exponent) by any decimal within tolerance. */
static bool numbers_close(const struct tok_rule *r, const char *e, size_t en, const char *a, size_t an)
{
	const char *ed, *ad;
	size_t edn, adn;
	bool eneg, aneg;
	double x, y;

	if (integer_token(e, en, &eneg, &ed, &edn))
		return integer_token(a, an, &aneg, &ad, &adn) && eneg == aneg && edn == adn &&
		       memcmp(ed, ad, edn) == 0;
	if (!judge_parse_decimal(e, en, &x) || !judge_parse_decimal(a, an, &y) || !isfinite(x) ||
	    !isfinite(y))
		return false;
	return fabs(y - x) <= fmax(r->abs_tol, r->rel_tol * fabs(x));
}

static bool tokens_equal(const struct tok_rule *r, const char *e, size_t en, const char *a, size_t an)
{
	double x, y;

	if (text_equal(e, en, a, an, r->ci))
		return true;
	switch (r->mode) {
	case TOK_TEXT: return false;
	case TOK_NUMERIC: return numbers_close(r, e, en, a, an);
	case TOK_FLOAT_TOL: break;
	}
	if (!judge_parse_decimal(e, en, &x) || !judge_parse_decimal(a, an, &y))
		return false;
	return isfinite(x) && isfinite(y) && judge_within(y, x, r->tol);
}

/* ---- lines -------------------------------------------------------------- */

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

/* As text the normalised lines compare whole (inner spacing counts); with
 * a tolerance token by token. */
static bool lines_equal(const struct tok_rule *r, const char *e, size_t en, const char *a, size_t an)
{
	size_t ep = 0, ap = 0;

	if (r->mode == TOK_TEXT)
		return text_equal(e, en, a, an, r->ci);
	for (;;) {
		const char *et, *at;
		size_t etl, atl;
		bool more_e = take_token(e, en, &ep, is_blank, &et, &etl);
		bool more_a = take_token(a, an, &ap, is_blank, &at, &atl);
		if (!more_e || !more_a)
			return more_e == more_a;
		if (!tokens_equal(r, et, etl, at, atl))
			return false;
	}
}

/* "what N: expected 'x', got 'y'", a missing side being the end of output. */
static bool differ(char *why, size_t why_len, const char *what, size_t n, const char *e, size_t en,
                   const char *a, size_t an)
{
	char es[QUOTED_LEN], as[QUOTED_LEN];

	judge_quote(es, e ? e : "", en, QUOTE_BYTES);
	judge_quote(as, a ? a : "", an, QUOTE_BYTES);
	if (!a)
		return judge_say(why, why_len, "%s %zu: expected '%s', got end of output", what, n, es);
	if (!e)
		return judge_say(why, why_len, "%s %zu: expected end of output, got '%s'", what, n, as);
	return judge_say(why, why_len, "%s %zu: expected '%s', got '%s'", what, n, es, as);
}

static bool judge_lines(const struct tok_rule *r, const char *expected, size_t expected_len,
                        const char *actual, size_t actual_len, char *why, size_t why_len)
{
	size_t ne = count_lines(expected, expected_len), na = count_lines(actual, actual_len);
	struct lines et = { expected, expected_len, 0 }, at = { actual, actual_len, 0 };

	for (size_t i = 0; i < ne || i < na; i++) {
		const char *e = NULL, *a = NULL;
		size_t en = 0, an = 0;
		if (i < ne)
			take_line(&et, &e, &en);
		if (i < na)
			take_line(&at, &a, &an);
		if (!e || !a || !lines_equal(r, e, en, a, an))
			return differ(why, why_len, "line", i + 1, e, en, a, an);
	}
	return judge_clear_reason(why, why_len);
}

/* tokens and numeric: the whole texts' tokens, line breaks as spaces. */
static bool judge_tokens(const struct tok_rule *r, const char *expected, size_t expected_len,
                         const char *actual, size_t actual_len, char *why, size_t why_len)
{
	size_t ep = 0, ap = 0;

	for (size_t i = 1;; i++) {
		const char *e = NULL, *a = NULL;
		size_t en = 0, an = 0;
		bool more_e = take_token(expected, expected_len, &ep, is_space, &e, &en);
		bool more_a = take_token(actual, actual_len, &ap, is_space, &a, &an);
		if (!more_e && !more_a)
			return judge_clear_reason(why, why_len);
		if (!more_e || !more_a || !tokens_equal(r, e, en, a, an))
			return differ(why, why_len, "token", i, more_e ? e : NULL, en, more_a ? a : NULL, an);
	}
}

static bool is_continuation(char ch)
{
	return ((unsigned char)ch & 0xC0) == 0x80;
}

/* exact and rstrip: the first byte that differs, shown from there on;
 * the column counts bytes. */
static bool judge_bytes(bool ci, const char *e, size_t en, const char *a, size_t an, char *why,
                        size_t why_len)
{
	size_t k = 0, line = 1, start = 0;
	char es[QUOTED_LEN], as[QUOTED_LEN];

	while (k < en && k < an && fold(e[k], ci) == fold(a[k], ci))
		k++;
	if (k == en && k == an)
		return judge_clear_reason(why, why_len);
	for (size_t i = 0; i < k; i++)
		if (e[i] == '\n') {
			line++;
			start = i + 1;
		}
	while (k > start && ((k < en && is_continuation(e[k])) || (k < an && is_continuation(a[k]))))
		k--; /* shown from the start of the character that differs */
	judge_quote(es, e + k, en - k, QUOTE_BYTES);
	judge_quote(as, a + k, an - k, QUOTE_BYTES);
	if (k == an)
		return judge_say(why, why_len, "line %zu, column %zu: expected '%s', got end of output", line,
		                 k - start + 1, es);
	if (k == en)
		return judge_say(why, why_len, "line %zu, column %zu: expected end of output, got '%s'", line,
		                 k - start + 1, as);
	return judge_say(why, why_len, "line %zu, column %zu: expected '%s', got '%s'", line, k - start + 1,
	                 es, as);
}

static size_t without_final_newlines(const char *s, size_t n)
{
	while (n > 0 && s[n - 1] == '\n')
		n--;
	return n;
}

bool ee_judge_io_by(const struct ee_compare *c, const char *expected, size_t expected_len, const char *actual,
                    size_t actual_len, double float_tol, char *why, size_t why_len)
{
	static const struct ee_compare lines = { 0 };
	struct tok_rule r = { .mode = float_tol >= 0.0 ? TOK_FLOAT_TOL : TOK_TEXT, .tol = float_tol };

	if ((!expected && expected_len) || (!actual && actual_len))
		return judge_say(why, why_len, "missing text");
	if (!expected)
		expected = "";
	if (!actual)
		actual = "";
	if (!c)
		c = &lines;
	r.ci = c->ci != 0;
	switch (c->rule) {
	case EE_CMP_EXACT: return judge_bytes(r.ci, expected, expected_len, actual, actual_len, why, why_len);
	case EE_CMP_RSTRIP:
		return judge_bytes(r.ci, expected, without_final_newlines(expected, expected_len), actual,
		                   without_final_newlines(actual, actual_len), why, why_len);
	case EE_CMP_TOKENS: return judge_tokens(&r, expected, expected_len, actual, actual_len, why, why_len);
	case EE_CMP_NUMERIC:
		r = (struct tok_rule){
			.mode = TOK_NUMERIC, .ci = r.ci, .abs_tol = c->abs_tol, .rel_tol = c->rel_tol
		};
		return judge_tokens(&r, expected, expected_len, actual, actual_len, why, why_len);
	case EE_CMP_LINES: return judge_lines(&r, expected, expected_len, actual, actual_len, why, why_len);
	}
	return judge_say(why, why_len, "unknown comparison rule %d", c->rule);
}

bool ee_judge_io(const char *expected, size_t expected_len, const char *actual, size_t actual_len,
                 double float_tol, char *why, size_t why_len)
{
	return ee_judge_io_by(NULL, expected, expected_len, actual, actual_len, float_tol, why, why_len);
}
