/* host.c - probing the host's isolation features (see host.h). */
#include "sandbox/host.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "err.h"

#define DEFAULT_PYTHON "/usr/bin/python3"

/* Finds the mount point of the cgroup hierarchy holding controller (v1), or
 * of the cgroup2 hierarchy (controller NULL), in /proc/self/mountinfo. */
static int find_mount(const char *controller, char *ret, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], fstype[64], opts[1024];
		const char *sep = strstr(line, " - ");

		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		if (sscanf(sep + 3, "%63s %*s %1023s", fstype, opts) != 2)
			continue;
		if (controller && strcmp(fstype, "cgroup") == 0) {
			char *save = NULL;
			for (char *o = strtok_r(opts, ",", &save); o; o = strtok_r(NULL, ",", &save))
				if (strcmp(o, controller) == 0)
					found = 1;
		} else if (!controller && strcmp(fstype, "cgroup2") == 0) {
			found = 1;
		}
		if (found)
			snprintf(ret, len, "%s", mnt);
	}
	fclose(f);
	return found;
}

/* Finds this process's cgroup path for controller (v1) or the unified
 * hierarchy (controller NULL) in /proc/self/cgroup. */
static int find_own_path(const char *controller, char *ret, size_t len)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[4096];
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		char *ctrls = strchr(line, ':');
		char *path = ctrls ? strchr(ctrls + 1, ':') : NULL;
		if (!path)
			continue;
		*path++ = '\0';
		ctrls++;
		path[strcspn(path, "\n")] = '\0';
		if (controller) {
			char *save = NULL;
			for (char *c = strtok_r(ctrls, ",", &save); c; c = strtok_r(NULL, ",", &save))
				if (strcmp(c, controller) == 0)
					found = 1;
		} else if (*ctrls == '\0') {
			found = 1;
		}
		if (found)
			snprintf(ret, len, "%s", path);
	}
	fclose(f);
	return found;
}

static int v2_has_controller(const char *dir, const char *controller)
{
	char path[PATH_MAX + 32], buf[512];
	snprintf(path, sizeof(path), "%s/cgroup.controllers", dir);
	FILE *f = fopen(path, "re");
	int found = 0;

	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f)) {
		char *save = NULL;
		for (char *c = strtok_r(buf, " \n", &save); c; c = strtok_r(NULL, " \n", &save))
			if (strcmp(c, controller) == 0)
				found = 1;
	}
	fclose(f);
	return found;
}

static void probe_controller(const char *name, struct ee_cg_controller *c)
{
	char mnt[PATH_MAX], own[PATH_MAX];

	memset(c, 0, sizeof(*c));
	if (find_mount(name, mnt, sizeof(mnt)) && find_own_path(name, own, sizeof(own))) {
		c->version = EE_CG_V1;
		snprintf(c->dir, sizeof(c->dir), "%.2047s%.2000s", mnt, strcmp(own, "/") ? own : "");
	} else if (find_mount(NULL, mnt, sizeof(mnt)) && find_own_path(NULL, own, sizeof(own))) {
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%.2047s%.2000s", mnt, strcmp(own, "/") ? own : "");
		if (!v2_has_controller(dir, name))
			return;
		c->version = EE_CG_V2;
		snprintf(c->dir, sizeof(c->dir), "%s", dir);
	} else {
		return;
	}
	c->writable = access(c->dir, W_OK) == 0;
}

/* A user namespace is tried in a throw-away child: some kernels disable
 * them (sysctl, AppArmor) and the only honest test is to make one. */
static int probe_userns(void)
{
	pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, 0);
	int status;

	if (pid < 0)
		return 0;
	if (pid == 0)
		_exit(0);
	if (waitpid(pid, &status, 0) < 0)
		return 0;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static unsigned read_cap_last_cap(void)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	unsigned v = 40;

	if (f) {
		if (fscanf(f, "%u", &v) != 1)
			v = 40;
		fclose(f);
	}
	return v > 63 ? 63 : v;
}

int ee_host_probe(struct ee_host *h, struct ee_err *err)
{
	memset(h, 0, sizeof(*h));
	if (access("/proc/self/mountinfo", R_OK) != 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX,
		                     "cannot read /proc/self/mountinfo (is /proc mounted?)");
	h->is_root = geteuid() == 0;
	h->userns = probe_userns();
	/* prctl(PR_GET_SECCOMP) succeeds (returns 0) when the kernel has seccomp. */
	h->seccomp = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
	h->cap_last_cap = read_cap_last_cap();
	probe_controller("memory", &h->memory);
	probe_controller("pids", &h->pids);
	probe_controller("cpuacct", &h->cpuacct);
	snprintf(h->python, sizeof(h->python), "%s", DEFAULT_PYTHON);
	return 0;
}

int ee_host_usable(const struct ee_host *h, struct ee_err *err)
{
	if (!h->seccomp)
		return ee_fail(err, EE_ERR_SANDBOX,
		               "the kernel has no seccomp filter support (CONFIG_SECCOMP_FILTER); "
		               "execeval will not run candidates without it");
	if (!h->is_root && !h->userns)
		return ee_fail(err, EE_ERR_SANDBOX,
		               "not root and user namespaces are unavailable; run as root, or enable them "
		               "(sysctl kernel.unprivileged_userns_clone=1 / user.max_user_namespaces)");
	if (access(h->python, X_OK) != 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "%s is not executable (apt-get install python3)",
		                     h->python);
	return 0;
}
