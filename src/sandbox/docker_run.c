/* docker_run.c - starting and killing one candidate's container (see
 * docker_run.h); the Docker backend's launcher, ee_launcher_docker
 * (sandbox_int.h), at the end: the cold one's entries but for the start's
 * clock and the end's docker kill, which goes on from the loop. */
#include "sandbox/docker_run.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "base/resource_limits.h"
#include "sandbox/cgroup.h"
#include "sandbox/docker_argv.h"
#include "sandbox/gvisor_launch.h"
#include "sandbox/host.h"
#include "sandbox/sandbox_int.h"

int ee_docker_find(char *path, size_t size, struct ee_err *err)
{
	const char *env = getenv("EXECEVAL_DOCKER");
	if (env && *env) {
		if (access(env, X_OK) < 0)
			return ee_fail(err, EE_ERR_SANDBOX, "EXECEVAL_DOCKER=%.200s: not an executable", env);
		snprintf(path, size, "%s", env);
		return 0;
	}
	const char *p = getenv("PATH");
	while (p && *p) {
		const char *colon = strchr(p, ':');
		size_t n = colon ? (size_t)(colon - p) : strlen(p);
		if (n > 0 && snprintf(path, size, "%.*s/docker", (int)n, p) < (int)size &&
		    access(path, X_OK) == 0)
			return 0;
		p = colon ? colon + 1 : NULL;
	}
	return ee_fail(err, EE_ERR_SANDBOX,
	               "--backend docker: no docker on PATH (install Docker Engine's client, Debian's "
	               "docker.io, or set EXECEVAL_DOCKER), or use --backend native");
}

int ee_docker_open(struct ee_docker *d, const char *image, struct ee_err *err)
{
	memset(d, 0, sizeof(*d));
	d->image = image;
	return ee_docker_find(d->client, sizeof(d->client), err);
}

/* The client's environment: how it finds its engine, nothing else. */
static const char *const passed[] = { "HOME",          "DOCKER_HOST",      "DOCKER_CONTEXT",
	                              "DOCKER_CONFIG", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY" };
#define N_PASSED (sizeof(passed) / sizeof(passed[0]))

static void client_env(char envbuf[N_PASSED][512], char *env[N_PASSED + 2])
{
	size_t n = 0;
	env[n++] = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	for (size_t i = 0; i < N_PASSED; i++) {
		const char *v = getenv(passed[i]);
		if (v && snprintf(envbuf[i], 512, "%s=%s", passed[i], v) < 512)
			env[n++] = envbuf[i];
	}
	env[n] = NULL;
}

/* In place of a cold clone: names the container, creates sb's cgroup and
 * starts the init running `docker run`. */
static int docker_launch(struct ee_sandbox *sb, const struct ee_sandbox_config *cfg, struct ee_launch_fds *f,
                         int *pidfd, struct ee_err *err)
{
	struct ee_limits lim = *cfg->limits;
	char name[32];
	struct ee_docker_argv cmd;

	if (!cfg->host->is_root)
		return ee_fail(err, EE_ERR_SANDBOX,
		               "--backend docker needs root here (its sandbox's init has a pid and mount "
		               "namespace of its own); run execeval as root or use --backend native");
	if (ee_docker_name(name, sizeof(name)) < 0)
		return ee_fail(err, EE_ERR_SANDBOX, "docker: no randomness for the container's name");
	struct ee_docker_spec spec = { .docker = cfg->docker->client,
		                       .image = cfg->docker->image,
		                       .name = name,
		                       .limits = cfg->limits,
		                       .cpus = 1 };
	if (ee_docker_argv_build(&spec, &cmd, err) < 0)
		return -1;
	lim.memory_mb += EE_DOCKER_EXTRA_MB;
	lim.procs += EE_DOCKER_EXTRA_PIDS;
	if (ee_cgroup_create(cfg->host, &lim, &sb->cg, err) < 0)
		return -1;
	sb->part.docker.client = cfg->docker->client;
	sb->part.docker.name = strdup(name);
	if (!sb->part.docker.name)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	char envbuf[N_PASSED][512];
	char *env[N_PASSED + 2];
	client_env(envbuf, env);
	struct ee_relay_cmd rc = {
		.path = cfg->docker->client, .argv = cmd.argv, .env = env, .label = "docker"
	};
	return ee_relay_launch(sb, cfg, &rc, f, pidfd, err);
}

pid_t ee_docker_kill_start(const char *client, const char *name, int *pidfd)
{
	char *const argv[] = { (char *)client, "kill", (char *)name, NULL };
	char envbuf[N_PASSED][512];
	char *envp[N_PASSED + 2];
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, piped;
	pid_t pid = -1;

	*pidfd = -1;
	client_env(envbuf, envp);
	sigemptyset(&none);
	sigemptyset(&piped);
	sigaddset(&piped, SIGPIPE); /* the loop ignores it; the client must not */
	if (posix_spawn_file_actions_init(&fa) != 0)
		return -1;
	if (posix_spawnattr_init(&attr) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return -1;
	}
	/* The loop blocks SIGINT, SIGTERM, ... (base/loop.h): the client gets
	 * a clean mask, and no descriptor but /dev/null. */
	int ok = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDWR, 0) == 0 &&
	         posix_spawn_file_actions_adddup2(&fa, 0, 1) == 0 &&
	         posix_spawn_file_actions_adddup2(&fa, 0, 2) == 0 &&
	         posix_spawnattr_setsigmask(&attr, &none) == 0 &&
	         posix_spawnattr_setsigdefault(&attr, &piped) == 0 &&
	         posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF) == 0;
	if (ok && posix_spawn(&pid, client, &fa, &attr, argv, envp) != 0)
		pid = -1;
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (pid < 0)
		return -1;
	*pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (*pidfd < 0) {
		/* Cannot watch it: wait for it here, as before, bounded. */
		ee_docker_kill_wait(pid, name);
		return -1;
	}
	return pid;
}

