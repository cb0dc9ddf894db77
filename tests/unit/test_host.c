/* test_host.c - the host probe's pure parts (host.h): where this process's
 * cgroup is, from the texts of /proc/self/mountinfo and /proc/self/cgroup,
 * and which of the capabilities a root sandbox needs are missing. The
 * mountinfo lines are as the kernel prints them (this VM's, a Docker
 * container's without a cgroup namespace, systemd's unified and hybrid). */
#include <criterion/criterion.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "sandbox/host.h"

/* This VM: cgroup v1 hierarchies at the filesystem's root, a cgroup2 with
 * no controllers beside them, and a name=systemd hierarchy. */
#define VM_MOUNTINFO                                                                                         \
	"22 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"                                          \
	"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"                                \
	"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"                               \
	"33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"                       \
	"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"                         \
	"39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"                             \
	"40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"                  \
	"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
#define VM_CGROUP "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/5f27\n2:cpuacct:/\n1:cpu:/\n0::/\n"

/* Docker on cgroup v1 without --cgroupns=private: each hierarchy's mount is
 * the container's own cgroup, and /proc/self/cgroup names it from the
 * host's root. Controllers co-mounted as cpu,cpuacct. */
#define DOCKER_MOUNTINFO                                                                                     \
	"700 690 0:98 / / rw,relatime master:300 - overlay overlay "                                         \
	"rw,lowerdir=/var/lib/docker/l/A:/var/lib/docker/l/B\n"                                              \
	"712 711 0:32 /docker/abc /sys/fs/cgroup/memory ro,nosuid,nodev,noexec,relatime master:17 - "        \
	"cgroup cgroup rw,memory\n"                                                                          \
	"713 711 0:36 /docker/abc /sys/fs/cgroup/pids ro,nosuid,nodev,noexec,relatime master:21 - "          \
	"cgroup cgroup rw,pids\n"                                                                            \
	"714 711 0:29 /docker/abc /sys/fs/cgroup/cpu,cpuacct ro,nosuid master:12 - cgroup cgroup "           \
	"rw,cpu,cpuacct\n"
#define DOCKER_CGROUP "12:pids:/docker/abc\n4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n0::/docker/abc\n"

/* cgroup v2 alone (systemd's unified layout). */
#define V2_MOUNTINFO                                                                                         \
	"25 22 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"                      \
	"30 24 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "            \
	"rw,nsdelegate,memory_recursiveprot\n"
#define V2_CGROUP "0::/user.slice/user-0.slice/session-3.scope\n"

struct locate_case {
	const char *name;
	const char *mountinfo, *cgroup, *controller;
	int found;
	int version;
	const char *dir;  /* when found */
	const char *why;  /* a substring of why when not found; "" for an empty why */
	const char *why2; /* another substring, or NULL */
};

