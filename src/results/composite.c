/* composite.c - parsing and evaluating composite formulas (composite.h).
 *
 * A recursive-descent parser (whitespace between tokens skipped), building
 * nodes in a fixed array (no heap); depth and node count are checked as it
 * goes, so a hostile formula ends in an error, never in deep recursion. */
#include "results/composite.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

/* By enum ee_cmetric; pass@ takes its k after the '@'. */
static const char *const metric_names[] = { "correctness", "pass@",        "mean_score",
	                                    "lint",        "timeout_rate", "error_rate" };

struct parser {
	struct ee_composite *c;
	const char *p, *start;
	int depth;
	struct ee_err *err;
};

static int fail(struct parser *ps, const char *what)
{
	return ee_fail(ps->err, EE_ERR_USAGE, "--composite: at %d: %s", (int)(ps->p - ps->start) + 1, what);
}

static void skip_space(struct parser *ps)
{
	while (isspace((unsigned char)*ps->p))
		ps->p++;
}

static int node(struct parser *ps, struct ee_cnode n)
{
	if (ps->c->n_nodes >= EE_COMPOSITE_MAX_NODES)
		return fail(ps, "formula too long (at most 64 terms and operators)");
	ps->c->nodes[ps->c->n_nodes] = n;
	return ps->c->n_nodes++;
}

static int expr(struct parser *ps);

static int number(struct parser *ps)
{
	char *end;
	if (!isdigit((unsigned char)*ps->p) && *ps->p != '.')
		return fail(ps, "expected a metric, a number or '('");
	double v = strtod(ps->p, &end);
	if (end == ps->p || !isfinite(v))
		return fail(ps, "bad number");
	ps->p = end;
	return node(ps, (struct ee_cnode){ .kind = EE_CN_NUM, .num = v });
}

static int metric(struct parser *ps)
{
	const char *s = ps->p;
	size_t n = 0;

	while (islower((unsigned char)s[n]) || s[n] == '_' || (n && isdigit((unsigned char)s[n])))
		n++;
	if (n == 4 && strncmp(s, "pass", 4) == 0 && s[4] == '@') {
		char *end;
		if (!isdigit((unsigned char)s[5]))
			return ps->p += 5, fail(ps, "pass@ needs a whole number k");
		unsigned long k = strtoul(s + 5, &end, 10);
		if (k == 0 || k > 100000)
			return ps->p += 5, fail(ps, "pass@k needs 1 <= k <= 100000");
		ps->p = end;
		return node(ps, (struct ee_cnode){
		                        .kind = EE_CN_METRIC, .metric = EE_CM_PASS_AT, .k = (unsigned)k });
	}
	for (int m = 0; m < (int)(sizeof(metric_names) / sizeof(metric_names[0])); m++)
		if (m != EE_CM_PASS_AT && strlen(metric_names[m]) == n &&
		    strncmp(s, metric_names[m], n) == 0) {
			ps->p += n;
			return node(ps, (struct ee_cnode){ .kind = EE_CN_METRIC, .metric = m });
		}
	return fail(ps, "unknown metric (correctness, pass@K, mean_score, lint, timeout_rate, error_rate)");
}

static int unary(struct parser *ps)
{
	if (++ps->depth > EE_COMPOSITE_MAX_DEPTH)
		return fail(ps, "nested too deeply");
	int rc;
	skip_space(ps);
	if (*ps->p == '-') {
		ps->p++;
		int operand = unary(ps);
		rc = operand < 0 ? -1 : node(ps, (struct ee_cnode){ .kind = EE_CN_NEG, .lhs = operand });
	} else if (*ps->p == '(') {
		ps->p++;
		rc = expr(ps);
		if (rc >= 0 && *ps->p++ != ')')
			rc = (ps->p--, fail(ps, "expected ')'"));
		skip_space(ps);
	} else if (islower((unsigned char)*ps->p)) {
		rc = metric(ps);
	} else {
		rc = number(ps);
	}
	skip_space(ps);
	ps->depth--;
	return rc;
}

/* One precedence level: operands joined by the operators in ops. */
static int level(struct parser *ps, int (*operand)(struct parser *), const char *ops, int kind0, int kind1)
{
	int lhs = operand(ps);
	while (lhs >= 0 && *ps->p && strchr(ops, *ps->p)) {
		int kind = *ps->p++ == ops[0] ? kind0 : kind1;
		int rhs = operand(ps);
		if (rhs < 0)
			return -1;
		lhs = node(ps, (struct ee_cnode){ .kind = kind, .lhs = lhs, .rhs = rhs });
	}
	return lhs;
}

static int term(struct parser *ps)
{
	return level(ps, unary, "*/", EE_CN_MUL, EE_CN_DIV);
}

static int expr(struct parser *ps)
{
	if (++ps->depth > EE_COMPOSITE_MAX_DEPTH)
		return fail(ps, "nested too deeply");
	int rc = level(ps, term, "+-", EE_CN_ADD, EE_CN_SUB);
	ps->depth--;
	return rc;
}

