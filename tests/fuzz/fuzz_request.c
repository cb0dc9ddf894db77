/* fuzz_request.c - libFuzzer target for request.h: any bytes as a run body
 * and as a batch body; each must parse or fail with a one-line message
 * (printable: keys are echoed), never crash or leak. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "err.h"
#include "resource_limits.h"
#include "serve/request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ee_limits ceiling;
	ee_limits_default(&ceiling);
	struct ee_request_rules rules = { 8, EE_EXTRACT_AUTO, &ceiling };

	for (int kind = EE_REQUEST_RUN; kind <= EE_REQUEST_BATCH; kind++) {
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
		ee_request_free(&r);
	}
	return 0;
}
