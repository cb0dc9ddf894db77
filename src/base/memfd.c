/* memfd.c - sealed memfds (see memfd.h). */
#include "base/memfd.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/err.h"

int ee_memfd_sealed(const char *name, const void *data, size_t len, struct ee_err *err)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "memfd_create %s", name);
	size_t off = 0;
	while (off < len) {
		ssize_t n = write(fd, (const char *)data + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			return ee_fail_errno(err, EE_ERR_SANDBOX, "write %s", name);
		}
		off += (size_t)n;
	}
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0 ||
	    lseek(fd, 0, SEEK_SET) < 0) {
		close(fd);
		return ee_fail_errno(err, EE_ERR_SANDBOX, "seal %s", name);
	}
	return fd;
}
