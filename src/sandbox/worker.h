/* worker.h - the warm pool: prepared sandboxes that fork one candidate each.
 *
 * A worker is a sandbox made once per slot: cloned into new pid, mount,
 * network, ipc and uts namespaces, it execs execeval itself (`__worker`, so
 * nothing of the supervisor's memory, such as the tasks' expected values,
 * is in it), builds the root filesystem, embeds the interpreter, imports
 * the harness and the usual modules (zygote.c), and waits. For each
 * candidate the supervisor sends the candidate's descriptors; the worker
 * makes a fresh pid namespace whose init (sharing the worker's memory, then
 * unprivileged) forks the payload with fresh mount, ipc and uts namespaces;
 * the payload joins the slot's pooled cgroup, mounts its own /proc and
 * /tmp, drops every privilege, loads seccomp and runs the harness in the
 * warm interpreter (child.c, warm). The network namespace is the worker's,
 * and is replaced as soon as a candidate leaves a UNIX socket in it
 * (zygote.c, keep_network_clean): such a socket, kept alive by an
 * SCM_RIGHTS cycle, would be a channel to the next candidate. The worker
 * never runs candidate code and never reads a job; each candidate starts
 * from a copy of the worker as it was before the first one.
 *
 * The supervisor side: a pool of n workers, started at once, each used by
 * one sandbox at a time. A candidate's start is driven by the sandbox's
 * event loop (READY and STARTED are events, their timeouts its timers), so
 * a slow worker holds up no other sandbox. A worker that dies, stops
 * answering or fails is killed and replaced; the candidate it was about to
 * start goes to the replacement (before RUN went out; after, its start
 * fails as lost, EE_WORKER_LOST), and one it was running runs again with
 * new fds (evaluate.c, evaluate_judge.c). Warm needs root (a worker's exec would otherwise lose the
 * capabilities it needs in its user namespace) and the interpreter
 * execeval was built against; ee_pool_supported says why not.
 */
#ifndef EE_WORKER_H
#define EE_WORKER_H

#include <linux/filter.h>

#include "base/err.h"
#include "base/resource_limits.h"
#include "sandbox/cgroup.h"
#include "sandbox/host.h"
#include "sandbox/mount.h"

struct ee_seccomp_prog;
struct ee_pool;
struct ee_worker;

/* ---- between the supervisor and a worker (one SOCK_SEQPACKET pair) ---- */

enum { EE_W_READY = 1, EE_W_FAILED, EE_W_RUN, EE_W_STARTED, EE_W_DONE };

struct ee_worker_msg {
	int type;                /* EE_W_* */
	int has_status;          /* DONE: the payload's end was seen by its init */
	int status;              /* DONE: the payload's wait status */
	long maxrss_kb;          /* DONE: from wait4 */
	double cpu_ms;           /* DONE: from wait4 */
	struct ee_limits limits; /* RUN (with 6 fds: ctl, job, out, err, result, gate) */
	/* RUN detached (a session: sessions.h): the sandbox lives on its own
	 * while the worker serves others. Its 6 fds are followed by the join
	 * files of its own cgroups (memory, pids, cpuacct), it runs as uid
	 * (its own, claimed by the supervisor), in a network namespace of its
	 * own, and no DONE follows its STARTED: its init's pidfd says its end. */
	int detached;
	unsigned uid;
	struct ee_err err; /* FAILED; DONE: the sandbox failed, not the candidate
	                            (msg "" when it did not) */
};

/* What a worker reads from its fd 3 at start: the same binary wrote it. */
#define EE_WORKER_MAGIC    0x65657772u
#define EE_WORKER_MAX_BPF  4096
#define EE_WORKER_MAX_DENY 1024

struct ee_worker_config {
	unsigned magic;
	unsigned size; /* sizeof(struct ee_worker_config) */
	struct ee_host host;
	struct ee_mount_plan mounts;
	int use_cgroup_ns;
	int have_memory_cg;
	int have_pids_cg;
	int lint; /* import the lint tools at warm-up (--lint) */
	/* The deny list every candidate's job holds, one name a line, which
	 * warm-up installs in the worker so that no candidate installs it
	 * again; "" when jobs differ (the separate judge) or deny nothing. */
	char deny[EE_WORKER_MAX_DENY];
	/* Modules imported at warm-up (a session pool's --session-preload),
	 * one a line; "" for none. */
	char preload[EE_WORKER_MAX_DENY];
	unsigned short seccomp_len;
	struct sock_filter seccomp[EE_WORKER_MAX_BPF];
};

/* For the tests only: a comma list of milliseconds, one per slot, by which
 * each start of that slot's worker delays its READY (zygote.c). */
#define EE_WORKER_TEST_DELAY_ENV "EXECEVAL_TEST_WORKER_DELAY_MS"

/* Descriptors of a worker process. */
enum { EE_WFD_CONFIG = 3, EE_WFD_SOCKET = 4, EE_WFD_CGROUP = 5 };

/* The worker process: `execeval __worker N UID`, N the number of cgroup
 * files at fds 5, 6, ..., UID the slot's uid and gid its candidates run as
 * (uid.h). Never returns. */
