/* test_harness_start.c - how the embedded harness is started (harness.h):
 * the pyc for the interpreter it was compiled by, the source otherwise,
 * both from a sealed memfd run as /proc/self/fd/6, never on the command
 * line (one argument holds at most 128 KiB, which the source outgrew). */
#include <criterion/criterion.h>

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/err.h"
#include "harness/harness.h"

/* The whole of fd's contents (from offset 0), or NULL. */
static char *slurp(int fd, size_t *len)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return NULL;
	char *buf = malloc((size_t)st.st_size + 1);
	if (!buf || pread(fd, buf, (size_t)st.st_size, 0) != st.st_size) {
		free(buf);
		return NULL;
	}
	buf[st.st_size] = '\0';
	*len = (size_t)st.st_size;
	return buf;
}

static void assert_sealed_file_argv(const struct ee_harness *h)
{
	cr_assert_geq(h->code_fd, 0);
	cr_expect_eq(fcntl(h->code_fd, F_GET_SEALS) & (F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW),
	             F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW, "the candidate cannot alter it");
	cr_expect_str_eq(h->argv[4], "/proc/self/fd/6");
	cr_expect_null(h->argv[5], "nothing of the harness on the command line");
	for (int i = 0; h->argv[i]; i++)
		cr_expect_lt(strlen(h->argv[i]), 4096, "argument %d", i);
}

Test(harness_start, an_interpreter_the_pyc_was_not_built_by_gets_the_source_from_a_file)
{
	struct ee_harness h;
	struct ee_err err = { 0 };
	cr_assert_eq(ee_harness_prepare("/bin/sh", &h, &err), 0, "%s", err.msg);
	cr_expect_eq(h.pyc, 0);
	assert_sealed_file_argv(&h);
	size_t len = 0;
	char *text = slurp(h.code_fd, &len);
	cr_assert_not_null(text);
	cr_expect_eq(len, strlen(ee_harness_py));
	cr_expect_eq(memcmp(text, ee_harness_py, len), 0, "the memfd holds the harness's source");
	free(text);
	ee_harness_release(&h);
	cr_expect_eq(h.code_fd, -1);
}

Test(harness_start, the_build_interpreter_gets_the_pyc)
{
	char real[PATH_MAX];
	if (!realpath("/usr/bin/python3", real) || strcmp(real, ee_harness_python) != 0)
		cr_skip_test("/usr/bin/python3 is not the interpreter the pyc was built by");
	struct ee_harness h;
	struct ee_err err = { 0 };
	cr_assert_eq(ee_harness_prepare("/usr/bin/python3", &h, &err), 0, "%s", err.msg);
	cr_expect_eq(h.pyc, 1);
	assert_sealed_file_argv(&h);
	size_t len = 0;
	char *pyc = slurp(h.code_fd, &len);
	cr_assert_not_null(pyc);
	cr_expect_eq(len, (size_t)(ee_harness_pyc_end - ee_harness_pyc));
	free(pyc);
	ee_harness_release(&h);
}

/* The interpreter runs the source from its memfd as fd 6 (a job that is not
 * JSON: the harness's own failure, exit 70, proves it started and ran). */
Test(harness_start, the_interpreter_runs_the_source_from_fd_6)
{
	struct ee_harness h;
	struct ee_err err = { 0 };
	cr_assert_eq(ee_harness_prepare("/bin/sh", &h, &err), 0, "%s", err.msg);
	int job[2], result[2];
	cr_assert_eq(pipe(job), 0);
	cr_assert_eq(pipe(result), 0);
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		close(job[1]); /* the job ends where the parent's write end closes */
		close(result[0]);
		if (dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0 || dup2(job[0], 3) < 0 ||
		    dup2(result[1], 4) < 0 || dup2(null, 5) < 0 || dup2(h.code_fd, 6) < 0)
			_exit(99);
		const char *argv[] = { "/usr/bin/python3", h.argv[1], h.argv[2], h.argv[3], h.argv[4], NULL };
		execv(argv[0], (char *const *)argv);
		_exit(98);
	}
	close(job[0]);
	close(result[1]);
	cr_assert_eq(write(job[1], "not json", 8), 8);
	close(job[1]);
	int status = 0;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 70, "status %#x", status);
	close(result[0]);
	ee_harness_release(&h);
}
