/* outpath.c - output files that cannot destroy an input (see outpath.h).
 *
 * Identity is (st_dev, st_ino) of what the path resolves to, so "v.jsonl",
 * "./v.jsonl", a hard link and a symlink to it are one file. An output that
 * does not exist yet is named by its directory's identity and its last
 * component, so two spellings of one new file still collide.
 */
#include "results/outpath.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"

struct identity {
	dev_t dev;
	ino_t ino;
	char name[256]; /* "" when the file exists; else its name in dir (dev, ino) */
};

static void split(const char *path, char *dir, size_t size, const char **base)
{
	const char *slash = strrchr(path, '/');
	if (!slash) {
		snprintf(dir, size, ".");
		*base = path;
	} else {
		snprintf(dir, size, "%.*s", slash == path ? 1 : (int)(slash - path), path);
		*base = slash + 1;
	}
}

/* 0: *id filled; 1: the input cannot be stat'ed (its reader will say why). */
static int input_identity(const char *path, struct identity *id)
{
	struct stat st;
	if ((strcmp(path, "-") == 0 ? fstat(0, &st) : stat(path, &st)) < 0)
		return 1;
	*id = (struct identity){ .dev = st.st_dev, .ino = st.st_ino };
	return 0;
}

static int output_identity(const struct ee_path_role *o, int force, struct identity *id, struct ee_err *err)
{
	struct stat st;
	char dir[4096];
	const char *base;

	if (lstat(o->path, &st) == 0 && S_ISLNK(st.st_mode) && !force)
		return ee_fail(err, EE_ERR_USAGE,
		               "%s %s: is a symbolic link; refusing to write through it (--force to allow)",
		               o->flag, o->path);
	if (stat(o->path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return ee_fail(err, EE_ERR_USAGE, "%s %s: is a directory", o->flag, o->path);
		if (S_ISREG(st.st_mode) && access(o->path, W_OK) < 0)
			return ee_fail_errno(err, EE_ERR_USAGE, "%s %s: cannot write", o->flag, o->path);
		*id = (struct identity){ .dev = st.st_dev, .ino = st.st_ino };
		return 0;
	}
	if (errno != ENOENT)
		return ee_fail_errno(err, EE_ERR_USAGE, "%s %s", o->flag, o->path);
	split(o->path, dir, sizeof(dir), &base);
	if (!*base)
		return ee_fail(err, EE_ERR_USAGE, "%s %s: names a directory, not a file", o->flag, o->path);
	if (stat(dir, &st) < 0)
		return ee_fail_errno(err, EE_ERR_USAGE, "%s %s: directory %s", o->flag, o->path, dir);
	if (!S_ISDIR(st.st_mode))
		return ee_fail(err, EE_ERR_USAGE, "%s %s: %s is not a directory", o->flag, o->path, dir);
	if (access(dir, W_OK) < 0)
		return ee_fail_errno(err, EE_ERR_USAGE, "%s %s: cannot write in %s", o->flag, o->path, dir);
	*id = (struct identity){ .dev = st.st_dev, .ino = st.st_ino };
	snprintf(id->name, sizeof(id->name), "%s", base);
	return 0;
}

static int same(const struct identity *a, const struct identity *b)
{
	return a->dev == b->dev && a->ino == b->ino && strcmp(a->name, b->name) == 0;
}

int ee_outputs_check(const struct ee_path_role *inputs, size_t n_in, const struct ee_path_role *outputs,
                     size_t n_out, int force, struct ee_err *err)
{
	struct identity ids[16], in;

	if (n_out > sizeof(ids) / sizeof(ids[0]))
		return ee_fail(err, EE_ERR_USAGE, "too many output files");
	for (size_t i = 0; i < n_out; i++) {
		if (output_identity(&outputs[i], force, &ids[i], err) < 0)
			return -1;
		for (size_t j = 0; j < n_in; j++)
			if (input_identity(inputs[j].path, &in) == 0 && same(&ids[i], &in))
				return ee_fail(err, EE_ERR_USAGE,
				               "%s %s is the input %s %s: refusing to overwrite it",
				               outputs[i].flag, outputs[i].path, inputs[j].flag,
				               inputs[j].path);
		for (size_t j = 0; j < i; j++)
			if (same(&ids[i], &ids[j]))
				return ee_fail(err, EE_ERR_USAGE, "%s %s and %s %s are the same file",
				               outputs[j].flag, outputs[j].path, outputs[i].flag,
				               outputs[i].path);
	}
	return 0;
}

int ee_output_open(const char *path, int flags, int force, struct ee_err *err)
{
	int fd = open(path, flags | O_CLOEXEC | (force ? 0 : O_NOFOLLOW), 0644);
	if (fd < 0 && errno == ELOOP)
		return ee_fail(err, EE_ERR_USAGE,
		               "%s: is a symbolic link; refusing to write through it (--force to allow)",
		               path);
	if (fd < 0)
		return ee_fail_errno(err, EE_ERR_USAGE, "%s", path);
	return fd;
}

int ee_atomic_begin(struct ee_atomic *a, const char *path, int force, struct ee_err *err)
{
	struct stat st;
	char dir[4096];
	const char *base;

	a->fd = -1;
	a->direct = 0;
	a->tmp[0] = '\0';
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		if (!force)
			return ee_fail(
			        err, EE_ERR_USAGE,
			        "%s: is a symbolic link; refusing to write through it (--force to allow)",
			        path);
		if (!realpath(path, a->target) && snprintf(a->target, sizeof(a->target), "%s", path) < 0)
			return ee_fail(err, EE_ERR_USAGE, "%s: path too long", path);
	} else if ((size_t)snprintf(a->target, sizeof(a->target), "%s", path) >= sizeof(a->target)) {
		return ee_fail(err, EE_ERR_USAGE, "%s: path too long", path);
	}
	if (stat(a->target, &st) == 0 && !S_ISREG(st.st_mode)) { /* /dev/stdout, a fifo: no rename */
		a->direct = 1;
		a->fd = open(a->target, O_WRONLY | O_CLOEXEC);
		return a->fd < 0 ? ee_fail_errno(err, EE_ERR_USAGE, "%s", path) : 0;
	}
	split(a->target, dir, sizeof(dir), &base);
	if ((size_t)snprintf(a->tmp, sizeof(a->tmp), "%s/.%s.tmp.%ld", dir, base, (long)getpid()) >=
	    sizeof(a->tmp))
		return ee_fail(err, EE_ERR_USAGE, "%s: path too long", path);
	a->fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (a->fd < 0) {
		a->tmp[0] = '\0';
		return ee_fail_errno(err, EE_ERR_USAGE, "%s: cannot create a temporary file in %s", path,
		                     dir);
	}
	return 0;
}

int ee_atomic_commit(struct ee_atomic *a, struct ee_err *err)
{
	int bad = !a->direct && fsync(a->fd) < 0;
	bad |= close(a->fd) < 0;
	a->fd = -1;
	if (bad || (!a->direct && rename(a->tmp, a->target) < 0)) {
		ee_fail_errno(err, EE_ERR_USAGE, "%s: write failed", a->target);
		ee_atomic_abort(a);
		return -1;
	}
	a->tmp[0] = '\0';
	return 0;
}

void ee_atomic_abort(struct ee_atomic *a)
{
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
	if (a->tmp[0])
		unlink(a->tmp);
	a->tmp[0] = '\0';
}

int ee_write_atomic(const char *path, const char *data, size_t len, int force, struct ee_err *err)
{
	struct ee_atomic a;
	size_t off = 0;

	if (ee_atomic_begin(&a, path, force, err) < 0)
		return -1;
	while (off < len) {
		ssize_t n = write(a.fd, data + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ee_fail_errno(err, EE_ERR_USAGE, "%s: write failed", path);
			ee_atomic_abort(&a);
			return -1;
		}
		off += (size_t)n;
	}
	return ee_atomic_commit(&a, err);
}
