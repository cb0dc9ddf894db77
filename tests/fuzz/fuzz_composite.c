/* fuzz_composite.c - libFuzzer target for composite.h: any text as a
 * formula parses or fails with a one-line "--composite: " message; a parsed
 * one evaluates over a fixed block to a finite value or a reason. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "results/composite.h"
#include "base/err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[1024];
	struct ee_composite c;
	struct ee_err err;

	if (size >= sizeof(text))
		size = sizeof(text) - 1;
	memcpy(text, data, size);
	text[size] = '\0';
	memset(&err, 0, sizeof(err));
	if (ee_composite_parse(text, &c, &err) < 0) {
		if (strncmp(err.msg, "--composite: ", 13) != 0 || strchr(err.msg, '\n'))
			__builtin_trap();
		return 0;
	}
	if (c.f.n_nodes <= 0 || c.f.n_nodes > EE_COMPOSITE_MAX_NODES || c.f.root != c.f.n_nodes - 1)
		__builtin_trap();
	json_t *block =
	        json_loads("{\"samples\": 3, \"statuses\": {\"pass\": 1, \"timeout\": 1}, \"pass_at_k\": "
	                   "{\"1\": 0.3}, \"mean_score\": 0.5, \"lint\": {\"pass_rate\": 0.25}}",
	                   0, NULL);
	json_t *j = ee_composite_json(&c, block);
	if (!j)
		__builtin_trap();
	json_decref(j);
	json_decref(block);
	return 0;
}
