/* test_loop.c - the generic event loop (base/loop.h), without a sandbox.
 *
 * Over pipes: a readable (or writable) fd's callback fires, a removed
 * watch's never does, also when it is removed by another callback of the
 * same batch; jobs keep ee_loop_run going and are told of an interruption;
 * a signal goes to the hook first, and without one (or when the hook
 * declines) it interrupts the loop. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "base/loop.h"
#include "leakcheck.h"

static struct ee_loop *loop;
static struct ee_err err;

static void setup(void)
{
	cr_assert_eq(ee_loop_new(&loop, &err), 0, "%s", err.msg);
}

static void teardown(void)
{
	ee_loop_free(loop);
	no_leaks();
}

TestSuite(loop, .init = setup, .fini = teardown);

/* A watch's context: how often it fired, and what to do then. */
struct probe {
	int fd;
	int fired;
	struct ee_loop_fd *watch;
	struct probe *other; /* removed on firing, when set */
};

static void on_fd(void *ctx)
{
	struct probe *p = ctx;
	char c;

	p->fired++;
	if (read(p->fd, &c, 1) < 0) {
		/* a writable watch: nothing to read */
	}
	if (p->other) {
		ee_loop_remove_fd(p->other->watch);
		p->other->watch = NULL;
	}
}

static void make_pipe(int p[2])
{
	cr_assert_eq(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
}

Test(loop, a_readable_fd_fires_its_callback_and_a_removed_one_does_not)
{
	int p[2];
	make_pipe(p);
	struct probe pr = { .fd = p[0] };
	cr_assert_eq(ee_loop_add_fd(loop, p[0], EE_LOOP_READABLE, on_fd, &pr, &pr.watch, &err), 0, "%s",
	             err.msg);

	cr_assert_eq(ee_loop_wait(loop, 0, &err), 0);
	cr_expect_eq(pr.fired, 0, "nothing to read yet");
	cr_assert_eq(write(p[1], "x", 1), 1);
	cr_assert_eq(ee_loop_wait(loop, 1000, &err), 0);
	cr_expect_eq(pr.fired, 1);

	ee_loop_remove_fd(pr.watch);
	cr_assert_eq(write(p[1], "y", 1), 1);
	cr_assert_eq(ee_loop_wait(loop, 50, &err), 0);
	cr_expect_eq(pr.fired, 1, "a removed watch fired");
	close(p[0]);
	close(p[1]);
}

Test(loop, a_writable_fd_fires)
{
	int p[2];
	make_pipe(p);
	struct probe pr = { .fd = -1 };
	cr_assert_eq(ee_loop_add_fd(loop, p[1], EE_LOOP_WRITABLE, on_fd, &pr, &pr.watch, &err), 0, "%s",
	             err.msg);
	cr_assert_eq(ee_loop_wait(loop, 1000, &err), 0);
	cr_expect_eq(pr.fired, 1, "an empty pipe has room");
	ee_loop_remove_fd(pr.watch);
	close(p[0]);
	close(p[1]);
}

/* Both fds are ready in one batch; whichever callback runs first removes
 * the other's watch, whose event, still in the batch, must be dropped. */
Test(loop, a_watch_removed_by_another_callback_of_the_batch_does_not_fire)
{
	int a[2], b[2];
	make_pipe(a);
	make_pipe(b);
	struct probe pa = { .fd = a[0] }, pb = { .fd = b[0] };
	pa.other = &pb;
	pb.other = &pa;
	cr_assert_eq(ee_loop_add_fd(loop, a[0], EE_LOOP_READABLE, on_fd, &pa, &pa.watch, &err), 0);
	cr_assert_eq(ee_loop_add_fd(loop, b[0], EE_LOOP_READABLE, on_fd, &pb, &pb.watch, &err), 0);
	cr_assert_eq(write(a[1], "x", 1), 1);
	cr_assert_eq(write(b[1], "x", 1), 1);

	cr_assert_eq(ee_loop_wait(loop, 1000, &err), 0);
	cr_expect_eq(pa.fired + pb.fired, 1, "fired %d and %d", pa.fired, pb.fired);
	struct probe *left = pa.watch ? &pa : &pb;
	left->other = NULL;
	ee_loop_remove_fd(left->watch);
	for (int i = 0; i < 2; i++) {
		close(a[i]);
		close(b[i]);
	}
}

Test(loop, an_fd_the_kernel_refuses_is_an_error)
{
	struct probe pr = { .fd = -1 };
	struct ee_loop_fd *w = NULL;
	cr_expect_eq(ee_loop_add_fd(loop, -1, EE_LOOP_READABLE, on_fd, &pr, &w, &err), -1);
	cr_expect_eq(err.code, EE_ERR_SANDBOX);
	cr_expect_null(w);
	ee_loop_remove_fd(NULL); /* nothing */
}

/* A job that leaves when told of an interruption. */
struct job {
	struct ee_loop_job job;
	int told;
	int leave;
};

static void on_interrupt(void *ctx)
{
	struct job *j = ctx;
	j->told++;
	if (j->leave)
		ee_loop_leave(loop, &j->job);
}

static void join(struct job *j, int leave)
{
	*j = (struct job){ .job = { .on_interrupt = on_interrupt, .ctx = j }, .leave = leave };
	ee_loop_join(loop, &j->job);
}

Test(loop, with_no_job_run_returns_at_once)
{
	cr_expect_eq(ee_loop_run_once(loop, &err), 0);
	cr_expect_eq(ee_loop_run(loop, &err), 0);
	cr_expect_eq(ee_loop_interrupted(loop), 0);
}

Test(loop, an_interruption_tells_every_job_and_keeps_the_first_signal)
{
	struct job a, b;
	join(&a, 1);
	join(&b, 1);
	ee_loop_interrupt(loop, SIGTERM);
	cr_expect_eq(a.told, 1);
	cr_expect_eq(b.told, 1);
	cr_expect_eq(ee_loop_interrupted(loop), SIGTERM);
	ee_loop_interrupt(loop, SIGINT); /* no job left to tell */
	cr_expect_eq(a.told, 1);
	cr_expect_eq(ee_loop_interrupted(loop), SIGTERM, "the first signal stays");
	cr_expect_eq(ee_loop_run(loop, &err), SIGTERM);
}

/* A job that a watch's callback ends: ee_loop_run runs until then. */
struct ending {
	struct probe pr;
	struct job *job;
};

static void on_end(void *ctx)
{
	struct ending *e = ctx;
	on_fd(&e->pr);
	ee_loop_leave(loop, &e->job->job);
	ee_loop_remove_fd(e->pr.watch);
}

Test(loop, run_goes_on_until_the_last_job_leaves)
{
	int p[2];
	make_pipe(p);
	struct job j;
	struct ending e = { .pr = { .fd = p[0] }, .job = &j };
	join(&j, 0);
	cr_assert_eq(ee_loop_add_fd(loop, p[0], EE_LOOP_READABLE, on_end, &e, &e.pr.watch, &err), 0);
	cr_assert_eq(write(p[1], "x", 1), 1);
	cr_expect_eq(ee_loop_run(loop, &err), 0);
	cr_expect_eq(e.pr.fired, 1);
	cr_expect_eq(j.told, 0);
	close(p[0]);
	close(p[1]);
}

static int hook_seen, hook_takes;

static int hook(void *ctx, int signo)
{
	(void)ctx;
	hook_seen = signo;
	return hook_takes;
}

Test(loop, a_signal_goes_to_the_hook_which_may_take_it)
{
	struct job j;
	join(&j, 1);
	ee_loop_on_signal(loop, hook, NULL);
	hook_takes = 1;
	cr_assert_eq(raise(SIGTERM), 0); /* blocked: pending, read from the signalfd */
	cr_assert_eq(ee_loop_wait(loop, 1000, &err), 0);
	cr_expect_eq(hook_seen, SIGTERM);
	cr_expect_eq(ee_loop_interrupted(loop), 0, "the hook took it");
	cr_expect_eq(j.told, 0);

	hook_takes = 0;
	cr_assert_eq(raise(SIGHUP), 0);
	cr_assert_eq(ee_loop_wait(loop, 1000, &err), 0);
	cr_expect_eq(hook_seen, SIGHUP);
	cr_expect_eq(ee_loop_interrupted(loop), SIGHUP, "the hook declined: the default");
	cr_expect_eq(j.told, 1);
}

Test(loop, without_a_hook_a_signal_interrupts)
{
	struct job j;
	join(&j, 1);
	cr_assert_eq(raise(SIGINT), 0);
	cr_expect_eq(ee_loop_run(loop, &err), SIGINT);
	cr_expect_eq(j.told, 1);
}

Test(loop, free_gives_back_the_signal_mask)
{
	sigset_t now;
	sigprocmask(SIG_SETMASK, NULL, &now);
	cr_expect(sigismember(&now, SIGTERM), "blocked while the loop lives");
	ee_loop_free(loop);
	loop = NULL;
	sigprocmask(SIG_SETMASK, NULL, &now);
	cr_expect(!sigismember(&now, SIGTERM), "still blocked after ee_loop_free");
	cr_assert_eq(ee_loop_new(&loop, &err), 0); /* for teardown */
}
