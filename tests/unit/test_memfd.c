/* test_memfd.c - sealed memfds (memfd.h): what the supervisor wrote is what
 * the sandbox reads, and no holder of the fd can change it. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/err.h"
#include "base/memfd.h"

static const char data[] = "{\"job\": 1}";

Test(memfd, holds_the_bytes_from_offset_0_and_closes_on_exec)
{
	struct ee_err err = { 0 };
	char buf[64] = { 0 };
	int fd = ee_memfd_sealed("job", data, sizeof(data) - 1, &err);

	cr_assert_geq(fd, 0, "%s", err.msg);
	cr_expect_eq(read(fd, buf, sizeof(buf)), (ssize_t)sizeof(data) - 1);
	cr_expect_str_eq(buf, data);
	cr_expect(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
}

Test(memfd, every_change_is_refused)
{
	struct ee_err err = { 0 };
	int fd = ee_memfd_sealed("job", data, sizeof(data) - 1, &err);

	cr_assert_geq(fd, 0, "%s", err.msg);
	int seals = fcntl(fd, F_GET_SEALS);
	cr_expect_eq(seals, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
	errno = 0;
	cr_expect_eq(pwrite(fd, "x", 1, 0), -1, "written over");
	cr_expect_eq(errno, EPERM);
	cr_expect_eq(pwrite(fd, "x", 1, sizeof(data)), -1, "grown by a write");
	cr_expect_eq(ftruncate(fd, 1), -1, "shrunk");
	cr_expect_eq(ftruncate(fd, 4096), -1, "grown");
	cr_expect_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE), -1, "sealed again");
	cr_expect_eq(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), MAP_FAILED,
	             "mapped writable");
	close(fd);
}

Test(memfd, empty_data_is_an_empty_sealed_file)
{
	struct ee_err err = { 0 };
	char c;
	int fd = ee_memfd_sealed("empty", "", 0, &err);

	cr_assert_geq(fd, 0, "%s", err.msg);
	cr_expect_eq(read(fd, &c, 1), 0);
	cr_expect_eq(ftruncate(fd, 1), -1);
	close(fd);
}
