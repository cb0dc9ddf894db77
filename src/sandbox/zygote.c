/* zygote.c - the warm worker process: `execeval __worker` (see worker.h).
 *
 * Started by the supervisor as the init of new pid, mount, network, ipc and
 * uts namespaces, with fd 3 its configuration, fd 4 its socket and fds 5...
 * the files that join its slot's cgroups. It builds the sandbox's root (the
 * same plan as a cold sandbox), embeds the interpreter configured as
 * `python3 -I -S -B` would be, runs the harness module and its warm_up(),
 * says READY, and then serves one candidate at a time: a fresh pid
 * namespace with an init of the worker's (namespace_init below), the
 * payload cloned into it with fresh mount, ipc and uts namespaces (child.c,
 * warm), the init's pidfd to the supervisor, a wait for the payload's end,
 * the namespace killed with its init, the network namespace checked for
 * traces (keep_network_clean), DONE.
 *
 * The worker runs only this file's code and the harness's warm-up, never a
 * candidate's; it never reads a job. What it learns of a candidate's end is
 * zeroed before the next clone, and each payload drops its copy of the
 * worker's and the init's stacks before the harness starts (payload_main):
 * no candidate finds its predecessor in its memory. Being the init of the namespace every
 * candidate's namespace nests in, its death (or the supervisor's, through
 * PDEATHSIG) kills every candidate with it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <marshal.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <poll.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness/harness.h"
#include "sandbox/child.h"
#include "sandbox/clone.h"
#include "sandbox/mount.h"
#include "sandbox/seccomp.h"
#include "sandbox/wire.h"
#include "sandbox/worker.h"
#include "sandbox/zygote_native.h"

static struct ee_worker_config cfg;
static int cgroup_fds[8];
static int own_pid_ns = -1; /* to make the next candidate's namespace from */
static PyObject *warm_main;

static void send_msg(const struct ee_worker_msg *m, int fd)
{
	(void)ee_wire_send(EE_WFD_SOCKET, m, sizeof(*m), &fd, fd >= 0 ? 1 : 0);
}

static void send_failed(const struct ee_err *err)
{
	struct ee_worker_msg m = { .type = EE_W_FAILED, .err = *err };
	send_msg(&m, -1);
}

__attribute__((noreturn)) static void fail(const struct ee_err *e)
{
	send_failed(e);
	_exit(1);
}

/* ---- the interpreter --------------------------------------------------- */

static int python_failed(const char *what, PyStatus st, struct ee_err *err)
{
	return ee_fail(err, EE_ERR_SANDBOX, "%s: %s", what, st.err_msg ? st.err_msg : "failed");
}

/* As `python3 -I -S -B` configures itself: isolated (no PYTHON* variables,
 * no user site, no script directory on sys.path), no site, no bytecode
 * written; locale and streams from the clean environment. */
static int start_python(struct ee_err *err)
{
	PyPreConfig pre;
	PyPreConfig_InitPythonConfig(&pre);
	pre.isolated = 1;
	pre.use_environment = 0;
	pre.parse_argv = 0;
	PyStatus st = Py_PreInitialize(&pre);
	if (PyStatus_Exception(st))
		return python_failed("pre-initialize Python", st, err);

	PyConfig c;
	PyConfig_InitPythonConfig(&c);
	c.isolated = 1;
	c.use_environment = 0;
	c.user_site_directory = 0;
	c.safe_path = 1;
	c.site_import = 0;
	c.write_bytecode = 0;
	c.parse_argv = 0;
	c.pathconfig_warnings = 0;
	char *argv[] = { "" };
	st = PyConfig_SetBytesString(&c, &c.program_name, cfg.host.python);
	if (!PyStatus_Exception(st))
		st = PyConfig_SetBytesArgv(&c, 1, argv);
	if (!PyStatus_Exception(st))
		st = Py_InitializeFromConfig(&c);
	PyConfig_Clear(&c);
	if (PyStatus_Exception(st))
		return python_failed("initialize Python", st, err);
	return 0;
}

/* The harness as a module that is not in sys.modules (as __main__ is
 * swapped out on a cold start): the build's pyc when this interpreter's
 * magic number matches it, else its source. */
