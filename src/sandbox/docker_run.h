/* docker_run.h - the Docker backend: each candidate in a container of its
 * own, started by `docker run` (the argv of docker_argv.h).
 *
 * The docker client takes runsc's place under the gVisor init
 * (gvisor_launch.c): the init, the init of a pid namespace of its own in
 * the sandbox's host cgroup, sends the job and the seccomp program on the
 * client's stdin and turns the relay's frames on its stdout back into the
 * supervisor's pipes. Killing the init (the wall clock, the output cap)
 * ends the client only: the container lives in the engine, so the end of
 * such a sandbox also runs `docker kill NAME` (ee_docker_kill_start): on
 * the loop, so a slow engine delays that sandbox's record only.
 *
 * The backend's launcher is ee_launcher_docker (sandbox_int.h, docker_run.c).
 *
 * Ownership: struct ee_docker is the engine's; each sandbox owns its
 * container's name (its struct ee_docker_part).
 */
#ifndef EE_DOCKER_RUN_H
#define EE_DOCKER_RUN_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

struct ee_err;

struct ee_docker {
	char client[PATH_MAX]; /* the docker client */
	const char *image;     /* --image; NULL: EE_DOCKER_IMAGE_DEFAULT */
};

/* What the sandbox's host cgroup allows beyond the candidate's limits: the
 * docker client (a Go program) lives in it. */
#define EE_DOCKER_EXTRA_MB   128
#define EE_DOCKER_EXTRA_PIDS 64

/* The client: $EXECEVAL_DOCKER, else the first docker on PATH. -1 with a
 * message naming docker when there is none. */
int ee_docker_find(char *path, size_t size, struct ee_err *err);
int ee_docker_open(struct ee_docker *d, const char *image, struct ee_err *err);

/* `docker kill NAME` (a container whose client was killed; --rm then
 * removes it), started without waiting: its pid, with a pidfd for the
 * loop to watch in *pidfd (close-on-exec); the caller reaps it, and past
 * EE_DOCKER_KILL_MS gives up on it (ee_docker_kill_abandon). -1 when it
 * could not start, or could not be watched (then it was waited for here,
 * at most EE_DOCKER_KILL_MS). */
#define EE_DOCKER_KILL_MS 5000
pid_t ee_docker_kill_start(const char *client, const char *name, int *pidfd);
/* Waits for it (polling, at most EE_DOCKER_KILL_MS; then abandons it). */
void ee_docker_kill_wait(pid_t pid, const char *name);
/* Says so on stderr, kills the client and reaps it. */
void ee_docker_kill_abandon(pid_t pid, const char *name);

#endif
