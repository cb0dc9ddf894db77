/* fuzz_pyprogram.c - the check-program shape (pyliteral.h,
 * ee_pyprogram_convert) on hostile program text.
 *
 * Input: the program's bytes (cut at the first NUL, as a C string).
 * Invariants: a converted program names an entry point that occurs in the
 * text and is not a keyword-sized empty name, has 1 to EE_PYPROG_MAX_CALLS
 * calls, each with an args array, a kwargs array of [name, value] pairs and
 * an expected value equal to itself under ee_judge_pyeq (a literal holds no
 * nan); the text holds no carriage return; converting again gives the same
 * calls; a refusal leaves the result zeroed. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pyvalue/judge.h"
#include "pyvalue/pyliteral.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_calls(const char *code, const struct ee_pyprogram *p)
{
	char why[256];
	json_t *c;
	size_t i;

	if (!p->fn || !p->fn[0] || !strstr(code, p->fn) || strchr(code, '\r'))
		abort();
	if (!json_is_array(p->calls) || json_array_size(p->calls) == 0 ||
	    json_array_size(p->calls) > EE_PYPROG_MAX_CALLS)
		abort();
	json_array_foreach (p->calls, i, c) {
		json_t *args = json_object_get(c, "args"), *kwargs = json_object_get(c, "kwargs");
		json_t *expected = json_object_get(c, "expected"), *pair;
		size_t k;
		if (!json_is_array(args) || !json_is_array(kwargs) || !expected ||
		    !ee_judge_pyeq(expected, expected, why, sizeof(why)))
			abort();
		json_array_foreach (kwargs, k, pair)
			if (json_array_size(pair) != 2 || !json_is_string(json_array_get(pair, 0)))
				abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *code = malloc(size + 1);
	struct ee_pyprogram p, again;

	if (!code)
		return 0;
	memcpy(code, data, size);
	code[size] = '\0';
	int rc = ee_pyprogram_convert(code, &p);
	if (rc == 1) {
		check_calls(code, &p);
		if (ee_pyprogram_convert(code, &again) != 1 || strcmp(again.fn, p.fn) != 0 ||
		    !json_equal(again.calls, p.calls))
			abort();
		ee_pyprogram_free(&again);
	} else if (rc == 0 && (p.fn || p.calls)) {
		abort();
	}
	ee_pyprogram_free(&p);
	free(code);
	return 0;
}
