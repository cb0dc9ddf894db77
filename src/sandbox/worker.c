/* worker.c - the warm pool, supervisor side (see worker.h).
 *
 * Each worker has a socket (SOCK_SEQPACKET: one message, one record, fds
 * alongside), a pidfd, and its slot's pooled cgroups. Conversation:
 *   worker     -> READY (or FAILED) once warm;
 *   supervisor -> RUN + the candidate's 6 fds;
 *   worker     -> STARTED + the candidate init's pidfd (or FAILED);
 *   worker     -> DONE with the init's wait status once it is reaped.
 * A worker that does not answer in time, or whose socket ends, is killed
 * and started again; the candidate goes to the new one.
 */
#include "sandbox/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness/harness.h"
#include "sandbox/child.h"
#include "sandbox/clone.h"
#include "base/memfd.h"
#include "sandbox/seccomp.h"
#include "sandbox/uid.h"
#include "sandbox/wire.h"

/* A worker warms up in ~50 ms; a loaded machine may take far longer. */
#define READY_TIMEOUT_MS 30000
/* Starting a candidate is a clone: anything slower is a stuck worker. */
#define STARTED_TIMEOUT_MS 10000

/* Where the start of a claimed worker's candidate is (ee_pool_claim). */
enum start_phase { START_NONE, START_WAIT_READY, START_WAIT_STARTED };

struct ee_worker {
	struct ee_pool *pool;
	pid_t pid;
	int pidfd;
	int sock; /* -1: not running */
	int ready;
	int busy; /* claimed by a sandbox, from ee_pool_claim to ee_worker_release */
	int dead;
	int delay_ms; /* EXECEVAL_TEST_WORKER_DELAY_MS: its warm-up is that much slower */
	/* The candidate being started: its limits and fds (borrowed from the
	 * sandbox until STARTED), the tries it has had, what is awaited and until
	 * when. */
	struct ee_limits start_limits;
	int start_fds[6];
	/* A detached start (ee_pool_claim_detached): its uid and join files. */
	int detached;
	unsigned detached_uid;
	int join_fds[5];
	int n_join;
	int tries;
	enum start_phase phase;
	struct timespec deadline;
	struct ee_cgroup_pool cgs;  /* the slot's: the worker in one, candidates in the other */
	struct ee_limits cg_limits; /* what the candidate cgroup's files say now */
	struct ee_cgroup_stats base;
	struct ee_uid uid;     /* the slot's, claimed for the worker's lifetime */
	long long usage_begin; /* the candidate cgroup's charge before the candidate */
	long long held_clean;  /* its unreclaimable part when the slot was new */
};

struct ee_pool {
	const struct ee_host *host;
	struct ee_limits limits;
	int config_fd;
	unsigned n;
	struct ee_worker *workers;
	unsigned long replaced; /* workers made again (ee_pool_replacements) */
};

int ee_pool_supported(const struct ee_host *h, struct ee_err *err)
{
	if (!h->is_root)
		return ee_fail(err, EE_ERR_SANDBOX,
		               "--isolation warm needs root (a worker keeps the privileges to make each "
		               "candidate's namespaces); use --isolation cold");
	if (!ee_harness_pyc_applies(h->python))
		return ee_fail(err, EE_ERR_SANDBOX,
		               "--isolation warm embeds %s, the interpreter execeval was built with, but "
		               "candidates run with %s; use --isolation cold",
		               ee_harness_python, h->python);
	return 0;
}

/* ---- messages ------------------------------------------------------------ */

static int send_msg(int sock, const struct ee_worker_msg *m, const int *fds, int nfds)
{
	return ee_wire_send(sock, m, sizeof(*m), fds, nfds);
}

static int recv_msg(int sock, struct ee_worker_msg *m, int *fds, int max, int *nfds, int flags)
{
	return ee_wire_recv(sock, m, sizeof(*m), fds, max, nfds, flags);
}

/* ---- one worker ------------------------------------------------------------ */

/* The worker's environment: the sandbox's. An ASan build's worker would
 * run candidates inside the sanitizer's allocator: its quarantine keeps
 * freed memory charged to the candidate (a memory limit where the release
 * build passes) and it turns a candidate's SIGSEGV into its own report. The
 * worker takes these options at start and removes them before Python
 * reads the environment (zygote.c), as it does the test-only delay of its
 * warm-up. Built in the clone: its statics are the clone's own. */
