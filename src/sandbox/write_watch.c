/* write_watch.c - writes outside /tmp, counted (see write_watch.h). */
#include "sandbox/write_watch.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* One call a line: its paths, each (directory descriptor, path) arguments. */
static const struct ee_write_call calls[] = {
	{ "open", 1, { -1, -1 }, { 0, -1 } },
	{ "openat", 1, { 0, -1 }, { 1, -1 } },
	{ "creat", 1, { -1, -1 }, { 0, -1 } },
	{ "mkdir", 1, { -1, -1 }, { 0, -1 } },
	{ "mkdirat", 1, { 0, -1 }, { 1, -1 } },
	{ "rmdir", 1, { -1, -1 }, { 0, -1 } },
	{ "unlink", 1, { -1, -1 }, { 0, -1 } },
	{ "unlinkat", 1, { 0, -1 }, { 1, -1 } },
	{ "rename", 2, { -1, -1 }, { 0, 1 } },
	{ "renameat", 2, { 0, 2 }, { 1, 3 } },
	{ "renameat2", 2, { 0, 2 }, { 1, 3 } },
	/* link and symlink write only where the new name goes */
	{ "link", 1, { -1, -1 }, { 1, -1 } },
	{ "linkat", 1, { 2, -1 }, { 3, -1 } },
	{ "symlink", 1, { -1, -1 }, { 1, -1 } },
	{ "symlinkat", 1, { 1, -1 }, { 2, -1 } },
	{ "chmod", 1, { -1, -1 }, { 0, -1 } },
	{ "fchmodat", 1, { 0, -1 }, { 1, -1 } },
	{ "truncate", 1, { -1, -1 }, { 0, -1 } },
	{ "utime", 1, { -1, -1 }, { 0, -1 } },
	{ "utimes", 1, { -1, -1 }, { 0, -1 } },
	/* a NULL path: the descriptor's own file */
	{ "utimensat", 1, { 0, -1 }, { 1, -1 } },
	{ "futimesat", 1, { 0, -1 }, { 1, -1 } },
};

const struct ee_write_call *ee_write_call_find(const char *name)
{
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (strcmp(calls[i].name, name) == 0)
			return &calls[i];
	return NULL;
}

/* Appends the components of s to out (an absolute path of len bytes),
 * folding "." and "..". 0, or -1 past size. */
static int fold(char *out, size_t *len, size_t size, const char *s)
{
	while (*s) {
		while (*s == '/')
			s++;
		const char *end = strchrnul(s, '/');
		size_t n = (size_t)(end - s);
		if (n == 0 || (n == 1 && s[0] == '.')) {
			/* nothing */
		} else if (n == 2 && s[0] == '.' && s[1] == '.') {
			while (*len > 0 && out[*len - 1] != '/')
				(*len)--;
			if (*len > 0)
				(*len)--; /* the slash; "/.." is "/" */
		} else {
			if (*len + 1 + n >= size)
				return -1;
			out[(*len)++] = '/';
			memcpy(out + *len, s, n);
			*len += n;
		}
		s = end;
	}
	out[*len] = '\0';
	return 0;
}

static int under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* /proc/<anything>/fd/<n>: a descriptor's link, reopened. */
static int proc_fd_link(const char *p)
{
	if (strncmp(p, "/proc/", 6) != 0)
		return 0;
	const char *slash = strchr(p + 6, '/');
	return slash && strncmp(slash, "/fd/", 4) == 0 && slash[4] && !strchr(slash + 4, '/');
}

static const char *const dev_nodes[] = { "/dev/null",   "/dev/zero",    "/dev/full",
	                                 "/dev/random", "/dev/urandom", "/dev/tty",
	                                 "/dev/stdin",  "/dev/stdout",  "/dev/stderr" };

int ee_write_path_allowed(const char *base, const char *path)
{
	char p[2 * PATH_MAX + 2];
	size_t len = 0;

	p[0] = '\0';
	if (path[0] != '/' && base && fold(p, &len, sizeof(p), base) < 0)
		return 0;
	if (fold(p, &len, sizeof(p), path) < 0)
		return 0;
	if (len == 0)
		return 0; /* "/" itself */
	if (under(p, "/tmp") || under(p, "/dev/shm") || under(p, "/dev/fd") || proc_fd_link(p))
		return 1;
	for (size_t i = 0; i < sizeof(dev_nodes) / sizeof(dev_nodes[0]); i++)
		if (strcmp(p, dev_nodes[i]) == 0)
			return 1;
	return 0;
}

/* A NUL-terminated string at addr in pid's memory, page by page (a read
 * across into an unmapped page would fail whole). Its length, or -1. */
static long read_remote_string(pid_t pid, uint64_t addr, char *buf, size_t size)
{
	size_t got = 0;
	while (got + 1 < size) {
		size_t page = 4096 - (size_t)((addr + got) % 4096);
		size_t want = page < size - 1 - got ? page : size - 1 - got;
		struct iovec local = { buf + got, want };
		struct iovec remote = { (void *)(uintptr_t)(addr + got), want };
		ssize_t r = process_vm_readv(pid, &local, 1, &remote, 1, 0);
		if (r <= 0)
			return -1;
		char *nul = memchr(buf + got, '\0', (size_t)r);
		if (nul)
			return nul - buf;
		got += (size_t)r;
	}
	return -1; /* longer than PATH_MAX: the kernel says ENAMETOOLONG */
}

/* The directory a relative path starts from: pid's cwd or descriptor. */
static int base_of(pid_t pid, int dirfd, char *buf, size_t size)
{
	char link[64];
	if (dirfd == AT_FDCWD)
		snprintf(link, sizeof(link), "/proc/%d/cwd", (int)pid);
	else
		snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)pid, dirfd);
	ssize_t n = readlink(link, buf, size - 1);
	if (n <= 0 || buf[0] != '/')
		return -1; /* gone, or not a directory (the call fails ENOTDIR) */
	buf[n] = '\0';
	return 0;
}

int ee_write_outside_tmp(const struct seccomp_notif *req, const struct ee_write_call *c)
{
	pid_t pid = (pid_t)req->pid;
	int outside = 0;

	for (unsigned i = 0; i < c->n; i++) {
		char path[PATH_MAX + 1];
		char base[PATH_MAX + 1];
		uint64_t addr = req->data.args[c->path_arg[i]];
		int dirfd = c->dirfd_arg[i] < 0 ? AT_FDCWD : (int)(int32_t)req->data.args[c->dirfd_arg[i]];

		if (addr == 0)
			path[0] = '\0'; /* utimensat's NULL path: the descriptor itself */
		else if (read_remote_string(pid, addr, path, sizeof(path)) < 0)
			return -1;
		const char *from = NULL;
		if (path[0] != '/') {
			if (base_of(pid, dirfd, base, sizeof(base)) < 0)
				return -1;
			from = base;
		}
		if (!ee_write_path_allowed(from, path))
			outside = 1;
	}
	return outside;
}
