/* test_reward.c - the formula language's comparisons, min, max and if()
 * (base/formula.h) and the reward's presets and facts (verdict/reward.h). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "base/err.h"
#include "verdict/reward.h"

/* A record's facts: status one of the indicators (or pass), the rest given. */
static struct ee_reward_facts facts(int status, double score, double tests_score, double pub, double hid,
                                    unsigned passed, unsigned total)
{
	struct ee_reward_facts f;
	memset(&f, 0, sizeof(f));
	f.v[status] = 1;
	f.v[EE_RF_SCORE] = score;
	f.v[EE_RF_TESTS_SCORE] = tests_score;
	f.v[EE_RF_PUBLIC_SCORE] = pub;
	f.v[EE_RF_HIDDEN_SCORE] = hid;
	f.v[EE_RF_PASSED] = passed;
	f.v[EE_RF_TOTAL] = total;
	return f;
}

static double reward_of(const char *text, const struct ee_reward_facts *f)
{
	struct ee_reward r;
	struct ee_err err = { 0 };
	double v = NAN;
	cr_assert_eq(ee_reward_parse(text, &r, &err), 0, "%s: %s", text, err.msg);
	cr_assert_eq(ee_reward_eval(&r, f, &v), 0, "%s", text);
	return v;
}

Test(reward, comparisons_min_max_and_if)
{
	struct ee_reward_facts f = facts(EE_RF_ASSERTION_FAIL, 0.5, 0.5, 0.5, 0.5, 2, 4);
	cr_expect_eq(reward_of("passed < total", &f), 1);
	cr_expect_eq(reward_of("passed >= total", &f), 0);
	cr_expect_eq(reward_of("passed == 2", &f), 1);
	cr_expect_eq(reward_of("passed != 2", &f), 0);
	cr_expect_eq(reward_of("total <= 4", &f), 1);
	cr_expect_eq(reward_of("total > 4", &f), 0);
	cr_expect_eq(reward_of("min(score, 0.2) + max(passed, 3)", &f), 3.2);
	cr_expect_eq(reward_of("if(assertion_fail, -score, 9)", &f), -0.5);
	cr_expect_eq(reward_of("if(pass, 1, if(passed > 1, 0.25, 0))", &f), 0.25);
	/* a comparison binds loosest: 1 + 1 < 3 is (1 + 1) < 3 */
	cr_expect_eq(reward_of("1 + 1 < 3", &f), 1);
}

Test(reward, presets_by_name)
{
	struct ee_reward_facts pass = facts(EE_RF_PASS, 1, 1, 1, 1, 4, 4);
	struct ee_reward_facts half = facts(EE_RF_ASSERTION_FAIL, 0.5, 0.5, 1, 0, 2, 4);
	struct ee_reward_facts slow = facts(EE_RF_TIMEOUT, 0, 0.5, 0.5, 0.5, 2, 4);
	struct ee_reward_facts syntax = facts(EE_RF_SYNTAX_ERROR, 0, 0, 0, 0, 0, 4);
	struct ee_reward_facts blocked = facts(EE_RF_ERROR, 0, 0, 0, 0, 0, 4);
	blocked.v[EE_RF_BLOCKED] = 1;

	cr_expect_eq(reward_of("binary", &pass), 1);
	cr_expect_eq(reward_of("binary", &half), -1);
	cr_expect_eq(reward_of("fraction", &half), 0.5);
	cr_expect_eq(reward_of("timeout-half", &slow), 0.25);
	cr_expect_eq(reward_of("timeout-half", &half), 0.5);
	cr_expect_eq(reward_of("correctness-first", &syntax), -1);
	cr_expect_eq(reward_of("correctness-first", &blocked), -0.5);
	cr_expect_eq(reward_of("correctness-first", &half), 0.5);
	cr_expect_eq(reward_of("correctness-first", &pass), 1);
	cr_expect_eq(reward_of("partial", &half), 0.5);
	cr_expect_eq(reward_of("partial", &syntax), 0);
	struct ee_reward_facts none = facts(EE_RF_ERROR, 0, 0, 0, 0, 0, 0);
	cr_expect_eq(reward_of("partial", &none), 0);
}

/* binary, by name or by its formula, is the default: records say nothing. */
Test(reward, only_a_formula_other_than_binary_is_custom)
{
	struct ee_reward r, d;
	struct ee_err err = { 0 };
	ee_reward_default(&d);
	cr_expect_eq(d.custom, 0);
	cr_expect_str_eq(ee_reward_text(&d), "if(pass,1,-1)");
	cr_assert_eq(ee_reward_parse("binary", &r, &err), 0);
	cr_expect_eq(r.custom, 0);
	cr_assert_eq(ee_reward_parse("if( pass , 1 , -1 )", &r, &err), 0);
	cr_expect_eq(r.custom, 0);
	cr_assert_eq(ee_reward_parse("fraction", &r, &err), 0);
	cr_expect_eq(r.custom, 1);
	cr_expect_str_eq(ee_reward_text(&r), "score");
}

Test(reward, a_bad_formula_names_the_option_and_the_position)
{
	static const struct {
		const char *formula, *msg;
	} cases[] = {
		{ "1 +", "--reward: at 4: expected a fact, a number or '('" },
		{ "if(pass, 1)", "--reward: at 11: expected ','" },
		{ "min(1, 2", "--reward: at 9: expected ')'" },
		{ "max 1", "--reward: at 5: expected '('" },
		{ "correctness", "--reward: at 1: unknown fact" },
		{ "pass@1", "--reward: at 5: expected an operator" },
		{ "1 < 2 < 3", "--reward: at 7: expected an operator" },
		{ "1 = 2", "--reward: at 3: expected an operator" },
		{ "", "--reward: empty formula" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ee_reward r;
		struct ee_err err = { 0 };
		cr_expect_eq(ee_reward_parse(cases[i].formula, &r, &err), -1, "accepted: %s",
		             cases[i].formula);
		cr_expect(strncmp(err.msg, cases[i].msg, strlen(cases[i].msg)) == 0, "%s: %s",
		          cases[i].formula, err.msg);
	}
}

Test(reward, a_value_that_is_not_finite_is_refused)
{
	struct ee_reward r;
	struct ee_err err = { 0 };
	struct ee_reward_facts f = facts(EE_RF_ERROR, 0, 0, 0, 0, 0, 0);
	double v = 7;
	cr_assert_eq(ee_reward_parse("passed / total", &r, &err), 0);
	cr_expect_eq(ee_reward_eval(&r, &f, &v), -1);
	cr_expect_eq(v, 7);
}