int ee_composite_parse(const char *text, struct ee_composite *ret, struct ee_err *err)
{
	struct ee_composite c;
	size_t n = 0, len = strlen(text);

	memset(&c, 0, sizeof(c));
	if (len > EE_COMPOSITE_MAX_TEXT)
		return ee_fail(err, EE_ERR_USAGE, "--composite: longer than %d characters",
		               EE_COMPOSITE_MAX_TEXT);
	for (size_t i = 0; i < len; i++) {
		if (!isprint((unsigned char)text[i]) && !isspace((unsigned char)text[i]))
			return ee_fail(err, EE_ERR_USAGE, "--composite: at %zu: not a printable character",
			               i + 1);
		if (!isspace((unsigned char)text[i]))
			c.text[n++] = text[i]; /* the recorded form: no spaces */
	}
	struct parser ps = { .c = &c, .p = text, .start = text, .err = err };
	if (n == 0)
		return ee_fail(err, EE_ERR_USAGE, "--composite: empty formula");
	c.root = expr(&ps);
	if (c.root < 0)
		return -1;
	if (*ps.p)
		return fail(&ps, "expected an operator (+ - * /) or the end");
	*ret = c;
	return 0;
}

/* A metric's value in a summary block; NAN when absent. */
static double metric_value(const struct ee_cnode *n, const json_t *b)
{
	char key[24];
	const json_t *statuses = json_object_get(b, "statuses");
	double samples = json_number_value(json_object_get(b, "samples"));

	switch (n->metric) {
	case EE_CM_CORRECTNESS:
		return samples > 0 ? json_number_value(json_object_get(statuses, "pass")) / samples : NAN;
	case EE_CM_PASS_AT: {
		snprintf(key, sizeof(key), "%u", n->k);
		const json_t *v = json_object_get(json_object_get(b, "pass_at_k"), key);
		return json_is_number(v) ? json_number_value(v) : NAN;
	}
	case EE_CM_MEAN_SCORE: {
		const json_t *v = json_object_get(b, "mean_score");
		return json_is_number(v) ? json_number_value(v) : NAN;
	}
	case EE_CM_LINT: {
		const json_t *v = json_object_get(json_object_get(b, "lint"), "pass_rate");
		return json_is_number(v) ? json_number_value(v) : NAN;
	}
	case EE_CM_TIMEOUT_RATE:
		return samples > 0 ? json_number_value(json_object_get(statuses, "timeout")) / samples : NAN;
	default: return samples > 0 ? json_number_value(json_object_get(statuses, "error")) / samples : NAN;
	}
}

/* Nodes are stored operands first, so one pass in order evaluates them all. */
int ee_composite_eval(const struct ee_composite *c, const json_t *block, double *ret, struct ee_err *err)
{
	double v[EE_COMPOSITE_MAX_NODES];

	for (int i = 0; i < c->n_nodes; i++) {
		const struct ee_cnode *n = &c->nodes[i];
		switch (n->kind) {
		case EE_CN_NUM: v[i] = n->num; break;
		case EE_CN_METRIC:
			v[i] = metric_value(n, block);
			if (isnan(v[i])) {
				char k[16] = "";
				if (n->metric == EE_CM_PASS_AT)
					snprintf(k, sizeof(k), "%u", n->k);
				return ee_fail(err, EE_ERR_USAGE, "%s%s is not in the summary%s",
				               metric_names[n->metric], k,
				               n->metric == EE_CM_LINT ? " (it needs --lint)" : "");
			}
			break;
		case EE_CN_NEG: v[i] = -v[n->lhs]; break;
		case EE_CN_ADD: v[i] = v[n->lhs] + v[n->rhs]; break;
		case EE_CN_SUB: v[i] = v[n->lhs] - v[n->rhs]; break;
		case EE_CN_MUL: v[i] = v[n->lhs] * v[n->rhs]; break;
		default: v[i] = v[n->lhs] / v[n->rhs]; break;
		}
	}
	if (!isfinite(v[c->root]))
		return ee_fail(err, EE_ERR_USAGE, "the value is not finite (a division by zero?)");
	*ret = v[c->root];
	return 0;
}

int ee_composite_add(const struct ee_composite *c, json_t *summary, struct ee_err *err)
{
	const char *name;
	json_t *cls;

	json_object_foreach (json_object_get(summary, "classes"), name, cls)
		if (json_object_set_new(cls, "composite", ee_composite_json(c, cls)) < 0)
			return ee_fail(err, EE_ERR_USAGE, "out of memory");
	if (json_object_set_new(summary, "composite", ee_composite_json(c, summary)) < 0)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	return 0;
}

json_t *ee_composite_json(const struct ee_composite *c, const json_t *block)
{
	struct ee_err err = { 0 };
	double value;
	json_t *o = json_pack("{s:s, s:i}", "formula", c->text, "version", EE_COMPOSITE_VERSION);

	if (!o)
		return NULL;
	bool set;
	if (ee_composite_eval(c, block, &value, &err) == 0)
		set = json_object_set_new(o, "value", json_real(value)) == 0;
	else
		set = json_object_set_new(o, "value", json_null()) == 0 &&
		      json_object_set_new(o, "error", json_string(err.msg)) == 0;
	if (!set) { /* never a composite with its value missing */
		json_decref(o);
		return NULL;
	}
	return o;
}
