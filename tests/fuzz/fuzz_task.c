/* fuzz_task.c - libFuzzer target for task.h: any bytes that parse as JSON go
 * through format detection, every task format (auto and forced) and the
 * sample reader; each must return 0 or -1 with a message, never crash or leak. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/err.h"
#include "input/task.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_err(int rc, const struct ee_err *err)
{
	/* A failure always says why, in one line. */
	if (rc < 0 && (err->code != EE_ERR_USAGE || !err->msg[0] || strchr(err->msg, '\n')))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *j = json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	struct ee_task t;
	struct ee_sample s;
	struct ee_err err;

	if (!j)
		return 0;
	(void)ee_task_detect(j);
	for (int format = EE_FORMAT_AUTO; format < EE_FORMAT_COUNT; format++) {
		memset(&err, 0, sizeof(err));
		check_err(ee_task_from_json(j, format, "fuzz:1", &t, &err), &err);
		ee_task_free(&t);
		memset(&err, 0, sizeof(err));
		check_err(ee_task_from_json(j, format | (int)EE_TASK_MBPP_CHALLENGE, "fuzz:1", &t, &err),
		          &err);
		ee_task_free(&t);
	}
	memset(&err, 0, sizeof(err));
	check_err(ee_sample_from_json(j, "fuzz:1", &s, &err), &err);
	ee_sample_free(&s);
	json_decref(j);
	return 0;
}
