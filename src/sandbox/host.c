/* host.c - probing the host's isolation features (see host.h). */
#include "sandbox/host.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
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

#include "base/buf.h"
#include "base/err.h"

#define DEFAULT_PYTHON "/usr/bin/python3"
/* Far above any real mount table; a longer one is read up to here. */
#define MOUNTINFO_CAP (4u << 20)

/* As root the sandbox switches uid itself instead of mapping one: these
 * are what it uses (checked with setpriv: with exactly these five, cold
 * and warm pass and time out correctly). */
const struct ee_cap_need ee_host_caps[EE_HOST_N_CAPS] = {
	{ CAP_SYS_ADMIN, "SYS_ADMIN", "namespaces, mounts and pivot_root for every sandbox" },
	{ CAP_SETUID, "SETUID", "running candidates as uids of their own" },
	{ CAP_SETGID, "SETGID", "running candidates as gids of their own without groups" },
	{ CAP_SETPCAP, "SETPCAP", "emptying the sandbox's capability bounding set" },
	{ CAP_KILL, "KILL", "killing a sandbox (its own uid) at its timeout" },
};

/* ---- cgroup hierarchies (pure: texts in, paths out) ------------------- */

/* The next line of a text, [start, *line_end); *p moves past it. NULL at
 * the end of the text. */
static const char *next_line(const char **p, const char **line_end)
{
	const char *start = *p;
	if (!*start)
		return NULL;
	const char *nl = strchr(start, '\n');
	*line_end = nl ? nl : start + strlen(start);
	*p = nl ? nl + 1 : *line_end;
	return start;
}

static int is_octal(char ch)
{
	return ch >= '0' && ch <= '7';
}

/* Copies the next space-separated field of [*p, end) into out, decoding
 * the kernel's octal escapes (a space in a path is \040); -1 when there is
 * none or it does not fit in cap bytes. */
static int next_field(const char **p, const char *end, char *out, size_t cap)
{
	const char *s = *p;
	size_t n = 0;

	while (s < end && *s == ' ')
		s++;
	if (s == end)
		return -1;
	while (s < end && *s != ' ') {
		char ch = *s++;
		if (ch == '\\' && end - s >= 3 && s[0] <= '3' && is_octal(s[0]) && is_octal(s[1]) &&
		    is_octal(s[2])) {
			ch = (char)((s[0] - '0') * 64 + (s[1] - '0') * 8 + (s[2] - '0'));
			s += 3;
		}
		if (n + 1 >= cap)
			return -1;
		out[n++] = ch;
	}
	out[n] = '\0';
	*p = s;
	return 0;
}

/* Whether the comma-separated list holds name. */
static int list_has(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *s = list; s; s = strchr(s, ','), s = s ? s + 1 : NULL)
		if (strncmp(s, name, n) == 0 && (s[n] == ',' || s[n] == '\0'))
			return 1;
	return 0;
}

/* The fields of a mountinfo line that locate a cgroup hierarchy. */
struct mount_entry {
	char root[PATH_MAX];  /* the directory of the filesystem mounted (field 4) */
	char point[PATH_MAX]; /* where (field 5) */
	char fstype[64];
	char opts[4096]; /* super options: a v1 hierarchy's controllers */
};

/* Fields 4 and 5 of a mountinfo line: the root and the mount point. */
static int parse_root_point(const char **p, const char *end, char *root, char *point)
{
	char skip[64];

	for (int i = 0; i < 3; i++)
		if (next_field(p, end, skip, sizeof(skip)) < 0)
			return -1;
	return next_field(p, end, root, PATH_MAX) < 0 || next_field(p, end, point, PATH_MAX) < 0 ? -1 : 0;
}

/* "36 35 0:30 /docker/abc /sys/fs/cgroup/memory rw,nosuid shared:17 - cgroup
 * cgroup rw,memory": optional fields of any number end at " - ". */
static int parse_mount(const char *line, const char *end, struct mount_entry *m)
{
	char skip[PATH_MAX];
	const char *p = line;

	if (parse_root_point(&p, end, m->root, m->point) < 0)
		return -1;
	const char *sep = memmem(p, (size_t)(end - p), " - ", 3);
	if (!sep)
		return -1;
	p = sep + 3;
	if (next_field(&p, end, m->fstype, sizeof(m->fstype)) < 0 ||
	    next_field(&p, end, skip, sizeof(skip)) < 0 || next_field(&p, end, m->opts, sizeof(m->opts)) < 0)
		return -1;
	return 0;
}

/* Whether the mount is controller's v1 hierarchy, or the unified one
 * (controller NULL). */
static int mount_holds(const struct mount_entry *m, const char *controller)
{
	if (!controller)
		return strcmp(m->fstype, "cgroup2") == 0;
	return strcmp(m->fstype, "cgroup") == 0 && list_has(m->opts, controller);
}

