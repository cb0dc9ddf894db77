/* summary_gen.c - what the summary says of generated tests and test tiers
 * (summary_int.h): the seed the records carry, the generated tests per
 * task, and pass@k on the canonical tier alone, so a run shows its score
 * on the fixed tests next to its score on fixed + generated ones (EvalPlus's
 * "base" and "base + plus" split; docs/summary.md, "generated").
 *
 * A sample passes the canonical tier when it has at least one canonical
 * test and all of them passed, or, without any, when it passed.
 */
#include <stdio.h>
#include <string.h>

#include "base/jsonfield.h"
#include "results/metrics.h"
#include "results/summary_int.h"

int sum_gen_check(const json_t *rec, const struct ee_jf *c)
{
	const json_t *seed = json_object_get(rec, "seed"), *gen = json_object_get(rec, "generated");

	if (seed && (!json_is_integer(seed) || json_integer_value(seed) < 0))
		return ee_jf_bad(c, "seed", "a whole number >= 0", seed);
	if (gen && !json_is_object(gen))
		return ee_jf_bad(c, "generated", "an object", gen);
	static const char *const keys[] = { "tests", "dropped" };
	for (size_t i = 0; gen && i < 2; i++) {
		const json_t *v = json_object_get(gen, keys[i]);
		if (v && (!json_is_integer(v) || json_integer_value(v) < 0)) {
			char field[32];
			snprintf(field, sizeof(field), "generated.%s", keys[i]);
			return ee_jf_bad(c, field, "a whole number >= 0", v);
		}
	}
	return 0;
}

static int canonical_passed(const json_t *rec, int passed)
{
	const json_t *tests = json_object_get(rec, "tests"), *t;
	size_t i, n = 0;

	json_array_foreach (tests, i, t) {
		const char *tier = json_string_value(json_object_get(t, "tier"));
		if (tier && strcmp(tier, "canonical") != 0)
			continue;
		n++;
		const char *status = json_string_value(json_object_get(t, "status"));
		if (!status || strcmp(status, "pass") != 0)
			return 0;
	}
	return n ? 1 : passed;
}

static int has_other_tier(const json_t *rec)
{
	const json_t *t;
	size_t i;

	json_array_foreach (json_object_get(rec, "tests"), i, t) {
		const char *tier = json_string_value(json_object_get(t, "tier"));
		if (tier && strcmp(tier, "canonical") != 0)
			return 1;
	}
	return 0;
}

void sum_gen_count(struct ee_summary *s, const json_t *rec, int passed, struct sum_task *t,
                   struct sum_task *mt)
{
	const json_t *seed = json_object_get(rec, "seed"), *gen = json_object_get(rec, "generated");
	int base = canonical_passed(rec, passed);

	t->c_canonical += (unsigned long)base;
	mt->c_canonical += (unsigned long)base;
	s->gen.other_tier |= has_other_tier(rec);
	if (seed) {
		unsigned long long v = (unsigned long long)json_integer_value(seed);
		if (!s->gen.seeds)
			s->gen.seed = v;
		s->gen.seeds += s->gen.seeds == 0 || (s->gen.seeds == 1 && v != s->gen.seed);
	}
	const json_t *cal = json_object_get(rec, "calibration");
	if (json_is_object(cal)) { /* --time-floor, --time-factor: one rule, or mixed */
		double floor_s = json_number_value(json_object_get(cal, "floor_s"));
		double factor = json_number_value(json_object_get(cal, "factor"));
		if (!s->gen.calibrations) {
			s->gen.floor_s = floor_s;
			s->gen.factor = factor;
			s->gen.calibrations = 1;
		} else if (floor_s != s->gen.floor_s || factor != s->gen.factor) {
			s->gen.calibrations = 2;
		}
	}
	if (gen && !t->gen_seen) { /* a task's tests once, whatever its samples */
		t->gen_seen = 1;
		s->gen.tasks++;
		s->gen.tests += (unsigned long)json_integer_value(json_object_get(gen, "tests"));
		s->gen.dropped += (unsigned long)json_integer_value(json_object_get(gen, "dropped"));
	}
}

int sum_gen_json(const struct ee_summary *s, const unsigned long *ks, size_t nk, json_t **ret)
{
	*ret = NULL;
	if (!s->gen.other_tier && !s->gen.seeds && !s->gen.tasks && !s->gen.calibrations)
		return 0;
	json_t *o = json_object(), *pk = json_object();
	char key[32];
	int bad = !o || !pk;

	for (size_t j = 0; !bad && j < nk && s->n_tasks; j++) {
		double sum = 0;
		for (size_t i = 0; i < s->n_tasks; i++)
			sum += ee_pass_at_k(s->tasks[i].n, s->tasks[i].c_canonical, ks[j]);
		snprintf(key, sizeof(key), "%lu", ks[j]);
		bad |= json_object_set_new(pk, key, json_real(sum / (double)s->n_tasks)) < 0;
	}
	if (bad || json_object_set_new(o, "pass_at_k_canonical", pk) < 0) {
		json_decref(o);
		if (!bad)
			return -1; /* pk went with the failed set */
		json_decref(pk);
		return -1;
	}
	json_t *seed = s->gen.seeds == 1  ? json_integer((json_int_t)s->gen.seed)
	               : s->gen.seeds > 1 ? json_string("mixed")
	                                  : json_null();
	if (json_object_set_new(o, "seed", seed) < 0 ||
	    json_object_set_new(o, "tasks", json_integer((json_int_t)s->gen.tasks)) < 0 ||
	    json_object_set_new(o, "tests", json_integer((json_int_t)s->gen.tests)) < 0 ||
	    json_object_set_new(o, "dropped", json_integer((json_int_t)s->gen.dropped)) < 0 ||
	    (s->gen.calibrations &&
	     json_object_set_new(o, "calibration",
	                         s->gen.calibrations > 1 ? json_string("mixed")
	                                                 : json_pack("{s:f, s:f}", "floor_s", s->gen.floor_s,
	                                                             "factor", s->gen.factor)) < 0)) {
		json_decref(o);
		return -1;
	}
	*ret = o;
	return 0;
}
