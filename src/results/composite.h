/* composite.h - a composite score: a small arithmetic formula over the
 * summary's named metrics (`--composite "0.7*correctness+0.3*lint"`).
 *
 * The language is base/formula.h's (the one --reward uses too: arithmetic,
 * comparisons, min, max, if); its variables are the metrics: correctness (the share of samples that passed), pass@K (K a
 * whole number the summary reports), mean_score, lint (lint pass rate),
 * timeout_rate, error_rate. A formula's meaning is versioned (EE_COMPOSITE_VERSION) and the
 * summary records it with the value, so a changed formula shows in a diff.
 *
 * Ownership: a parsed formula is a fixed-size value; nothing to free.
 */
#ifndef EE_COMPOSITE_H
#define EE_COMPOSITE_H

#include <jansson.h>

#include "base/formula.h"

struct ee_err;

#define EE_COMPOSITE_VERSION   1
#define EE_COMPOSITE_MAX_TEXT  EE_FORMULA_MAX_TEXT
#define EE_COMPOSITE_MAX_NODES EE_FORMULA_MAX_NODES
#define EE_COMPOSITE_MAX_DEPTH EE_FORMULA_MAX_DEPTH

/* The metrics, as the formula's variables. */
enum ee_cmetric {
	EE_CM_CORRECTNESS,
	EE_CM_PASS_AT,
	EE_CM_MEAN_SCORE,
	EE_CM_LINT,
	EE_CM_TIMEOUT_RATE,
	EE_CM_ERROR_RATE
};

struct ee_composite {
	struct ee_formula f; /* f.text: as given, whitespace removed */
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

/* Sets "composite" on a summary and on each of its "classes" and "models".
 * Returns 0, or
 * -1 when memory ran out (the summary may then hold some of them). */
int ee_composite_add(const struct ee_composite *c, json_t *summary, struct ee_err *err);

#endif