static int load_harness(struct ee_err *err)
{
	size_t len = (size_t)(ee_harness_pyc_end - ee_harness_pyc);
	long magic = PyImport_GetMagicNumber();
	unsigned char want[4] = { (unsigned char)magic, (unsigned char)(magic >> 8),
		                  (unsigned char)(magic >> 16), (unsigned char)(magic >> 24) };
	PyObject *code = NULL, *globals = NULL, *r = NULL, *warm_up = NULL, *done = NULL;

	if (len > 16 && memcmp(ee_harness_pyc, want, 4) == 0)
		code = PyMarshal_ReadObjectFromString((const char *)ee_harness_pyc + 16,
		                                      (Py_ssize_t)(len - 16));
	else
		code = Py_CompileString(ee_harness_py, "<execeval harness>", Py_file_input);
	globals = PyDict_New();
	if (!code || !globals ||
	    PyDict_SetItemString(globals, "__name__", PyUnicode_FromString("execeval_harness")) < 0 ||
	    PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins()) < 0 ||
	    ee_zygote_add_native(globals) < 0)
		goto fail;
	r = PyEval_EvalCode(code, globals, globals);
	if (!r)
		goto fail;
	warm_up = PyDict_GetItemString(globals, "warm_up");
	warm_main = PyDict_GetItemString(globals, "warm_main");
	if (!warm_up || !warm_main)
		goto fail;
	/* The lint tools imported once, not per candidate; the deny list's
	 * policy installed once (warm.py warm_up). */
	cfg.deny[sizeof(cfg.deny) - 1] = '\0';
	PyObject *lint = cfg.lint ? PyUnicode_FromString(ee_lint_py) : Py_NewRef(Py_None);
	PyObject *deny = cfg.deny[0] ? PyUnicode_FromString(cfg.deny) : Py_NewRef(Py_None);
	cfg.preload[sizeof(cfg.preload) - 1] = '\0';
	PyObject *preload = PyUnicode_FromString(cfg.preload);
	done = lint && deny && preload ? PyObject_CallFunctionObjArgs(warm_up, lint, deny, preload, NULL)
	                               : NULL;
	Py_XDECREF(lint);
	Py_XDECREF(deny);
	Py_XDECREF(preload);
	if (!done)
		goto fail;
	Py_INCREF(warm_main);
	Py_DECREF(done);
	Py_DECREF(r);
	Py_DECREF(code);
	/* globals stays alive: the harness's functions refer to it. */
	return 0;
fail:
	if (PyErr_Occurred())
		PyErr_Clear();
	Py_XDECREF(r);
	Py_XDECREF(code);
	return ee_fail(err, EE_ERR_SANDBOX, "cannot load the harness into the warm interpreter");
}

/* The payload of a candidate (child.c calls it instead of execve). It is
 * a direct clone of this worker, so it has the interpreter's signal
 * dispositions already (child.c clears only the mask). */
__attribute__((noreturn)) static void enter_harness(void)
{
	PyOS_AfterFork_Child();
	PyObject *r = PyObject_CallNoArgs(warm_main); /* leaves through _exit */
	(void)r;
	_exit(70);
}

/* ---- serving ---------------------------------------------------------- */

/* fds: the 6 of a run, then a detached run's cgroup join files; *ret_nfds
 * how many came. */
static int receive_run(struct ee_worker_msg *m, int fds[EE_WIRE_MAX_FDS], int *ret_nfds)
{
	int nfds = 0;
	int rc = ee_wire_recv(EE_WFD_SOCKET, m, sizeof(*m), fds, EE_WIRE_MAX_FDS, &nfds, 0);

	if (rc == 0 || (rc < 0 && errno != EPROTO))
		_exit(0); /* the supervisor is done with this worker */
	*ret_nfds = nfds;
	if (rc < 0 || m->type != EE_W_RUN || nfds < 6 || (nfds > 6 && !m->detached) ||
	    (m->detached && (nfds == 6 || m->uid < 65536 || m->uid > 0x7fffffffU))) {
		while (nfds > 0)
			close(fds[--nfds]);
		return -1;
	}
	return 0;
}

/* ---- the candidate's pid namespace init ------------------------------ */

