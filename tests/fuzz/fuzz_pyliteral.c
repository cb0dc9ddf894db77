/* fuzz_pyliteral.c - the Python-literal reader, the assert shape and
 * Python's == on hostile input.
 *
 * Input: two parts split at the first NUL byte. The first is read as a
 * literal (ee_pyliteral_parse) and as an assert (ee_pyassert_convert); the
 * second, when it is JSON, is a canonical value from a hostile sandbox.
 * Invariants: whatever the reader accepts equals itself under
 * ee_judge_pyeq (a literal holds no nan) and is hashable-checked without
 * crashing; comparing it with the hostile value never crashes; every reason
 * is printable UTF-8. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "pyvalue/judge.h"
#include "pyvalue/pyliteral.h"
#include "base/text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_reason(const char *why)
{
	size_t n = strlen(why);

	for (size_t i = 0; i < n;) {
		size_t len = ee_utf8_char_len(why + i, n - i);
		if (len == 0 || (len == 1 && (unsigned char)why[i] < 0x20))
			abort();
		i += len;
	}
}

static void check_value(const json_t *v, const json_t *hostile)
{
	char why[256];
	struct ee_buf key;

	if (!ee_judge_pyeq(v, v, why, sizeof(why)))
		abort();
	ee_buf_init(&key, 1 << 20);
	(void)ee_judge_pykey(v, &key);
	ee_buf_free(&key);
	if (hostile) {
		ee_judge_pyeq(v, hostile, why, sizeof(why));
		check_reason(why);
		ee_judge_pyeq(hostile, v, why, sizeof(why));
		check_reason(why);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	const char *nul = memchr(s, '\0', size);
	size_t n1 = nul ? (size_t)(nul - s) : size;
	json_t *hostile = NULL;

	if (nul)
		hostile = json_loadb(nul + 1, size - n1 - 1, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);

	json_t *v = ee_pyliteral_parse(s, n1);
	if (v)
		check_value(v, hostile);
	json_decref(v);

	char *code = malloc(n1 + 1);
	if (code) {
		memcpy(code, s, n1);
		code[n1] = '\0';
		struct ee_pycall c;
		if (ee_pyassert_convert(code, &c) == 1) {
			if (!c.fn || !json_is_array(c.args) || !json_is_array(c.kwargs))
				abort();
			check_value(c.expected, hostile);
		}
		ee_pycall_free(&c);
		free(code);
	}
	json_decref(hostile);
	return 0;
}
