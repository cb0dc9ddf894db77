/* fuzz_summary.c - the summary on hostile results files.
 *
 * Input: JSON lines. Each line that parses is added to a summary (rejected
 * records are fine); then the summary JSON and the table are rendered, the
 * table to /dev/null. Invariants: the summary counts exactly the accepted
 * records, its statuses add up to them, every k is either reported or
 * dropped with a reason, the details stay under their cap, the models
 * (when there are several) share out every record of a task, and every
 * reported pass@k has a bootstrap interval [lo, hi] within [0, 1]. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "results/summary.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const json_t *sum, unsigned long accepted, size_t nk)
{
	json_t *statuses = json_object_get(sum, "statuses"), *v;
	const char *key;
	json_int_t total = 0;

	if (json_integer_value(json_object_get(sum, "samples")) != (json_int_t)accepted)
		abort();
	json_object_foreach (statuses, key, v)
		total += json_integer_value(v);
	if (total != (json_int_t)accepted || json_object_size(statuses) != 5)
		abort();
	if (json_object_size(json_object_get(sum, "details")) > EE_SUMMARY_MAX_DETAILS + 1)
		abort();
	if (json_object_size(json_object_get(sum, "pass_at_k")) +
	            json_array_size(json_object_get(sum, "pass_at_k_dropped")) !=
	    nk)
		abort();
	json_object_foreach (json_object_get(sum, "pass_at_k"), key, v)
		if (!(json_real_value(v) >= 0.0 && json_real_value(v) <= 1.0))
			abort();
	json_int_t in_models = 0;
	json_object_foreach (json_object_get(sum, "models"), key, v)
		in_models += json_integer_value(json_object_get(v, "samples"));
	if (json_object_get(sum, "models") &&
	    in_models !=
	            (json_int_t)accepted - json_integer_value(json_object_get(sum, "samples_without_task")))
		abort(); /* every record of a task is in exactly one model */
	const json_t *cis = json_object_get(sum, "pass_at_k_ci");
	if (json_object_size(cis) != json_object_size(json_object_get(sum, "pass_at_k")))
		abort();
	json_object_foreach ((json_t *)cis, key, v) {
		double lo = json_real_value(json_array_get(v, 0)), hi = json_real_value(json_array_get(v, 1));
		if (json_array_size(v) != 2 || !(lo >= 0.0 && lo <= hi && hi <= 1.0))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	static const unsigned long ks[] = { 1, 2, 3, 0, 100 }; /* distinct: each reported or dropped */
	const char *p = (const char *)data, *end = p + size;
	struct ee_summary *s = ee_summary_new();
	unsigned long accepted = 0, line = 0;
	char where[32];

	if (!devnull)
		devnull = fopen("/dev/null", "we");
	if (!s || !devnull)
		abort();
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		json_t *rec = json_loadb(p, len, 0, NULL);
		struct ee_err err = { 0 };
		snprintf(where, sizeof(where), "fuzz:%lu", ++line);
		if (rec && ee_summary_add(s, rec, where, &err) == 0)
			accepted++;
		else if (rec && strncmp(err.msg, where, strlen(where)) != 0)
			abort(); /* every rejection names the line */
		json_decref(rec);
		p += len + 1;
	}
	json_t *sum = ee_summary_json(s, ks, sizeof(ks) / sizeof(ks[0]), 1.5);
	if (!sum)
		abort();
	check(sum, accepted, sizeof(ks) / sizeof(ks[0]));
	ee_summary_print(sum, devnull);
	json_decref(sum);
	ee_summary_free(s);
	return 0;
}
