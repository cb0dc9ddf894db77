/* session_fork.c - a live session forked into copies (session.h,
 * ee_session_fork; docs/sandbox.md "Forking a session").
 *
 * Theory of operation. The copies are made by copy.c in a helper process
 * forked from here for the one request: it traces the session's state, so
 * the loop must not wait on it (a fork of 100 copies takes a good part of
 * a second); its answer comes back on a pipe the loop watches. Meanwhile
 * the session is PH_FORKING (no cell), its seccomp listener is the
 * helper's, and each copy is a session whose sandbox is starting
 * (launch_copy.c). When the helper answers:
 *
 *   - made: each copy's sandbox adopts its process, and its keeper's hello
 *     makes it ready as a new session's would be; the forked session
 *     becomes its family's holder (its init stopped, its keeper and state
 *     killed, by the helper) and runs nothing: the copies' pid namespaces
 *     are nested in its, so it lives until the last copy ends (a family
 *     holds one reference per copy), then it is killed;
 *   - refused or failed: every copy's start fails; the session goes on as
 *     it was unless the helper had killed its processes already (a copy
 *     that failed after the others were made): then it ends, saying so.
 *
 * The first copy goes on as the forked session, with its id (serve's
 * choice): no process of the agent's runs beside a copy in a namespace
 * that holds the copy's.
 */
#include "engine/session.h"
#include "engine/session_int.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/err.h"
#include "base/loop.h"
#include "sandbox/copy.h"
#include "sandbox/sandbox.h"

struct session_family {
	struct ee_session *holder;
	unsigned refs;   /* copies whose sandboxes have not ended */
	int holder_gone; /* the holder's own end came (then it is freed with the family) */
};

/* The helper's answer, written once. */
struct fork_answer {
	int rc;
	int session_gone; /* the session's processes were killed before the failure */
	struct ee_err err;
	pid_t pids[EE_SESSION_FORK_MAX];
};

struct fork_job {
	struct ee_session *s;
	struct ee_session *copies[EE_SESSION_FORK_MAX];
	unsigned n;
	pid_t helper;
	int answer_fd;
	struct ee_loop_fd *watch;
	void (*on_forked)(void *ctx, const struct ee_err *err);
	void *ctx;
};

/* ---- the family ----------------------------------------------------------- */

/* Holders not yet freed, in this process: a server that drains waits for
 * them too (their sandboxes' teardown, cgroups and all). */
static unsigned holders_live;

unsigned ee_session_holders(void)
{
	return holders_live;
}

static void family_free(struct session_family *f)
{
	ee_session_free(f->holder);
	free(f);
	holders_live--;
}

static void holder_answer(void *ctx, struct ee_session *s, json_t *answer)
{
	(void)ctx;
	(void)s;
	json_decref(answer);
}

static void holder_end(void *ctx, struct ee_session *s, const char *why)
{
	struct session_family *f = s->holding;
	(void)ctx;
	(void)why;
	f->holder_gone = 1;
	if (f->refs == 0)
		family_free(f);
}

static const struct ee_session_ops holder_ops = { .on_answer = holder_answer, .on_end = holder_end };

void session_family_drop(struct ee_session *s)
{
	struct session_family *f = s->family;
	if (!f)
		return;
	s->family = NULL;
	if (--f->refs > 0)
		return;
	if (f->holder_gone)
		family_free(f);
	else /* its end (holder_end) frees it */
		session_end_with(f->holder, "the last copy of its family ended");
}

/* The session whose sandbox holds the seccomp listener s's filter has: a
 * copy has its parent's filter, the first session of its family's. */
static struct ee_session *filter_owner(struct ee_session *s)
{
	while (s->family)
		s = s->family->holder;
	return s;
}

/* ---- the helper ------------------------------------------------------------ */

/* The helper's time: past it, it dies (SIGALRM), and what it traced with
 * it (copy.c: EXITKILL); the supervisor then ends the session. */
#define FORK_HELPER_S 60

