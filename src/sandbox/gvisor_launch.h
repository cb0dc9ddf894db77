/* gvisor_launch.h - the gVisor init, which starts runsc (or another
 * program speaking the relay's frames) under the supervisor's pipes (see
 * gvisor.h and gvisor_launch.c's theory of operation). The gVisor backend
 * itself is its launcher, ee_launcher_gvisor (sandbox_int.h).
 */
#ifndef EE_GVISOR_LAUNCH_H
#define EE_GVISOR_LAUNCH_H

struct ee_err;
struct ee_launch_fds;
struct ee_sandbox;
struct ee_sandbox_config;

/* Another program in runsc's place, speaking the relay's frames on its
 * stdin and stdout (the Docker backend's `docker run`, docker_run.c). */
struct ee_relay_cmd {
	const char *path;
	char *const *argv, *const *env;
	const char *label; /* "docker": how its messages start */
};
/* As the gVisor launch, with cmd in place of runsc and no bundle: clones
 * the init with the child's ends f and lets it go (f->go). sb's cgroup is
 * the caller's to create first. On success *pidfd is the init's, sb->pid
 * its pid. */
int ee_relay_launch(struct ee_sandbox *sb, const struct ee_sandbox_config *cfg,
                    const struct ee_relay_cmd *cmd, const struct ee_launch_fds *f, int *pidfd,
                    struct ee_err *err);
/* The first deadline of a sandbox under the relay's init: its start-up
 * (EE_GVISOR_START_S), then the candidate's clock (restarted at STARTED). */
double ee_relay_first_timer_s(const struct ee_sandbox *sb, const struct ee_sandbox_config *cfg);

/* "ptrace" or "kvm". */
const char *ee_gvisor_platform_name(int platform);

#endif