static char *const *worker_env(const struct ee_worker *w)
{
	static char *env[16];
	static char delay[48];
	size_t n = 0;
#if defined(__SANITIZE_ADDRESS__)
	env[n++] = "ASAN_OPTIONS=quarantine_size_mb=0:handle_segv=0:handle_sigbus=0:handle_abort=0:"
	           "handle_sigfpe=0:handle_sigill=0:detect_leaks=0:allow_user_segv_handler=1";
#endif
	for (char *const *e = ee_child_clean_env; *e && n < 14; e++)
		env[n++] = *e;
	if (w->delay_ms > 0) {
		snprintf(delay, sizeof(delay), "%s=%d", EE_WORKER_TEST_DELAY_ENV, w->delay_ms);
		env[n++] = delay;
	}
	env[n] = NULL;
	return env;
}

/* In the clone, before exec: the worker sees only its config, its socket
 * and its cgroup files, with default signal state and /dev/null as stdio. */
__attribute__((noreturn)) static void worker_exec(const struct ee_worker *w, int config_fd, int sock,
                                                  const int *cg_fds)
{
	struct ee_err err;
	char count[2] = { '0', '\0' }, uid[16];
	char *const argv[] = { "execeval", "__worker", count, uid, NULL };
	int src[8], n = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	snprintf(uid, sizeof(uid), "%u", w->uid.id);
	if (ee_cgroup_attach_self(&w->cgs.worker, &err) < 0)
		_exit(127);
	src[n++] = config_fd;
	src[n++] = sock;
	for (const int *fd = cg_fds; *fd >= 0 && n < 5; fd++, count[0]++)
		src[n++] = *fd;
	for (int i = 0; i < n; i++)
		if ((src[i] = fcntl(src[i], F_DUPFD_CLOEXEC, 16)) < 0)
			_exit(127);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
		_exit(127);
	for (int i = 0; i < n; i++)
		if (dup2(src[i], EE_WFD_CONFIG + i) < 0)
			_exit(127);
	syscall(SYS_close_range, (unsigned)(EE_WFD_CONFIG + n), ~0U, 0);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	execve("/proc/self/exe", argv, worker_env(w));
	_exit(127);
}

static void worker_stop(struct ee_worker *w)
{
	if (w->pidfd >= 0) {
		syscall(SYS_pidfd_send_signal, w->pidfd, SIGKILL, NULL, 0);
		close(w->pidfd);
	}
	if (w->pid > 0)
		while (waitpid(w->pid, NULL, __WALL) < 0 && errno == EINTR)
			;
	if (w->sock >= 0)
		close(w->sock);
	ee_cgroup_pool_destroy(&w->cgs, NULL);
	/* Reaped, the worker (its pid namespace's init) took every candidate
	 * of its slot with it. */
	ee_uid_release(&w->uid);
	w->pid = 0;
	w->pidfd = w->sock = -1;
	w->ready = w->dead = 0; /* busy stays: a claimed worker is replaced for its claimer */
}

static int worker_start(struct ee_pool *p, struct ee_worker *w, struct ee_err *err)
{
	int sv[2] = { -1, -1 }, cg_fds[5] = { -1 }, pidfd = -1;

	if (ee_uid_claim(&w->uid, err) < 0)
		return -1;
	if (ee_cgroup_pool_create(p->host, &p->limits, &w->cgs, err) < 0) {
		ee_uid_release(&w->uid);
		return -1;
	}
	w->cg_limits = p->limits;
	w->held_clean = ee_cgroup_held(&w->cgs.candidate);
	if (ee_cgroup_open_attach(&w->cgs.candidate, cg_fds, err) < 0)
		goto fail;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		ee_fail_errno(err, EE_ERR_SANDBOX, "socketpair");
		goto fail;
	}
	unsigned long flags = CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS |
	                      CLONE_PIDFD | SIGCHLD;
	pid_t pid = (pid_t)syscall(SYS_clone, flags, NULL, &pidfd, NULL, 0);
	if (pid < 0) {
		ee_fail_errno(err, EE_ERR_SANDBOX, "clone a warm worker");
		goto fail;
	}
	if (pid == 0)
		worker_exec(w, p->config_fd, sv[1], cg_fds);
	close(sv[1]);
	for (int *fd = cg_fds; *fd >= 0; fd++)
		close(*fd);
	w->pid = pid;
	w->pidfd = pidfd;
	w->sock = sv[0];
	return 0;
