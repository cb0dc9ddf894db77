/* generated.c - a native task's reference and input generator (task.h,
 * struct ee_task_gen; docs/generated.md): reading the fields, the key that
 * caches a (task, seed)'s inputs, and turning the reference's answers into
 * call tests the supervisor judges.
 *
 * The tests are strict calls (canonical arguments in, Python's == on the
 * canonical result; with generated_float_tol, EvalPlus's comparison with it
 * as the atol: pyvalue/judge.h, ee_judge_evalplus), so a tuple stays a
 * tuple and a set a set; the expected values never enter the candidate's
 * sandbox.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/jsonfield.h"
#include "base/sha256.h"
#include "input/task.h"
#include "input/task_int.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* More inputs than this would make one reference run's reply too large. */
#define MAX_GENERATED 10000

static const char *const tier_names[] = { "canonical", "edge", "property" };
static const struct ee_jf_num_rule non_negative = { 0, 1, 0, "a number >= 0" };
static const struct ee_jf_num_rule count_rule = { 1, 1, 1, "a whole number >= 1" };

static void gen_free(struct ee_task_gen *g)
{
	if (!g)
		return;
	free(g->reference);
	free(g->generate);
	json_decref(g->inputs);
	free(g);
}

void ee_task_gen_free(struct ee_task *t)
{
	gen_free(t->gen);
	t->gen = NULL;
}

int ee_task_parse_gen(const struct ee_jf *c, const json_t *obj, struct ee_task *t)
{
	static const char *const only_with[] = { "n_generated", "generated_tier", "generated_float_tol" };
	int has_ref = json_object_get(obj, "reference") != NULL;
	int has_gen = json_object_get(obj, "generate") != NULL;
	double n = 20;

	if (!has_ref && !has_gen) {
		for (size_t i = 0; i < COUNT(only_with); i++)
			if (json_object_get(obj, only_with[i]))
				return ee_jf_fail(c, only_with[i], "needs 'reference' and 'generate'");
		return 0;
	}
	if (!has_ref || !has_gen)
		return ee_jf_fail(c, has_ref ? "generate" : "reference",
		                  "missing (a task with '%s' needs both reference and generate)",
		                  has_ref ? "reference" : "generate");
	struct ee_task_gen *g = calloc(1, sizeof(*g));
	if (!g)
		return ee_jf_oom(c);
	t->gen = g;
	g->tier = EE_TIER_PROPERTY;
	g->float_tol = -1;
	if (ee_jf_str(c, obj, "reference", 1, NULL, &g->reference) < 0 ||
	    ee_jf_str(c, obj, "generate", 1, NULL, &g->generate) < 0 ||
	    ee_jf_num(c, obj, "n_generated", &count_rule, &n, NULL) < 0 ||
	    ee_jf_enum(c, obj, "generated_tier", tier_names, COUNT(tier_names), EE_TIER_PROPERTY, &g->tier) <
	            0 ||
	    ee_jf_num(c, obj, "generated_float_tol", &non_negative, &g->float_tol, NULL) < 0)
		return -1;
	if (n > MAX_GENERATED)
		return ee_jf_fail(c, "n_generated", "expected at most %d, got %.0f", MAX_GENERATED, n);
	g->n = (unsigned)n;
	if (!t->entry_point || !t->entry_point[0])
		return ee_jf_fail(c, "entry_point", "missing (generated tests call it)");
	return 0;
}

static void hash_str(struct ee_sha256 *h, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	ee_sha256_update(h, &n, sizeof(n)); /* length first: no two fields run together */
	ee_sha256_update(h, s ? s : "", n);
}

void ee_task_gen_hash(const struct ee_task *t, char hex[65])
{
	struct ee_sha256 h;
	uint8_t d[EE_SHA256_LEN];
	unsigned n = t->gen ? t->gen->n : 0;

	ee_sha256_init(&h);
	hash_str(&h, t->entry_point);
	hash_str(&h, t->gen ? t->gen->reference : NULL);
	hash_str(&h, t->gen ? t->gen->generate : NULL);
	char *given = t->gen && t->gen->inputs ? json_dumps(t->gen->inputs, JSON_COMPACT) : NULL;
	hash_str(&h, given);
	free(given);
	ee_sha256_update(&h, &n, sizeof(n));
	ee_sha256_final(&h, d);
	ee_sha256_hex(d, hex);
}

/* splitmix64: a small, well-mixed stream from one 64-bit seed, so the
 * holdout is the same on every host for the same seed and task. */