/* As in a cold sandbox, the candidate's pid namespace has an init that is
 * the payload's parent: it reaps orphans, reports the payload's status,
 * runs as the slot's uid (uid.h) without capabilities, and exits when the
 * payload does, which makes the kernel kill whatever the candidate left. A fork of the worker
 * would copy the interpreter's memory only to discard it, so this init
 * shares the worker's memory (CLONE_VM) instead: it runs on its own stack
 * with every signal blocked (no handler of the interpreter's can ever run
 * in it) and makes only raw system calls, because it shares the worker's
 * thread-local storage, errno included. It forks the payload itself (the
 * worker waits meanwhile, so the copy is of a quiet worker), and the
 * payload moves to a stack of its own before it runs anything. */
static char init_stack[16384] __attribute__((aligned(64)));

/* What the init and the worker share (CLONE_VM): written by the init,
 * read by the worker after a futex wake-up or after reaping it. */
static struct {
	volatile int forked;       /* 1 once payload is set */
	volatile int payload;      /* its pid, or -errno */
	volatile int status_known; /* the init saw the payload end */
	volatile int status;       /* the payload's wait status */
	volatile int init_errno;   /* the init could not drop its privileges */
} shared;

static const struct ee_child_args *payload_args;
static unsigned candidate_uid; /* the slot's uid and gid (uid.h) */
/* A pipe from the init to its payload: one byte once the init has dropped
 * its privileges. Without it a quick payload signalled a still-root init
 * (EPERM) and could run beside it. */
static int init_gate[2];
static char *payload_stack;
/* The worker's stack from its lowest mapped address to the serving loop's
 * frame: all of it dead while a payload is being forked. */
static char *worker_stack_lo, *worker_stack_top;
#define PAYLOAD_STACK_SIZE (8u << 20)

static long raw_syscall5(long nr, long a1, long a2, long a3, long a4, long a5)
{
	long ret;
#if defined(__x86_64__)
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	__asm__ volatile("syscall"
	                 : "=a"(ret)
	                 : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8)
	                 : "rcx", "r11", "memory");
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a1;
	register long x1 __asm__("x1") = a2;
	register long x2 __asm__("x2") = a3;
	register long x3 __asm__("x3") = a4;
	register long x4 __asm__("x4") = a5;
	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4) : "memory");
	ret = x0;
#else
#error "the warm worker's namespace init needs raw system calls for this architecture"
#endif
	return ret;
}

#define RAW(nr, a1, a2, a3, a4) raw_syscall5((nr), (long)(a1), (long)(a2), (long)(a3), (long)(a4), 0)

/* Zeroes [lo, hi) of this process's memory: whole pages are dropped (they
 * read as zero again, without the fault and copy a write would cost in a
 * fresh fork), the partial pages at the ends are written. */
static void scrub(char *lo, char *hi)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	char *a = (char *)(((uintptr_t)lo + page - 1) & ~(page - 1));
	char *b = (char *)((uintptr_t)hi & ~(page - 1));

	if (hi <= lo)
		return;
	if (a >= b) {
		explicit_bzero(lo, (size_t)(hi - lo));
		return;
	}
	explicit_bzero(lo, (size_t)(a - lo));
	if (madvise(a, (size_t)(b - a), MADV_DONTNEED) < 0)
		explicit_bzero(a, (size_t)(b - a));
	explicit_bzero(b, (size_t)(hi - b));
}

/* The payload, on its own stack in its own copy of memory: from here on
 * it is an ordinary process and may use libc. Its copy of the worker's
 * stack below the serving loop (dead frames: earlier candidates' DONE
 * messages and rusage, receive buffers, the interpreter's start-up) and of
 * the init's stack is scrubbed before anything of the candidate runs; what
 * it needs of them is copied to its own stack first. */
__attribute__((noreturn)) static void payload_main(void)
{
	struct ee_child_args a = *payload_args;
	struct ee_seccomp_prog prog = *a.seccomp;

	a.seccomp = &prog;
	scrub(worker_stack_lo, worker_stack_top);
	scrub(init_stack, init_stack + sizeof(init_stack));
	char go = 0;
	close(init_gate[1]);
	while (read(init_gate[0], &go, 1) < 0 && errno == EINTR)
		;
	if (go != 'g')
		_exit(127); /* the init could not drop: the namespace dies with it */
	close(init_gate[0]);
	ee_child_main(&a);
}