fail:
	for (int i = 0; i < 2; i++)
		if (sv[i] >= 0)
			close(sv[i]);
	for (int *fd = cg_fds; *fd >= 0; fd++)
		close(*fd);
	ee_cgroup_pool_destroy(&w->cgs, NULL);
	ee_uid_release(&w->uid);
	return -1;
}

/* ---- starting a candidate, one event at a time ---------------------------
 *
 * A claim (ee_pool_claim) and each event of the worker's socket or of the
 * deadline (ee_worker_start_step) move the start on; nothing here waits.
 * A worker found dead, or that dies, hangs or answers out of turn while
 * starting, is replaced, twice at most per candidate; FAILED in answer to
 * RUN means the slot is broken (nothing a candidate did comes before its
 * start): the worker is killed, made again with fresh cgroups at its next
 * claim, and the start is lost (EE_WORKER_LOST). */

static void expect(struct ee_worker *w, enum start_phase phase, int timeout_ms)
{
	w->phase = phase;
	clock_gettime(CLOCK_MONOTONIC, &w->deadline);
	w->deadline.tv_sec += timeout_ms / 1000;
	w->deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (w->deadline.tv_nsec >= 1000000000L) {
		w->deadline.tv_sec++;
		w->deadline.tv_nsec -= 1000000000L;
	}
}

double ee_worker_start_ms_left(const struct ee_worker *w)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	double ms = (double)(w->deadline.tv_sec - now.tv_sec) * 1e3 +
	            (double)(w->deadline.tv_nsec - now.tv_nsec) / 1e6;
	return ms > 0 ? ms : 0;
}

/* Sends RUN with the candidate's limits and fds. -1 (err) when the
 * worker must be replaced. */
static int send_run(struct ee_worker *w, struct ee_err *err)
{
	const struct ee_limits *lim = &w->start_limits;
	struct ee_worker_msg m = { .type = EE_W_RUN, .limits = *lim };

	if (w->detached) { /* its own cgroups, not the slot's */
		int fds[6 + 5];
		memcpy(fds, w->start_fds, sizeof(w->start_fds));
		memcpy(fds + 6, w->join_fds, sizeof(int) * (size_t)w->n_join);
		m.detached = 1;
		m.uid = w->detached_uid;
		if (send_msg(w->sock, &m, fds, 6 + w->n_join) < 0)
			return ee_fail(err, EE_ERR_SANDBOX, "a warm worker stopped answering");
		return 0;
	}
	if (lim->memory_mb != w->cg_limits.memory_mb || lim->procs != w->cg_limits.procs) {
		if (ee_cgroup_set_limits(&w->cgs.candidate, lim, err) < 0)
			return -1; /* e.g. usage above a lower limit: a fresh cgroup */
		w->cg_limits = *lim;
	}
	ee_cgroup_pool_begin(&w->cgs, &w->base);
	w->usage_begin = ee_cgroup_pool_usage(&w->cgs);
	if (send_msg(w->sock, &m, w->start_fds, 6) < 0)
		return ee_fail(err, EE_ERR_SANDBOX, "a warm worker stopped answering");
	return 0;
}

/* What comes next with nothing to read: a fresh worker for a dead one,
 * then READY awaited, or RUN sent and STARTED awaited. 0 waiting, -1 (err)
 * when the start failed. */
static int start_next(struct ee_worker *w, struct ee_err *err)
{
	for (; w->tries < 2; w->tries++) {
		if (w->dead || w->sock < 0) {
			worker_stop(w);
			w->pool->replaced++;
			if (worker_start(w->pool, w, err) < 0)
				return -1;
		}
		if (!w->ready) {
			expect(w, START_WAIT_READY, READY_TIMEOUT_MS);
			return 0;
		}
		if (send_run(w, err) == 0) {
			expect(w, START_WAIT_STARTED, STARTED_TIMEOUT_MS);
			return 0;
		}
		w->dead = 1;
	}
	return -1;
}

