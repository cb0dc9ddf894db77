/* harness.c - choosing how to start the embedded harness (see harness.h). */
#include "harness/harness.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "base/memfd.h"

int ee_harness_pyc_applies(const char *python)
{
	char real[PATH_MAX];
	size_t pyc_len = (size_t)(ee_harness_pyc_end - ee_harness_pyc);
	return realpath(python, real) && strcmp(real, ee_harness_python) == 0 && pyc_len > 16;
}

int ee_harness_prepare(const char *python, struct ee_harness *ret, struct ee_err *err)
{
	size_t pyc_len = (size_t)(ee_harness_pyc_end - ee_harness_pyc);
	int same = ee_harness_pyc_applies(python);

	memset(ret, 0, sizeof(*ret));
	ret->code_fd = -1;
	ret->argv[0] = python;
	ret->argv[1] = "-I"; /* isolated: no user site, no PYTHON* variables, no cwd on sys.path */
	ret->argv[2] = "-S"; /* no site: the harness adds dist-packages itself */
	ret->argv[3] = "-B"; /* never write .pyc files */
	/* The source too goes in a file, not after -c: one argument of the
	 * command line holds at most 128 KiB (MAX_ARG_STRLEN), which the
	 * harness's source outgrew (execve's E2BIG). The interpreter tells a
	 * pyc from source by its magic number. */
	ret->pyc = same;
	if (same)
		ret->code_fd = ee_memfd_sealed("execeval-harness.pyc", ee_harness_pyc, pyc_len, err);
	else
		ret->code_fd =
		        ee_memfd_sealed("execeval-harness.py", ee_harness_py, strlen(ee_harness_py), err);
	if (ret->code_fd < 0)
		return -1;
	ret->argv[4] = "/proc/self/fd/6";
	return 0;
}

void ee_harness_release(struct ee_harness *h)
{
	if (h && h->code_fd >= 0) {
		close(h->code_fd);
		h->code_fd = -1;
	}
}