/* This process's path in the hierarchy, from /proc/self/cgroup: the line
 * "ID:CONTROLLERS:PATH" listing controller (v1), or "0::PATH" (unified). */
static int own_path(const char *text, const char *controller, char *ret, size_t len)
{
	const char *p = text, *end, *line;

	while ((line = next_line(&p, &end))) {
		const char *c1 = memchr(line, ':', (size_t)(end - line));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;
		char ctrls[256];
		size_t n = c2 ? (size_t)(c2 - c1 - 1) : 0;
		if (!c2 || n >= sizeof(ctrls))
			continue;
		memcpy(ctrls, c1 + 1, n);
		ctrls[n] = '\0';
		if (controller ? !list_has(ctrls, controller) : n != 0)
			continue;
		const char *path = c2 + 1;
		n = (size_t)(end - path);
		if (n == 0 || n >= len || path[0] != '/')
			continue; /* malformed: never a guess */
		memcpy(ret, path, n);
		ret[n] = '\0';
		return 1;
	}
	return 0;
}

/* The part of path below root ("" for root itself), or NULL when path is
 * not inside root. */
static const char *below(const char *path, const char *root)
{
	size_t n = strlen(root);

	if (strcmp(root, "/") == 0)
		return strcmp(path, "/") == 0 ? "" : path;
	if (strncmp(path, root, n) != 0 || (path[n] != '\0' && path[n] != '/'))
		return NULL;
	return path + n;
}

/* Whether a later line of mountinfo (from p on) mounts something else at
 * point, over this mount: its files are then out of sight. */
static int covered(const char *p, const char *point)
{
	char root[PATH_MAX], other[PATH_MAX];
	const char *end, *line;

	while ((line = next_line(&p, &end)))
		if (parse_root_point(&line, end, root, other) == 0 && strcmp(other, point) == 0)
			return 1;
	return 0;
}

int ee_cg_locate(const char *mountinfo, const char *proc_cgroup, const char *controller,
                 struct ee_cg_controller *c)
{
	struct mount_entry m;
	char own[PATH_MAX], outside[200] = "";
	const char *p = mountinfo, *end, *line;

	memset(c, 0, sizeof(*c));
	if (!own_path(proc_cgroup, controller, own, sizeof(own)))
		return 0;
	while ((line = next_line(&p, &end))) {
		if (parse_mount(line, end, &m) < 0 || !mount_holds(&m, controller) || covered(p, m.point))
			continue;
		const char *rest = below(own, m.root);
		if (!rest) {
			if (!outside[0])
				snprintf(outside, sizeof(outside), "%.60s (root %.120s)", m.point, m.root);
			continue;
		}
		size_t a = strlen(m.point), b = strlen(rest);
		if (a + b >= sizeof(c->dir))
			continue;
		memcpy(c->dir, m.point, a);
		memcpy(c->dir + a, rest, b + 1);
		c->version = controller ? EE_CG_V1 : EE_CG_V2;
		return 1;
	}
	if (outside[0])
		snprintf(c->why, sizeof(c->why),
		         "this process's cgroup %.120s is outside the hierarchy's mount at %s; run it in its "
		         "own cgroup namespace (docker run --cgroupns=private)",
		         own, outside);
	return 0;
}

/* ---- the probe ---------------------------------------------------------- */

/* Reads a /proc file into b (initialised, with its cap): whole lines
 * only, since a line cut at the cap would be a wrong path, not a short one. */
static int read_text(const char *path, struct ee_buf *b)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char chunk[4096];
	ssize_t n = 0;
	int full = 0;

	if (fd < 0)
		return -1;
	while (!full && ((n = read(fd, chunk, sizeof(chunk))) > 0 || (n < 0 && errno == EINTR)))
		if (n > 0)
			full = ee_buf_append_some(b, chunk, (size_t)n) < (size_t)n;
	close(fd);
	if (n < 0 || ee_buf_append(b, "", 0) < 0)
		return -1;
	if (full) {
		char *last = strrchr(b->data, '\n');
		b->len = last ? (size_t)(last - b->data) + 1 : 0;
		b->data[b->len] = '\0';
	}
	return 0;
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

/* A v1 hierarchy of its own, else the unified one if it offers name. */
static void probe_controller(const char *name, const char *mountinfo, const char *proc_cgroup,
                             struct ee_cg_controller *c)
{
	if (!ee_cg_locate(mountinfo, proc_cgroup, name, c)) {
		if (c->why[0] || !ee_cg_locate(mountinfo, proc_cgroup, NULL, c))
			return;
		if (!v2_has_controller(c->dir, name)) {
			memset(c, 0, sizeof(*c));
			return;
		}
	}
	c->writable = access(c->dir, W_OK) == 0;
}

