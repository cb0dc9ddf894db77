/* judge_io.c - comparing an io test's output with the expected text (see
 * judge.h, ee_judge_io).
 *
 * The actual output comes from the sandbox: everything here is linear in it
 * and allocation-free.
 */
#include "pyvalue/judge.h"

#include <math.h>
#include <string.h>

#include "pyvalue/judge_int.h"

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f';
}

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
	if (!judge_parse_decimal(e, en, &x) || !judge_parse_decimal(a, an, &y))
		return false;
	return isfinite(x) && isfinite(y) && judge_within(y, x, tol);
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

	judge_quote(es, e ? e : "", en, QUOTE_BYTES);
	judge_quote(as, a ? a : "", an, QUOTE_BYTES);
	if (!a)
		return judge_say(why, why_len, "line %zu: expected '%s', got end of output", line_no, es);
	if (!e)
		return judge_say(why, why_len, "line %zu: expected end of output, got '%s'", line_no, as);
	return judge_say(why, why_len, "line %zu: expected '%s', got '%s'", line_no, es, as);
}

bool ee_judge_io(const char *expected, size_t expected_len, const char *actual, size_t actual_len,
                 double float_tol, char *why, size_t why_len)
{
	if ((!expected && expected_len) || (!actual && actual_len))
		return judge_say(why, why_len, "missing text");

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
	return judge_clear_reason(why, why_len);
}
