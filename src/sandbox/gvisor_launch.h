/* gvisor_launch.h - the gVisor backend's start of one sandbox, for start.c
 * (see gvisor.h and gvisor_launch.c's theory of operation).
 */
#ifndef EE_GVISOR_LAUNCH_H
#define EE_GVISOR_LAUNCH_H

struct ee_err;
struct ee_sandbox;
struct ee_sandbox_config;

/* The gVisor init's ends of the supervisor's pipes (and the job's memfd),
 * as start.c made them for a cold start; go is the sync pipe's write end. */
struct ee_gvisor_fds {
	int sync, go, ctl, job, out, err, result, gate;
};

/* In place of a cold clone: writes the bundle (sb->gvisor_dir, removed when
 * the sandbox ends), creates sb's cgroup, clones the gVisor init and lets it
 * go. On success *pidfd is the init's, sb->pid its pid. */
int ee_gvisor_launch(struct ee_sandbox *sb, const struct ee_sandbox_config *cfg,
                     const struct ee_gvisor_fds *f, int *pidfd, struct ee_err *err);

/* Another program in runsc's place, speaking the relay's frames on its
 * stdin and stdout (the Docker backend's `docker run`, docker_run.c). */
struct ee_relay_cmd {
	const char *path;
	char *const *argv, *const *env;
	const char *label; /* "docker": how its messages start */
};
/* As ee_gvisor_launch, with cmd in place of runsc and no bundle; sb's
 * cgroup is the caller's to create first. */
int ee_relay_launch(struct ee_sandbox *sb, const struct ee_sandbox_config *cfg,
                    const struct ee_relay_cmd *cmd, const struct ee_gvisor_fds *f, int *pidfd,
                    struct ee_err *err);

/* "ptrace" or "kvm". */
const char *ee_gvisor_platform_name(int platform);

#endif
