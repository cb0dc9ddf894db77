/* harness.c - choosing how to start the embedded harness (see harness.h). */
#include "harness/harness.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "err.h"
#include "sandbox/sandbox.h"

/* The pyc as a sealed, read-only-in-effect memfd. */
static int pyc_memfd(struct ee_err *err)
{
	size_t len = (size_t)(ee_harness_pyc_end - ee_harness_pyc);
	int fd = memfd_create("execeval-harness.pyc", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "memfd_create");
	if (write(fd, ee_harness_pyc, len) != (ssize_t)len ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
		close(fd);
		return ee_fail_errno(err, EE_ERR_SANDBOX, "prepare the harness memfd");
	}
	return fd;
}

int ee_harness_prepare(const char *python, struct ee_harness *ret, struct ee_err *err)
{
	char real[PATH_MAX];
	size_t pyc_len = (size_t)(ee_harness_pyc_end - ee_harness_pyc);
	int same = realpath(python, real) && strcmp(real, ee_harness_python) == 0 && pyc_len > 16;

	memset(ret, 0, sizeof(*ret));
	ret->code_fd = -1;
	ret->argv[0] = python;
	ret->argv[1] = "-I"; /* isolated: no user site, no PYTHON* variables, no cwd on sys.path */
	ret->argv[2] = "-S"; /* no site: the harness adds dist-packages itself */
	ret->argv[3] = "-B"; /* never write .pyc files */
	if (same) {
		ret->code_fd = pyc_memfd(err);
		if (ret->code_fd < 0)
			return -1;
		ret->argv[4] = "/proc/self/fd/6";
	} else {
		ret->argv[4] = "-c";
		ret->argv[5] = ee_harness_py;
	}
	return 0;
}

void ee_harness_release(struct ee_harness *h)
{
	if (h && h->code_fd >= 0) {
		close(h->code_fd);
		h->code_fd = -1;
	}
}