static const struct locate_case cases[] = {
	/* plain host */
	{ "vm memory below the root", VM_MOUNTINFO, VM_CGROUP, "memory", 1, 1,
	  "/sys/fs/cgroup/memory/process_api/5f27", NULL, NULL },
	{ "vm pids at the root", VM_MOUNTINFO, VM_CGROUP, "pids", 1, 1, "/sys/fs/cgroup/pids", NULL, NULL },
	{ "vm cpuacct", VM_MOUNTINFO, VM_CGROUP, "cpuacct", 1, 1, "/sys/fs/cgroup/cpuacct", NULL, NULL },
	{ "vm cpu: a hierarchy apart from cpuacct", VM_MOUNTINFO, VM_CGROUP, "cpu", 1, 1,
	  "/sys/fs/cgroup/cpu", NULL, NULL },
	{ "cpu is not cpuacct's prefix", VM_MOUNTINFO, "3:cpuset:/s\n2:cpuacct:/a\n1:cpu:/b\n", "cpu", 1, 1,
	  "/sys/fs/cgroup/cpu/b", NULL, NULL },
	{ "vm has no v1 io", VM_MOUNTINFO, VM_CGROUP, "io", 0, 0, NULL, "", NULL },
	{ "name=systemd is not a controller prefix", VM_MOUNTINFO, VM_CGROUP, "systemd", 0, 0, NULL, "",
	  NULL },
	/* mixed: v1 controllers beside an empty unified hierarchy */
	{ "vm unified beside v1", VM_MOUNTINFO, VM_CGROUP, NULL, 1, 2, "/sys/fs/cgroup/unified", NULL, NULL },
	{ "hybrid: memory stays on v1", VM_MOUNTINFO, "4:memory:/user.slice\n0::/user.slice\n", "memory", 1,
	  1, "/sys/fs/cgroup/memory/user.slice", NULL, NULL },
	{ "hybrid: unified below its root", VM_MOUNTINFO, "4:memory:/user.slice\n0::/user.slice\n", NULL, 1,
	  2, "/sys/fs/cgroup/unified/user.slice", NULL, NULL },
	/* container-style root prefix */
	{ "docker memory: the mount is the container's cgroup", DOCKER_MOUNTINFO, DOCKER_CGROUP, "memory", 1,
	  1, "/sys/fs/cgroup/memory", NULL, NULL },
	{ "docker pids", DOCKER_MOUNTINFO, DOCKER_CGROUP, "pids", 1, 1, "/sys/fs/cgroup/pids", NULL, NULL },
	{ "docker co-mounted cpuacct", DOCKER_MOUNTINFO, DOCKER_CGROUP, "cpuacct", 1, 1,
	  "/sys/fs/cgroup/cpu,cpuacct", NULL, NULL },
	{ "docker co-mounted cpu: the same directory", DOCKER_MOUNTINFO, DOCKER_CGROUP, "cpu", 1, 1,
	  "/sys/fs/cgroup/cpu,cpuacct", NULL, NULL },
	{ "docker: a cgroup below the container's", DOCKER_MOUNTINFO, "4:memory:/docker/abc/job/7\n",
	  "memory", 1, 1, "/sys/fs/cgroup/memory/job/7", NULL, NULL },
	{ "docker: no cgroup2 mount", DOCKER_MOUNTINFO, DOCKER_CGROUP, NULL, 0, 0, NULL, "", NULL },
	/* cgroup outside the mount's root */
	{ "outside the mount's root", DOCKER_MOUNTINFO, "4:memory:/other/x\n", "memory", 0, 0, NULL,
	  "/other/x is outside", "/sys/fs/cgroup/memory (root /docker/abc)" },
	{ "a sibling sharing the root's name as prefix", DOCKER_MOUNTINFO, "4:memory:/docker/abcdef\n",
	  "memory", 0, 0, NULL, "outside", "--cgroupns=private" },
	{ "the host's root above the mount's", DOCKER_MOUNTINFO, "4:memory:/\n", "memory", 0, 0, NULL,
	  "cgroup / is outside", NULL },
	{ "a second mount of the hierarchy holds it",
	  "1 0 0:32 /docker/abc /a - cgroup cgroup rw,memory\n2 0 0:32 / /b - cgroup cgroup rw,memory\n",
	  "4:memory:/other\n", "memory", 1, 1, "/b/other", NULL, NULL },
	{ "a bind of a cgroup over the hierarchy's mount hides it",
	  "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
	  "63 35 0:32 /pa/5f27 /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
	  "4:memory:/pa/5f27/net.1\n", "memory", 1, 1, "/sys/fs/cgroup/memory/net.1", NULL, NULL },
	{ "a hidden mount's root is no reason",
	  "35 31 0:32 /other /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
	  "63 35 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
	  "4:memory:/pa\n", "memory", 1, 1, "/sys/fs/cgroup/memory/pa", NULL, NULL },
	{ "a tmpfs over the hierarchy's mount",
	  VM_MOUNTINFO "70 35 0:50 / /sys/fs/cgroup/memory rw - tmpfs tmpfs rw\n", VM_CGROUP, "memory", 0, 0,
	  NULL, "", NULL },
	/* v2 unified */
	{ "v2: the unified hierarchy", V2_MOUNTINFO, V2_CGROUP, NULL, 1, 2,
	  "/sys/fs/cgroup/user.slice/user-0.slice/session-3.scope", NULL, NULL },
	{ "v2: no v1 memory", V2_MOUNTINFO, V2_CGROUP, "memory", 0, 0, NULL, "", NULL },
	{ "v2 in a pod without a cgroup namespace",
	  "30 24 0:26 /kubepods/pod1/c1 /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n", "0::/kubepods/pod1/c1\n",
	  NULL, 1, 2, "/sys/fs/cgroup", NULL, NULL },
	{ "v2 at the root of a cgroup namespace", V2_MOUNTINFO, "0::/\n", NULL, 1, 2, "/sys/fs/cgroup", NULL,
	  NULL },
	{ "v2 outside the mount's root", "30 24 0:26 /kubepods/pod1 /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n",
	  "0::/system.slice\n", NULL, 0, 0, NULL, "/system.slice is outside", NULL },
	/* escapes and malformed lines */
	{ "an escaped space in the mount point",
	  "35 31 0:32 / /mnt/cg\\040mem rw - cgroup cgroup rw,memory\n", "4:memory:/a\n", "memory", 1, 1,
	  "/mnt/cg mem/a", NULL, NULL },
	{ "malformed mountinfo lines are skipped",
	  "\n"
	  "garbage\n"
	  "35 31 0:32 / /x rw cgroup cgroup rw,memory\n"                     /* no separator */
	  "35 31 0:32 / - cgroup cgroup rw,memory\n"                         /* no mount point */
	  "35 31 0:32 / /y rw - cgroup\n"                                    /* no options */
	  "35 31 0:32 / /z rw - cgroup cgroup rw,memoryx\n"                  /* not memory */
	  "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory", /* no final newline */
	  "4:memory:/a\n", "memory", 1, 1, "/sys/fs/cgroup/memory/a", NULL, NULL },
	{ "malformed cgroup lines are skipped", VM_MOUNTINFO,
	  "garbage\n4:memory\n4:memory:\n4:memory:relative\n::\n4:memory:/good\n", "memory", 1, 1,
	  "/sys/fs/cgroup/memory/good", NULL, NULL },
	{ "only malformed cgroup lines", VM_MOUNTINFO, "4:memory:\n4:memory:relative\n", "memory", 0, 0, NULL,
	  "", NULL },
	{ "empty texts", "", "", "memory", 0, 0, NULL, "", NULL },
	{ "empty texts, unified", "", "", NULL, 0, 0, NULL, "", NULL },
};

