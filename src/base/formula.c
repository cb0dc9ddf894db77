/* formula.c - parsing and evaluating formulas (formula.h).
 *
 * A recursive-descent parser (whitespace between tokens skipped), building
 * nodes in a fixed array (no heap), operands before the node using them;
 * depth and node count are checked as it goes, so a hostile formula ends
 * in an error, never in deep recursion. */
#include "base/formula.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

struct parser {
	struct ee_formula *f;
	const struct ee_formula_vars *vars;
	const char *option;
	const char *p, *start;
	int depth;
	struct ee_err *err;
};

static int fail(struct parser *ps, const char *what)
{
	return ee_fail(ps->err, EE_ERR_USAGE, "--%s: at %d: %s", ps->option, (int)(ps->p - ps->start) + 1,
	               what);
}

static void skip_space(struct parser *ps)
{
	while (isspace((unsigned char)*ps->p))
		ps->p++;
}

static int node(struct parser *ps, struct ee_fnode n)
{
	if (ps->f->n_nodes >= EE_FORMULA_MAX_NODES)
		return fail(ps, "formula too long (at most 64 terms and operators)");
	ps->f->nodes[ps->f->n_nodes] = n;
	return ps->f->n_nodes++;
}

static int expr(struct parser *ps);

static int number(struct parser *ps)
{
	char *end, why[64];

	if (!isdigit((unsigned char)*ps->p) && *ps->p != '.') {
		snprintf(why, sizeof(why), "expected a %s, a number or '('", ps->vars->noun);
		return fail(ps, why);
	}
	double v = strtod(ps->p, &end);
	if (end == ps->p || !isfinite(v))
		return fail(ps, "bad number");
	ps->p = end;
	return node(ps, (struct ee_fnode){ .kind = EE_FN_NUM, .num = v });
}

/* The arguments of min, max or if, after the name: '(' expr (',' expr)* ')'. */
static int call(struct parser *ps, int kind, int n_args)
{
	int args[3];

	skip_space(ps);
	if (*ps->p != '(')
		return fail(ps, "expected '(' after a function's name");
	ps->p++;
	for (int i = 0; i < n_args; i++) {
		if ((args[i] = expr(ps)) < 0)
			return -1;
		if (*ps->p != (i + 1 < n_args ? ',' : ')'))
			return fail(ps, i + 1 < n_args ? "expected ','" : "expected ')'");
		ps->p++;
	}
	return node(ps, (struct ee_fnode){
	                        .kind = kind, .a = args[0], .b = args[1], .c = n_args > 2 ? args[2] : 0 });
}

static int named(struct parser *ps)
{
	const char *s = ps->p;
	size_t n = 0;
	char why[240];

	while (islower((unsigned char)s[n]) || s[n] == '_' || (n && isdigit((unsigned char)s[n])))
		n++;
	static const struct {
		const char *name;
		int kind, n_args;
	} funcs[] = { { "min", EE_FN_MIN, 2 }, { "max", EE_FN_MAX, 2 }, { "if", EE_FN_IF, 3 } };
	for (size_t i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++)
		if (strlen(funcs[i].name) == n && strncmp(s, funcs[i].name, n) == 0) {
			ps->p += n;
			return call(ps, funcs[i].kind, funcs[i].n_args);
		}
	for (int v = 0; v < ps->vars->n; v++) {
		const char *name = ps->vars->names[v];
		size_t len = strlen(name);
		if (len > 0 && name[len - 1] == '@') { /* pass@K */
			if (n != len - 1 || strncmp(s, name, n) != 0 || s[n] != '@')
				continue;
			char *end;
			ps->p += len;
			if (!isdigit((unsigned char)s[len])) {
				snprintf(why, sizeof(why), "%s needs a whole number k", name);
				return fail(ps, why);
			}
			unsigned long k = strtoul(s + len, &end, 10);
			if (k == 0 || k > 100000) {
				snprintf(why, sizeof(why), "%.*sk needs 1 <= k <= 100000", (int)len, name);
				return fail(ps, why);
			}
			ps->p = end;
			return node(ps, (struct ee_fnode){ .kind = EE_FN_VAR, .var = v, .k = (unsigned)k });
		}
		if (len == n && strncmp(s, name, n) == 0) {
			ps->p += n;
			return node(ps, (struct ee_fnode){ .kind = EE_FN_VAR, .var = v });
		}
	}
	snprintf(why, sizeof(why), "unknown %s (%s; or min, max, if)", ps->vars->noun, ps->vars->list);
	return fail(ps, why);
}

