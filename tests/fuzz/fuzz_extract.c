/* fuzz_extract.c - extraction never crashes and keeps its promises: the
 * result is never longer than the text; NONE gives the text as is; AUTO
 * without a block, markers or reasoning gives the whole text; FENCED without
 * a block gives nothing; a block's program is a slice of the text when no
 * reasoning was cut and the text has no space (so no indentation); the extraction's name
 * always fits. Each step is one bounded pass (no recursion), so a long input
 * only costs time linear in its size per mode. */
/* memmem: -D_GNU_SOURCE comes from the build */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "input/extract.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const char *text, size_t len, enum ee_extract_mode mode, const char *entry)
{
	struct ee_err err;
	struct ee_extract_info info;
	char *out, name[EE_EXTRACTION_NAME_MAX];
	size_t out_len;

	if (ee_extract_code(text, len, mode, entry, &out, &out_len, &info, &err) < 0)
		abort();
	if (out[out_len] != '\0' || out_len > len || info.imports != 0)
		abort();
	int whole = out_len == len && memcmp(out, text, len) == 0;
	int block = ee_extract_found_block(&info);
	if (mode == EE_EXTRACT_NONE && (info.how != EE_HOW_NONE || !whole))
		abort();
	if (mode == EE_EXTRACT_AUTO && info.how == EE_HOW_WHOLE_TEXT && !info.think_stripped && !whole)
		abort();
	if (mode == EE_EXTRACT_FENCED && !block && (info.how != EE_HOW_NO_BLOCK || out_len != 0))
		abort();
	if (block && !info.think_stripped && out_len > 0 && !memchr(text, ' ', len) &&
	    !memmem(text, len, out, out_len))
		abort();
	if (info.how == EE_HOW_ENTRY_POINT && (!entry || !entry[0]))
		abort();
	ee_extraction_name(&info, name, sizeof(name));
	if (strlen(name) >= sizeof(name) - 1 || strcmp(name, "unknown") == 0)
		abort();
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;

	check(text, size, EE_EXTRACT_AUTO, NULL);
	check(text, size, EE_EXTRACT_AUTO, "f");
	check(text, size, EE_EXTRACT_FENCED, "f");
	check(text, size, EE_EXTRACT_NONE, "f");
	return 0;
}