Test(host, cg_locate_table)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct locate_case *t = &cases[i];
		struct ee_cg_controller c;
		memset(&c, 0x5a, sizeof(c)); /* every field must be set */
		int found = ee_cg_locate(t->mountinfo, t->cgroup, t->controller, &c);
		cr_expect_eq(found, t->found, "%s: found %d", t->name, found);
		cr_expect_eq(c.version, t->version, "%s: version %d", t->name, c.version);
		cr_expect_eq(c.writable, 0, "%s: writable is the probe's", t->name);
		if (t->found) {
			cr_expect_str_eq(c.dir, t->dir, "%s: dir %s", t->name, c.dir);
			cr_expect_str_eq(c.why, "", "%s: why %s", t->name, c.why);
			continue;
		}
		cr_expect_str_eq(c.dir, "", "%s: dir %s", t->name, c.dir);
		if (!t->why[0])
			cr_expect_str_eq(c.why, "", "%s: why %s", t->name, c.why);
		else
			cr_expect(strstr(c.why, t->why) != NULL, "%s: why %s", t->name, c.why);
		if (t->why2)
			cr_expect(strstr(c.why, t->why2) != NULL, "%s: why %s", t->name, c.why);
	}
}

/* A line longer than any buffer of the parser: skipped whole, never read
 * as the start of another line. */