static int probe_cgroups(struct ee_host *h, struct ee_err *err)
{
	struct ee_buf mi, cg;
	int rc = 0;

	ee_buf_init(&mi, MOUNTINFO_CAP);
	ee_buf_init(&cg, MOUNTINFO_CAP);
	if (read_text("/proc/self/mountinfo", &mi) < 0 || read_text("/proc/self/cgroup", &cg) < 0) {
		rc = ee_fail_errno(
		        err, EE_ERR_SANDBOX,
		        "cannot read /proc/self/mountinfo and /proc/self/cgroup (is /proc mounted?)");
		goto out;
	}
	probe_controller("memory", mi.data, cg.data, &h->memory);
	probe_controller("pids", mi.data, cg.data, &h->pids);
	probe_controller("cpuacct", mi.data, cg.data, &h->cpuacct);
	probe_controller("cpu", mi.data, cg.data, &h->cpu);
out:
	ee_buf_free(&mi);
	ee_buf_free(&cg);
	return rc;
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

/* Root of the host, not only of a user namespace: the uid map is the
 * identity over every uid. Root in a child user namespace (`unshare --user
 * --map-root-user`, a rootless container) cannot become the sandbox's own
 * host uid (unmapped) nor call setgroups, so it takes the unprivileged
 * path: a user namespace of the sandbox's own, nested in its own. */
static int is_host_root(void)
{
	if (geteuid() != 0)
		return 0;
	FILE *f = fopen("/proc/self/uid_map", "re");
	unsigned long inside = 1, outside = 1, count = 0;
	int full = f && fscanf(f, "%lu %lu %lu", &inside, &outside, &count) == 3 && inside == 0 &&
	           outside == 0 && count == 4294967295UL;
	if (f)
		fclose(f);
	return full;
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

static int read_cap_eff(unsigned long long *ret, struct ee_err *err)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "capget");
	*ret = (unsigned long long)data[1].effective << 32 | data[0].effective;
	return 0;
}

int ee_host_probe(struct ee_host *h, struct ee_err *err)
{
	memset(h, 0, sizeof(*h));
	h->is_root = is_host_root();
	h->userns = probe_userns();
	/* prctl(PR_GET_SECCOMP) succeeds (returns 0) when the kernel has seccomp. */
	h->seccomp = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
	h->cap_last_cap = read_cap_last_cap();
	if (read_cap_eff(&h->cap_eff, err) < 0 || probe_cgroups(h, err) < 0)
		return -1;
	snprintf(h->python, sizeof(h->python), "%s", DEFAULT_PYTHON);
	return 0;
}

int ee_host_missing_caps(unsigned long long cap_eff, char *ret, size_t len)
{
	int n = 0;
	size_t used = 0;

	for (int i = 0; i < EE_HOST_N_CAPS; i++) {
		if (cap_eff >> ee_host_caps[i].cap & 1)
			continue;
		if (used < len) {
			int w = snprintf(ret + used, len - used, "%s%s", n ? ", " : "", ee_host_caps[i].name);
			used = w < 0 || (size_t)w >= len - used ? len : used + (size_t)w;
		}
		n++;
	}
	if (n == 0 && len)
		ret[0] = '\0';
	return n;
}

int ee_host_has_memory_cgroup(const struct ee_host *h)
{
	return h->memory.version && h->memory.writable;
}

int ee_host_usable(const struct ee_host *h, struct ee_err *err)
{
	if (!h->seccomp)
		return ee_fail(err, EE_ERR_SANDBOX,
		               "the kernel has no seccomp filter support (CONFIG_SECCOMP_FILTER); "
		               "execeval will not run candidates without it");
	/* Without these a root sandbox fails per candidate, and not always
	 * visibly (a kill refused: a timed-out candidate runs on), while a
	 * user namespace made without CAP_SETUID could map the candidate only
	 * to uid 0, the owner of root's files: refuse before anything runs. */
	char missing[64];
	if (h->is_root && ee_host_missing_caps(h->cap_eff, missing, sizeof(missing)) > 0)
		return ee_fail(err, EE_ERR_SANDBOX,
		               "root without the capabilities %s (the sandbox needs SYS_ADMIN, SETUID, "
		               "SETGID, SETPCAP and KILL): add them (docker run --cap-add; Kubernetes "
		               "securityContext.capabilities.add) or run as a non-root user",
		               missing);
	if (!h->is_root && !h->userns)
		return ee_fail(err, EE_ERR_SANDBOX,
		               "not root and user namespaces are unavailable; run as root, or enable them "
		               "(sysctl kernel.unprivileged_userns_clone=1 / user.max_user_namespaces)");
	if (access(h->python, X_OK) != 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "%s is not executable (apt-get install python3)",
		                     h->python);
	return 0;
}
