/* fuzz_cgroup.c - locating a cgroup from mountinfo and /proc/self/cgroup
 * texts (host.h, ee_cg_locate).
 *
 * Input: the mountinfo text, a NUL byte, the cgroup text (no NUL: both
 * are the whole input). Invariants, for memory, pids and the unified
 * hierarchy: a found cgroup has a directory and no reason; one not found
 * has no directory; every string is terminated within its array. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/host.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const char *mountinfo, const char *cgroup, const char *controller)
{
	struct ee_cg_controller c;
	int found = ee_cg_locate(mountinfo, cgroup, controller, &c);

	if (!memchr(c.dir, '\0', sizeof(c.dir)) || !memchr(c.why, '\0', sizeof(c.why)))
		abort();
	if (found != 0 && found != 1)
		abort();
	if (found && (!c.dir[0] || c.why[0] || c.version != (controller ? EE_CG_V1 : EE_CG_V2)))
		abort();
	if (!found && (c.dir[0] || c.version))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 2);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = text[size + 1] = '\0';
	const char *cgroup = text + strlen(text) + 1;
	if (cgroup > text + size)
		cgroup = text + size + 1; /* no NUL in the input: an empty cgroup text */
	check(text, cgroup, "memory");
	check(text, cgroup, "pids");
	check(text, cgroup, NULL);
	free(text);
	return 0;
}
