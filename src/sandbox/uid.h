/* uid.h - a host uid and gid of its own for each sandbox (as root).
 *
 * Per-user kernel quotas (pipe buffers above all: fs.pipe-user-pages-soft,
 * also RLIMIT_NPROC, inotify instances, message queue bytes) are counted per
 * uid of the initial user namespace. Sandboxes sharing one uid share them: a
 * candidate holding 64 MiB of pipe buffers shrank every other sandbox's new
 * pipes to 8 KiB (and every host service running as that uid). So each
 * sandbox runs as a uid and gid (the same number) no host account uses,
 * from a range of 65536 ids starting at 0x7ee00000 (2128609280; systemd
 * leaves 0x70000000-0x7ffdffff unassigned), or at EXECEVAL_UID_BASE when
 * set (every execeval on a host must then set the same base). Ids that
 * /etc/passwd or /etc/group name are skipped.
 *
 * A claim is an flock'ed file per id under /run/execeval/uids (or
 * /dev/shm/execeval-uids when /run is not writable), so two execeval
 * processes never hold the same id at once, and the kernel releases every
 * claim of a process that dies. A cold sandbox holds its id from clone until
 * its init is reaped (then every process of it is gone); a warm slot holds
 * one for its worker's lifetime. A released id stays claimed by this process
 * (idle) and is handed out again first: claiming is then one array pop.
 *
 * Ownership: struct ee_uid owns its claim's fd until ee_uid_release. The
 * process-wide allocator (ee_uid_claim) opens its directory on first use and
 * keeps it, and its idle claims, until exit; its fds are close-on-exec.
 * Not thread-safe (the supervisor has one thread).
 */
#ifndef EE_UID_H
#define EE_UID_H

#include <stddef.h>

struct ee_err;

#define EE_UID_BASE_DEFAULT 0x7ee00000u
#define EE_UID_COUNT        65536u
#define EE_UID_MAX_SKIP     64
#define EE_UID_MAX_IDLE     256

struct ee_uid {
	unsigned id; /* the uid and gid */
	int fd;      /* the claim (flock'ed), -1 when nothing is claimed */
};

#define EE_UID_NONE ((struct ee_uid){ 0, -1 })

/* An allocator: a claim directory, a range, the ids host accounts use. */
struct ee_uids {
	int dirfd;
	unsigned base, count;
	unsigned skip[EE_UID_MAX_SKIP];
	size_t nskip;
	struct ee_uid idle[EE_UID_MAX_IDLE];
	size_t nidle;
};

/* The range from EXECEVAL_UID_BASE's value (NULL: the default base):
 * decimal or 0x-hex, at least 65536, the range's end below 2^31. */
int ee_uid_parse_base(const char *text, unsigned *base, struct ee_err *err);

/* Opens (making it, mode 0700, when missing) the claim directory dir and
 * reads which ids of [base, base + EE_UID_COUNT) the passwd and group files
 * name (a missing file names none). */
int ee_uids_open(struct ee_uids *u, const char *dir, unsigned base, const char *passwd, const char *group,
                 struct ee_err *err);

/* Claims an id no other process holds: an idle one first, else the lowest
 * free one. */
int ee_uids_claim(struct ee_uids *u, struct ee_uid *ret, struct ee_err *err);

/* Gives the id back to u (idle, still claimed) or, when u's idle list is
 * full, to the host. Accepts EE_UID_NONE; *id is EE_UID_NONE afterwards. */
void ee_uids_release(struct ee_uids *u, struct ee_uid *id);

/* Closes every idle claim and the directory. */
void ee_uids_close(struct ee_uids *u);

/* The process-wide allocator, opened on first use from the host's files
 * and EXECEVAL_UID_BASE. */
int ee_uid_claim(struct ee_uid *ret, struct ee_err *err);
void ee_uid_release(struct ee_uid *id);
/* The process-wide allocator's range, once it claimed an id; else -1. */
int ee_uid_range(unsigned *base, unsigned *count);

#endif
