/* test_write_watch.c - which writes count as outside /tmp (the path
 * classification of sandbox/write_watch.h), and the table of writing
 * calls against the seccomp filter's list of watched ones. */
#include <criterion/criterion.h>
#include <limits.h>
#include <string.h>

#include "sandbox/seccomp.h"
#include "sandbox/write_watch.h"

struct path_case {
	const char *base;
	const char *path;
	int allowed;
};

static const struct path_case cases[] = {
	{ NULL, "/tmp/x", 1 },
	{ NULL, "/tmp", 1 },
	{ NULL, "/tmp/a/b/../c", 1 },
	{ NULL, "//tmp//x", 1 },
	{ NULL, "/tmpx", 0 },
	{ NULL, "/tmp/../usr/x", 0 },
	{ NULL, "/tmp/../../../tmp/x", 1 },
	{ NULL, "/usr/x", 0 },
	{ NULL, "/x", 0 },
	{ NULL, "/", 0 },
	{ NULL, "/etc/passwd", 0 },
	{ NULL, "/home/x", 0 },
	{ NULL, "/dev/shm/sem.x", 1 },
	{ NULL, "/dev/null", 1 },
	{ NULL, "/dev/urandom", 1 },
	{ NULL, "/dev/nullx", 0 },
	{ NULL, "/dev/x", 0 },
	{ NULL, "/dev/fd/1", 1 },
	{ NULL, "/proc/self/fd/4", 1 },
	{ NULL, "/proc/12/fd/4", 1 },
	{ NULL, "/proc/self/fd/4/x", 0 },
	{ NULL, "/proc/self/fd", 0 },
	{ NULL, "/proc/sys/kernel/hostname", 0 },
	{ NULL, "/proc/self/attr/current", 0 },
	/* relative: to the cwd or a descriptor's directory */
	{ "/tmp", "x", 1 },
	{ "/tmp", "./a/./b", 1 },
	{ "/tmp", "", 1 },
	{ "/tmp", "../usr/x", 0 },
	{ "/usr", "x", 0 },
	{ "/usr", "../tmp/x", 1 },
	{ "/", "x", 0 },
	{ "/", "tmp/x", 1 },
	{ "/tmp/d", "..", 1 },
	{ "/tmp", "..", 0 },
	/* an absolute path ignores the base */
	{ "/usr", "/tmp/x", 1 },
	{ "/tmp", "/usr/x", 0 },
};

Test(write_watch, paths_inside_tmp_and_the_sandboxs_devices_are_allowed)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_expect_eq(ee_write_path_allowed(cases[i].base, cases[i].path), cases[i].allowed,
		             "base %s path %s: want %d", cases[i].base ? cases[i].base : "(none)",
		             cases[i].path, cases[i].allowed);
}

Test(write_watch, a_path_past_the_buffer_is_outside)
{
	static char longp[3 * PATH_MAX];
	memset(longp, 'a', sizeof(longp) - 1);
	memcpy(longp, "/tmp/", 5);
	cr_expect_eq(ee_write_path_allowed(NULL, longp), 0);
}

Test(write_watch, every_writing_call_is_on_the_allow_list_with_its_paths)
{
	static const char *const writers[] = { "open",      "openat",   "creat",    "mkdir",   "mkdirat",
		                               "rmdir",     "unlink",   "unlinkat", "rename",  "renameat",
		                               "renameat2", "link",     "linkat",   "symlink", "symlinkat",
		                               "chmod",     "fchmodat", "truncate", "utime",   "utimes",
		                               "utimensat", "futimesat" };
	for (size_t i = 0; i < sizeof(writers) / sizeof(writers[0]); i++) {
		const struct ee_write_call *c = ee_write_call_find(writers[i]);
		cr_assert_not_null(c, "%s", writers[i]);
		cr_expect(c->n >= 1 && c->n <= 2, "%s", c->name);
		for (unsigned k = 0; k < c->n; k++)
			cr_expect(c->path_arg[k] >= 0 && c->path_arg[k] < 6, "%s", c->name);
		/* watched only if allowed at all: a refused call stays refused */
		int allowed = 0;
		for (size_t j = 0; ee_seccomp_allowed[j]; j++)
			allowed |= strcmp(ee_seccomp_allowed[j], writers[i]) == 0;
		cr_expect(allowed, "%s is not on the allow-list", writers[i]);
	}
	cr_expect_null(ee_write_call_find("read"));
	cr_expect_null(ee_write_call_find("openat2")); /* refused, not watched */
	cr_expect_null(ee_write_call_find("fchmod"));
	cr_expect_null(ee_write_call_find("mknod")); /* refused */
}

