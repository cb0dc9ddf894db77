/* fuzz_events.c - the supervisor's event-stream validation on arbitrary
 * bytes: whatever a hostile harness writes, the stream ends in a consistent
 * state (no crash, no leak, no test both passed and violated). The first
 * byte chooses the chunk size, so framing is fed split at every boundary. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/err.h"
#include "events_task.h"
#include "verdict/events.h"
#include "input/task.h"

#define NONCE EVENTS_NONCE

static struct ee_task *make_task(void)
{
	static struct ee_task task;
	static int ready;
	if (!ready) {
		const char *json = EVENTS_TASK_JSON;
		json_t *o = json_loads(json, 0, NULL);
		struct ee_err err;
		if (!o || ee_task_from_json(o, EE_FORMAT_AUTO, "fuzz:1", &task, &err) < 0)
			__builtin_trap();
		json_decref(o);
		ready = 1;
	}
	return &task;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ee_stream s;
	if (size < 1)
		return 0;
	size_t chunk = (size_t)data[0] % 64 + 1;
	if (ee_stream_init(&s, make_task(), NONCE, 1, 0) < 0)
		__builtin_trap();
	for (size_t off = 1; off < size; off += chunk) {
		size_t n = size - off < chunk ? size - off : chunk;
		if (ee_stream_feed(&s, (const char *)data + off, n) == 1 && s.gate.answer != 'c' &&
		    s.gate.answer != 's')
			__builtin_trap();
	}
	ee_stream_finish(&s);
	if (s.tests.n_run > make_task()->n_tests)
		__builtin_trap();
	ee_stream_free(&s);
	return 0;
}
