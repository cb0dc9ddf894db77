/* task_rules.c - how an io test's output is compared and how many of a
 * task's tests run, decided once when the task is loaded (task.h): the
 * task's own "compare", then the run's --compare, --max-tests and
 * --test-pick (ee_task_apply_rules).
 */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/jsonfield.h"
#include "input/task.h"
#include "input/task_int.h"

static const char *const pick_names[] = { "first", "longest" };

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* A test's float_tol is used by the rules that compare numbers in tokens
 * of text; the others would silently ignore it. */
static int check_float_tol(const struct ee_jf *c, const struct ee_task *t, const struct ee_compare *rule,
                           const char *text)
{
	if (rule->rule == EE_CMP_LINES || rule->rule == EE_CMP_TOKENS)
		return 0;
	for (size_t i = 0; i < t->n_tests; i++)
		if (t->tests[i].kind == EE_TEST_IO && t->tests[i].float_tol >= 0) {
			char name[32];
			struct ee_jf sub = ee_jf_sub(c, ee_jf_elem("tests", i, name, sizeof(name)));
			return ee_jf_fail(&sub, "float_tol",
			                  "compare '%s' does not use it (lines and tokens do)", text);
		}
	return 0;
}

/* What a format's own harness does, where a rule here is the same or
 * nearly (docs/compare.md's table); the others keep lines. */
static const char *const format_rules[EE_FORMAT_COUNT] = {
	[EE_FORMAT_VERL] = "rstrip",
	[EE_FORMAT_CODECONTESTS] = "numeric:abs=1e-5,rel=0,ci",
};

static void set_rule(struct ee_task *t, const struct ee_compare *rule)
{
	for (size_t i = 0; i < t->n_tests; i++)
		t->tests[i].compare = *rule;
}

/* A task without its own "compare": its format's default rule. */
static int format_default(const struct ee_jf *c, struct ee_task *t)
{
	struct ee_compare rule;
	char why[200];
	const char *text = t->format >= 0 && t->format < EE_FORMAT_COUNT ? format_rules[t->format] : NULL;

	if (!text)
		return 0;
	if (ee_compare_parse(text, &rule, why, sizeof(why)) < 0) /* a bug of the table */
		return ee_jf_fail(c, "compare", "the format's default '%s': %s", text, why);
	set_rule(t, &rule);
	return 0;
}

int ee_task_read_compare(const struct ee_jf *c, const json_t *obj, struct ee_task *t)
{
	const json_t *v = json_object_get(obj, "compare");
	struct ee_compare rule;
	const char *text;
	char why[200];

	if (!v)
		return format_default(c, t);
	if (ee_jf_str_check(c, "compare", v, &text) < 0)
		return -1;
	if (ee_compare_parse(text, &rule, why, sizeof(why)) < 0)
		return ee_jf_fail(c, "compare", "%s", why);
	set_rule(t, &rule);
	t->compare_given = 1;
	return check_float_tol(c, t, &rule, text);
}

/* What --test-pick longest measures: the bytes a test feeds the candidate.
 * -1: out of memory (jansson's dump allocates for its loop check; a call's
 * arguments are never empty: "[]" at least). */
static int input_size(const struct ee_test *t, size_t *size)
{
	switch (t->kind) {
	case EE_TEST_IO: *size = t->stdin_text ? strlen(t->stdin_text) : 0; return 0;
	case EE_TEST_CALL:
		*size = t->args ? json_dumpb(t->args, NULL, 0, JSON_COMPACT) : 0;
		return t->args && *size == 0 ? -1 : 0;
	default: *size = t->code ? strlen(t->code) : 0; return 0;
	}
}

struct ranked {
	size_t size, index;
};

/* Longest first; of equal ones the earlier. */
static int by_size(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	if (x->size != y->size)
		return x->size < y->size ? 1 : -1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* keep[i] = 1 for the tests the pick keeps. */
static int choose(const struct ee_task *t, unsigned max, int pick, unsigned char *keep)
{
	if (pick == EE_PICK_FIRST) {
		memset(keep, 1, max);
		return 0;
	}
	struct ranked *r = calloc(t->n_tests, sizeof(*r));
	if (!r)
		return -1;
	for (size_t i = 0; i < t->n_tests; i++) {
		r[i].index = i;
		if (input_size(&t->tests[i], &r[i].size) < 0) {
			free(r);
			return -1;
		}
	}
	qsort(r, t->n_tests, sizeof(*r), by_size);
	for (size_t k = 0; k < max; k++)
		keep[r[k].index] = 1;
	free(r);
	return 0;
}

static int apply_budget(struct ee_task *t, unsigned max, int pick, struct ee_err *err)
{
	t->budget = (struct ee_test_budget){ max, pick, t->n_tests };
	if (t->n_tests <= max)
		return 0;
	unsigned char *keep = calloc(t->n_tests, 1);
	struct ee_test *tests = calloc(max, sizeof(*tests));
	if (!keep || !tests || choose(t, max, pick, keep) < 0) {
		free(keep);
		free(tests);
		memset(&t->budget, 0, sizeof(t->budget));
		return ee_fail(err, EE_ERR_USAGE, "%s: out of memory", t->task_id);
	}
	size_t n = 0;
	for (size_t i = 0; i < t->n_tests; i++) {
		if (keep[i]) {
			tests[n] = t->tests[i];
			tests[n++].task_index = i;
		} else
			ee_test_free(&t->tests[i]);
	}
	free(keep);
	free(t->tests);
	t->tests = tests;
	t->n_tests = n;
	return 0;
}

int ee_task_apply_rules(struct ee_task *t, const struct ee_task_rules *r, struct ee_err *err)
{
	t->stdlib_only = r->stdlib_only;
	if (r->has_compare && !t->compare_given)
		set_rule(t, &r->compare);
	return r->max_tests ? apply_budget(t, r->max_tests, r->pick, err) : 0;
}

const char *ee_test_pick_name(int pick)
{
	return ee_task_name_of(pick_names, COUNT(pick_names), pick);
}
