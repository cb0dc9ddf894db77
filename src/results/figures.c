/* figures.c - the headline figures of a summary JSON (see figures.h). */
#include "results/figures.h"

#include <math.h>
#include <string.h>

#include "base/err.h"

#define MAX_K 1000000000ul

static double number_or_nan(const json_t *v)
{
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static long long count_or_absent(const json_t *v)
{
	return json_is_integer(v) && json_integer_value(v) >= 0 ? (long long)json_integer_value(v) : -1;
}

/* "1", "10": a positive decimal k without sign or leading zero. */
static unsigned long parse_k(const char *s)
{
	unsigned long k = 0;

	if (!*s || *s == '0')
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || k > MAX_K)
			return 0;
		k = k * 10 + (unsigned long)(*s - '0');
	}
	return k <= MAX_K ? k : 0;
}

static void smallest_k(const json_t *pass_at_k, struct ee_figures *f)
{
	const char *key;
	json_t *v;

	f->k = 0;
	f->pass_at_k = NAN;
	if (!json_is_object(pass_at_k))
		return;
	json_object_foreach ((json_t *)pass_at_k, key, v) {
		unsigned long k = parse_k(key);
		if (k && json_is_number(v) && (f->k == 0 || k < f->k)) {
			f->k = k;
			f->pass_at_k = json_number_value(v);
		}
	}
}

int ee_figures_of(const json_t *summary, const char *task_class, struct ee_figures *ret, struct ee_err *err)
{
	const json_t *b = summary;

	if (!json_is_object(summary))
		return ee_fail(err, EE_ERR_USAGE, "the summary is not a JSON object");
	if (task_class) {
		b = json_object_get(json_object_get(summary, "classes"), task_class);
		if (!json_is_object(b))
			return ee_fail(err, EE_ERR_USAGE, "the summary has no class '%.100s'", task_class);
	}
	ret->tasks = count_or_absent(json_object_get(b, "tasks"));
	ret->samples = count_or_absent(json_object_get(b, "samples"));
	smallest_k(json_object_get(b, "pass_at_k"), ret);
	ret->mean_score = number_or_nan(json_object_get(b, "mean_score"));
	ret->lint_pass_rate = number_or_nan(json_object_get(json_object_get(b, "lint"), "pass_rate"));
	ret->timeout_rate = NAN;
	const json_t *statuses = json_object_get(b, "statuses");
	if (json_is_object(statuses) && ret->samples > 0) {
		long long timeouts = count_or_absent(json_object_get(statuses, "timeout"));
		ret->timeout_rate = timeouts < 0 ? 0.0 : (double)timeouts / (double)ret->samples;
	}
	return 0;
}
