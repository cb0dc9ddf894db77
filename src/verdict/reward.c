/* reward.c - reward formulas and their presets (reward.h). */
#include "verdict/reward.h"

#include <math.h>
#include <string.h>

#include "base/err.h"

/* By enum ee_reward_fact. */
static const char *const fact_names[] = {
	"pass",  "score",          "tests_score", "public_score", "hidden_score",  "timeout", "syntax_error",
	"error", "assertion_fail", "blocked",     "lint_pass",    "scan_findings", "passed",  "total",
};
_Static_assert(sizeof(fact_names) / sizeof(fact_names[0]) == EE_RF_COUNT, "a name for each fact");

static const struct ee_formula_vars fact_vars = {
	.names = fact_names,
	.n = EE_RF_COUNT,
	.noun = "fact",
	.list = "pass, score, tests_score, public_score, hidden_score, timeout, syntax_error, error, "
	        "assertion_fail, blocked, lint_pass, scan_findings, passed, total",
};

/* The presets and where each comes from (docs/record.md says the same). */
static const struct {
	const char *name, *formula;
} presets[] = {
	/* today's reward, kept as the default */
	{ "binary", "if(pass, 1, -1)" },
	/* the weighted fraction of tests passed */
	{ "fraction", "score" },
	/* the Sandbox Pattern evaluator's functional correctness: the tests'
	 * score, halved when the candidate timed out */
	{ "timeout-half", "if(timeout, tests_score / 2, score)" },
	/* a GRPO reward engine's shape: a syntax or import failure first, then
	 * a penalty for blocked behaviour, then public tests, then hidden */
	{ "correctness-first",
	  "if(syntax_error, -1, if(blocked, -0.5, 0.5 * public_score + 0.5 * hidden_score))" },
	/* RL code-contest scoring: the share of tests passed, 0 when it did not compile */
	{ "partial", "if(syntax_error, 0, passed / max(total, 1))" },
};

void ee_reward_default(struct ee_reward *ret)
{
	struct ee_err err = { 0 };

	memset(ret, 0, sizeof(*ret));
	(void)ee_formula_parse("reward", presets[0].formula, &fact_vars, &ret->f, &err);
}

int ee_reward_parse(const char *text, struct ee_reward *ret, struct ee_err *err)
{
	struct ee_reward r = { 0 };
	const char *formula = text;

	for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++)
		if (strcmp(text, presets[i].name) == 0)
			formula = presets[i].formula;
	if (ee_formula_parse("reward", formula, &fact_vars, &r.f, err) < 0)
		return -1;
	struct ee_reward binary;
	ee_reward_default(&binary);
	r.custom = strcmp(r.f.text, binary.f.text) != 0;
	*ret = r;
	return 0;
}

static double fact_value(void *ctx, int fact, unsigned k)
{
	(void)k;
	return ((const struct ee_reward_facts *)ctx)->v[fact];
}

int ee_reward_eval(const struct ee_reward *r, const struct ee_reward_facts *facts, double *ret)
{
	int missing;

	return ee_formula_eval(&r->f, fact_value, (void *)facts, ret, &missing) == 0 ? 0 : -1;
}

const char *ee_reward_text(const struct ee_reward *r)
{
	return r->f.text;
}