static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* hidden[i] = 1 for round(n * fraction) of the n tests, a seeded pick. */
static int pick_hidden(const char *task_id, unsigned long long seed, double fraction, size_t n,
                       unsigned char *hidden)
{
	size_t k = (size_t)llround(fraction * (double)n);
	size_t *ix = malloc((n ? n : 1) * sizeof(*ix));
	uint64_t x = seed;

	if (!ix)
		return -1;
	for (const char *p = task_id; *p; p++) /* FNV-1a: each task its own pick */
		x = (x ^ (unsigned char)*p) * 0x100000001b3ull;
	for (size_t i = 0; i < n; i++)
		ix[i] = i;
	for (size_t i = n; i > 1; i--) { /* Fisher-Yates */
		size_t j = (size_t)(splitmix(&x) % i);
		size_t tmp = ix[i - 1];
		ix[i - 1] = ix[j];
		ix[j] = tmp;
	}
	for (size_t i = 0; i < k && i < n; i++)
		hidden[ix[i]] = 1;
	free(ix);
	return 0;
}

static int make_test(struct ee_test *test, const struct ee_task *t, size_t input, const json_t *args,
                     json_t *expected, int hidden)
{
	ee_test_init(test, EE_TEST_CALL, hidden);
	test->tier = input < t->gen->n_base ? EE_TIER_CANONICAL : t->gen->tier;
	test->float_tol = t->gen->float_tol;
	test->strict = 1;
	test->fn = strdup(t->entry_point);
	test->args = json_deep_copy(args);
	test->kwargs = json_array();
	test->expected = json_incref(expected);
	return test->fn && test->args && test->kwargs ? 0 : -1;
}

int ee_task_add_generated(struct ee_task *t, const json_t *inputs, json_t *const *outputs,
                          unsigned long long seed, double hidden_fraction, struct ee_err *err)
{
	return ee_task_add_generated_timed(t, inputs, outputs, NULL, seed, hidden_fraction, err);
}

/* A time below the clock's grain still divides: 1 us. */
#define MIN_REFERENCE_MS 0.001

double ee_test_limit_ms(const struct ee_test *t, const struct ee_calibration *c)
{
	if (!c || c->factor <= 0 || t->reference_ms <= 0)
		return 0;
	double limit = c->factor * t->reference_ms;
	if (limit < c->floor_ms)
		limit = c->floor_ms;
	if (c->cap_ms > 0 && limit > c->cap_ms)
		limit = c->cap_ms;
	return ceil(limit);
}

int ee_task_add_generated_timed(struct ee_task *t, const json_t *inputs, json_t *const *outputs,
                                const double *ref_ms, unsigned long long seed, double hidden_fraction,
                                struct ee_err *err)
{
	size_t n_in = json_array_size(inputs), made = 0, k = 0;

	if (!t->gen)
		return ee_fail(err, EE_ERR_USAGE, "%s: no reference and generate", t->task_id);
	for (size_t i = 0; i < n_in; i++)
		made += outputs[i] != NULL;
	unsigned char *hidden = calloc(made ? made : 1, 1);
	struct ee_test *tests = calloc(t->n_tests + made, sizeof(*tests));
	if (!hidden || !tests ||
	    (hidden_fraction > 0 && pick_hidden(t->task_id, seed, hidden_fraction, made, hidden) < 0))
		goto oom;
	for (size_t i = 0; i < n_in; i++) {
		if (!outputs[i])
			continue;
		struct ee_test *test = &tests[t->n_tests + k];
		test->task_index = t->n_tests + k;
		if (make_test(test, t, i, json_array_get(inputs, i), outputs[i], hidden[k]) < 0) {
			k++;
			goto oom;
		}
		if (ref_ms) /* unknown (-1) stays 0: such a test is not calibrated */
			test->reference_ms = ref_ms[i] < 0 ? 0 : fmax(ref_ms[i], MIN_REFERENCE_MS);
		k++;
	}
	if (t->n_tests) /* an EvalPlus row has none of its own */
		memcpy(tests, t->tests, t->n_tests * sizeof(*tests));
	free(t->tests);
	t->tests = tests;
	t->n_tests += made;
	t->gen->added = 1;
	t->gen->seed = seed;
	t->gen->made = made;
	t->gen->dropped = n_in - made;
	t->gen->hidden = 0;
	for (size_t i = 0; i < made; i++)
		t->gen->hidden += hidden[i];
	free(hidden);
	return 0;
oom:
	for (size_t i = 0; tests && i < k; i++)
		ee_test_free(&tests[t->n_tests + i]);
	free(tests);
	free(hidden);
	return ee_fail(err, EE_ERR_USAGE, "%s: out of memory adding generated tests", t->task_id);
}
