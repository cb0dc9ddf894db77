/* fuzz_extract.c - extraction never crashes and keeps its promises:
 * the result is the whole text (NONE, or AUTO without a block), a slice of
 * the text when a block was found, or empty (FENCED without a block). */
/* memmem: -D_GNU_SOURCE comes from the build */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "extract.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const char *text, size_t len, enum ee_extract_mode mode)
{
	struct ee_err err;
	char *out;
	size_t out_len;
	int found;

	if (ee_extract(text, len, mode, &out, &out_len, &found, &err) < 0)
		abort();
	if (out[out_len] != '\0' || out_len > len)
		abort();
	int whole = out_len == len && memcmp(out, text, len) == 0;
	if (mode == EE_EXTRACT_NONE && (found || !whole))
		abort();
	if (mode == EE_EXTRACT_AUTO && !found && !whole)
		abort();
	if (mode == EE_EXTRACT_FENCED && !found && out_len != 0)
		abort();
	if (found && out_len > 0 && !memmem(text, len, out, out_len))
		abort();
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;

	check(text, size, EE_EXTRACT_AUTO);
	check(text, size, EE_EXTRACT_FENCED);
	check(text, size, EE_EXTRACT_NONE);
	return 0;
}
