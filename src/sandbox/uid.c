/* uid.c - a host uid and gid of its own for each sandbox (see uid.h).
 *
 * A claim of id N is an exclusive, non-blocking flock on the file N in the
 * claim directory, held through the fd for as long as the id is in use. The
 * files are never removed (unlinking a lock file races with a process that
 * has just opened it); there are never more of them than ids held at once
 * on the host, because a claim takes the lowest free id.
 */
#include "sandbox/uid.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"

/* Where claims live: the first whose parent exists and is writable. */
static const char *const claim_dirs[] = { "/run/execeval/uids", "/dev/shm/execeval-uids" };

int ee_uid_parse_base(const char *text, unsigned *base, struct ee_err *err)
{
	if (!text || !*text) {
		*base = EE_UID_BASE_DEFAULT;
		return 0;
	}
	char *end;
	errno = 0;
	unsigned long v = strtoul(text, &end, 0);
	if (errno || *end || v < 65536 || v > 0x7fffffffUL - EE_UID_COUNT + 1)
		return ee_fail(
		        err, EE_ERR_USAGE,
		        "EXECEVAL_UID_BASE=%s: want a uid from 65536 to %lu (a range of %u ids no host "
		        "account uses)",
		        text, 0x7fffffffUL - EE_UID_COUNT + 1, EE_UID_COUNT);
	*base = (unsigned)v;
	return 0;
}

/* Notes the ids of u's range in field 3 (the uid or gid) of an
 * /etc/passwd- or /etc/group-format file. */
static int read_ids(struct ee_uids *u, const char *path, struct ee_err *err)
{
	char line[1024];
	FILE *f = fopen(path, "re");

	if (!f)
		return errno == ENOENT ? 0 : ee_fail_errno(err, EE_ERR_SANDBOX, "open %s", path);
	while (fgets(line, sizeof(line), f)) {
		char *p = line;
		for (int field = 0; field < 2 && p; field++)
			p = strchr(p, ':') ? strchr(p, ':') + 1 : NULL;
		if (!p)
			continue;
		char *end;
		unsigned long id = strtoul(p, &end, 10);
		if (end == p || *end != ':' || id < u->base || id - u->base >= u->count)
			continue;
		if (u->nskip == EE_UID_MAX_SKIP) {
			fclose(f);
			return ee_fail(
			        err, EE_ERR_SANDBOX,
			        "%s names more than %d ids from %u: set EXECEVAL_UID_BASE to a range no host "
			        "account uses",
			        path, EE_UID_MAX_SKIP, u->base);
		}
		u->skip[u->nskip++] = (unsigned)id;
	}
	fclose(f);
	return 0;
}

static int open_dir(const char *dir, struct ee_err *err)
{
	char parent[256];
	snprintf(parent, sizeof(parent), "%s", dir);
	char *slash = strrchr(parent, '/');
	if (slash && slash != parent) {
		*slash = '\0';
		(void)mkdir(parent, 0700); /* /run/execeval: fails harmlessly when it exists */
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "mkdir %s", dir);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "open %s", dir);
	/* Only a directory of our own: anyone who could write to it could
	 * hold every id, or remove a claim's file under its holder. */
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(fd);
		return ee_fail(err, EE_ERR_SANDBOX, "%s is not a directory of uid %u writable only by it",
		               dir, (unsigned)geteuid());
	}
	return fd;
}

int ee_uids_open(struct ee_uids *u, const char *dir, unsigned base, const char *passwd, const char *group,
                 struct ee_err *err)
{
	memset(u, 0, sizeof(*u));
	u->dirfd = -1;
	u->base = base;
	u->count = EE_UID_COUNT;
	if (read_ids(u, passwd, err) < 0 || read_ids(u, group, err) < 0)
		return -1;
	u->dirfd = open_dir(dir, err);
	return u->dirfd < 0 ? -1 : 0;
}

static int skipped(const struct ee_uids *u, unsigned id)
{
	for (size_t i = 0; i < u->nskip; i++)
		if (u->skip[i] == id)
			return 1;
	return 0;
}

/* 1 with *fd holding the claim, 0 when another process holds id. */
static int try_claim(const struct ee_uids *u, unsigned id, int *fd, struct ee_err *err)
{
	char name[16];
	snprintf(name, sizeof(name), "%u", id);
	int f = openat(u->dirfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (f < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "open the claim of uid %u", id);
	if (flock(f, LOCK_EX | LOCK_NB) == 0) {
		*fd = f;
		return 1;
	}
	int e = errno;
	close(f);
	if (e == EWOULDBLOCK)
		return 0;
	errno = e;
	return ee_fail_errno(err, EE_ERR_SANDBOX, "flock the claim of uid %u", id);
}

int ee_uids_claim(struct ee_uids *u, struct ee_uid *ret, struct ee_err *err)
{
	if (u->nidle > 0) {
		*ret = u->idle[--u->nidle];
		return 0;
	}
	for (unsigned i = 0; i < u->count; i++) {
		unsigned id = u->base + i;
		int fd = -1, got;
		if (skipped(u, id))
			continue;
		got = try_claim(u, id, &fd, err);
		if (got < 0)
			return -1;
		if (got) {
			*ret = (struct ee_uid){ id, fd };
			return 0;
		}
	}
	return ee_fail(err, EE_ERR_SANDBOX, "every sandbox uid from %u to %u is in use", u->base,
	               u->base + u->count - 1);
}

void ee_uids_release(struct ee_uids *u, struct ee_uid *id)
{
	if (id->fd < 0)
		return;
	if (u && u->nidle < EE_UID_MAX_IDLE)
		u->idle[u->nidle++] = *id;
	else
		close(id->fd);
	*id = EE_UID_NONE;
}

void ee_uids_close(struct ee_uids *u)
{
	while (u->nidle > 0)
		close(u->idle[--u->nidle].fd);
	if (u->dirfd >= 0)
		close(u->dirfd);
	u->dirfd = -1;
}

/* ---- the process's allocator ------------------------------------------- */

static struct ee_uids process_uids;
static int process_uids_open;

int ee_uid_claim(struct ee_uid *ret, struct ee_err *err)
{
	if (!process_uids_open) {
		unsigned base;
		struct ee_err first = { 0 };
		if (ee_uid_parse_base(getenv("EXECEVAL_UID_BASE"), &base, err) < 0)
			return -1;
		for (size_t i = 0; i < sizeof(claim_dirs) / sizeof(claim_dirs[0]) && !process_uids_open;
		     i++) {
			struct ee_err e = { 0 };
			if (ee_uids_open(&process_uids, claim_dirs[i], base, "/etc/passwd", "/etc/group",
			                 &e) == 0)
				process_uids_open = 1;
			else if (!first.msg[0])
				first = e;
		}
		if (!process_uids_open) {
			*err = first;
			return -1;
		}
	}
	return ee_uids_claim(&process_uids, ret, err);
}

int ee_uid_range(unsigned *base, unsigned *count)
{
	if (!process_uids_open)
		return -1;
	*base = process_uids.base;
	*count = process_uids.count;
	return 0;
}

void ee_uid_release(struct ee_uid *id)
{
	ee_uids_release(process_uids_open ? &process_uids : NULL, id);
}
