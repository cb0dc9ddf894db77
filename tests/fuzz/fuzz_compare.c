/* fuzz_compare.c - compare's inputs on hostile files: telling a summary
 * from a results file, the summary checks, and the comparison.
 *
 * Input: the bytes of one file. Invariants: a refused file's message starts
 * with its path; an accepted side passes ee_compare_check_summary; compared
 * with itself, it is one data set (ee_compare_pair), gating on every metric it has, nothing regresses and every
 * delta is 0; the report prints without crashing. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "results/compare.h"
#include "base/err.h"

#define MAX_GATED 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void self_compare(const struct ee_compare_side *s, FILE *devnull)
{
	struct ee_metric gated[MAX_GATED];
	struct ee_compare_options o = { 0.0, NULL, 0 };
	json_t *report, *row;
	size_t i, n = 0;

	if (ee_compare(s, s, &o, &report, NULL) < 0)
		abort();
	json_array_foreach (json_object_get(report, "metrics"), i, row) {
		const json_t *delta = json_object_get(row, "delta");
		if (json_is_number(delta) && json_number_value(delta) != 0.0)
			abort();
		if (n < MAX_GATED && json_is_number(delta) &&
		    ee_metric_parse(json_string_value(json_object_get(row, "metric")), &gated[n], NULL) == 0)
			n++;
	}
	ee_compare_print(report, 5, devnull);
	json_decref(report);
	o.gated = gated;
	o.n_gated = n;
	if (ee_compare(s, s, &o, &report, NULL) < 0)
		abort(); /* every gated metric is in both sides */
	if (json_array_size(json_object_get(report, "regressions")) != 0)
		abort();
	json_decref(report);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static FILE *devnull;
	static const unsigned long ks[] = { 1, 2, 10 };
	char path[64];
	struct ee_compare_side s;
	struct ee_err err = { 0 };

	if (fd < 0)
		fd = memfd_create("fuzz-compare", 0);
	if (!devnull)
		devnull = fopen("/dev/null", "we");
	if (fd < 0 || !devnull || ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (ee_compare_side_from_file(path, ks, 3, &s, &err) == 0) {
		if (ee_compare_check_summary(s.summary, path, NULL) < 0)
			abort();
		if (ee_compare_same_data(&s, &s) == 0 || ee_compare_pair(&s, &s, 0, ks, 3, NULL) < 0)
			abort(); /* a side is one data set with itself */
		self_compare(&s, devnull);
	} else if (strncmp(err.msg, path, strlen(path)) != 0 && strcmp(err.msg, "out of memory") != 0) {
		abort(); /* every refusal names the file */
	}
	ee_compare_side_free(&s);
	return 0;
}