static int unary(struct parser *ps)
{
	if (++ps->depth > EE_FORMULA_MAX_DEPTH)
		return fail(ps, "nested too deeply");
	int rc;
	skip_space(ps);
	if (*ps->p == '-') {
		ps->p++;
		int operand = unary(ps);
		rc = operand < 0 ? -1 : node(ps, (struct ee_fnode){ .kind = EE_FN_NEG, .a = operand });
	} else if (*ps->p == '(') {
		ps->p++;
		rc = expr(ps);
		if (rc >= 0 && *ps->p++ != ')')
			rc = (ps->p--, fail(ps, "expected ')'"));
	} else if (islower((unsigned char)*ps->p)) {
		rc = named(ps);
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
		lhs = node(ps, (struct ee_fnode){ .kind = kind, .a = lhs, .b = rhs });
	}
	return lhs;
}

static int term(struct parser *ps)
{
	return level(ps, unary, "*/", EE_FN_MUL, EE_FN_DIV);
}

static int sum(struct parser *ps)
{
	return level(ps, term, "+-", EE_FN_ADD, EE_FN_SUB);
}

/* The comparison at p, or -1: its kind, its length in *len. */
static int comparison(const char *p, int *len)
{
	static const struct {
		const char *op;
		int kind;
	} ops[] = { { "<=", EE_FN_LE }, { ">=", EE_FN_GE }, { "==", EE_FN_EQ },
		    { "!=", EE_FN_NE }, { "<", EE_FN_LT },  { ">", EE_FN_GT } };
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strncmp(p, ops[i].op, strlen(ops[i].op)) == 0) {
			*len = (int)strlen(ops[i].op);
			return ops[i].kind;
		}
	return -1;
}

static int expr(struct parser *ps)
{
	int len, kind;

	if (++ps->depth > EE_FORMULA_MAX_DEPTH)
		return fail(ps, "nested too deeply");
	int rc = sum(ps);
	if (rc >= 0 && (kind = comparison(ps->p, &len)) >= 0) {
		ps->p += len;
		int rhs = sum(ps);
		rc = rhs < 0 ? -1 : node(ps, (struct ee_fnode){ .kind = kind, .a = rc, .b = rhs });
	}
	ps->depth--;
	return rc;
}

int ee_formula_parse(const char *option, const char *text, const struct ee_formula_vars *vars,
                     struct ee_formula *ret, struct ee_err *err)
{
	struct ee_formula f;
	size_t n = 0, len = strlen(text);

	memset(&f, 0, sizeof(f));
	if (len > EE_FORMULA_MAX_TEXT)
		return ee_fail(err, EE_ERR_USAGE, "--%s: longer than %d characters", option,
		               EE_FORMULA_MAX_TEXT);
	for (size_t i = 0; i < len; i++) {
		if (!isprint((unsigned char)text[i]) && !isspace((unsigned char)text[i]))
			return ee_fail(err, EE_ERR_USAGE, "--%s: at %zu: not a printable character", option,
			               i + 1);
		if (!isspace((unsigned char)text[i]))
			f.text[n++] = text[i]; /* the recorded form: no spaces */
	}
	struct parser ps = { .f = &f, .vars = vars, .option = option, .p = text, .start = text, .err = err };
	if (n == 0)
		return ee_fail(err, EE_ERR_USAGE, "--%s: empty formula", option);
	f.root = expr(&ps);
	if (f.root < 0)
		return -1;
	if (*ps.p)
		return fail(&ps, "expected an operator (+ - * / < <= > >= == !=) or the end");
	*ret = f;
	return 0;
}

int ee_formula_eval(const struct ee_formula *f, ee_formula_value_fn value, void *ctx, double *ret,
                    int *missing)
{
	double v[EE_FORMULA_MAX_NODES];

	for (int i = 0; i < f->n_nodes; i++) {
		const struct ee_fnode *n = &f->nodes[i];
		int binary = n->kind > EE_FN_NEG;
		double a = n->kind >= EE_FN_NEG ? v[n->a] : 0, b = binary ? v[n->b] : 0;
		switch (n->kind) {
		case EE_FN_NUM: v[i] = n->num; break;
		case EE_FN_VAR:
			v[i] = value(ctx, n->var, n->k);
			if (isnan(v[i])) {
				*missing = i;
				return -1;
			}
			break;
		case EE_FN_NEG: v[i] = -a; break;
		case EE_FN_ADD: v[i] = a + b; break;
		case EE_FN_SUB: v[i] = a - b; break;
		case EE_FN_MUL: v[i] = a * b; break;
		case EE_FN_DIV: v[i] = a / b; break;
		case EE_FN_LT: v[i] = a < b; break;
		case EE_FN_LE: v[i] = a <= b; break;
		case EE_FN_GT: v[i] = a > b; break;
		case EE_FN_GE: v[i] = a >= b; break;
		case EE_FN_EQ: v[i] = a == b; break;
		case EE_FN_NE: v[i] = a != b; break;
		case EE_FN_MIN: v[i] = a < b ? a : b; break;
		case EE_FN_MAX: v[i] = a > b ? a : b; break;
		default: v[i] = a != 0 ? b : v[n->c]; break;
		}
	}
	if (!isfinite(v[f->root]))
		return -2;
	*ret = v[f->root];
	return 0;
}
