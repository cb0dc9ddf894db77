/* fuzz_results.c - reading a results file (resume, merge, metrics input) on
 * arbitrary bytes: never a crash, a visit for every accepted record, and a
 * torn last line reported rather than visited. */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/err.h"
#include "results/results.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int visit(void *ctx, const json_t *rec, const char *where, struct ee_err *err)
{
	(void)where, (void)err;
	if (!json_is_integer(json_object_get(rec, "sample")))
		__builtin_trap(); /* only records with a sample index are visited */
	struct ee_done_set *done = ctx;
	const char *id = json_string_value(json_object_get(rec, "task_id"));
	return ee_done_insert(done, id ? id : "", (long)json_integer_value(json_object_get(rec, "sample")));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	char path[64];
	struct ee_done_set done = { 0 };
	struct ee_err err;
	int torn;

	if (fd < 0)
		fd = memfd_create("fuzz-results", 0);
	if (fd < 0 || ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	(void)ee_results_read(path, visit, &done, &torn, &err);
	ee_done_free(&done);
	return 0;
}
