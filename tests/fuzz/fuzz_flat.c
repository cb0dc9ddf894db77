/* fuzz_flat.c - the streamed values' checker (protocol/flat.h): whatever
 * the bytes, and wherever the parts are cut, it never reads out of bounds
 * and comes to the same verdict (refused, or the same whole values) as
 * when the text comes in one part.
 *
 * Input: byte 0 says whether handles are allowed and seeds the cuts, the
 * rest is the text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "protocol/flat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* -1 when refused, else whole values (or -2: not whole). */
static long verdict(const char *p, size_t n, int handles, unsigned seed)
{
	struct ee_flat f;
	struct ee_err err = { 0 };

	ee_flat_init(&f, handles);
	for (size_t at = 0; at < n;) {
		size_t step = seed ? 1 + (seed = seed * 1103515245u + 12345u) % 7 : n - at;
		if (step > n - at)
			step = n - at;
		if (ee_flat_feed(&f, p + at, step, &err) < 0)
			return -1;
		at += step;
	}
	return ee_flat_whole(&f) ? (long)f.values : -2;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int handles = data[0] & 1;
	unsigned seed = data[0] | 1u;
	const char *text = (const char *)data + 1;
	long whole = verdict(text, size - 1, handles, 0);
	long cut = verdict(text, size - 1, handles, seed);
	if (whole != cut)
		abort();
	return 0;
}