Test(host, cg_locate_skips_an_overlong_line)
{
	static char mountinfo[20000];
	char cgroup[9000];
	struct ee_cg_controller c;

	memset(mountinfo, 0, sizeof(mountinfo));
	strcpy(mountinfo, "1 0 0:32 / /x rw - cgroup cgroup rw,memory,");
	memset(mountinfo + strlen(mountinfo), 'a', 10000);
	strcat(mountinfo, "\n2 0 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n");
	strcpy(cgroup, "4:memory:/");
	memset(cgroup + strlen(cgroup), 'b', 8000); /* longer than PATH_MAX: unusable */
	strcat(cgroup, "\n4:memory:/ok\n");
	cr_expect_eq(ee_cg_locate(mountinfo, cgroup, "memory", &c), 1);
	cr_expect_str_eq(c.dir, "/sys/fs/cgroup/memory/ok");
}

#define ALL_FIVE                                                                                             \
	(1ull << CAP_SYS_ADMIN | 1ull << CAP_SETUID | 1ull << CAP_SETGID | 1ull << CAP_SETPCAP |             \
	 1ull << CAP_KILL)

Test(host, missing_caps)
{
	char names[64];

	cr_expect_eq(ee_host_missing_caps(ALL_FIVE, names, sizeof(names)), 0);
	cr_expect_str_eq(names, "");
	cr_expect_eq(ee_host_missing_caps(~0ull, names, sizeof(names)), 0);
	cr_expect_eq(ee_host_missing_caps(ALL_FIVE & ~(1ull << CAP_SETUID | 1ull << CAP_KILL), names,
	                                  sizeof(names)),
	             2);
	cr_expect_str_eq(names, "SETUID, KILL");
	cr_expect_eq(ee_host_missing_caps(0, names, sizeof(names)), 5);
	cr_expect_str_eq(names, "SYS_ADMIN, SETUID, SETGID, SETPCAP, KILL");
	/* A short buffer holds what fits; the count stays right. */
	char small[8];
	cr_expect_eq(ee_host_missing_caps(0, small, sizeof(small)), 5);
	cr_expect_str_eq(small, "SYS_ADM");
	cr_expect_eq(ee_host_missing_caps(0, NULL, 0), 5);
}

static struct ee_host usable_host(void)
{
	struct ee_host h;
	memset(&h, 0, sizeof(h));
	h.is_root = 1;
	h.seccomp = 1;
	h.cap_eff = ALL_FIVE;
	strcpy(h.python, "/bin/sh"); /* any executable: the check is access(X_OK) */
	return h;
}

Test(host, usable_refuses_root_without_a_needed_capability)
{
	struct ee_host h = usable_host();
	struct ee_err err = { 0 };

	cr_expect_eq(ee_host_usable(&h, &err), 0, "%s", err.msg);
	for (int i = 0; i < EE_HOST_N_CAPS; i++) {
		h.cap_eff = ALL_FIVE & ~(1ull << ee_host_caps[i].cap);
		memset(&err, 0, sizeof(err));
		cr_expect_eq(ee_host_usable(&h, &err), -1, "without %s", ee_host_caps[i].name);
		cr_expect_eq(err.code, EE_ERR_SANDBOX);
		cr_expect(strstr(err.msg, ee_host_caps[i].name) != NULL, "%s", err.msg);
		cr_expect(strstr(err.msg, "--cap-add") != NULL, "%s", err.msg);
		cr_expect(strstr(err.msg, "capabilities.add") != NULL, "%s", err.msg);
	}
	/* Unprivileged, the user namespace gives the sandbox its own. */
	h.is_root = 0;
	h.userns = 1;
	h.cap_eff = 0;
	cr_expect_eq(ee_host_usable(&h, &err), 0, "%s", err.msg);
}

Test(host, probe_reads_this_process)
{
	struct ee_host h;
	struct ee_err err = { 0 };

	cr_assert_eq(ee_host_probe(&h, &err), 0, "%s", err.msg);
	cr_expect_eq(h.is_root, geteuid() == 0);
	/* capget agrees with what the kernel shows in /proc/self/status. */
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	unsigned long long shown = 0;
	int seen = 0;
	while (f && fgets(line, sizeof(line), f))
		seen |= sscanf(line, "CapEff: %llx", &shown) == 1;
	if (f)
		fclose(f);
	cr_expect(seen);
	cr_expect_eq(h.cap_eff, shown, "%llx != %llx", h.cap_eff, shown);
}