__attribute__((noreturn)) static void run_payload(void)
{
	static ucontext_t uc;
	getcontext(&uc);
	uc.uc_stack.ss_sp = payload_stack;
	uc.uc_stack.ss_size = PAYLOAD_STACK_SIZE;
	uc.uc_link = NULL;
	makecontext(&uc, (void (*)(void))payload_main, 0);
	setcontext(&uc);
	_exit(127);
}

/* What an init is given: a run's (in shared memory) or a detached run's
 * (in its own copy of the worker's memory: it reports its payload's pid
 * on a pipe instead of through `shared`). */
struct init_arg {
	const int *cgroup; /* join files, -1 ended */
	unsigned uid;      /* the sandbox's uid and gid */
	int report;        /* detached: the pipe its payload's pid (or -errno) goes to; -1 */
};

static int namespace_init(void *argp)
{
	const struct init_arg *arg = argp;
	const int *cgroup = arg->cgroup;
	unsigned uid = arg->uid;
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct none[2] = { { 0, 0, 0 }, { 0, 0, 0 } };

	/* Into the candidate's cgroup first, so the payload and everything
	 * it forks are there from their first instruction (the payload is
	 * born in it and joins no more). A join that fails is reported as the
	 * clone's failure (-errno), and no payload is made. */
	long pid = 0;
	for (const int *fd = cgroup; *fd >= 0 && pid == 0; fd++) {
		long wrote = RAW(SYS_pwrite64, *fd, "0", 1, 0);
		pid = wrote == 1 ? 0 : wrote < 0 ? wrote : -EIO;
	}
	int gate[2];
	if (pid == 0)
		pid = RAW(SYS_pipe2, gate, O_CLOEXEC, 0, 0); /* -errno: reported as the clone's */
	if (pid == 0) {
		init_gate[0] = gate[0];
		init_gate[1] = gate[1];
		/* A detached sandbox lives beside the worker's later candidates:
		 * a network namespace of its own, so that no abstract socket of
		 * it is theirs to reach (keep_network_clean cannot wait for it). */
		long net = arg->report >= 0 ? CLONE_NEWNET : 0;
		pid = RAW(SYS_clone, CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | net | SIGCHLD, 0, 0, 0);
	}
	if (pid == 0)
		run_payload();
	if (arg->report >= 0) {
		int said = (int)pid;
		RAW(SYS_write, arg->report, &said, sizeof(said), 0);
	} else {
		shared.payload = (int)pid;
		shared.forked = 1;
		RAW(SYS_futex, &shared.forked, FUTEX_WAKE_PRIVATE, 1, 0);
	}
	if (pid < 0)
		RAW(SYS_exit, 1, 0, 0, 0);

	/* As unprivileged as the candidate and under a filter narrower than
	 * its own (seccomp.h: the four calls below; loading the candidate's
	 * too cost a second conversion and JIT of it per candidate); then the
	 * gate opens (the byte is the sign it dropped: its death says
	 * nothing). The filter binds this task only: CLONE_VM shares memory
	 * with the worker, not its seccomp state. */
	struct sock_fprog filter = { .len = ee_seccomp_warm_init_len,
		                     .filter = (struct sock_filter *)ee_seccomp_warm_init };
	if (gate[1] > 0)
		RAW(SYS_close_range, 0, gate[1] - 1, 0, 0);
	RAW(SYS_close_range, gate[1] + 1, ~0U, 0, 0);
	long e = RAW(SYS_setgroups, 0, 0, 0, 0);
	e = e < 0 ? e : RAW(SYS_setresgid, uid, uid, uid, 0);
	e = e < 0 ? e : RAW(SYS_setresuid, uid, uid, uid, 0);
	e = e < 0 ? e : RAW(SYS_capset, &hdr, none, 0, 0);
	e = e < 0 ? e : RAW(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0);
	e = e < 0 ? e : RAW(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &filter, 0);
	if (e < 0) {
		shared.init_errno = (int)-e; /* the sandbox's failure, never the candidate's */
		RAW(SYS_exit, 1, 0, 0, 0);   /* never a candidate beside a privileged init: the
		                                namespace dies with it */
	}
	RAW(SYS_write, gate[1], "g", 1, 0);
	RAW(SYS_close, gate[1], 0, 0, 0);
	for (;;) {
		int status;
		long got = RAW(SYS_wait4, -1, &status, __WALL, 0);
		if (got == pid) {
			shared.status = status;
			shared.status_known = 1;
		}
		if (got == pid || (got < 0 && got != -EINTR))
			RAW(SYS_exit, 0, 0, 0, 0); /* the kernel now kills the rest of the namespace */
	}
	return 0;
}

