/* composite.c - parsing and evaluating composite formulas (composite.h).
 *
 * The parsing and evaluation are base/formula.c's; here are the metrics. */
#include "results/composite.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "base/err.h"

/* By enum ee_cmetric; pass@ takes its k after the '@'. */
static const char *const metric_names[] = { "correctness", "pass@",        "mean_score",
	                                    "lint",        "timeout_rate", "error_rate" };

static const struct ee_formula_vars metric_vars = {
	.names = metric_names,
	.n = (int)(sizeof(metric_names) / sizeof(metric_names[0])),
	.noun = "metric",
	.list = "correctness, pass@K, mean_score, lint, timeout_rate, error_rate",
};

int ee_composite_parse(const char *text, struct ee_composite *ret, struct ee_err *err)
{
	return ee_formula_parse("composite", text, &metric_vars, &ret->f, err);
}

/* A metric's value in a summary block; NAN when absent. */
static double metric_value(void *ctx, int metric, unsigned k)
{
	const json_t *b = ctx;
	char key[24];
	const json_t *statuses = json_object_get(b, "statuses");
	double samples = json_number_value(json_object_get(b, "samples"));

	switch (metric) {
	case EE_CM_CORRECTNESS:
		return samples > 0 ? json_number_value(json_object_get(statuses, "pass")) / samples : NAN;
	case EE_CM_PASS_AT: {
		snprintf(key, sizeof(key), "%u", k);
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

int ee_composite_eval(const struct ee_composite *c, const json_t *block, double *ret, struct ee_err *err)
{
	int missing = 0, rc = ee_formula_eval(&c->f, metric_value, (void *)block, ret, &missing);

	if (rc == -1) {
		const struct ee_fnode *n = &c->f.nodes[missing];
		char k[16] = "";
		if (n->var == EE_CM_PASS_AT)
			snprintf(k, sizeof(k), "%u", n->k);
		return ee_fail(err, EE_ERR_USAGE, "%s%s is not in the summary%s", metric_names[n->var], k,
		               n->var == EE_CM_LINT ? " (it needs --lint)" : "");
	}
	if (rc < 0)
		return ee_fail(err, EE_ERR_USAGE, "the value is not finite (a division by zero?)");
	return 0;
}

int ee_composite_add(const struct ee_composite *c, json_t *summary, struct ee_err *err)
{
	const char *name;
	json_t *cls;

	json_object_foreach (json_object_get(summary, "classes"), name, cls)
		if (json_object_set_new(cls, "composite", ee_composite_json(c, cls)) < 0)
			return ee_fail(err, EE_ERR_USAGE, "out of memory");
	/* several models: each its own, from its own metrics (the top level's
	 * figures over tasks would pool them, so its composite is null) */
	json_object_foreach (json_object_get(summary, "models"), name, cls)
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
	json_t *o = json_pack("{s:s, s:i}", "formula", c->f.text, "version", EE_COMPOSITE_VERSION);

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
