/* fuzz_request.c - libFuzzer target for request.h: any bytes as a run body
 * and as a batch body, with and without strict asserts; each must parse or fail with a one-line message
 * (printable: keys are echoed), never crash or leak; a body that parses has
 * the tests its prescan (prescan.h) counted from its bytes, and the scan
 * follows it to its end. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/err.h"
#include "base/resource_limits.h"
#include "serve/prescan.h"
#include "serve/request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ee_limits ceiling;
	ee_limits_default(&ceiling);
	for (int i = 0; i < 4; i++) {
		int kind = i & 1 ? EE_REQUEST_BATCH : EE_REQUEST_RUN;
		struct ee_request_rules rules = { .max_runs = 8,
			                          .extract = EE_EXTRACT_AUTO,
			                          .ceiling = &ceiling,
			                          .strict_asserts = i >> 1,
			                          .max_tests = 64,
			                          .max_request_tests = 256,
			                          .max_values = 4096 };
		struct ee_request r;
		struct ee_err err;
		memset(&r, 0, sizeof(r));
		memset(&err, 0, sizeof(err));
		int rc = ee_request_parse((const char *)data, size, kind, &rules, &r, &err);
		if (rc < 0 && (err.code != EE_ERR_USAGE || !err.msg[0] || strchr(err.msg, '\n') ||
		               strchr(err.field, '\n') || r.runs))
			__builtin_trap();
		if (rc == 0 && (r.n_runs == 0 || r.n_runs > 8 || !r.runs[0].program))
			__builtin_trap();
		struct ee_prescan pre;
		if (rc == 0) { /* a body that parsed is one the scan follows, with the same tests */
			if (ee_prescan((const char *)data, size, &pre) != EE_PRESCAN_OK)
				__builtin_trap();
			size_t want = kind == EE_REQUEST_RUN
			                      ? pre.task_tests
			                      : pre.own_tests + pre.runs_without_task * pre.task_tests;
			if (r.tests != want || pre.values > 4096)
				__builtin_trap();
		}
		ee_request_free(&r);
	}
	return 0;
}