/* The worker failed this try (err says how): the next one, if any. */
static int next_try(struct ee_worker *w, struct ee_err *err)
{
	w->dead = 1;
	w->phase = START_NONE;
	if (++w->tries >= 2)
		return -1;
	return start_next(w, err);
}

static int worker_failed(struct ee_worker_msg *m, struct ee_err *err)
{
	m->err.msg[sizeof(m->err.msg) - 1] = '\0';
	return ee_fail(err, EE_ERR_SANDBOX, "warm worker: %s", m->err.msg);
}

static int on_ready_phase(struct ee_worker *w, int rc, struct ee_worker_msg *m, struct ee_err *err)
{
	if (rc == 1 && m->type == EE_W_READY) {
		w->ready = 1;
		w->phase = START_NONE;
		return start_next(w, err);
	}
	if (rc == 1 && m->type == EE_W_FAILED)
		worker_failed(m, err);
	else
		ee_fail(err, EE_ERR_SANDBOX, "a warm worker died while starting");
	return next_try(w, err);
}

/* RUN went out, so the candidate may have begun on its fds (read its job,
 * written output) before the worker died or hung: a replacement must not
 * get the same fds. The start fails as lost (EE_WORKER_LOST); the caller
 * starts the candidate again from scratch. */
static int lost_after_run(struct ee_worker *w, const char *how, struct ee_err *err)
{
	ee_fail(err, EE_ERR_SANDBOX, "the warm worker starting this candidate %s", how);
	ee_worker_kill(w); /* replaced at its next claim */
	w->phase = START_NONE;
	return EE_WORKER_LOST;
}

static int on_started_phase(struct ee_worker *w, int rc, struct ee_worker_msg *m, int got, int *pidfd,
                            struct ee_err *err)
{
	if (rc == 1 && m->type == EE_W_STARTED && got >= 0) {
		*pidfd = got;
		w->phase = START_NONE;
		if (w->detached) { /* the sandbox lives on its own: the worker is free */
			w->detached = 0;
			w->busy = 0;
		}
		return 1;
	}
	if (got >= 0)
		close(got);
	if (rc == 1 && m->type == EE_W_FAILED) {
		/* Nothing of the candidate's makes a start fail: the slot is
		 * broken (its candidate cgroup removed from outside: ENODEV,
		 * ENOENT). The worker is made again with fresh cgroups, and the
		 * candidate starts again on it with new fds, as after a loss. */
		worker_failed(m, err);
		ee_worker_kill(w);
		w->phase = START_NONE;
		return EE_WORKER_LOST;
	}
	return lost_after_run(w, "died", err);
}

/* A deadline passed with nothing read. */
static int on_deadline(struct ee_worker *w, struct ee_err *err)
{
	if (w->phase == START_WAIT_STARTED)
		return lost_after_run(w, "stopped answering", err);
	ee_fail(err, EE_ERR_SANDBOX, "a warm worker did not start in %d s", READY_TIMEOUT_MS / 1000);
	return next_try(w, err);
}

