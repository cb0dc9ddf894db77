/* copy.h - copies of a live session's interpreter, each as isolated from
 * the others as two sessions are (docs/sandbox.md, "Forking a session").
 *
 * The session's state process is the agent's: its memory and code are the
 * agent's to change, so nothing here asks it to do anything. ee_copy_make
 * runs in a helper process the supervisor forks for one fork request (it
 * becomes the state's tracer and blocks while it works): it stops the
 * state in its read() between cells, checks that a fork would share
 * nothing but private memory, and for each copy injects a clone into new
 * user, pid, mount, network, IPC and UTS namespaces at the state's own
 * system call instruction. Each copy is born stopped (ptrace) and, before
 * it runs an instruction of its own: gets uid and gid maps onto a uid of
 * its own, joins cgroups of its own, gets a fresh /proc and a fresh /tmp
 * holding a copy of the state's, is made to drop the state's descriptors,
 * take its own channels (seccomp ADDFD) and switch to its uid with no
 * capability; then its interrupted read() returns a frame that tells the
 * harness it is a copy (session.py, _session_copy). The refused calls it
 * is made to run are notifications of the family's listener, approved
 * for that pid and that call only. x86-64 only.
 *
 * Ownership: the plan and its fds are borrowed; the helper exits after.
 * Errors: EE_ERR_USAGE when the session cannot be copied as it is (its
 * message says why: a thread, a shared mapping, a process of its own, a
 * cell not finished), EE_ERR_SANDBOX when the host failed; a copy made
 * before the failure is killed, never let go.
 */
#ifndef EE_SANDBOX_COPY_H
#define EE_SANDBOX_COPY_H

#include <stddef.h>
#include <sys/types.h>

struct ee_err;

/* What each copy holds at fds 0..4 when it starts: stdin (/dev/null), its
 * stdout and stderr, its result channel (events) and its gate. */
enum { EE_COPY_FDS = 5, EE_COPY_MAX = 128 };

struct ee_copy_target {
	unsigned uid;         /* its own host uid (claimed), its gid too */
	unsigned uid_base;    /* the ids sandboxes get (uid.h), mapped onto themselves in its */
	unsigned uid_count;   /* user namespace: a copy of the copy can have only ids mapped there */
	int join[5];          /* its cgroups' join files (cgroup.procs), -1 after the last */
	int fds[EE_COPY_FDS]; /* placed at 0..4 in the copy */
	const char *frame;    /* what its read() returns: the harness's copy message */
	size_t frame_len;
	long long tmp_bytes; /* its /tmp's size */
	pid_t pid;           /* out: the copy, host pid (running) */
};

/* The session is its init (pid 1 in its pid namespace), its keeper and
 * its state: any other process refuses the fork. On success the init is
 * stopped for good (the copies' pid namespaces are nested in its, and it
 * must outlive them: the family's holder) and the keeper and the state
 * are killed: no process of the session runs beside its copies. */
struct ee_copy_plan {
	int procs_fd;       /* the session's cgroup.procs (readable): its processes, read here */
	int pids_max_fd;    /* its pids.max (read-write; -1: none): raised by n while the
	                       copies, born in it, wait to be moved into theirs */
	int keeper_is_init; /* a copy's session: its keeper is its pid 1 (else pid 2) */
	int listener;       /* the seccomp listener of the state's filter */
	size_t n;
	struct ee_copy_target *copies;
	int session_gone; /* out: a failure came after the session's processes were ended */
};

/* In the helper: makes every copy, or none (those made are killed). */
int ee_copy_make(struct ee_copy_plan *plan, struct ee_err *err);

#endif