void ee_docker_kill_wait(pid_t pid, const char *name)
{
	for (int ms = 0;; ms += 10) {
		pid_t r = waitpid(pid, NULL, WNOHANG);
		if (r == pid || (r < 0 && errno != EINTR))
			return;
		if (ms >= EE_DOCKER_KILL_MS) {
			ee_docker_kill_abandon(pid, name);
			return;
		}
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	}
}

void ee_docker_kill_abandon(pid_t pid, const char *name)
{
	fprintf(stderr,
	        "execeval: docker kill %s: no answer in %d ms; the container may "
	        "outlive its candidate until the engine's own timeout\n",
	        name, EE_DOCKER_KILL_MS);
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/* ---- the launcher ------------------------------------------------------ */

/* docker kill's pidfd (W_PIDFD: the init's was closed at its reap) and a
 * deadline (W_TIMER) of EE_DOCKER_KILL_MS. 0, or -1 when it could not be
 * started or watched (waited for already, or never run). */
static int start_docker_kill(struct ee_sandbox *sb)
{
	struct ee_docker_part *d = &sb->part.docker;
	int pidfd;
	pid_t pid = ee_docker_kill_start(d->client, d->name, &pidfd);
	if (pid < 0)
		return -1;
	d->kill_pid = pid;
	struct ee_err err;
	int timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	struct itimerspec deadline = { { 0, 0 },
		                       { EE_DOCKER_KILL_MS / 1000, (EE_DOCKER_KILL_MS % 1000) * 1000000L } };
	if (sandbox_add_watch(sb, W_PIDFD, pidfd, &err) < 0 || timer < 0 ||
	    timerfd_settime(timer, 0, &deadline, NULL) < 0 ||
	    sandbox_add_watch(sb, W_TIMER, timer, &err) < 0) {
		if (timer >= 0 && sb->fd[W_TIMER] != timer)
			close(timer);
		sandbox_close_watch(sb, W_PIDFD);
		sandbox_close_watch(sb, W_TIMER);
		ee_docker_kill_wait(pid, d->name);
		d->kill_pid = 0; /* reaped: its pid may be another process's by ee_sandbox_free */
		return -1;
	}
	return 0;
}

/* A killed client leaves its container running in the engine. `docker
 * kill` runs on the loop (other sandboxes go on); this one's slot stays
 * taken until it answers, so no more containers live at once than -j. */
static int docker_ended(struct ee_sandbox *sb)
{
	return sb->out.end != EE_END_RAN && start_docker_kill(sb) == 0;
}

/* docker kill ended (W_PIDFD), or its deadline passed (W_TIMER). */
static int on_docker_kill(struct ee_sandbox *sb, int kind)
{
	struct ee_docker_part *d = &sb->part.docker;

	if (kind == W_PIDFD) {
		pid_t r = waitpid(d->kill_pid, NULL, WNOHANG);
		if (r == 0 || (r < 0 && errno == EINTR))
			return 0;
	} else if (kind == W_TIMER) {
		ee_docker_kill_abandon(d->kill_pid, d->name);
	} else {
		return 0;
	}
	sandbox_close_watch(sb, W_PIDFD);
	sandbox_close_watch(sb, W_TIMER);
	d->kill_pid = 0;
	return 1;
}

static void docker_discard(struct ee_sandbox *sb)
{
	struct ee_docker_part *d = &sb->part.docker;

	if (d->kill_pid > 0) /* freed while docker kill ran */
		ee_docker_kill_abandon(d->kill_pid, d->name);
	d->kill_pid = 0;
	free(d->name);
	d->name = NULL;
}

const struct ee_launcher ee_launcher_docker = {
	.sync_pipe = 1,
	.clock_at_started = 1,
	.parent = &ee_parent_supervisor,
	.launch = docker_launch,
	.first_timer_s = ee_relay_first_timer_s,
	.release = sandbox_own_release,
	.ended = docker_ended,
	.on_linger_event = on_docker_kill,
	.discard = docker_discard,
};