__attribute__((noreturn)) void ee_zygote_main(const char *n_cgroup_fds, const char *uid);

/* ---- the supervisor's side --------------------------------------------- */

struct ee_pool_setup {
	const struct ee_host *host;
	const struct ee_mount_plan *mounts;
	const struct ee_seccomp_prog *seccomp;
	struct ee_limits limits; /* the pooled cgroups' first limits */
	int lint;                /* candidates will run the lint phase */
	/* The import deny list of every job the pool will run (NULL-ended,
	 * borrowed for ee_pool_new), installed once per worker; NULL when
	 * jobs may differ in it or deny nothing. */
	const char *const *deny;
	/* Modules every worker imports at warm-up (NULL-ended, borrowed for
	 * ee_pool_new; NULL for none): a session pool's --session-preload. */
	const char *const *preload;
};

/* 0 when this host and interpreter can run warm; else err says why. */
int ee_pool_supported(const struct ee_host *h, struct ee_err *err);

/* Starts n workers (they warm up in parallel; nothing waits yet). */
int ee_pool_new(const struct ee_pool_setup *s, unsigned n, struct ee_pool **ret, struct ee_err *err);

/* Kills every worker, reaps it and removes its cgroups. */
void ee_pool_free(struct ee_pool *p);

/* Workers made again since the pool started (one died, hung, failed a
 * start or was retired); 0 for NULL. */
unsigned long ee_pool_replacements(const struct ee_pool *p);

/* Claims an idle worker for one candidate and begins its start, waiting
 * for nothing: a dead worker is replaced, then RUN goes out when the worker
 * is ready. fds are the child's ends of ctl, job, out, err, result and gate,
 * borrowed until the start ends (STARTED or failure: the caller closes
 * them then). Returns the worker, busy until ee_worker_release, its start
 * driven by ee_worker_start_step; NULL (err) when it failed at once. */
struct ee_worker *ee_pool_claim(struct ee_pool *p, const struct ee_limits *lim, const int fds[6],
                                struct ee_err *err);

/* As ee_pool_claim, for a detached sandbox (a session): it runs as uid
 * (claimed by the caller) in its own cgroups, whose join files (n of
 * them, borrowed as fds) go with RUN. Once it started
 * (ee_worker_start_step returned 1) the worker is idle again: the sandbox
 * is the caller's alone, its end its init's pidfd's; nothing is released.
 * NULL with err when no worker is idle (a pool is one start per worker at
 * a time) or the start failed at once. */
struct ee_worker *ee_pool_claim_detached(struct ee_pool *p, const struct ee_limits *lim, const int fds[6],
                                         unsigned uid, const int *join, int n, struct ee_err *err);

/* Whether a worker of the pool is idle now. */
int ee_pool_has_idle(const struct ee_pool *p);

/* Moves a claimed worker's start on, when its socket (ee_worker_fd: it may
 * be a new one after each call) is readable or its deadline
 * (ee_worker_start_ms_left) has passed. Returns 1 when the candidate
 * started (pidfd: its init's), 0 while it is starting, -1 (err) when it
 * cannot start: the worker is no longer the caller's. A worker that dies,
 * hangs or answers out of turn before RUN is replaced once; after RUN
 * (the candidate may have begun on its fds), or when it answers RUN with
 * FAILED (its slot is broken: e.g. its candidate cgroup was removed from
 * outside), it is killed, to be made again with fresh cgroups at its next
 * claim, and the start is EE_WORKER_LOST (err): the candidate must start
 * again with new fds, as after a loss mid-run. */
#define EE_WORKER_LOST (-2)
int ee_worker_start_step(struct ee_worker *w, int *pidfd, struct ee_err *err);

/* Milliseconds until the awaited answer is late (0: it is). */
double ee_worker_start_ms_left(const struct ee_worker *w);

/* Gives a claimed worker back before its candidate started (the sandbox
 * was killed); one that may have taken RUN is killed (replaced later). */
void ee_worker_start_abandon(struct ee_worker *w);

/* The worker's socket, to watch for the end of its candidate. */
int ee_worker_fd(const struct ee_worker *w);

/* Reads what the worker sent: 1 with msg filled on DONE, 0 when there is
 * nothing (yet), -1 when the worker died (it is replaced later). */
int ee_worker_receive(struct ee_worker *w, struct ee_worker_msg *msg);

/* Kills a worker that does not answer (its socket then ends, and it is
 * replaced before its next candidate). */
void ee_worker_kill(struct ee_worker *w);

/* Once the candidate has ended: its cgroup figures, and the worker is idle. */
void ee_worker_release(struct ee_worker *w, struct ee_cgroup_stats *st);

/* Whether the slot's candidate cgroup holds more than tolerance bytes
 * above its baseline that reclaim would not give back (sandbox.c, after a
 * candidate: memory pinned by descriptors in flight). */
int ee_worker_holds_pinned(const struct ee_worker *w, long long tolerance);

/* The cgroup its candidates join (borrowed). */
const struct ee_cgroup *ee_worker_cgroup(const struct ee_worker *w);

/* Ends the worker; the next candidate of its slot gets a fresh worker and
 * fresh pooled cgroups. */
void ee_worker_retire(struct ee_worker *w);

#endif