static void helper_main(int out, struct ee_copy_plan *plan)
{
	struct fork_answer a;
	memset(&a, 0, sizeof(a));
	signal(SIGALRM, SIG_DFL);
	alarm(FORK_HELPER_S);
	a.rc = ee_copy_make(plan, &a.err);
	/* A failure after the session's processes were killed (copy.c's
	 * finish step) leaves no pid in the plan but its own. */
	for (size_t i = 0; i < plan->n; i++)
		a.pids[i] = plan->copies[i].pid;
	a.session_gone = a.rc < 0 && plan->session_gone;
	const char *p = (const char *)&a;
	size_t left = sizeof(a);
	while (left > 0) {
		ssize_t w = write(out, p, left);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		p += w;
		left -= (size_t)w;
	}
	_exit(0);
}

static void job_free(struct fork_job *j)
{
	ee_loop_remove_fd(j->watch);
	if (j->answer_fd >= 0)
		close(j->answer_fd);
	free(j);
}

void session_fork_orphan(struct ee_session *s)
{
	s->forking->s = NULL;
	s->forking = NULL;
}

static void on_answer_fd(void *ctx)
{
	struct fork_job *j = ctx;
	struct ee_session *s = j->s;
	struct fork_answer a;
	size_t got = 0;

	while (got < sizeof(a)) {
		ssize_t r = read(j->answer_fd, (char *)&a + got, sizeof(a) - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return; /* the rest follows */
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	while (waitpid(j->helper, NULL, 0) < 0 && errno == EINTR)
		;
	if (got != sizeof(a)) {
		memset(&a, 0, sizeof(a));
		a.rc = -1;
		a.session_gone = 1; /* unknown: the helper died; end it rather than trust it */
		ee_fail(&a.err, EE_ERR_SANDBOX, "fork: the helper died");
	}
	if (s) {
		s->forking = NULL;
		ee_sandbox_fork_done(filter_owner(s)->sb);
	} else if (a.rc == 0) { /* the session was freed meanwhile: nobody holds up a family */
		a.rc = -1;
		ee_fail(&a.err, EE_ERR_SANDBOX, "the session ended while it was forked");
	}
	struct session_family *f = a.rc == 0 ? calloc(1, sizeof(*f)) : NULL;
	if (a.rc == 0 && !f) { /* the copies are made, the session's processes ended */
		a.rc = -1;
		a.session_gone = 1;
		ee_fail(&a.err, EE_ERR_SANDBOX, "out of memory");
	}
	if (a.rc < 0) {
		for (unsigned i = 0; i < j->n; i++) {
			if (a.pids[i] > 0)
				kill(a.pids[i], SIGKILL);
			ee_sandbox_copy_failed(j->copies[i]->sb, &a.err);
		}
		if (s) {
			s->phase = PH_READY;
			if (a.session_gone || s->end_after_fork) {
				char why[320];
				snprintf(why, sizeof(why), "the session was lost in a fork that failed: %s",
				         a.err.msg);
				session_end_with(s, s->end_after_fork ? "deleted" : why);
			}
		}
		if (a.session_gone) { /* the answer says so too */
			size_t len = strlen(a.err.msg);
			snprintf(a.err.msg + len, sizeof(a.err.msg) - len, "; the session ended with it");
		}
		j->on_forked(j->ctx, &a.err);
		job_free(j);
		return;
	}
	f->holder = s;
	f->refs = j->n;
	holders_live++;
	s->holding = f;
	s->phase = PH_HOLDER;
	s->ops = &holder_ops;
	s->ctx = NULL;
	for (unsigned i = 0; i < j->n; i++) {
		j->copies[i]->family = f;
		ee_sandbox_copy_started(j->copies[i]->sb, a.pids[i]);
	}
	j->on_forked(j->ctx, NULL);
	job_free(j);
}

/* ---- the fork -------------------------------------------------------------- */

static char *copy_frame(const struct ee_session *c, size_t *len)
{
	char body[160], *frame = malloc(200);
	int n = snprintf(body, sizeof(body), "{\"do\":\"copy\",\"nonce\":\"%s\",\"output_cap\":%zu}",
	                 c->nonce, c->limits.output_cap);
	if (!frame)
		return NULL;
	*len = (size_t)snprintf(frame, 200, "%d:%s,", n, body);
	return frame;
}

int ee_session_fork(struct ee_session *s, unsigned n, const struct ee_session_ops *ops, void *const *ctxs,
                    void (*on_forked)(void *ctx, const struct ee_err *err), void *fork_ctx,
                    struct ee_session **copies, struct ee_err *err)
{
	struct fork_job *j = calloc(1, sizeof(*j));
	struct ee_copy_target targets[EE_SESSION_FORK_MAX];
	char *frames[EE_SESSION_FORK_MAX] = { 0 };
	int pipe_fd[2] = { -1, -1 };
	struct ee_copy_plan plan = { .procs_fd = -1, .pids_max_fd = -1, .listener = -1 };
	unsigned made = 0;

	if (!j)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	j->answer_fd = -1;
	if (n < 1 || n > EE_SESSION_FORK_MAX) {
		ee_fail(err, EE_ERR_USAGE, "a fork makes 1 to %d copies", EE_SESSION_FORK_MAX - 1);
		goto fail;
	}
	if (s->phase != PH_READY || s->why[0]) {
		ee_fail(err, EE_ERR_USAGE,
		        s->phase == PH_CELL || s->phase == PH_SETUP ? "a cell of this session is running"
		                                                    : "the session cannot be forked now");
		goto fail;
	}
	for (; made < n; made++) {
		size_t len;
		if (session_new_copy(s, ops, ctxs[made], &copies[made], err) < 0)
			goto fail;
		j->copies[made] = copies[made];
		frames[made] = copy_frame(copies[made], &len);
		if (!frames[made] || ee_sandbox_copy_target(copies[made]->sb, &targets[made]) < 0) {
			made++;
			ee_fail(err, EE_ERR_SANDBOX, "fork: a copy's sandbox");
			goto fail;
		}
		targets[made].frame = frames[made];
		targets[made].frame_len = len;
	}
	if (ee_sandbox_fork_begin(s->sb, filter_owner(s)->sb, &plan, err) < 0)
		goto fail;
	if (pipe2(pipe_fd, O_CLOEXEC) < 0) {
		ee_fail_errno(err, EE_ERR_SANDBOX, "pipe2");
		goto fail_begun;
	}
	plan.keeper_is_init = s->is_copy;
	plan.n = n;
	plan.copies = targets;
	j->helper = fork();
	if (j->helper < 0) {
		ee_fail_errno(err, EE_ERR_SANDBOX, "fork the copier");
		goto fail_begun;
	}
	if (j->helper == 0) {
		close(pipe_fd[0]);
		helper_main(pipe_fd[1], &plan);
	}
	close(pipe_fd[1]);
	ee_sandbox_fork_close(&plan);
	j->answer_fd = pipe_fd[0];
	for (unsigned i = 0; i < n; i++)
		free(frames[i]);
	j->s = s;
	s->forking = j;
	j->n = n;
	j->on_forked = on_forked;
	j->ctx = fork_ctx;
	fcntl(j->answer_fd, F_SETFL, O_NONBLOCK);
	if (ee_loop_add_fd(s->loop, j->answer_fd, EE_LOOP_READABLE, on_answer_fd, j, &j->watch, err) < 0) {
		/* Unreachable in practice: wait for it here rather than leak it. */
		fcntl(j->answer_fd, F_SETFL, 0);
		s->phase = PH_FORKING;
		on_answer_fd(j);
		return 0;
	}
	s->phase = PH_FORKING;
	return 0;
fail_begun:
	ee_sandbox_fork_done(filter_owner(s)->sb);
	ee_sandbox_fork_close(&plan);
	if (pipe_fd[0] >= 0) {
		close(pipe_fd[0]);
		close(pipe_fd[1]);
	}
fail:
	for (unsigned i = 0; i < made; i++) {
		free(frames[i]);
		ee_sandbox_copy_failed(copies[i]->sb, err);
	}
	free(j);
	return -1;
}

void ee_session_set_ctx(struct ee_session *s, void *ctx)
{
	s->ctx = ctx;
}
