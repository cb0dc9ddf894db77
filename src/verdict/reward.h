/* reward.h - a record's reward as data: --reward FORMULA or a preset's
 * name, over the record's own facts (docs/record.md, "reward").
 *
 * The language is base/formula.h's (the one --composite uses). Its
 * variables are facts the supervisor established: pass, score (weighted,
 * 0 on a timeout), tests_score (weighted, whatever cut the run short),
 * public_score, hidden_score (a task without hidden tests: public_score),
 * the status indicators timeout, syntax_error (syntax or import failure),
 * error, assertion_fail, blocked (the scan blocked it, a denied import or a
 * blocked syscall), lint_pass (0 without --lint), scan_findings, passed and
 * total. Each indicator is 1 or 0.
 *
 * Presets, by name: binary (the default: +1 pass, -1 otherwise), fraction,
 * timeout-half, correctness-first, partial (their formulas: presets[] in
 * reward.c and docs/record.md).
 *
 * Ownership: a parsed reward is a fixed-size value; nothing to free.
 */
#ifndef EE_REWARD_H
#define EE_REWARD_H

#include "base/formula.h"

struct ee_err;

enum ee_reward_fact {
	EE_RF_PASS,
	EE_RF_SCORE,
	EE_RF_TESTS_SCORE,
	EE_RF_PUBLIC_SCORE,
	EE_RF_HIDDEN_SCORE,
	EE_RF_TIMEOUT,
	EE_RF_SYNTAX_ERROR,
	EE_RF_ERROR,
	EE_RF_ASSERTION_FAIL,
	EE_RF_BLOCKED,
	EE_RF_LINT_PASS,
	EE_RF_SCAN_FINDINGS,
	EE_RF_PASSED,
	EE_RF_TOTAL,
	EE_RF_COUNT
};

struct ee_reward_facts {
	double v[EE_RF_COUNT]; /* by enum ee_reward_fact */
};

struct ee_reward {
	int custom; /* 0: binary, the default (records say nothing of it) */
	struct ee_formula f;
};

/* The default reward, binary. */
void ee_reward_default(struct ee_reward *ret);

/* A preset's name or a formula. Errors name --reward and the position. */
int ee_reward_parse(const char *text, struct ee_reward *ret, struct ee_err *err);

/* The reward of facts: 0, or -1 when it is not finite (a division by
 * zero the formula did not guard). */
int ee_reward_eval(const struct ee_reward *r, const struct ee_reward_facts *facts, double *ret);

/* The formula's text (spaces removed), as records and summaries carry it. */
const char *ee_reward_text(const struct ee_reward *r);

#endif