/* ---- the filter and the supervisor's answer, end to end in a child ---- */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/err.h"
#include "base/tally.h"
#include "sandbox/notify.h"

static struct ee_seccomp_prog watching(void)
{
	struct ee_seccomp_prog p;
	struct ee_err err = { 0 };
	cr_assert_eq(ee_seccomp_compile(EE_SECCOMP_NOTIFY | EE_SECCOMP_WATCH_WRITES, &p, &err), 0, "%s",
	             err.msg);
	return p;
}

/* Without a listener a notified call fails ENOSYS: which calls the filter
 * sends to the supervisor, seen from the calls' errors. */
Test(write_watch, the_filter_sends_writes_and_only_writes_to_the_supervisor)
{
	struct ee_seccomp_prog p = watching();
	pid_t pid = fork();
	if (pid == 0) {
		struct ee_err err;
		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		if (ee_seccomp_load(&p, NULL, &err) < 0)
			_exit(100);
		int ro = open("/dev/null", O_RDONLY | O_CLOEXEC);
		int ro_at = openat(AT_FDCWD, "/dev/null", O_RDONLY | O_APPEND | O_CLOEXEC);
		errno = 0;
		int wr = open("/dev/null", O_WRONLY | O_CLOEXEC);
		int wr_errno = errno;
		errno = 0;
		int mk = mkdir("/nonexistent-ee/x", 0700);
		int mk_errno = errno;
		errno = 0;
		int st = access("/nonexistent-ee/x", F_OK); /* reads: ENOENT from the kernel */
		int st_errno = errno;
		if (ro < 0 || ro_at < 0)
			_exit(1);
		if (wr != -1 || wr_errno != ENOSYS)
			_exit(2);
		if (mk != -1 || mk_errno != ENOSYS)
			_exit(3);
		if (st != -1 || st_errno != ENOENT)
			_exit(4);
		_exit(0);
	}
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: %d", WEXITSTATUS(status));
	ee_seccomp_free(&p);
}

/* The child writes inside /tmp, outside it and makes a refused call; the
 * parent answers as the supervisor does: the writes continue (the kernel
 * decides: ENOENT for a missing directory), only the one outside counts,
 * the refused call is EPERM and counted by name. */
Test(write_watch, writes_continue_and_only_those_outside_tmp_count)
{
	struct ee_seccomp_prog p = watching();
	int sv[2];
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	pid_t pid = fork();
	if (pid == 0) {
		struct ee_err err;
		int listener;
		close(sv[0]);
		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		if (ee_seccomp_load(&p, &listener, &err) < 0 || listener < 0)
			_exit(100);
		char m = 'l';
		if (ee_notify_send(sv[1], &m, 1, listener) < 0)
			_exit(101);
		close(listener);
		char tmp[64];
		snprintf(tmp, sizeof(tmp), "/tmp/ee-write-watch-%d", (int)getpid());
		int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0)
			_exit(1);
		close(fd);
		if (chdir("/tmp") < 0 || unlink(tmp + 5) < 0) /* relative to the cwd, /tmp */
			_exit(2);
		errno = 0;
		if (open("/nonexistent-ee/x", O_WRONLY | O_CREAT | O_CLOEXEC, 0600) != -1 || errno != ENOENT)
			_exit(3);
		errno = 0;
		if (socket(AF_INET, SOCK_STREAM, 0) != -1 || errno != EPERM)
			_exit(4);
		_exit(0);
	}
	close(sv[1]);
	char m;
	int listener;
	cr_assert_eq(ee_notify_recv(sv[0], &m, 1, &listener), 1);
	cr_assert_geq(listener, 0);
	struct ee_tally t = { 0 };
	int writes = 0;
	for (;;) {
		struct pollfd pfd = { listener, POLLIN, 0 };
		if (poll(&pfd, 1, 5000) <= 0)
			break;
		int r = ee_notify_answer(listener, &t);
		if (r < 0)
			break;
		writes += r;
	}
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: %d", WEXITSTATUS(status));
	cr_expect_eq(writes, 3); /* the open in /tmp, the unlink, the open outside */
	cr_expect_eq(ee_tally_get(&t, EE_WRITE_OUTSIDE_TMP), 1);
	cr_expect_eq(ee_tally_get(&t, "socket"), 1);
	close(listener);
	close(sv[0]);
	ee_seccomp_free(&p);
}
