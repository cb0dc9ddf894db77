/* docker_argv.h - the `docker run` command for one candidate (the Docker
 * backend's argv, built here and nowhere else; run by docker_run.c and
 * printed by `execeval docker-command`).
 *
 * Least privilege, argument by argument (docs/sandbox.md, "Docker"): no
 * network, a read-only root, a bounded noexec /tmp, uid/gid 65534, no
 * capabilities, no_new_privs, pids/memory (no swap)/CPU limits, the
 * native rlimits, nothing of the host mounted, the image never pulled at
 * evaluation time. The container's process is execeval's relay
 * (gvisor.h): the job and the supervisor's seccomp program come on
 * stdin, the harness's stdout, stderr and result channel go back as
 * frames on stdout, so the event channel is never the program's stdout.
 *
 * Ownership: struct ee_docker_argv holds every string it points to.
 */
#ifndef EE_DOCKER_ARGV_H
#define EE_DOCKER_ARGV_H

#include <stddef.h>

struct ee_err;
struct ee_limits;

/* The image `--image` names by default: the repository's Dockerfile's. */
#define EE_DOCKER_IMAGE_DEFAULT "execeval:latest"
/* Where the Dockerfile installs execeval and the interpreter it uses. */
#define EE_DOCKER_EXECEVAL "/usr/local/bin/execeval"
#define EE_DOCKER_PYTHON   "/usr/bin/python3"
/* The harness's RLIMIT_AS over the container's memory, as under gVisor. */
#define EE_DOCKER_AS_EXTRA_MB 128

#define EE_DOCKER_ARGC_MAX 64
#define EE_DOCKER_BUF_MAX  2048

struct ee_docker_spec {
	const char *docker; /* the client: a path or "docker" */
	const char *image;  /* NULL: EE_DOCKER_IMAGE_DEFAULT */
	const char *name;   /* the container's name (ee_docker_name) */
	const struct ee_limits *limits;
	double cpus; /* --cpus: the native cgroup's one CPU */
};

struct ee_docker_argv {
	char *argv[EE_DOCKER_ARGC_MAX + 1]; /* NULL-terminated */
	int argc;
	char buf[EE_DOCKER_BUF_MAX];
	size_t used;
};

/* Builds the command into *out. -1 (EE_ERR_USAGE) on an image name that
 * could be taken for an option or holds a space, or a name too long. */
int ee_docker_argv_build(const struct ee_docker_spec *s, struct ee_docker_argv *out, struct ee_err *err);

/* "execeval-" and 16 random hex digits, into name (size >= 32); -1 when
 * the kernel gives no randomness. */
int ee_docker_name(char *name, size_t size);

/* The command as one shell line: every argument quoted where it needs it.
 * Returns the length it needs (as snprintf). */
size_t ee_docker_argv_shell(const struct ee_docker_argv *a, char *buf, size_t size);

#endif
