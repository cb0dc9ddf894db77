/* fuzz_pickle_str.c - libFuzzer target for pickle_str.h: any bytes are
 * either a single pickled str, returned in place and inside the input, or
 * refused with a one-line reason; never a crash or a read past the end. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "input/pickle_str.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const unsigned char *s = NULL;
	size_t len = 0;
	char why[128];

	if (ee_pickle_str(data, size, &s, &len, why, sizeof(why)) == 0) {
		/* A string read in place, ending before STOP. */
		if (!s || s < data || len >= size || (size_t)(s - data) > size - len - 1 ||
		    data[size - 1] != '.')
			__builtin_trap();
	} else if (!why[0] || strchr(why, '\n')) {
		__builtin_trap();
	}
	return 0;
}