static int start_step(struct ee_worker *w, int *pidfd, struct ee_err *err)
{
	struct ee_worker_msg m;
	int got[1], nfds;
	int rc = recv_msg(w->sock, &m, got, 1, &nfds, MSG_DONTWAIT);

	if (rc < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return ee_worker_start_ms_left(w) > 0 ? 0 : on_deadline(w, err);
	if (w->phase == START_WAIT_STARTED)
		return on_started_phase(w, rc, &m, nfds == 1 ? got[0] : -1, pidfd, err);
	if (nfds == 1)
		close(got[0]);
	return on_ready_phase(w, rc, &m, err);
}

int ee_worker_start_step(struct ee_worker *w, int *pidfd, struct ee_err *err)
{
	int rc = start_step(w, pidfd, err);
	if (rc < 0) { /* the candidate gets no worker: the slot is free again */
		w->phase = START_NONE;
		w->busy = 0;
		w->detached = 0;
	}
	return rc;
}

void ee_worker_start_abandon(struct ee_worker *w)
{
	/* RUN may have been taken: the candidate would run unwatched. */
	if (w->phase == START_WAIT_STARTED)
		ee_worker_kill(w);
	w->phase = START_NONE;
	w->busy = 0;
	w->detached = 0;
}

/* ---- the pool ------------------------------------------------------------- */

static int write_config(const struct ee_pool_setup *s, struct ee_err *err)
{
	struct ee_worker_config *c = calloc(1, sizeof(*c));
	int fd = -1;

	if (!c)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	if (s->seccomp->len > EE_WORKER_MAX_BPF) {
		ee_fail(err, EE_ERR_SANDBOX, "seccomp filter of %u instructions is too long for a worker",
		        (unsigned)s->seccomp->len);
		goto out;
	}
	c->magic = EE_WORKER_MAGIC;
	c->size = sizeof(*c);
	c->host = *s->host;
	c->mounts = *s->mounts;
	c->seccomp_len = s->seccomp->len;
	memcpy(c->seccomp, s->seccomp->filter, sizeof(struct sock_filter) * s->seccomp->len);
	c->have_memory_cg = s->host->memory.writable && s->host->memory.version;
	c->have_pids_cg = s->host->pids.writable && s->host->pids.version;
	c->lint = s->lint;
	for (size_t i = 0, at = 0; s->deny && s->deny[i]; i++) {
		size_t len = strlen(s->deny[i]);
		if (len == 0 || at + len + 2 > sizeof(c->deny) || strchr(s->deny[i], '\n')) {
			ee_fail(err, EE_ERR_SANDBOX, "the deny list does not fit a worker's configuration");
			goto out;
		}
		memcpy(c->deny + at, s->deny[i], len);
		c->deny[at + len] = '\n';
		at += len + 1;
	}
	for (size_t i = 0, at = 0; s->preload && s->preload[i]; i++) {
		size_t len = strlen(s->preload[i]);
		if (len == 0 || at + len + 2 > sizeof(c->preload) || strchr(s->preload[i], '\n')) {
			ee_fail(err, EE_ERR_SANDBOX, "the preloads do not fit a worker's configuration");
			goto out;
		}
		memcpy(c->preload + at, s->preload[i], len);
		c->preload[at + len] = '\n';
		at += len + 1;
	}
	c->use_cgroup_ns = c->have_memory_cg || c->have_pids_cg;
	fd = ee_memfd_sealed("execeval-worker", c, sizeof(*c), err);
out:
	free(c);
	return fd;
}

/* The next slot's delay from EXECEVAL_TEST_WORKER_DELAY_MS, a comma list of
 * milliseconds, one per slot (for the tests: a slow warm-up of one slot). */
static int test_delay_ms(const char **list)
{
	if (!*list || !**list)
		return 0;
	char *end;
	long ms = strtol(*list, &end, 10);
	*list = *end == ',' ? end + 1 : "";
	return ms > 0 && ms <= 600000 ? (int)ms : 0;
}

int ee_pool_new(const struct ee_pool_setup *s, unsigned n, struct ee_pool **ret, struct ee_err *err)
{
	struct ee_pool *p = calloc(1, sizeof(*p));

	if (ee_pool_supported(s->host, err) < 0) {
		free(p);
		return -1;
	}
	if (!p || !(p->workers = calloc(n ? n : 1, sizeof(*p->workers)))) {
		free(p);
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	}
	p->host = s->host;
	p->limits = s->limits;
	p->n = n ? n : 1;
	const char *delays = getenv(EE_WORKER_TEST_DELAY_ENV);
	for (unsigned i = 0; i < p->n; i++) {
		p->workers[i].pool = p;
		p->workers[i].pidfd = p->workers[i].sock = -1;
		p->workers[i].uid = EE_UID_NONE;
		p->workers[i].delay_ms = test_delay_ms(&delays);
	}
	p->config_fd = write_config(s, err);
	if (p->config_fd < 0) {
		ee_pool_free(p);
		return -1;
	}
	for (unsigned i = 0; i < p->n; i++)
		if (worker_start(p, &p->workers[i], err) < 0) {
			ee_pool_free(p);
			return -1;
		}
	*ret = p;
	return 0;
}

void ee_pool_free(struct ee_pool *p)
{
	if (!p)
		return;
	for (unsigned i = 0; p->workers && i < p->n; i++)
		worker_stop(&p->workers[i]);
	if (p->config_fd >= 0)
		close(p->config_fd);
	free(p->workers);
	free(p);
}

struct ee_worker *ee_pool_claim(struct ee_pool *p, const struct ee_limits *lim, const int fds[6],
                                struct ee_err *err)
{
	struct ee_worker *w = NULL;

	for (unsigned i = 0; i < p->n && !w; i++)
		if (!p->workers[i].busy)
			w = &p->workers[i];
	if (!w) {
		ee_fail(err, EE_ERR_SANDBOX, "internal: more sandboxes than warm workers");
		return NULL;
	}
	w->busy = 1;
	w->tries = 0;
	w->start_limits = *lim;
	memcpy(w->start_fds, fds, sizeof(w->start_fds));
	if (start_next(w, err) < 0) {
		w->phase = START_NONE;
		w->busy = 0;
		return NULL;
	}
	return w;
}

struct ee_worker *ee_pool_claim_detached(struct ee_pool *p, const struct ee_limits *lim, const int fds[6],
                                         unsigned uid, const int *join, int n, struct ee_err *err)
{
	if (n < 1 || n > 5) {
		ee_fail(err, EE_ERR_SANDBOX, "internal: a detached sandbox joins 1 to 5 cgroup files");
		return NULL;
	}
	if (!ee_pool_has_idle(p)) {
		ee_fail(err, EE_ERR_SANDBOX, "no warm worker is idle");
		return NULL;
	}
	for (unsigned i = 0; i < p->n; i++)
		if (!p->workers[i].busy) {
			struct ee_worker *w = &p->workers[i];
			w->detached = 1;
			w->detached_uid = uid;
			memcpy(w->join_fds, join, sizeof(int) * (size_t)n);
			w->n_join = n;
			break;
		}
	struct ee_worker *w = ee_pool_claim(p, lim, fds, err);
	if (!w) {
		for (unsigned i = 0; i < p->n; i++)
			p->workers[i].detached = 0;
	}
	return w;
}

int ee_pool_has_idle(const struct ee_pool *p)
{
	for (unsigned i = 0; p && i < p->n; i++)
		if (!p->workers[i].busy)
			return 1;
	return 0;
}

unsigned long ee_pool_replacements(const struct ee_pool *p)
{
	return p ? p->replaced : 0;
}

int ee_worker_fd(const struct ee_worker *w)
{
	return w->sock;
}

int ee_worker_receive(struct ee_worker *w, struct ee_worker_msg *msg)
{
	int fds[1], nfds;
	int rc = recv_msg(w->sock, msg, fds, 0, &nfds, MSG_DONTWAIT);

	if (rc < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	if (rc == 1 && msg->type == EE_W_DONE)
		return 1;
	if (rc == 1)
		return 0; /* nothing else is expected now; ignore */
	w->dead = 1;
	return -1;
}

void ee_worker_kill(struct ee_worker *w)
{
	if (w->pidfd >= 0)
		syscall(SYS_pidfd_send_signal, w->pidfd, SIGKILL, NULL, 0);
	w->dead = 1;
}

void ee_worker_release(struct ee_worker *w, struct ee_cgroup_stats *st)
{
	ee_cgroup_pool_stats(&w->cgs, &w->base, st);
	w->busy = 0;
}

/* The candidate cgroup is back at its baseline when its charge did not
 * grow (one read of an open file: the common case), or grew by file pages
 * only (memory.stat, read only then). Its unreclaimable part is compared
 * with the slot's when new, not with the last candidate's, so nothing
 * pinned can creep up a candidate at a time. */
int ee_worker_holds_pinned(const struct ee_worker *w, long long tolerance)
{
	long long usage = ee_cgroup_pool_usage(&w->cgs);
	if (usage < 0 || w->usage_begin < 0 || usage <= w->usage_begin + tolerance)
		return 0;
	long long held = ee_cgroup_held(&w->cgs.candidate);
	return held > (w->held_clean > 0 ? w->held_clean : 0) + tolerance;
}

void ee_worker_retire(struct ee_worker *w)
{
	ee_worker_kill(w);
}

const struct ee_cgroup *ee_worker_cgroup(const struct ee_worker *w)
{
	return &w->cgs.candidate;
}