/* ---- the network namespace ------------------------------------------- */

/* The candidates of a worker share its network namespace (a new one costs
 * about 0.7 ms of CPU per candidate) as long as none leaves anything in it.
 * With seccomp allowing AF_UNIX sockets only, and no capability to touch
 * interfaces or sysctls, a candidate's only possible trace there is a UNIX
 * socket that outlives it: kept alive by an SCM_RIGHTS cycle until the
 * kernel's collector runs, its abstract name is listed in /proc/net/unix and
 * connectable, a channel to the next candidate. The worker itself owns no
 * socket in this namespace (its socket pair was made in the supervisor's),
 * so any line below the header means a trace: the worker moves to a fresh
 * namespace before the next candidate. */
static int network_has_sockets(void)
{
	char buf[256];
	int fd = open("/proc/net/unix", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return 1;
	buf[n] = '\0';
	char *nl = strchr(buf, '\n');
	return !nl || nl[1] != '\0';
}

static void keep_network_clean(void)
{
	if (!network_has_sockets())
		return;
	/* A socket outlived its candidate: a cycle in flight, which may hold
	 * a flock or memfds; only the kernel's unix collector ends it. */
	(void)ee_unix_gc_kick();
	if (unshare(CLONE_NEWNET) < 0)
		_exit(1); /* cannot promise a clean one: the supervisor replaces this worker */
}

/* ---- one candidate ----------------------------------------------------- */

/* Detached runs (sessions) live on their own: their inits are this
 * worker's children, reaped whenever the worker is between runs. */
#define MAX_DETACHED 8192
static pid_t detached[MAX_DETACHED];
static size_t n_detached;

static void reap_detached(void)
{
	for (size_t i = 0; i < n_detached;) {
		if (waitpid(detached[i], NULL, __WALL | WNOHANG) == detached[i])
			detached[i] = detached[--n_detached];
		else
			i++;
	}
}

/* The pid its detached init reports for its payload (or -errno). */
static int read_report(int fd)
{
	int pid = -EIO;
	while (read(fd, &pid, sizeof(pid)) < 0 && errno == EINTR)
		;
	return pid;
}

static void serve_one(const struct ee_worker_msg *req, const int *fds, int nfds)
{
	static struct ee_limits limits;
	/* Static, as limits: the payload reads them after scrubbing this
	 * stack (payload_main). */
	static int join[EE_WIRE_MAX_FDS];
	struct ee_seccomp_prog prog = { cfg.seccomp, cfg.seccomp_len };
	struct ee_err err = { 0 };
	int init_pidfd = -1;
	int report[2] = { -1, -1 };
	int detach = req->detached;
	sigset_t all, old;

	limits = req->limits;
	for (int i = 6; i < nfds; i++)
		join[i - 6] = fds[i];
	join[nfds > 6 ? nfds - 6 : 0] = -1;
	if (detach && (n_detached == MAX_DETACHED || pipe2(report, O_CLOEXEC) < 0)) {
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		ee_fail(&err, EE_ERR_SANDBOX, "this warm worker holds too many sessions");
		send_failed(&err);
		return;
	}
	struct init_arg arg = { detach ? join : cgroup_fds, detach ? req->uid : candidate_uid, report[1] };
	struct ee_child_args a = {
		.host = &cfg.host,
		.limits = &limits,
		.mounts = &cfg.mounts,
		.seccomp = &prog,
		.use_cgroup_ns = cfg.use_cgroup_ns,
		.have_memory_cg = cfg.have_memory_cg,
		.have_pids_cg = cfg.have_pids_cg,
		.uid = arg.uid,
		.fds = { .sync = -1,
		         .ctl = fds[0],
		         .job = fds[1],
		         .out = fds[2],
		         .err = fds[3],
		         .result = fds[4],
		         .gate = fds[5],
		         .code = -1 },
		.warm = 1,
		.own_account = detach,
		.cgroup_fds = arg.cgroup,
		.enter = enter_harness,
	};

	/* A new pid namespace for the next children; its init forks the
	 * payload while this worker waits, quiet, for the copy to be made. */
	payload_args = &a;
	/* Nothing of the previous candidate may be in the memory the payload
	 * copies: its status (shared) and its init's frames. */
	explicit_bzero((void *)&shared, sizeof(shared));
	explicit_bzero(init_stack, sizeof(init_stack));
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid_t init = -1;
	int clone_errno = 0;
	PyOS_BeforeFork();
	/* A detached init outlives this call: it gets a copy of the worker's
	 * memory (a fork) rather than sharing it, so that the next run's
	 * init_stack and `shared` are never its own. */
	if (unshare(CLONE_NEWPID) == 0)
		init = clone(namespace_init, init_stack + sizeof(init_stack),
		             (detach ? 0 : CLONE_VM) | CLONE_PIDFD | SIGCHLD, &arg, &init_pidfd);
	if (init < 0)
		clone_errno = errno;
	while (!detach && init > 0 && !shared.forked)
		syscall(SYS_futex, &shared.forked, FUTEX_WAIT_PRIVATE, 0, NULL);
	PyOS_AfterFork_Parent();
	sigprocmask(SIG_SETMASK, &old, NULL);
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	int payload = shared.payload;
	if (detach) {
		close(report[1]);
		payload = init > 0 ? read_report(report[0]) : -EIO;
		close(report[0]);
	}
	/* unshare(CLONE_NEWPID) works only from the caller's own namespace. */
	if (setns(own_pid_ns, CLONE_NEWPID) < 0)
		_exit(1); /* cannot serve another candidate: the supervisor replaces this worker */
	if (init < 0 || payload < 0) {
		errno = init < 0 ? clone_errno : -payload;
		ee_fail_errno(&err, EE_ERR_SANDBOX, "start a candidate");
		send_failed(&err);
		if (init > 0) {
			while (waitpid(init, NULL, __WALL) < 0 && errno == EINTR)
				;
			close(init_pidfd);
		}
		return;
	}
	struct ee_worker_msg started = { .type = EE_W_STARTED };
	send_msg(&started, init_pidfd);
	close(init_pidfd);
	if (detach) { /* its end is its init's: the supervisor watches the pidfd */
		detached[n_detached++] = init;
		return;
	}

	/* The init ends when the payload does (or when the supervisor kills
	 * it); its rusage counts every process it reaped. */
	struct rusage ru;
	memset(&ru, 0, sizeof(ru));
	while (wait4(init, NULL, __WALL, &ru) < 0 && errno == EINTR)
		;
	keep_network_clean();
	struct ee_worker_msg done = {
		.type = EE_W_DONE,
		.has_status = shared.status_known,
		.status = shared.status,
		.maxrss_kb = ru.ru_maxrss,
		.cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
		          (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3,
	};
	if (shared.init_errno) {
		errno = shared.init_errno;
		ee_fail_errno(&done.err, EE_ERR_SANDBOX, "the candidate's init could not become uid/gid %u",
		              candidate_uid);
	}
	send_msg(&done, -1);
	explicit_bzero(&done, sizeof(done));
	explicit_bzero(&ru, sizeof(ru));
}

__attribute__((noinline, noreturn)) static void serve(void)
{
	struct ee_err err = { 0 };

	for (;;) {
		struct ee_worker_msg req;
		int fds[EE_WIRE_MAX_FDS];
		int nfds = 0;
		reap_detached();
		struct pollfd sock = { .fd = EE_WFD_SOCKET, .events = POLLIN };
		if (n_detached > 0 && poll(&sock, 1, 1000) == 0)
			continue; /* a second gone by: reap the sessions that ended */
		if (receive_run(&req, fds, &nfds) < 0) {
			ee_fail(&err, EE_ERR_SANDBOX, "malformed request");
			send_failed(&err);
			continue;
		}
		serve_one(&req, fds, nfds);
		explicit_bzero(&req, sizeof(req));
	}
}

/* The lowest address of the main thread's stack, once warm: the deepest
 * it ever was (the interpreter's start-up), as serving one candidate goes
 * far less deep. */
static int find_stack(struct ee_err *err)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "open /proc/self/maps");
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (strstr(line, "[stack]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2) {
			worker_stack_lo = (char *)lo;
			break;
		}
	}
	fclose(f);
	if (!worker_stack_lo)
		return ee_fail(err, EE_ERR_SANDBOX, "no [stack] in /proc/self/maps");
	return 0;
}

