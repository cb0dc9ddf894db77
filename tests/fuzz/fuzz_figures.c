/* fuzz_figures.c - the headline figures (figures.h) of hostile summaries.
 *
 * Input: any bytes; when they parse as JSON, the figures are read overall
 * and for every class the summary names (and one it does not). Invariants:
 * no crash or leak; a k is positive exactly when pass@k is a number; counts
 * are -1 or at least 0; a timeout rate exists only with a positive sample
 * count; an unknown class is an error, a summary that is an object is not. */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/err.h"
#include "results/figures.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct ee_figures *f)
{
	if ((f->k > 0) != !isnan(f->pass_at_k))
		abort();
	if (f->tasks < -1 || f->samples < -1)
		abort();
	if (!isnan(f->timeout_rate) && f->samples <= 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *s = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
	struct ee_figures f;
	struct ee_err err;
	const char *name;
	json_t *v;

	if (!s)
		return 0;
	int rc = ee_figures_of(s, NULL, &f, &err);
	if ((rc == 0) != json_is_object(s))
		abort();
	if (rc == 0)
		check(&f);
	json_object_foreach (json_object_get(s, "classes"), name, v) {
		rc = ee_figures_of(s, name, &f, &err);
		if ((rc == 0) != json_is_object(v))
			abort();
		if (rc == 0)
			check(&f);
	}
	if (json_is_object(s) && !json_object_get(json_object_get(s, "classes"), "\x01none") &&
	    ee_figures_of(s, "\x01none", &f, &err) == 0)
		abort();
	json_decref(s);
	return 0;
}
