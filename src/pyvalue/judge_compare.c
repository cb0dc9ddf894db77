/* judge_compare.c - the names of the io comparison rules: reading
 * "RULE[:MOD,...]" into a struct ee_compare and writing it back (judge.h). */
#include "pyvalue/judge.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pyvalue/judge_int.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char *const rule_names[] = {
	[EE_CMP_LINES] = "lines",   [EE_CMP_EXACT] = "exact",     [EE_CMP_RSTRIP] = "rstrip",
	[EE_CMP_TOKENS] = "tokens", [EE_CMP_NUMERIC] = "numeric",
};

static const char rule_list[] = "exact, rstrip, lines, tokens or numeric";

/* Writes the reason; returns -1, the result that comes with one. */
#define REFUSE(...) (judge_say(why, why_len, __VA_ARGS__), -1)

static bool same_word(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && memcmp(s, word, n) == 0;
}

/* s[0..n) as a number >= 0, the whole of it. */
static bool tolerance(const char *s, size_t n, double *ret)
{
	char buf[64], *end;

	if (n == 0 || n >= sizeof(buf))
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	errno = 0;
	double v = strtod(buf, &end);
	if (errno || *end || !isfinite(v) || !(v >= 0))
		return false;
	*ret = v;
	return true;
}

/* One modifier of mods. seen: bit 1 ci, 2 abs, 4 rel. */
static int modifier(const char *m, size_t n, struct ee_compare *c, unsigned *seen, char *why, size_t why_len)
{
	char shown[QUOTED_LEN];
	unsigned bit = same_word(m, n, "ci")                ? 1
	               : n > 4 && memcmp(m, "abs=", 4) == 0 ? 2
	               : n > 4 && memcmp(m, "rel=", 4) == 0 ? 4
	                                                    : 0;

	judge_quote(shown, m, n, QUOTE_BYTES);
	if (!bit)
		return REFUSE("expected ci, abs=X or rel=X after ':', got '%s'", shown);
	if (*seen & bit)
		return REFUSE("'%s' given twice", shown);
	*seen |= bit;
	if (bit == 1) {
		c->ci = 1;
		return 0;
	}
	if (c->rule != EE_CMP_NUMERIC)
		return REFUSE("'%s': only numeric takes a tolerance", shown);
	if (!tolerance(m + 4, n - 4, bit == 2 ? &c->abs_tol : &c->rel_tol))
		return REFUSE("'%s': expected a number >= 0", shown);
	return 0;
}

int ee_compare_parse(const char *text, struct ee_compare *ret, char *why, size_t why_len)
{
	struct ee_compare c = { 0 };
	char shown[QUOTED_LEN];
	unsigned seen = 0;

	if (!text || strlen(text) >= EE_COMPARE_TEXT_MAX)
		return REFUSE("expected a rule (%s), %s", rule_list,
		              text ? "got a longer text" : "got nothing");
	const char *colon = strchr(text, ':');
	size_t n = colon ? (size_t)(colon - text) : strlen(text);
	c.rule = -1;
	for (size_t i = 0; i < COUNT(rule_names); i++)
		if (same_word(text, n, rule_names[i]))
			c.rule = (int)i;
	if (c.rule < 0) {
		judge_quote(shown, text, n, QUOTE_BYTES);
		return REFUSE("expected %s, got '%s'", rule_list, shown);
	}
	for (const char *m = colon; m; m = strchr(m + 1, ',')) {
		const char *next = strchr(m + 1, ',');
		if (modifier(m + 1, next ? (size_t)(next - m - 1) : strlen(m + 1), &c, &seen, why, why_len) <
		    0)
			return -1;
	}
	if (c.rule == EE_CMP_NUMERIC && !(seen & 6))
		c.abs_tol = c.rel_tol = EE_COMPARE_TOL;
	*ret = c;
	judge_clear_reason(why, why_len);
	return 0;
}

void ee_compare_text(const struct ee_compare *c, char *buf, size_t size)
{
	const char *name =
	        c->rule >= 0 && (size_t)c->rule < COUNT(rule_names) ? rule_names[c->rule] : "unknown";

	if (c->rule == EE_CMP_NUMERIC)
		snprintf(buf, size, "%s:abs=%g,rel=%g%s", name, c->abs_tol, c->rel_tol, c->ci ? ",ci" : "");
	else
		snprintf(buf, size, "%s%s", name, c->ci ? ":ci" : "");
}

bool ee_compare_is_default(const struct ee_compare *c)
{
	return c->rule == EE_CMP_LINES && !c->ci;
}