void ee_zygote_main(const char *n_cgroup_fds, const char *uid)
{
	struct ee_err err = { 0 };
	char *end;
	unsigned long id = strtoul(uid, &end, 10);
	int n = n_cgroup_fds[0] >= '0' && n_cgroup_fds[0] <= '3' && !n_cgroup_fds[1] ? n_cgroup_fds[0] - '0'
	                                                                             : -1;

	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	/* Each candidate's init shares this memory and runs as the candidate's
	 * uid: non-dumpable keeps its /proc/1/mem, fd and root closed. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	unsetenv("ASAN_OPTIONS"); /* read already, by an ASan build (worker.c) */
	const char *delay = getenv(EE_WORKER_TEST_DELAY_ENV);
	long delay_ms = delay ? strtol(delay, NULL, 10) : 0;
	unsetenv(EE_WORKER_TEST_DELAY_ENV); /* no candidate sees it */
	if (pread(EE_WFD_CONFIG, &cfg, sizeof(cfg), 0) != (ssize_t)sizeof(cfg) ||
	    cfg.magic != EE_WORKER_MAGIC || cfg.size != sizeof(cfg) || n < 0 || getpid() != 1 || *end ||
	    id < 65536 || id > 0x7fffffffUL) {
		ee_fail(&err, EE_ERR_SANDBOX, "started without a worker configuration");
		fail(&err);
	}
	close(EE_WFD_CONFIG);
	candidate_uid = (unsigned)id;
	for (int i = 0; i < n; i++)
		cgroup_fds[i] = EE_WFD_CGROUP + i;
	cgroup_fds[n] = -1;

	/* Nothing this worker makes will ever exec with a capability: empty
	 * the bounding set once here rather than in every candidate. */
	if (ee_child_drop_bounding_set(&cfg.host, &err) < 0)
		fail(&err);
	if (sethostname("sandbox", 7) < 0 || setdomainname("sandbox", 7) < 0) {
		ee_fail_errno(&err, EE_ERR_SANDBOX, "sethostname");
		fail(&err);
	}
	if (ee_mount_apply(&cfg.mounts, candidate_uid, &err) < 0 || start_python(&err) < 0 ||
	    load_harness(&err) < 0)
		fail(&err);
	/* Each payload's stack (its copy of these pages; the worker never
	 * touches them), with a guard page below. */
	char *stack = mmap(NULL, PAYLOAD_STACK_SIZE + 4096, PROT_READ | PROT_WRITE,
	                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED || mprotect(stack, 4096, PROT_NONE) < 0) {
		ee_fail_errno(&err, EE_ERR_SANDBOX, "map the candidates' stack");
		fail(&err);
	}
	payload_stack = stack + 4096;
	own_pid_ns = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
	if (own_pid_ns < 0) {
		ee_fail_errno(&err, EE_ERR_SANDBOX, "open /proc/self/ns/pid");
		fail(&err);
	}

	if (find_stack(&err) < 0)
		fail(&err);
	/* Everything the serving loop puts on the stack lies below this frame
	 * (serve is not inlined into it). */
	worker_stack_top = __builtin_frame_address(0);

	if (delay_ms > 0) { /* the tests' slow slot */
		struct timespec ts = { delay_ms / 1000, (delay_ms % 1000) * 1000000L };
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	struct ee_worker_msg ready = { .type = EE_W_READY };
	send_msg(&ready, -1);
	serve();
}
