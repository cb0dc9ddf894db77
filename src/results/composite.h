/* composite.h - a composite score: a small arithmetic formula over the
 * summary's named metrics (`--composite "0.7*correctness+0.3*lint"`).
 *
 * The grammar is tiny and parsed here, never evaluated by anything else:
 *   expr    := term (('+' | '-') term)*
 *   term    := unary (('*' | '/') unary)*
 *   unary   := '-' unary | primary
 *   primary := NUMBER | METRIC | '(' expr ')'
 * Metrics: correctness (the share of samples that passed), pass@K (K a
 * whole number the summary reports), mean_score, lint (lint pass rate),
 * timeout_rate, error_rate. Bounded: 256 bytes of text, 64 nodes, nesting
 * 16 deep. A formula's meaning is versioned (EE_COMPOSITE_VERSION) and the
 * summary records it with the value, so a changed formula shows in a diff.
 *
 * Ownership: a parsed formula is a fixed-size value; nothing to free.
 */
#ifndef EE_COMPOSITE_H
#define EE_COMPOSITE_H

#include <jansson.h>

struct ee_err;

#define EE_COMPOSITE_VERSION   1
#define EE_COMPOSITE_MAX_TEXT  256
#define EE_COMPOSITE_MAX_NODES 64
#define EE_COMPOSITE_MAX_DEPTH 16

enum ee_cnode_kind { EE_CN_NUM, EE_CN_METRIC, EE_CN_NEG, EE_CN_ADD, EE_CN_SUB, EE_CN_MUL, EE_CN_DIV };
enum ee_cmetric {
	EE_CM_CORRECTNESS,
	EE_CM_PASS_AT,
	EE_CM_MEAN_SCORE,
	EE_CM_LINT,
	EE_CM_TIMEOUT_RATE,
	EE_CM_ERROR_RATE
};

struct ee_cnode {
	int kind;     /* enum ee_cnode_kind */
	double num;   /* EE_CN_NUM */
	int metric;   /* EE_CN_METRIC: enum ee_cmetric */
	unsigned k;   /* EE_CM_PASS_AT */
	int lhs, rhs; /* operand indices (rhs only for NEG) */
};

struct ee_composite {
	char text[EE_COMPOSITE_MAX_TEXT + 1]; /* as given, whitespace removed */
	struct ee_cnode nodes[EE_COMPOSITE_MAX_NODES];
	int n_nodes, root;
};

/* Errors say where ("--composite: at 7: expected a metric or a number"). */
int ee_composite_parse(const char *text, struct ee_composite *ret, struct ee_err *err);

/* The formula's value over one summary block (the whole set or a class).
 * Returns 0, or -1 with err when a metric is absent from the block (e.g.
 * lint without --lint) or the value is not finite (division by zero). */
int ee_composite_eval(const struct ee_composite *c, const json_t *block, double *ret, struct ee_err *err);

/* {"formula", "version", "value"} with value null and "error" when it
 * cannot be computed. A new reference; NULL when memory ran out. */
json_t *ee_composite_json(const struct ee_composite *c, const json_t *block);

/* Sets "composite" on a summary and on each of its "classes". Returns 0, or
 * -1 when memory ran out (the summary may then hold some of them). */
int ee_composite_add(const struct ee_composite *c, json_t *summary, struct ee_err *err);

#endif
